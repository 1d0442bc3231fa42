// Boxed variable metadata under linen transforms (flax tests/linen/linen_transforms_test.py):
// nn::add_metadata_axis over a Partitioned kernel and nn::vmap over a custom AxisMetadata box whose
// add_axis / remove_axis change the value.
#include <doctest/doctest.h>

#include <memory>

#include <linum/linum.hpp>
#include <linum/nn/nn.hpp>
#include <linum/nn/serialization.hpp>

#include "nn_testing.hpp"
#include "test_module_util.hpp"

namespace test_transforms_metadata {

using namespace linum;
namespace meta = linum::lift::meta;
using linum::testing::allclose;
using mcases::same;
using mcases::tree_same;

namespace {

meta::LogicalNames names(std::initializer_list<const char*> n) {
  meta::LogicalNames out;
  for (const char* s : n) out.emplace_back(s);
  return out;
}

// The add_metadata_axis case: Foo's Dense kernel is partitioned ('foo', 'bar'); Test adds the axis
// 'baz' to the params Foo creates, without mapping them.
Tree g_vars_copy52;
struct Foo52 : nn::Module<Foo52> {
  Array call(const Array& x) {
    auto kernel_init =
        nn::with_partitioning(nn::initializers::lecun_normal(), names({"foo", "bar"}));
    g_vars_copy52 = variables();
    return nn::Dense(
        {.features = 4, .use_bias = false, .kernel_init = kernel_init, .name = "dense"})(x);
  }
};
struct Test52 : nn::Module<Test52> {
  Array call(const Array& x) {
    return nn::add_metadata_axis([](Test52&, const Array& x) { return Foo52().named("foo")(x); },
                                 {{"params", 0}}, {{nn::PARTITION_NAME, "baz"}})(*this, x);
  }
};

}  // namespace

TEST_CASE("nn::add_metadata_axis names the new axis in the boxes outside, not inside") {
  Array x = ones({4, 4});
  Tree vs = Test52().init(random::key(0), x);
  Array y = Test52().apply(vs, x);
  const Tree& kernel = vs["params"]["foo"]["dense"]["kernel"];
  REQUIRE(kernel.is_box());
  CHECK(meta::partition_names(kernel) == names({"baz", "foo", "bar"}));
  CHECK(kernel.box_value().leaf().shape() == Shape{4, 4});
  // The whole structure, names included, as Flax's tree_map(jnp.shape, vs) comparison.
  Tree outer_expect{
      {"params",
       Tree{{"foo", Tree{{"dense", Tree{{"kernel",
                                         nn::Partitioned::box(Tree(zeros({4, 4})),
                                                              names({"baz", "foo", "bar"}))}}}}}}}};
  CHECK(pytree::tree_structure(vs) == pytree::tree_structure(outer_expect));
  Tree inner_expect{
      {"params", Tree{{"dense", Tree{{"kernel", nn::Partitioned::box(Tree(zeros({4, 4})),
                                                                     names({"foo", "bar"}))}}}}}};
  CHECK(pytree::tree_structure(g_vars_copy52) == pytree::tree_structure(inner_expect));
  // The kernel Dense used is the boxed value.
  CHECK(allclose(y, matmul(x, kernel.box_value().leaf())));
  // nn::unbox gives plain params that apply reads the same way.
  Tree plain = nn::unbox(vs);
  CHECK(plain["params"]["foo"]["dense"]["kernel"].is_leaf());
  CHECK(same(Test52().apply(plain, x), y));
}

namespace {

// The custom box case's BoxedData: add_axis means over the axis, remove_axis broadcasts the value
// back to metadata_params["axis_size"] along it.
struct BoxedData final : meta::AxisMetadata {
  std::string type_name() const override { return "BoxedData"; }
  bool equals(const pytree::BoxMetadata& o) const override {
    return dynamic_cast<const BoxedData*>(&o) != nullptr;
  }
  static Tree box(Array v) { return Tree::box(std::make_shared<const BoxedData>(), Tree(v)); }
  Tree add_axis(const Tree& value, int index, const meta::MetadataParams&) const override {
    return box(mean(value.leaf(), {index}));
  }
  Tree remove_axis(const Tree& value, int index,
                   const meta::MetadataParams& params) const override {
    Shape s = value.leaf().shape();
    s.insert(s.begin() + index, std::get<std::int64_t>(params.at("axis_size")));
    return box(broadcast_to(expand_dims(value.leaf(), index), s));
  }
};

int g_foo59_calls = 0;
Shape aux_shape(const nn::ModuleBase& m) {
  return m.variables()["aux"]["v"].box_value().leaf().shape();
}
struct Foo59 : nn::Module<Foo59> {
  Array call(const Array& x) {
    ++g_foo59_calls;
    if (has_variable("aux", "v")) CHECK(aux_shape(*this) == Shape{});
    variable("aux", "v", [] { return BoxedData::box(ones({})); });
    CHECK(aux_shape(*this) == Shape{});
    return x;
  }
};
struct Top59 : nn::Module<Top59> {
  Array call(const Array& x) {
    auto vfoo = nn::vmap(Foo59(), {.variable_axes = {{"params", 0}, {"aux", 0}},
                                   .metadata_params = {{"axis_size", x.shape(0)}}})
                    .named("vfoo");
    Array y = vfoo(x);
    y = vfoo(x);
    CHECK(aux_shape(vfoo) == Shape{});
    return y;
  }
};

}  // namespace

TEST_CASE("nn::vmap applies a custom box's remove_axis going in and add_axis coming out") {
  g_foo59_calls = 0;
  Tree vs = Top59().init(random::key(0), ones({2, 5}));
  Array y = Top59().apply(vs, ones({2, 5}));
  CHECK(g_foo59_calls == 4);  // the CHECKs inside ran under init and apply
  const Tree& v = vs["aux"]["vfoo"]["v"];
  REQUIRE(v.is_box());
  CHECK(v.box_value().leaf().shape() == Shape{});
  CHECK(same(v.box_value().leaf(), ones({})));
  CHECK(same(y, ones({2, 5})));
}

TEST_CASE("a boxed variable's state dict is {'value': ...}; restoring keeps the target's box") {
  Array x = ones({4, 4});
  Tree vs = Test52().init(random::key(0), x);
  Tree state = serialization::to_state_dict(vs);
  const Tree& k = state["params"]["foo"]["dense"]["kernel"];
  REQUIRE(k.is_dict());
  CHECK(same(k["value"].leaf(), vs["params"]["foo"]["dense"]["kernel"].box_value().leaf()));
  // Bytes round-trip into a target of the same structure (another init's boxes).
  Tree target = Test52().init(random::key(1), x);
  Tree back = serialization::from_bytes(target, serialization::to_bytes(vs));
  CHECK(pytree::tree_structure(back) == pytree::tree_structure(vs));
  CHECK(tree_same(back, vs));
  CHECK(meta::partition_names(back["params"]["foo"]["dense"]["kernel"]) ==
        names({"baz", "foo", "bar"}));
  // msgpack writes state dicts only, as Flax's packb.
  CHECK_THROWS_AS(serialization::msgpack_serialize(vs), TypeError);
}

}  // namespace test_transforms_metadata
