// Logical partitioning metadata (flax.linen.spmd, flax.core.meta's partition specs): the thread's
// logical axis rules, logical_to_mesh_axes (Flax's tests/linen/partitioning_test.py cases),
// with_logical_constraint without a mesh, LogicallyPartitioned boxes through init, apply and
// lifted transforms (tests/linen/linen_meta_test.py) and get_partition_spec.
#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <vector>

#include <linum/linum.hpp>
#include <linum/nn/nn.hpp>
#include <linum/nn/serialization.hpp>

#include "../support/testing.hpp"
#include "nn_testing.hpp"

namespace test_partitioning {

using namespace linum;
using nn::LogicalRules;
using nn::PartitionSpec;
using nn::UNCONSTRAINED;
using testing::allclose;
using testing::check_error;
using Spec = pytree::BasicTree<PartitionSpec>;
using NamesTree = pytree::BasicTree<nn::LogicalNames>;

namespace {

const LogicalRules kAxisRules1{{"foo", "data"}, {"bar", "model"}, {"baz", std::nullopt}};
const LogicalRules kAxisRules2{{"foo", "model"}, {"bar", std::nullopt}, {"baz", "data"}};

nn::LogicalNames names(std::initializer_list<std::optional<std::string>> n) { return {n}; }

// Each test starts and ends with the default rules ().
struct RulesReset {
  RulesReset() { nn::set_logical_axis_rules({}); }
  ~RulesReset() { nn::set_logical_axis_rules({}); }
};

}  // namespace

TEST_CASE(
    "the logical axis rules: () by default, set_ / get_, a scope restores the previous ones") {
  RulesReset reset;
  // test_axis_rules
  CHECK(nn::get_logical_axis_rules().empty());
  nn::set_logical_axis_rules(kAxisRules1);
  CHECK(nn::get_logical_axis_rules() == kAxisRules1);
  // test_axis_rules_context, nested one level further
  {
    nn::logical_axis_rules scope(kAxisRules2);
    CHECK(nn::get_logical_axis_rules() == kAxisRules2);
    {
      nn::logical_axis_rules inner({});
      CHECK(nn::get_logical_axis_rules().empty());
    }
    CHECK(nn::get_logical_axis_rules() == kAxisRules2);
  }
  CHECK(nn::get_logical_axis_rules() == kAxisRules1);
  // A scope left by an exception restores the rules too (Flax's try / finally).
  try {
    nn::logical_axis_rules scope(kAxisRules2);
    throw ValueError("inside");
  } catch (const ValueError&) {
  }
  CHECK(nn::get_logical_axis_rules() == kAxisRules1);
}

TEST_CASE("logical_to_mesh_axes: explicit rules, the thread's rules, None and UNCONSTRAINED kept") {
  RulesReset reset;
  // test_logical_to_mesh_axes: direct rule assignment.
  CHECK(nn::logical_to_mesh_axes({"foo", "bar"}, kAxisRules1) == PartitionSpec{"data", "model"});
  // Repeated None and UNCONSTRAINED stay where they are.
  CHECK(nn::logical_to_mesh_axes({"foo", UNCONSTRAINED, UNCONSTRAINED, std::nullopt, std::nullopt},
                                 kAxisRules1) ==
        PartitionSpec{"data", UNCONSTRAINED, UNCONSTRAINED, std::nullopt, std::nullopt});
  {
    nn::logical_axis_rules scope(kAxisRules1);
    CHECK(nn::logical_to_mesh_axes({"foo", "bar"}) == PartitionSpec{"data", "model"});
    {
      nn::logical_axis_rules nested(kAxisRules2);
      CHECK(nn::logical_to_mesh_axes({"foo", "bar"}) == PartitionSpec{"model", std::nullopt});
    }
    // A logical name on two dimensions.
    check_error<ValueError>(
        [] {
          nn::logical_to_mesh_axes({"foo", "foo", "baz"});
        },
        {"logical_to_mesh_axes", "('foo',)", "more than once"});
  }
  // test_logical_to_mesh_axes_resolves_to_none_or_unconstrained
  const LogicalRules to_none{
      {"foo", std::nullopt}, {"bad", std::nullopt}, {"bar", UNCONSTRAINED}, {"baz", UNCONSTRAINED}};
  CHECK(nn::logical_to_mesh_axes({"foo", "bad", "bar", "baz"}, to_none) ==
        PartitionSpec{std::nullopt, std::nullopt, UNCONSTRAINED, UNCONSTRAINED});
  // The docstring's example.
  const LogicalRules doc{{"batch", "X"}, {"features", "X"}, {"heads", "Y"}, {"batch", "Z"}};
  CHECK(nn::logical_to_mesh_axes({"batch", "length", "heads", "features"}, doc) ==
        PartitionSpec{"X", std::nullopt, "Y", std::nullopt});
  // A box's names (None entries included) are a logical spec.
  CHECK(nn::logical_to_mesh_axes(names({std::nullopt, "bar"}), kAxisRules1) ==
        PartitionSpec{std::nullopt, "model"});
  // Explicit empty rules are used as given, not replaced by the thread's.
  nn::logical_axis_rules scope(kAxisRules1);
  CHECK(nn::logical_to_mesh_axes({"foo"}, LogicalRules{}) == PartitionSpec{std::nullopt});
}

TEST_CASE(
    "logical_to_mesh_axes: earlier rules win a mesh axis (test_logical_to_mesh_axes_priorities)") {
  RulesReset reset;
  nn::logical_axis_rules scope({{"foo", "model"}, {"bar", "model"}, {"baz", "data"}});
  CHECK(nn::logical_to_mesh_axes({"foo", "bar", "baz"}) ==
        PartitionSpec{"model", std::nullopt, "data"});
  CHECK(nn::logical_to_mesh_axes({"bar", "foo", "baz"}) ==
        PartitionSpec{std::nullopt, "model", "data"});
  CHECK(nn::logical_to_mesh_axes({"baz", "bar", "foo"}) ==
        PartitionSpec{"data", std::nullopt, "model"});
  CHECK(nn::logical_to_mesh_axes({"baz", "bar", "foo", "unassigned"}) ==
        PartitionSpec{"data", std::nullopt, "model", std::nullopt});
}

TEST_CASE("logical_to_mesh_axes: test_logical_to_mesh_axes_cases") {
  RulesReset reset;
  struct Case {
    LogicalRules rules;
    PartitionSpec axes, expected;
  };
  const Case cases[] = {
      {{{"a", {"model", "data"}}, {"b", "data"}}, {"a", "b"}, {{"model", "data"}, std::nullopt}},
      {{{"a", {"model", "replica"}}, {"b", "data"}}, {"a", "b"}, {{"model", "replica"}, "data"}},
      {{{"a", {"model", "replica"}}, {"b", {"data", "model"}}},
       {"a", "b"},
       {{"model", "replica"}, std::nullopt}},
      {{{"a", {"model", "replica"}}, {"b", "model"}},
       {"a", "b", "c"},
       {{"model", "replica"}, std::nullopt, std::nullopt}},
      {{}, {"a", "b", "c"}, {std::nullopt, std::nullopt, std::nullopt}},
      {{{"a", std::nullopt}, {"a", "model"}}, {"a", "b"}, {std::nullopt, std::nullopt}},
      {{{"baz", "data"}, {"bar", std::nullopt}, {"foo", "model"}, {"foo", "data"}},
       {"baz", "bar", "foo"},
       {"data", std::nullopt, "model"}},
      {{{"baz", "data"}, {"foo", {"model", "emb"}}},
       {"baz", UNCONSTRAINED, "foo"},
       {"data", UNCONSTRAINED, {"model", "emb"}}},
  };
  for (const Case& c : cases) {
    nn::logical_axis_rules scope(c.rules);
    CAPTURE(c.axes.repr());
    CHECK(nn::logical_to_mesh_axes(c.axes) == c.expected);
  }
}

TEST_CASE("PartitionSpec prints as jax.sharding.PartitionSpec") {
  CHECK(PartitionSpec{"data", std::nullopt, {"model", "emb"}, UNCONSTRAINED}.repr() ==
        "PartitionSpec('data', None, ('model', 'emb'), UNCONSTRAINED)");
  CHECK(PartitionSpec{}.repr() == "PartitionSpec()");
  CHECK(pytree::repr(PartitionSpec{"x"}) == "PartitionSpec('x')");
}

TEST_CASE("with_logical_constraint without a mesh: x unchanged, Flax's checks of the names") {
  RulesReset reset;
  Array x = reshape(arange(4.0f), {2, 2});
  // Without rules nothing is mapped, so nothing is checked (test_with_sharding_constraint).
  CHECK(allclose(nn::with_logical_constraint(x, PartitionSpec{"foo", "foo"}), x, 0.0f));
  nn::logical_axis_rules scope(kAxisRules1);
  CHECK(allclose(nn::with_logical_constraint(x, std::nullopt), x, 0.0f));
  CHECK(allclose(nn::with_logical_constraint(x, PartitionSpec{"foo", UNCONSTRAINED}), x, 0.0f));
  check_error<ValueError>(
      [&] {
        nn::with_logical_constraint(x, PartitionSpec{"foo", "foo"});
      },
      {"('foo',)", "more than once"});
  // test_with_sharding_constraint_fallback: an unmatched name is unsharded, skipped, or an error.
  const PartitionSpec unmatched{"foo", "not_recognized"};
  CHECK(allclose(nn::with_logical_constraint(x, unmatched), x, 0.0f));
  CHECK(allclose(
      nn::with_logical_constraint(x, unmatched, std::nullopt, nn::RulesFallback::NO_CONSTRAINT), x,
      0.0f));
  check_error<ValueError>(
      [&] {
        nn::with_logical_constraint(x, unmatched, std::nullopt, nn::RulesFallback::RAISE_ERROR);
      },
      {"with_logical_constraint", "'not_recognized'", "did not match a rule"});
  // Any pytree passes through.
  Tree t{{"a", Tree(x)}};
  CHECK(allclose(nn::with_logical_constraint(t, PartitionSpec{"foo"})["a"].leaf(), x, 0.0f));
}

TEST_CASE("a LogicallyPartitioned box: a Partitioned with rules, its own pytree node and repr") {
  Array v = ones({2, 3});
  Tree b = nn::LogicallyPartitioned::box(Tree(v), names({"embed", "mlp"}), kAxisRules1);
  CHECK(lift::meta::is_axis_metadata(b));
  CHECK(lift::meta::partition_names(b) == names({"embed", "mlp"}));
  CHECK(pytree::repr(pytree::tree_structure(b))
            .find("LogicallyPartitioned[names=('embed', "
                  "'mlp'), mesh=None, rules=(('foo', 'data'), "
                  "('bar', 'model'), ('baz', None))]") != std::string::npos);
  // Same names but another class, other rules, or no rules: another structure.
  auto def = [](const Tree& t) { return pytree::tree_structure(t); };
  CHECK(def(b) == def(nn::LogicallyPartitioned::box(Tree(zeros({2, 3})), names({"embed", "mlp"}),
                                                    kAxisRules1)));
  CHECK_FALSE(def(b) == def(nn::Partitioned::box(Tree(v), names({"embed", "mlp"}))));
  CHECK_FALSE(def(nn::Partitioned::box(Tree(v), names({"embed", "mlp"}))) == def(b));
  CHECK_FALSE(def(b) ==
              def(nn::LogicallyPartitioned::box(Tree(v), names({"embed", "mlp"}), kAxisRules2)));
  CHECK_FALSE(def(b) == def(nn::LogicallyPartitioned::box(Tree(v), names({"embed", "mlp"}))));
  CHECK(allclose(nn::unbox(b).leaf(), v, 0.0f));
  // add_axis / remove_axis keep the class and the rules (Flax's dataclass replace).
  Tree added = lift::meta::add_axis(b, 1, {{nn::PARTITION_NAME, "layers"}});
  CHECK(lift::meta::partition_names(added) == names({"embed", "layers", "mlp"}));
  CHECK(def(added) == def(nn::LogicallyPartitioned::box(Tree(v), names({"embed", "layers", "mlp"}),
                                                        kAxisRules1)));
  CHECK(def(lift::meta::remove_axis(added, 1, {{nn::PARTITION_NAME, "layers"}})) == def(b));
  check_error<ValueError>(
      [&] {
        lift::meta::remove_axis(added, 0, {{nn::PARTITION_NAME, "layers"}});
      },
      {"LogicallyPartitioned.remove_axis", "'layers'"});
  check_error<ValueError>([&] { lift::meta::add_axis(b, 0, {}); },
                          {"LogicallyPartitioned", "partition_name"});
}

namespace {

// linen_meta_test.py test_boxed_param, with with_logical_partitioning's box: what Bar's
// get_variable sees inside the vmap, per call.
const LogicalRules kBarRules{{"batch", std::nullopt}, {"out", "model"}, {"in", "model"}};
std::vector<nn::LogicalNames> g_bar_saw;
struct Bar : nn::Module<Bar> {
  Array call(const Array& x) {
    auto kernel_init = nn::with_logical_partitioning(nn::initializers::ones_init(),
                                                     names({"in", "out"}), kBarRules);
    Array kernel = param("kernel", kernel_init, Shape{x.shape(-1), 2});
    const Tree box = get_variable("params", "kernel");
    const bool logical = box.is_box() && dynamic_cast<const nn::LogicallyPartitioned*>(
                                             box.box_metadata().get()) != nullptr;
    g_bar_saw.push_back(logical ? lift::meta::partition_names(box) : nn::LogicalNames{});
    return matmul(x, kernel);
  }
};
struct Foo : nn::Module<Foo> {
  Array call(const Array& xs) {
    return nn::vmap(Bar(), {.variable_axes = {{"params", 0}},
                            .split_rngs = {{"params", true}},
                            .metadata_params = {{nn::PARTITION_NAME, "batch"}}})
        .named("bar")(xs);
  }
};

}  // namespace

TEST_CASE(
    "with_logical_partitioning: the box through init, apply and nn::vmap (test_boxed_param)") {
  Array xs = reshape(arange(24.0f), {8, 3});
  g_bar_saw.clear();
  Tree v = Foo().init(random::key(0), xs);
  // Inside the vmap the box has the names it was made with.
  REQUIRE_FALSE(g_bar_saw.empty());
  CHECK(g_bar_saw.back() == names({"in", "out"}));
  const Tree& kernel = v["params"]["bar"]["kernel"];
  REQUIRE(kernel.is_box());
  const auto* box = dynamic_cast<const nn::LogicallyPartitioned*>(kernel.box_metadata().get());
  REQUIRE(box);
  CHECK(box->names() == names({"batch", "in", "out"}));
  CHECK(box->rules() == kBarRules);
  CHECK(kernel.box_value().leaf().shape() == Shape{8, 3, 2});
  // apply reads through the box (each row uses its own all-ones kernel) and maps the box in.
  g_bar_saw.clear();
  Array y = Foo().apply(v, xs);
  CHECK(allclose(y, matmul(xs, ones({3, 2})), 0.0f));
  REQUIRE_FALSE(g_bar_saw.empty());
  CHECK(g_bar_saw.back() == names({"in", "out"}));
  // Unboxed params give the same result and no box inside.
  g_bar_saw.clear();
  CHECK(allclose(Foo().apply(nn::unbox(v), xs), y, 0.0f));
  REQUIRE_FALSE(g_bar_saw.empty());
  CHECK(g_bar_saw.back().empty());
  // The specs of the variables, and the mesh axes the box's rules give: 'out' takes 'model'
  // first, so 'in' finds it used.
  NamesTree spec = nn::get_partition_spec(v);
  CHECK(spec["params"]["bar"]["kernel"].leaf() == names({"batch", "in", "out"}));
  Spec mesh = nn::logical_to_mesh(spec, box->rules());
  CHECK(mesh["params"]["bar"]["kernel"].leaf() ==
        PartitionSpec{std::nullopt, std::nullopt, "model"});
  // The box survives a checkpoint round trip into a target of the same structure.
  Tree back = serialization::from_bytes(Foo().init(random::key(1), xs), serialization::to_bytes(v));
  CHECK(pytree::tree_structure(back) == pytree::tree_structure(v));
}

namespace {

// linen_meta_test.py test_pjit_scan_over_layers: an MLP with Partitioned kernels scanned over 8
// layers, the new axis named None.
struct MLP : nn::Module<MLP> {
  std::int64_t hidden_size;
  explicit MLP(std::int64_t h) : hidden_size(h) {}
  Array call(const Array& x) {
    auto ki = nn::default_kernel_init();
    Array h = nn::Dense({.features = hidden_size,
                         .kernel_init = nn::with_partitioning(ki, names({"data", "model"}))})(x);
    h = nn::relu(h);
    return nn::Dense({.features = x.shape(-1),
                      .kernel_init = nn::with_partitioning(ki, names({"model", "data"}))})(h);
  }
};
struct Model : nn::Module<Model> {
  Array call(const Array& x) {
    auto body = [](Model&, const Array& c) { return std::make_pair(MLP(16)(c), std::tuple<>{}); };
    return nn::scan(body, {.variable_axes = {{"params", 0}},
                           .split_rngs = {{"params", true}},
                           .length = 8,
                           .metadata_params = {{nn::PARTITION_NAME, std::nullopt}}})(*this, x)
        .first;
  }
};

}  // namespace

TEST_CASE("get_partition_spec after nn::scan over layers: test_pjit_scan_over_layers's specs") {
  Array x = ones({8, 12});
  Tree v = Model().init(random::key(0), x);
  NamesTree spec = nn::get_partition_spec(v);
  // The biases are not boxed: () (replicated).
  NamesTree expected;
  NamesTree& mlp = expected["params"]["MLP_0"];
  mlp["Dense_0"]["bias"] = nn::LogicalNames{};
  mlp["Dense_0"]["kernel"] = names({std::nullopt, "data", "model"});
  mlp["Dense_1"]["bias"] = nn::LogicalNames{};
  mlp["Dense_1"]["kernel"] = names({std::nullopt, "model", "data"});
  CHECK(spec == expected);
  // The stacked kernels: one per layer.
  CHECK(nn::unbox(v)["params"]["MLP_0"]["Dense_0"]["kernel"].leaf().shape() == Shape{8, 12, 16});
  CHECK(Model().apply(v, x).shape() == Shape{8, 12});
  // logical_to_mesh keeps the tree; None entries stay None, unboxed leaves replicated.
  Spec mesh = nn::logical_to_mesh(spec, LogicalRules{{"data", "X"}, {"model", "Y"}});
  CHECK(mesh["params"]["MLP_0"]["Dense_1"]["kernel"].leaf() ==
        PartitionSpec{std::nullopt, "Y", "X"});
  CHECK(mesh["params"]["MLP_0"]["Dense_1"]["bias"].leaf() == PartitionSpec{});
}

TEST_CASE("get_partition_spec: () for unboxed arrays, None for other boxes, the tree kept") {
  struct Other final : lift::meta::AxisMetadata {
    std::string type_name() const override { return "Other"; }
    bool equals(const pytree::BoxMetadata& o) const override {
      return dynamic_cast<const Other*>(&o) != nullptr;
    }
    Tree add_axis(const Tree& v, int, const lift::meta::MetadataParams&) const override {
      return v;
    }
    Tree remove_axis(const Tree& v, int, const lift::meta::MetadataParams&) const override {
      return v;
    }
  };
  Tree t{{"a", Tree(ones({2}))},
         {"b", Tree::tuple({nn::Partitioned::box(Tree(ones({2})), names({"x"})), Tree()})},
         {"c", Tree::box(std::make_shared<const Other>(), Tree(ones({1})))}};
  NamesTree spec = nn::get_partition_spec(t);
  CHECK(spec["a"].leaf().empty());
  REQUIRE(spec["b"].is_tuple());
  CHECK(spec["b"].items()[0].leaf() == names({"x"}));
  CHECK(spec["b"].items()[1].is_none());
  CHECK(spec["c"].is_none());
}

}  // namespace test_partitioning
