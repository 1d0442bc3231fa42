// traverse_util: flatten_dict / unflatten_dict / path_aware_map / ModelParamTraversal, ported
// from Flax's tests/traverse_util_test.py, edge cases read off flax/traverse_util.py, and linum's
// error cases.
#include <doctest/doctest.h>

#include <set>
#include <string>

#include <linum/pytree/pytree.hpp>

namespace test_traverse_util {

namespace pt = linum::pytree;
namespace tu = linum::traverse_util;
using Tree = pt::BasicTree<int>;
using pt::Path;

namespace {

// {'foo': 1, 'bar': {'a': 2, 'b': {}}}, the input of traverse_util_test's flatten cases.
Tree t1_input() { return Tree{{"foo", 1}, {"bar", Tree{{"a", 2}, {"b", Tree::dict()}}}}; }

template <class K, class V>
std::vector<K> keys_of(const pt::Dict<K, V>& d) {
  return d.keys();
}

}  // namespace

TEST_SUITE("traverse_util") {
  TEST_CASE("flatten_dict gives tuple keys in insertion order and drops empty dicts") {
    auto flat = tu::flatten_dict(t1_input());
    CHECK(flat == pt::Dict<Path, Tree>{{{"foo"}, 1}, {{"bar", "a"}, 2}});
    CHECK(keys_of(flat) == std::vector<Path>{{"foo"}, {"bar", "a"}});
    CHECK(pt::repr(flat) == "{('foo',): 1, ('bar', 'a'): 2}");
  }

  TEST_CASE("flatten_dict with sep joins the keys") {
    auto flat = tu::flatten_dict(t1_input(), "/");
    CHECK(flat == pt::Dict<std::string, Tree>{{"foo", 1}, {"bar/a", 2}});
    CHECK(pt::repr(flat) == "{'foo': 1, 'bar/a': 2}");
  }

  TEST_CASE("unflatten_dict nests tuple keys") {
    pt::Dict<Path, Tree> flat{{{"foo"}, 1}, {{"bar", "a"}, 2}};
    Tree expected{{"foo", 1}, {"bar", Tree{{"a", 2}}}};
    CHECK(tu::unflatten_dict(flat) == expected);
    CHECK(pt::repr(tu::unflatten_dict(flat)) == "{'foo': 1, 'bar': {'a': 2}}");
  }

  TEST_CASE("keep_empty_nodes keeps empty dicts as empty_node and round-trips") {
    auto flat = tu::flatten_dict(t1_input(), {.keep_empty_nodes = true});
    CHECK(flat ==
          pt::Dict<Path, Tree>{{{"foo"}, 1}, {{"bar", "a"}, 2}, {{"bar", "b"}, pt::empty_node}});
    CHECK(flat.at(Path{"bar", "b"}).is_empty_node());
    CHECK(pt::repr(flat) == "{('foo',): 1, ('bar', 'a'): 2, ('bar', 'b'): _EmptyNode()}");
    CHECK(tu::unflatten_dict(flat) == t1_input());
  }

  TEST_CASE("is_leaf stops descending and is given the path and the dict") {
    Tree xs{{"foo", Tree{{"c", 4}}}, {"bar", Tree{{"a", 2}, {"b", Tree::dict()}}}};
    std::vector<Path> seen;
    auto flat = tu::flatten_dict(xs, {.is_leaf = [&](const Path& k, const Tree& x) {
                                   seen.push_back(k);
                                   return k.size() == 1 && x.size() == 2;
                                 }});
    CHECK(flat ==
          pt::Dict<Path, Tree>{{{"foo", "c"}, 4}, {{"bar"}, Tree{{"a", 2}, {"b", Tree::dict()}}}});
    CHECK(tu::unflatten_dict(flat) == xs);
    // Consulted for dicts only, the root included, never for leaves.
    CHECK(seen == std::vector<Path>{{}, {"foo"}, {"bar"}});
  }

  TEST_CASE("path_aware_map gets the tuple path") {
    Tree xs{{"a", Tree{{"b", 10}, {"c", 2}}}};
    auto out = tu::path_aware_map(
        [](const Path& path, int x) {
          return std::find(path.begin(), path.end(), "b") != path.end() ? x + 1 : -x;
        },
        xs);
    CHECK(out == Tree{{"a", Tree{{"b", 11}, {"c", -2}}}});
  }

  TEST_CASE("path_aware_map builds optax labels and masks; a masked update") {
    using FTree = pt::BasicTree<double>;
    FTree params{{"linear_1", FTree{{"w", 0.0}, {"b", 0.0}}},
                 {"linear_2", FTree{{"w", 0.0}, {"b", 0.0}}}};
    auto has_w = [](const Path& p) { return std::find(p.begin(), p.end(), "w") != p.end(); };
    auto labels = tu::path_aware_map(
        [&](const Path& p, double) { return std::string(has_w(p) ? "kernel" : "bias"); }, params);
    CHECK(pt::repr(labels) ==
          "{'linear_1': {'w': 'kernel', 'b': 'bias'}, 'linear_2': {'w': 'kernel', 'b': 'bias'}}");
    auto mask = tu::path_aware_map([&](const Path& p, double) { return has_w(p); }, params);
    CHECK(pt::repr(mask) ==
          "{'linear_1': {'w': True, 'b': False}, 'linear_2': {'w': True, 'b': False}}");
    // optax.masked(sgd(1.0), mask) with all-ones grads: masked leaves get -lr*g, the others get
    // the gradient itself as the update (b == 1, w == -1).
    auto grads = pt::tree_map([](double) { return 1.0; }, params);
    auto updated = pt::tree_map([](double p, double g, bool m) { return p + (m ? -1.0 * g : g); },
                                params, grads, mask);
    CHECK(updated == FTree{{"linear_1", FTree{{"w", -1.0}, {"b", 1.0}}},
                           {"linear_2", FTree{{"w", -1.0}, {"b", 1.0}}}});
  }

  TEST_CASE("ModelParamTraversal iterates and updates the filtered params") {
    Tree params{{"x", Tree{{"kernel", 1},
                           {"bias", 2},
                           {"y", Tree{{"kernel", 3}, {"bias", 4}}},
                           {"z", Tree::dict()}}}};
    std::set<std::string> names;
    tu::ModelParamTraversal traversal([&](const std::string& name, const Tree&) {
      names.insert(name);
      return name.find("kernel") != std::string::npos;
    });
    auto values = traversal.iterate(params);
    CHECK(values == std::vector<Tree>{1, 3});
    CHECK(names == std::set<std::string>{"/x/kernel", "/x/bias", "/x/y/kernel", "/x/y/bias"});

    Tree expected{{"x", Tree{{"kernel", 2},
                             {"bias", 2},
                             {"y", Tree{{"kernel", 6}, {"bias", 4}}},
                             {"z", Tree::dict()}}}};
    Tree updated = traversal.update([](int x) { return x + x; }, params);
    CHECK(updated == expected);
    CHECK(updated["x"]["z"].is_dict());
    pt::FrozenDict<int> frozen_updated =
        traversal.update([](int x) { return x + x; }, pt::freeze(params));
    CHECK(frozen_updated == expected);
  }

  TEST_CASE("ModelParamTraversal of a non-dict is a ValueError") {
    tu::ModelParamTraversal traversal([](const std::string&, const Tree&) { return true; });
    CHECK_THROWS_WITH_AS(traversal.iterate(Tree::list()),
                         "ModelParamTraversal: Can only traverse a flax Model instance or a nested "
                         "dict, not list",
                         linum::ValueError);
  }

  TEST_CASE("empty dicts with and without keep_empty_nodes") {
    CHECK(tu::flatten_dict(Tree::dict(), {.keep_empty_nodes = true}).empty());
    auto a = tu::flatten_dict(Tree{{"a", Tree::dict()}}, {.keep_empty_nodes = true});
    CHECK(a == pt::Dict<Path, Tree>{{{"a"}, pt::empty_node}});
    auto ab = tu::flatten_dict(Tree{{"a", Tree{{"b", Tree::dict()}}}}, {.keep_empty_nodes = true});
    CHECK(ab == pt::Dict<Path, Tree>{{{"a", "b"}, pt::empty_node}});
    CHECK(tu::flatten_dict(Tree{{"a", Tree{{"b", Tree::dict()}}}}).empty());
  }

  TEST_CASE("is_leaf is consulted at the root") {
    Tree xs{{"a", 1}};
    auto yes = [](const Path&, const Tree&) { return true; };
    CHECK(tu::flatten_dict(xs, {.is_leaf = yes}) == pt::Dict<Path, Tree>{{Path{}, xs}});
    CHECK(tu::flatten_dict(xs, "/", {.is_leaf = yes}) == pt::Dict<std::string, Tree>{{"", xs}});
  }

  TEST_CASE("unflatten_dict with sep turns empty_node into {}") {
    pt::Dict<std::string, Tree> flat{{"a/b", 1}, {"a/c", pt::empty_node}};
    Tree out = tu::unflatten_dict(flat, "/");
    CHECK(out == Tree{{"a", Tree{{"b", 1}, {"c", Tree::dict()}}}});
    CHECK(pt::repr(out) == "{'a': {'b': 1, 'c': {}}}");
  }

  TEST_CASE("a later path replaces a subtree; a path through a leaf is an error") {
    pt::Dict<Path, Tree> later{{{"a", "b"}, 1}, {{"a"}, 2}};
    CHECK(tu::unflatten_dict(later) == Tree{{"a", 2}});
    pt::Dict<Path, Tree> through{{{"a"}, 2}, {{"a", "b"}, 1}};
    CHECK_THROWS_WITH_AS(
        tu::unflatten_dict(through),
        "unflatten_dict: key ('a', 'b') needs a dict at ('a',), but an earlier key "
        "put a leaf there",
        linum::ValueError);
    pt::Dict<std::string, Tree> sep{{"a", 2}, {"a/b", 1}};
    CHECK_THROWS_AS(tu::unflatten_dict(sep, "/"), linum::ValueError);
  }

  TEST_CASE("path_aware_map keeps empty dicts and can return the path") {
    Tree xs{{"a", Tree{{"b", 1}, {"c", Tree::dict()}}}, {"d", 2}};
    auto out = tu::path_aware_map([](const Path& p, int) { return p; }, xs);
    using PTree = pt::BasicTree<Path>;
    CHECK(out ==
          PTree{{"a", PTree{{"b", Path{"a", "b"}}, {"c", PTree::dict()}}}, {"d", Path{"d"}}});
    CHECK(pt::repr(out) == "{'a': {'b': ['a', 'b'], 'c': {}}, 'd': ['d']}");
  }

  TEST_CASE("flatten_dict of a FrozenDict; model surgery's flatten, replace, unflatten, freeze") {
    pt::FrozenDict<int> params{{"Dense_0", Tree{{"kernel", 1}, {"bias", 2}}},
                               {"Dense_1", Tree{{"kernel", 3}, {"bias", 4}}}};
    auto flat = tu::flatten_dict(params, "/");
    CHECK(keys_of(flat) == std::vector<std::string>{"Dense_0/kernel", "Dense_0/bias",
                                                    "Dense_1/kernel", "Dense_1/bias"});
    flat["Dense_1/kernel"] = flat.at("Dense_1/kernel").leaf() * 10;
    auto refrozen = pt::freeze(tu::unflatten_dict(flat, "/"));
    CHECK(refrozen["Dense_1"]["kernel"].leaf() == 30);
    CHECK(refrozen == params.copy({{"Dense_1", Tree{{"kernel", 30}, {"bias", 4}}}}));
    // Flattening with tuple keys and back is the identity too.
    CHECK(tu::unflatten_dict(tu::flatten_dict(params)) == params);
  }

  TEST_CASE("unflatten_dict accepts leaf-valued mappings (std::map of paths)") {
    std::map<Path, double> flat{{{"b", "x"}, 1.5}, {{"a"}, 2.0}};
    auto out = tu::unflatten_dict(flat);
    static_assert(std::is_same_v<decltype(out), pt::BasicTree<double>>);
    CHECK(pt::repr(out) == "{'a': 2.0, 'b': {'x': 1.5}}");
  }

  TEST_CASE("bad input: non-dicts, empty separators, empty paths, non-leaf values") {
    CHECK_THROWS_WITH_AS(tu::flatten_dict(Tree::tuple({1})),
                         "flatten_dict: expected (frozen)dict; got tuple", linum::TypeError);
    CHECK_THROWS_WITH_AS(tu::flatten_dict(Tree(3), "/"),
                         "flatten_dict: expected (frozen)dict; got leaf", linum::TypeError);
    pt::Dict<std::string, Tree> flat{{"a", 1}};
    CHECK_THROWS_WITH_AS(tu::unflatten_dict(flat, ""), "unflatten_dict: empty separator",
                         linum::ValueError);
    pt::Dict<Path, Tree> empty_path{{Path{}, 1}};
    CHECK_THROWS_WITH_AS(tu::unflatten_dict(empty_path),
                         "unflatten_dict: the empty key path () names no entry", linum::ValueError);
    Tree with_tuple{{"a", Tree::tuple({1, 2})}};
    CHECK_THROWS_WITH_AS(tu::path_aware_map([](const Path&, int x) { return x; }, with_tuple),
                         "path_aware_map: the value at ('a',) is a tuple; take a Tree parameter to "
                         "receive non-leaf values",
                         linum::TypeError);
    auto lens =
        tu::path_aware_map([](const Path&, const Tree& x) { return int(x.size()); }, with_tuple);
    CHECK(lens == Tree{{"a", 2}});
  }

  TEST_CASE("sep splitting follows str.split: empty components are keys") {
    pt::Dict<std::string, Tree> flat{{"a//b", 1}, {"", 2}};
    CHECK(pt::repr(tu::unflatten_dict(flat, "/")) == "{'a': {'': {'b': 1}}, '': 2}");
    pt::Dict<std::string, Tree> multi{{"a::b", 1}};
    CHECK(pt::repr(tu::unflatten_dict(multi, "::")) == "{'a': {'b': 1}}");
  }
}

}  // namespace test_traverse_util
