// FrozenDicts nested in plain dicts (std::map, the dynamic Tree) and plain dicts in FrozenDicts:
// flatten, tree_map, tree_unflatten and printing keep each node's kind, as JAX does for a
// Python dict holding a FrozenDict; Flax's _prepare_freeze / unfreeze / flatten_dict semantics.
#include <doctest/doctest.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include <linum/pytree/pytree.hpp>

namespace test_frozen_nesting {

namespace pt = linum::pytree;
namespace tu = linum::traverse_util;
using Tree = pt::BasicTree<double>;
using FD = pt::FrozenDict<double>;

namespace {

// {'params': FrozenDict({'w': 1, 'b': {'c': 2}}), 'batch_stats': {'m': 3}}
Tree variables() {
  return Tree{{"params", FD{{"w", 1.0}, {"b", Tree{{"c", 2.0}}}}},
              {"batch_stats", Tree{{"m", 3.0}}}};
}

}  // namespace

TEST_SUITE("pytree FrozenDict nesting") {
  TEST_CASE("a Tree holding a FrozenDict flattens as JAX's dict holding one") {
    const Tree t = variables();
    CHECK(t.at("params").is_frozen_dict());
    CHECK(t.at("params").kind() == pt::NodeKind::FrozenDict);
    CHECK(t.at("params").size() == 2);
    CHECK(t.at("params").at("b").at("c").leaf() == 2.0);
    CHECK(t.contains("params"));
    CHECK(t.at("params").contains("w"));
    auto [leaves, def] = pt::tree_flatten(t);
    CHECK(leaves == std::vector<double>{3.0, 2.0, 1.0});
    CHECK(def.to_string() ==
          "PyTreeDef({'batch_stats': {'m': *}, 'params': CustomNode(FrozenDict[('b', 'w')], "
          "[{'c': *}, *])})");
    CHECK(pt::keystr(pt::tree_leaves_with_path(t)[1].first) == "['params']['b']['c']");
    CHECK(pt::repr(t) ==
          "{'params': FrozenDict({\n    w: 1.0,\n    b: {\n        c: 2.0,\n    },\n}), "
          "'batch_stats': {'m': 3.0}}");
  }

  TEST_CASE("tree_map and tree_unflatten keep each node's kind") {
    const Tree t = variables();
    auto m = pt::tree_map([](double x) { return static_cast<int>(10 * x); }, t);
    CHECK(m.at("params").is_frozen_dict());
    CHECK(m.at("params").at("b").is_dict());
    CHECK(m.at("batch_stats").is_dict());
    CHECK(m.at("params").at("w").leaf() == 10);
    auto [leaves, def] = pt::tree_flatten(t);
    const Tree back = pt::tree_unflatten(def, leaves);  // the dynamic Tree holds FrozenDicts now
    CHECK(back == t);
    CHECK(back.at("params").is_frozen_dict());
    CHECK(pt::tree_structure(back) == def);
    // Over several trees the kinds must agree: a FrozenDict is not a dict.
    auto sum = pt::tree_map([](double a, double b) { return a + b; }, t, t);
    CHECK(sum.at("params").at("w").leaf() == 2.0);
    CHECK_THROWS_WITH_AS(pt::tree_map([](double a, double b) { return a + b; }, t, pt::unfreeze(t)),
                         doctest::Contains("tree 0 has a FrozenDict with keys ['b', 'w'], tree 1 "
                                           "has a dict with keys ['b', 'w']"),
                         linum::ValueError);
  }

  TEST_CASE("FrozenDicts inside std::map and plain dicts inside FrozenDicts") {
    std::map<std::string, FD> m{{"vars", FD{{"a", 1.0}, {"n", Tree{{"b", 2.0}}}}}};
    auto m2 = pt::tree_map([](double x) { return x + 1; }, m);
    static_assert(std::is_same_v<decltype(m2), std::map<std::string, FD>>);
    CHECK(m2.at("vars")["n"]["b"].leaf() == 3.0);
    CHECK(pt::tree_structure(m2).to_string() ==
          "PyTreeDef({'vars': CustomNode(FrozenDict[('a', 'n')], [*, {'b': *}])})");
    auto [leaves, def] = pt::tree_flatten(m);
    CHECK(pt::tree_unflatten<std::map<std::string, FD>>(def, leaves).at("vars") == m.at("vars"));
    // The same structure as a Tree holding the FrozenDict.
    CHECK(pt::tree_structure(Tree{{"vars", m.at("vars")}}) == def);
  }

  TEST_CASE("Flax semantics: a nested FrozenDict is held as a dict; unfreeze and flatten_dict") {
    // _prepare_freeze: FrozenDict({'inner': FrozenDict(...)}) holds {'inner': {...}}.
    FD outer{{"inner", Tree(FD{{"z", 5.0}})}};
    CHECK(outer.dict().at("inner").is_dict());
    CHECK(outer["inner"].is_frozen_dict());  // read back frozen, as Flax's __getitem__
    CHECK(pt::tree_structure(outer).to_string() ==
          "PyTreeDef(CustomNode(FrozenDict[('inner',)], [{'z': *}]))");
    // unfreeze of a dict thaws the FrozenDicts inside it; freeze of a frozen Tree node works.
    const Tree thawed = pt::unfreeze(variables());
    CHECK(thawed.at("params").is_dict());
    CHECK(thawed.at("params").at("b").at("c").leaf() == 2.0);
    CHECK(pt::freeze(variables().at("params")) == FD{{"w", 1.0}, {"b", Tree{{"c", 2.0}}}});
    // flatten_dict descends into FrozenDicts, as Flax's does.
    const auto flat = tu::flatten_dict(variables(), "/");
    CHECK(flat.size() == 3);
    CHECK(flat.at("params/b/c").leaf() == 2.0);
    // A frozen node is immutable through the Tree.
    Tree t = variables();
    CHECK_THROWS_WITH_AS(t["params"]["w"] = 2.0, doctest::Contains("FrozenDict is immutable"),
                         linum::TypeError);
    // Equal dicts hash equal whether frozen or not, inside a Tree too.
    CHECK(Tree{{"p", FD{{"a", 1.0}}}}.hash() == Tree{{"p", FD{{"a", 1.0}}}}.hash());
  }
}

}  // namespace test_frozen_nesting
