// flax.core.meta: metadata boxes as pytree nodes (static metadata, mapped value), the tree
// functions unbox / add_axis / remove_axis / replace_boxed, Partitioned, and how Scope::param,
// Variable and the lifted vmap / scan carry boxes (flax/core/scope.py, flax/core/lift.py).
#include <doctest/doctest.h>

#include <linum/lift/lift.hpp>
#include <linum/linum.hpp>
#include <linum/nn/initializers.hpp>

#include "../autodiff/transform_testing.hpp"
#include "lift_testing.hpp"

namespace test_meta {

using namespace linum;
using namespace linum::lift::testing;
namespace init = linum::nn::initializers;
namespace meta = linum::lift::meta;
using lift::Scope;
using meta::Partitioned;
using transform_testing::row;

namespace {
bool same(const Array& a, const Array& b) {
  return a.shape() == b.shape() && a.dtype() == b.dtype() && all(equal(a, b)).item<bool>();
}
// Equal structure (box metadata included) and equal leaves.
bool same_tree(const Tree& a, const Tree& b) {
  auto [la, da] = pytree::tree_flatten<Array>(a);
  auto [lb, db] = pytree::tree_flatten<Array>(b);
  if (!(da == db)) return false;
  for (std::size_t i = 0; i < la.size(); ++i)
    if (!same(la[i], lb[i])) return false;
  return true;
}
meta::LogicalNames names_of(const Tree& t) { return meta::partition_names(t); }
meta::LogicalNames names(std::initializer_list<const char*> n) {
  meta::LogicalNames out;
  for (const char* s : n) out.emplace_back(s ? std::optional<std::string>(s) : std::nullopt);
  return out;
}
const meta::MetadataParams kBaz{{meta::PARTITION_NAME, "baz"}};
}  // namespace

TEST_SUITE("lift.meta") {
  TEST_CASE("a Partitioned box is a pytree node: the value is its leaf, the names its structure") {
    Array v = reshape(arange(6.0f), {2, 3});
    Tree b = Partitioned::box(Tree(v), names({"a", "b"}));
    const std::string r = pytree::repr(b);
    CHECK(r.rfind("Partitioned(value=", 0) == 0);
    const std::string tail = ", names=('a', 'b'), mesh=None)";
    CHECK(r.substr(r.size() - tail.size()) == tail);

    auto [leaves, def] = pytree::tree_flatten<Array>(b);
    REQUIRE(leaves.size() == 1);
    CHECK(same(leaves[0], v));
    CHECK(def.to_string() ==
          "PyTreeDef(CustomNode(Partitioned[names=('a', 'b'), mesh=None], [*]))");
    CHECK(def == pytree::tree_structure(Partitioned::box(Tree(zeros({1})), names({"a", "b"}))));
    CHECK_FALSE(def == pytree::tree_structure(Partitioned::box(Tree(v), names({"a", "c"}))));
    CHECK_FALSE(def == pytree::tree_structure(Tree(v)));
    auto paths = pytree::tree_flatten_with_path<Array>(Tree{{"k", b}}).first;
    CHECK(pytree::keystr(paths[0].first) == "['k'].value");

    // Unflatten and tree_map rebuild the box with its names; the value is what is mapped.
    Tree back = pytree::tree_unflatten<Tree>(def, Arrays{v * 2.0f});
    REQUIRE(back.is_box());
    CHECK(names_of(back) == names({"a", "b"}));
    CHECK(same(back.box_value().leaf(), v * 2.0f));
    Tree shapes = pytree::tree_map([](const Array& a) { return Array(float(a.size())); }, b);
    CHECK(names_of(shapes) == names({"a", "b"}));
    CHECK(shapes.box_value().leaf().item<float>() == 6.0f);
    CHECK(same_tree(b, Partitioned::box(Tree(v), names({"a", "b"}))));
    CHECK_FALSE(same_tree(b, Partitioned::box(Tree(v), names({"b", "a"}))));
    // Two trees whose boxes differ in names do not map together.
    CHECK_THROWS_AS(pytree::tree_map([](const Array& a, const Array&) { return a; }, b,
                                     Partitioned::box(Tree(v), names({"x", "y"}))),
                    Error);
    CHECK_THROWS_AS(b.size(), TypeError);
  }

  TEST_CASE("grad and vmap see through boxes: the cotangent keeps the box") {
    Array v = arange(3.0f);
    Tree b = Tree{{"w", Partitioned::box(Tree(v), names({"x"}))}};
    Tree g = linum::grad([](const Tree& t) { return sum(square(meta::unbox(t)["w"].leaf())); })(b);
    REQUIRE(g["w"].is_box());
    CHECK(names_of(g["w"]) == names({"x"}));
    CHECK(close(g["w"].box_value().leaf(), 2.0f * v));
    Tree rows =
        Tree{{"w", Partitioned::box(Tree(reshape(arange(6.0f), {2, 3})), names({"r", "c"}))}};
    Array s = linum::vmap([](const Tree& t) { return sum(meta::unbox(t)["w"].leaf()); })(rows);
    CHECK(close(s, array<float>({3.0f, 12.0f})));
  }

  TEST_CASE("unbox, add_axis, remove_axis and replace_boxed act on every box (flax.core.meta)") {
    Tree t = Tree{{"params", Tree{{"k", Partitioned::box(Tree(ones({2, 3})), names({"a", "b"}))},
                                  {"b", Tree(zeros({3}))}}}};
    Tree u = meta::unbox(t);
    CHECK(u["params"]["k"].is_leaf());
    CHECK(u["params"]["b"].is_leaf());
    CHECK(meta::is_axis_metadata(t["params"]["k"]));
    CHECK_FALSE(meta::is_axis_metadata(u["params"]["k"]));

    Tree added = meta::add_axis(t, 0, kBaz);
    CHECK(names_of(added["params"]["k"]) == names({"baz", "a", "b"}));
    CHECK(same(added["params"]["b"].leaf(), zeros({3})));  // not a box: unchanged
    CHECK(same_tree(meta::remove_axis(added, 0, kBaz), t));
    // Flax pads the names with None up to the index.
    Tree one = Partitioned::box(Tree(ones({2})), names({"a"}));
    CHECK(names_of(meta::add_axis(one, 3, kBaz)) == names({"a", nullptr, nullptr, "baz"}));

    // The wrong name, or no partition_name at all, is an error naming both.
    CHECK(error_of<ValueError>([&] { meta::remove_axis(t, 0, kBaz); }).find("('a', 'b')") !=
          std::string::npos);
    CHECK(error_of<ValueError>([&] { meta::add_axis(t, 0, {}); }).find("partition_name") !=
          std::string::npos);

    Tree re = meta::replace_boxed(t, u);
    CHECK(same_tree(re, t));
    Tree written = meta::replace_boxed(t["params"]["k"], Tree(full({2, 3}, 5.0f)));
    CHECK(names_of(written) == names({"a", "b"}));
    CHECK(same(written.box_value().leaf(), full({2, 3}, 5.0f)));
  }

  TEST_CASE("param stores a with_partitioning init's value boxed and returns it plain") {
    auto f = [](Scope& scope, const Array& x) {
      Array w = scope.param(
          "w", meta::with_partitioning(init::lecun_normal(), names({"in", "out"})), Shape{3, 4});
      // A plain init function gets a box too.
      Array b =
          scope.param("b",
                      meta::with_partitioning(
                          [](const Array& key, const Shape& s) { return random::normal(key, s); },
                          names({"out"})),
                      Shape{4});
      return matmul(x, w) + b;
    };
    Array x = ones({2, 3});
    auto [y, vars] = lift::init(f)(random::key(0), x);
    const Tree& w = vars["params"]["w"];
    REQUIRE(w.is_box());
    CHECK(names_of(w) == names({"in", "out"}));
    CHECK(names_of(vars["params"]["b"]) == names({"out"}));
    // The boxed value is what lecun_normal draws from the same key as an unboxed param.
    auto plain = [](Scope& scope, const Array& x) {
      return matmul(x, scope.param("w", init::lecun_normal(), Shape{3, 4}));
    };
    auto [y0, v0] = lift::init(plain)(random::key(0), x);
    CHECK(same(w.box_value().leaf(), v0["params"]["w"].leaf()));
    // apply reads boxed and unboxed variables alike.
    CHECK(same(lift::apply(f)(vars, x), y));
    CHECK(same(lift::apply(f)(meta::unbox(vars), x), y));
    // The shape check looks inside the box.
    Tree bad = vars;
    bad["params"]["w"] = Partitioned::box(Tree(ones({4, 4})), names({"in", "out"}));
    CHECK_THROWS_AS(lift::apply(f)(bad, x), lift::ScopeParamShapeError);
  }

  TEST_CASE("a boxed variable reads unboxed and keeps its box when written") {
    auto f = [](Scope& scope) {
      auto v = scope.variable("state", "v",
                              [] { return Partitioned::box(Tree(zeros({2})), names({"x"})); });
      Array before = v.value();
      v.value() = before + 1.0f;
      return before;
    };
    auto [before, vars] = lift::init(f)(random::key(0));
    CHECK(same(before, zeros({2})));
    const Tree& v = vars["state"]["v"];
    REQUIRE(v.is_box());
    CHECK(names_of(v) == names({"x"}));
    CHECK(same(v.box_value().leaf(), ones({2})));
  }

  TEST_CASE("lift::vmap removes a mapped axis from the boxes going in and adds it coming out") {
    meta::LogicalNames inside;
    auto body = [&](Scope& scope, const Array& x) {
      Array w = scope.param(
          "w", meta::with_partitioning(init::lecun_normal(), names({"in", "out"})), Shape{2, 3});
      inside = names_of(scope.get_variable("params", "w"));
      return matmul(x, w);
    };
    auto f = [&](Scope& scope, const Array& xs) {
      return lift::vmap(body, {.variable_axes = {{"params", 0}},
                               .split_rngs = {{"params", true}},
                               .metadata_params = {{meta::PARTITION_NAME, "batch"}}})(scope, xs);
    };
    Array xs = random::normal(random::key(1), {4, 2});
    auto [y, vars] = lift::init(f)(random::key(0), xs);
    const Tree& w = vars["params"]["w"];
    REQUIRE(w.is_box());
    CHECK(names_of(w) == names({"batch", "in", "out"}));
    CHECK(w.box_value().leaf().shape() == Shape{4, 2, 3});
    CHECK(inside == names({"in", "out"}));
    // Each row used its own slice of the stacked kernel.
    const Array k = w.box_value().leaf();
    for (std::int64_t i = 0; i < 4; ++i)
      CHECK(close(row(y, i), matmul(row(xs, i), row(k, i)), 1e-6));
    inside.clear();
    CHECK(same(lift::apply(f)(vars, xs), y));
    CHECK(inside == names({"in", "out"}));
    // Without a partition_name a Partitioned box cannot be mapped.
    auto g = [&](Scope& scope, const Array& xs) {
      return lift::vmap(body, {.variable_axes = {{"params", 0}}, .split_rngs = {{"params", true}}})(
          scope, xs);
    };
    CHECK_THROWS_AS(lift::init(g)(random::key(0), xs), ValueError);
  }

  TEST_CASE("lift::scan stacks boxed variables with the scan axis named in their metadata") {
    meta::LogicalNames inside;
    auto body = [&](Scope& scope, const Array& c, const Array&) {
      Array w = scope.param(
          "w", meta::with_partitioning(init::lecun_normal(), names({"in", "out"})), Shape{2, 2});
      inside = names_of(scope.get_variable("params", "w"));
      return std::make_pair(Array(tanh(matmul(c, w))), Tree());
    };
    auto f = [&](Scope& scope, const Array& c, const Array& xs) {
      return lift::scan(body, {.variable_axes = {{"params", 0}},
                               .split_rngs = {{"params", true}},
                               .metadata_params = {{meta::PARTITION_NAME, "layers"}}})(scope, c,
                                                                                       xs);
    };
    Array c0 = ones({1, 2});
    Array xs = zeros({3});
    auto [out, vars] = lift::init(f)(random::key(0), c0, xs);
    const Tree& w = vars["params"]["w"];
    REQUIRE(w.is_box());
    CHECK(names_of(w) == names({"layers", "in", "out"}));
    const Array k = w.box_value().leaf();
    CHECK(k.shape() == Shape{3, 2, 2});
    CHECK(inside == names({"in", "out"}));
    Array c = c0;
    for (std::int32_t t = 0; t < 3; ++t) c = tanh(matmul(c, row(k, t)));
    CHECK(close(out.first, c, 1e-6));
    CHECK(same(lift::apply(f)(vars, c0, xs).first, out.first));
  }
}

}  // namespace test_meta
