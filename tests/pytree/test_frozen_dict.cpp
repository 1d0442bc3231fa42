// FrozenDict and the flax.core.frozen_dict helpers, ported from Flax's
// tests/core/core_frozen_dict_test.py and edge cases read off flax/core/frozen_dict.py, plus
// byte-for-byte pretty_repr checks against the printouts of Flax's "Model surgery" guide.
#include <doctest/doctest.h>

#include <functional>
#include <sstream>
#include <string>
#include <type_traits>

#include <linum/pytree/pytree.hpp>

namespace pt = linum::pytree;
using Tree = pt::BasicTree<int>;
using Frozen = pt::FrozenDict<int>;

namespace {

// A stand-in for autodiff's Array: a leaf that prints itself with operator<<, like JAX.
struct FakeArray {
  std::vector<std::int64_t> shape;
  std::string text;
  friend std::ostream& operator<<(std::ostream& os, const FakeArray& a) { return os << a.text; }
};

}  // namespace

template <>
struct linum::pytree::is_leaf<FakeArray> : std::true_type {};

TEST_SUITE("frozen_dict") {
  TEST_CASE("freeze copies, so later changes to the source do not show") {
    Tree xs{{"a", 1}, {"b", Tree{{"c", 2}}}};
    Frozen f = pt::freeze(xs);
    xs["a"].leaf() += 1;
    xs["b"]["c"].leaf() += 1;
    CHECK(pt::unfreeze(f) == Tree{{"a", 1}, {"b", Tree{{"c", 2}}}});
  }

  TEST_CASE("tree_map over FrozenDicts where the first is a prefix of the second") {
    auto out = pt::tree_map([](int a, const Tree& b) { return std::pair<int, Tree>(a, b); },
                            pt::freeze(Tree{{"a", 2}}), pt::freeze(Tree{{"a", Tree{{"b", 1}}}}));
    using PTree = pt::BasicTree<std::pair<int, Tree>>;
    CHECK(pt::unfreeze(out) == PTree{{"a", std::pair<int, Tree>(2, Tree{{"b", 1}})}});
    CHECK(pt::repr(pt::unfreeze(out)) == "{'a': (2, {'b': 1})}");
  }

  TEST_CASE("equal FrozenDicts hash equal, different ones differently") {
    std::hash<Frozen> h;
    Frozen a{{"a", 1}, {"b", Tree{{"c", 2}}}};
    CHECK(h(a) != h(Frozen{{"a", 1}, {"b", Tree{{"c", 3}}}}));
    CHECK(h(a) == h(Frozen{{"b", Tree{{"c", 2}}}, {"a", 1}}));  // order does not matter
  }

  TEST_CASE("items() in insertion order, nested dicts compare equal to FrozenDicts") {
    auto items = pt::freeze(Tree{{"a", 1}, {"b", Tree{{"c", 2}}}}).items();
    REQUIRE(items.size() == 2);
    CHECK(items[0].first == "a");
    CHECK(items[0].second == Tree(1));
    CHECK(items[1].first == "b");
    CHECK(items[1].second == pt::freeze(Tree{{"c", 2}}));
  }

  TEST_CASE("fd[key] of a nested dict is a FrozenDict, as Flax's __getitem__; leaves as stored") {
    Frozen fd{{"a", 1}, {"b", Tree{{"c", 2}, {"d", Tree{{"e", 3}}}}}};
    CHECK(fd["b"].is_frozen_dict());
    CHECK(fd["b"].as_frozen_dict() == Frozen{{"c", 2}, {"d", Tree{{"e", 3}}}});
    // Reading through the returned FrozenDict freezes the next level too.
    CHECK(fd["b"].as_frozen_dict()["d"].is_frozen_dict());
    CHECK(fd.at("b").is_frozen_dict());
    CHECK(fd.get("b").is_frozen_dict());
    CHECK(fd.values()[1].is_frozen_dict());
    CHECK(fd.items()[1].second.is_frozen_dict());
    CHECK(fd["a"] == Tree(1));
    // The nested dict is still held plain (Flax's _dict), so unfreeze and dict() are unchanged.
    CHECK(fd.dict().at("b").is_dict());
    CHECK(fd.unfreeze()["b"].is_dict());
    // A nested FrozenDict compares equal to the plain dict it freezes.
    CHECK(fd["b"] == Tree(Frozen{{"c", 2}, {"d", Tree{{"e", 3}}}}));
  }

  TEST_CASE("repr prints Flax's layout") {
    Frozen fd{{"a", 1}, {"b", Tree{{"c", 2}, {"d", Tree::dict()}}}};
    const std::string expected =
        "FrozenDict({\n    a: 1,\n    b: {\n        c: 2,\n        d: {},\n    },\n})";
    CHECK(pt::repr(fd) == expected);
    CHECK(fd.pretty_repr() == expected);
    std::ostringstream os;
    os << fd;
    CHECK(os.str() == expected);
  }

  TEST_CASE("rebuilding from unfreeze() gives an equal, distinct FrozenDict") {
    Frozen before{{"a", Tree{{"b", 1}, {"c", 2}}}};
    Frozen after(before.unfreeze());
    CHECK(after == before);
    CHECK(&after.dict() != &before.dict());
    CHECK(after == Tree{{"a", Tree{{"b", 1}, {"c", 2}}}});
  }

  TEST_CASE("pop of a plain dict returns plain dicts") {
    auto [rest, value] = pt::pop(Tree{{"a", 1}, {"b", Tree{{"c", 2}}}}, "b");
    static_assert(std::is_same_v<decltype(rest), Tree>);
    CHECK(rest == Tree{{"a", 1}});
    CHECK(value == Tree{{"c", 2}});
  }

  TEST_CASE("pop of a FrozenDict returns a FrozenDict and the value") {
    Frozen x{{"a", 1}, {"b", Tree{{"c", 2}}}};
    auto [rest, value] = pt::pop(x, "b");
    static_assert(std::is_same_v<decltype(rest), Frozen>);
    CHECK(rest == Frozen{{"a", 1}});
    CHECK(value == Frozen{{"c", 2}});
    auto [rest2, value2] = x.pop("a");
    CHECK(rest2 == Frozen{{"b", Tree{{"c", 2}}}});
    CHECK(value2 == Tree(1));
    CHECK_THROWS_WITH_AS(x.pop("zz"), "FrozenDict: key 'zz' not found; keys are ['a', 'b']",
                         linum::KeyError);
  }

  TEST_CASE("copy of a plain dict merges add_or_replace shallowly") {
    Tree out =
        pt::copy(Tree{{"a", 1}, {"b", Tree{{"c", 2}}}}, Tree{{"b", Tree{{"c", -1}, {"d", 3}}}});
    CHECK(out == Tree{{"a", 1}, {"b", Tree{{"c", -1}, {"d", 3}}}});
  }

  TEST_CASE("copy without add_or_replace is an equal value of the same type") {
    Tree d{{"a", 1}, {"b", Tree{{"c", 2}}}};
    auto dc = pt::copy(d);
    static_assert(std::is_same_v<decltype(dc), Tree>);
    CHECK(dc == d);
    Frozen f = pt::freeze(d);
    auto fc = pt::copy(f);
    static_assert(std::is_same_v<decltype(fc), Frozen>);
    CHECK(fc == f);
  }

  TEST_CASE("pretty_repr of a plain dict and of a non-dict") {
    CHECK(pt::pretty_repr(Tree{{"a", 1}, {"b", Tree{{"c", 2}}}}) ==
          "{\n    a: 1,\n    b: {\n        c: 2,\n    },\n}");
    CHECK(pt::pretty_repr(345) == "345");
    CHECK(pt::pretty_repr(Tree(345)) == "345");
    CHECK(pt::pretty_repr(Tree::dict()) == "{}");
  }

  TEST_CASE("FrozenDicts flatten in sorted-key order, with DictKey paths") {
    Frozen x = pt::freeze(Tree{{"c", 1}, {"b", Tree{{"a", 2}}}});
    auto [leaves, def] = pt::tree_flatten(x);
    CHECK(leaves == std::vector<int>{2, 1});
    CHECK(def.to_string() == "PyTreeDef(CustomNode(FrozenDict[('b', 'c')], [{'a': *}, *]))");
    CHECK(pt::tree_unflatten<Frozen>(def, leaves) == x);
    auto [with_path, def2] = pt::tree_flatten_with_path(x);
    CHECK(def2 == def);
    REQUIRE(with_path.size() == 2);
    CHECK(with_path[0].first == pt::KeyPath{pt::DictKey{"b"}, pt::DictKey{"a"}});
    CHECK(with_path[0].second == 2);
    CHECK(with_path[1].first == pt::KeyPath{pt::DictKey{"c"}});
    CHECK(with_path[1].second == 1);
  }

  TEST_CASE("pretty_repr with num_spaces=2 quotes string values, not keys") {
    pt::FrozenDict<std::string> fd{
        {"a", pt::BasicTree<std::string>{{"b", pt::BasicTree<std::string>{{"c", "x"}}}}}};
    CHECK(fd.pretty_repr(2) == "FrozenDict({\n  a: {\n    b: {\n      c: 'x',\n    },\n  },\n})");
    // The module-level pretty_repr ignores num_spaces for a FrozenDict, as Flax's does.
    CHECK(pt::pretty_repr(fd, 2) == fd.pretty_repr(4));
  }

  TEST_CASE("keys print with str(), values with repr()") {
    pt::FrozenDict<std::string> fd{{"1", "one"}, {"('t',)", pt::BasicTree<std::string>::dict()}};
    CHECK(pt::repr(fd) == "FrozenDict({\n    1: 'one',\n    ('t',): {},\n})");
  }

  TEST_CASE("a FrozenDict cannot be assigned through") {
    // Flax raises ValueError('FrozenDict is immutable.'); in C++ the assignment does not compile.
    static_assert(!std::is_assignable_v<decltype(std::declval<Frozen&>()["a"]), int>);
    static_assert(!std::is_assignable_v<decltype(std::declval<Frozen&>()["a"]), Tree>);
  }

  TEST_CASE("mapping equality with plain dicts, in any order") {
    CHECK(Frozen{{"a", 1}} == Tree{{"a", 1}});
    CHECK(Tree{{"a", 1}} == Frozen{{"a", 1}});
    CHECK(Frozen{{"a", 1}, {"b", 2}} == Frozen{{"b", 2}, {"a", 1}});
    CHECK_FALSE(Frozen{{"a", 1}} == Tree{{"a", 2}});
    CHECK_FALSE(Frozen{{"a", 1}} == Tree::list({1}));
  }

  TEST_CASE("copy replaces a top-level entry wholesale") {
    Frozen x{{"a", Tree{{"x", 1}, {"y", 2}}}};
    CHECK(pt::copy(x, Tree{{"a", Tree{{"x", 9}}}}) == Frozen{{"a", Tree{{"x", 9}}}});
    // A replaced key keeps its position, a new key goes last (Python's {**self, **add}).
    Frozen y{{"a", 1}, {"b", 2}};
    CHECK(y.copy({{"a", 10}, {"c", 3}}).keys() == std::vector<std::string>{"a", "b", "c"});
  }

  TEST_CASE("copy and pop of a non-dict are TypeErrors") {
    CHECK_THROWS_WITH_AS(pt::copy(Tree::list({1}), Tree::dict()),
                         "copy: Expected FrozenDict or dict, got list", linum::TypeError);
    CHECK_THROWS_WITH_AS(pt::pop(Tree::list({1}), "0"),
                         "pop: Expected FrozenDict or dict, got list", linum::TypeError);
  }

  TEST_CASE("lookups: KeyError names the key and the keys present; get has a default") {
    Frozen x{{"params", Tree{{"w", 1}}}};
    CHECK(x["params"]["w"].leaf() == 1);
    CHECK_THROWS_WITH_AS(x["batch_stats"],
                         "FrozenDict: key 'batch_stats' not found; keys are ['params']",
                         linum::KeyError);
    CHECK(x.get("batch_stats", Tree::dict()) == Tree::dict());
    CHECK(x.get("batch_stats").is_none());
    CHECK(x.contains("params"));
    CHECK_FALSE(x.contains("w"));
    CHECK(x.size() == 1);
    CHECK(Frozen().empty());
    CHECK(pt::repr(Frozen()) == "FrozenDict({})");
    CHECK_THROWS_AS(Frozen(Tree::tuple({1})), linum::TypeError);
  }

  TEST_CASE("pop(variables, 'params') splits a variable collection (flax.core.pop)") {
    Frozen variables{{"params", Tree{{"w", 1}}}, {"batch_stats", Tree{{"mean", 0}}}};
    auto [others, params] = pt::pop(variables, "params");
    CHECK(others == Frozen{{"batch_stats", Tree{{"mean", 0}}}});
    CHECK(params == Tree{{"w", 1}});
    CHECK(variables.size() == 2);  // the source is unchanged
  }

  TEST_CASE("model-surgery guide: a tree of shapes from tree_map prints byte for byte like Flax") {
    auto arr = [](std::vector<std::int64_t> shape) {
      return FakeArray{std::move(shape), "Array(...)"};
    };
    using ATree = pt::BasicTree<FakeArray>;
    // Flax's init creates kernel before bias; tree_map rebuilds in sorted order, as JAX does.
    pt::FrozenDict<FakeArray> params{
        {"Conv_0", ATree{{"kernel", arr({3, 3, 1, 32})}, {"bias", arr({32})}}},
        {"Conv_1", ATree{{"kernel", arr({3, 3, 32, 64})}, {"bias", arr({64})}}},
        {"Dense_0", ATree{{"kernel", arr({3136, 256})}, {"bias", arr({256})}}},
        {"Dense_1", ATree{{"kernel", arr({256, 10})}, {"bias", arr({10})}}},
    };
    auto shapes = pt::tree_map([](const FakeArray& a) { return a.shape; }, params);
    static_assert(std::is_same_v<decltype(shapes), pt::FrozenDict<std::vector<std::int64_t>>>);
    const char* expected = R"(FrozenDict({
    Conv_0: {
        bias: (32,),
        kernel: (3, 3, 1, 32),
    },
    Conv_1: {
        bias: (64,),
        kernel: (3, 3, 32, 64),
    },
    Dense_0: {
        bias: (256,),
        kernel: (3136, 256),
    },
    Dense_1: {
        bias: (10,),
        kernel: (256, 10),
    },
}))";
    std::ostringstream os;
    os << shapes;
    CHECK(os.str() == expected);

    // In[7]: the flat dict as IPython shows it (pprint's layout).
    auto flat_shapes = pt::tree_map([](const FakeArray& a) { return a.shape; },
                                    linum::traverse_util::flatten_dict(params, "/"));
    CHECK(pt::pformat(flat_shapes) == R"({'Conv_0/bias': (32,),
 'Conv_0/kernel': (3, 3, 1, 32),
 'Conv_1/bias': (64,),
 'Conv_1/kernel': (3, 3, 32, 64),
 'Dense_0/bias': (256,),
 'Dense_0/kernel': (3136, 256),
 'Dense_1/bias': (10,),
 'Dense_1/kernel': (256, 10)})");
  }

  TEST_CASE("model-surgery guide: sown tuples and multi-line leaves inside a FrozenDict") {
    using ATree = pt::BasicTree<FakeArray>;
    auto yes = [] { return ATree::tuple({FakeArray{{}, "Array(True, dtype=bool)"}}); };
    pt::FrozenDict<FakeArray> is_finite{{"Conv_0", ATree{{"__call__", yes()}}},
                                        {"Dense_0", ATree{{"__call__", yes()}}},
                                        {"__call__", yes()}};
    CHECK(pt::repr(is_finite) == R"(FrozenDict({
    Conv_0: {
        __call__: (Array(True, dtype=bool),),
    },
    Dense_0: {
        __call__: (Array(True, dtype=bool),),
    },
    __call__: (Array(True, dtype=bool),),
}))");
    CHECK(pt::tree_all(
        is_finite, [](const FakeArray& a) { return a.text.find("True") != std::string::npos; }));
    // Flax indents every line of a value, so a multi-line leaf keeps its own alignment.
    pt::FrozenDict<FakeArray> grads{
        {"Dense_0",
         ATree{{"__call__", ATree::tuple({FakeArray{
                                {}, "Array([[1., 2.],\n       [3., 4.]], dtype=float32)"}})}}}};
    CHECK(pt::repr(grads) ==
          "FrozenDict({\n    Dense_0: {\n        __call__: (Array([[1., 2.],\n"
          "               [3., 4.]], dtype=float32),),\n    },\n})");
  }
}
