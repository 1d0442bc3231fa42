// The dynamic BasicTree and the insertion-ordered Dict: construction, access, errors, equality.
#include <doctest/doctest.h>

#include <sstream>
#include <string>

#include <linum/pytree/pytree.hpp>

namespace test_tree {

namespace pt = linum::pytree;
using Tree = pt::BasicTree<double>;

TEST_SUITE("tree") {
  TEST_CASE("kinds and constructors") {
    CHECK(Tree().is_none());
    CHECK(Tree(std::nullopt).is_none());
    CHECK(Tree(1.5).is_leaf());
    CHECK(Tree(2).leaf() == 2.0);  // converts to the leaf type
    CHECK(Tree(pt::empty_node).is_empty_node());
    CHECK(Tree{{"a", 1}}.is_dict());
    CHECK(Tree::dict().is_dict());
    CHECK(Tree::tuple({1, 2}).is_tuple());
    CHECK(Tree::list({1, 2}).is_list());
    CHECK(Tree::tuple({1, 2}).kind() == pt::NodeKind::Tuple);
    CHECK(pt::repr(Tree{{"b", Tree::tuple({1})}, {"a", Tree::list({Tree(), pt::empty_node})}}) ==
          "{'b': (1.0,), 'a': [None, _EmptyNode()]}");
  }

  TEST_CASE("indexing reads, and assignment builds nested dicts") {
    Tree t;
    t["params"]["Dense_0"]["kernel"] = 1.0;
    t["params"]["Dense_0"]["bias"] = 0.5;
    CHECK(pt::repr(t) == "{'params': {'Dense_0': {'kernel': 1.0, 'bias': 0.5}}}");
    const Tree& c = t;
    CHECK(c["params"]["Dense_0"]["bias"].leaf() == 0.5);
    CHECK(c.contains("params"));
    CHECK_FALSE(c.contains("x"));
    Tree s = Tree::tuple({1, Tree{{"x", 2}}});
    CHECK(s[1]["x"].leaf() == 2.0);
    s[0] = 5.0;
    CHECK(s[std::size_t(0)].leaf() == 5.0);
    s.append(3.0);
    CHECK(s.size() == 3);
  }

  TEST_CASE("errors name what was expected and what came") {
    const Tree t{{"a", 1}, {"b", Tree::list({1})}};
    CHECK_THROWS_WITH_AS(t["c"],
                         "Tree::operator[]: key 'c' not found; the dict has keys ['a', 'b']",
                         linum::KeyError);
    CHECK_THROWS_WITH_AS(t["a"]["x"],
                         "Tree::operator[]: cannot look up key 'x' in a leaf; expected a dict",
                         linum::TypeError);
    CHECK_THROWS_WITH_AS(t["b"][3], "Tree::operator[]: index 3 out of range for a list of 1",
                         linum::IndexError);
    CHECK_THROWS_WITH_AS(t["b"].leaf(), "Tree::leaf: expected a leaf, got a list",
                         linum::TypeError);
    CHECK_THROWS_WITH_AS(t.as_tuple(), "Tree::as_tuple: expected a tuple, got a dict",
                         linum::TypeError);
    CHECK_THROWS_WITH_AS(t["a"].size(), "Tree::size: a leaf has no size", linum::TypeError);
    CHECK_THROWS_WITH_AS(t.items(), "Tree::items: expected a tuple or a list, got dict",
                         linum::TypeError);
  }

  TEST_CASE("equality: dicts as mappings, sequences elementwise, tuple != list") {
    CHECK(Tree{{"a", 1}, {"b", 2}} == Tree{{"b", 2}, {"a", 1}});
    CHECK(Tree::tuple({1, 2}) != Tree::list({1, 2}));
    CHECK(Tree::tuple({1, 2}) != Tree::tuple({2, 1}));
    CHECK(Tree() == Tree());
    CHECK(Tree() != Tree(0.0));
    CHECK(Tree(pt::empty_node) == Tree(pt::empty_node));
    CHECK(std::hash<Tree>{}(Tree{{"a", 1}, {"b", 2}}) ==
          std::hash<Tree>{}(Tree{{"b", 2}, {"a", 1}}));
  }

  TEST_CASE("Dict keeps insertion order, replaces in place, looks up large dicts by index") {
    pt::Dict<std::string, int> d{{"b", 1}, {"a", 2}};
    d["c"] = 3;
    d.insert_or_assign("b", 10);
    CHECK(d.keys() == std::vector<std::string>{"b", "a", "c"});
    CHECK(d.at("b") == 10);
    CHECK(d.sorted_positions() == std::vector<std::size_t>{1, 0, 2});
    CHECK(d.erase("a"));
    CHECK_FALSE(d.erase("a"));
    CHECK(d.keys() == std::vector<std::string>{"b", "c"});
    CHECK_THROWS_WITH_AS(d.at("zz"), "Dict::at: key 'zz' not found", linum::KeyError);
    CHECK(pt::repr(d) == "{'b': 10, 'c': 3}");

    pt::Dict<std::string, int> big;
    auto key = [](int i) { return pt::detail::cat("k", i); };
    for (int i = 0; i < 100; ++i) big[key(i)] = i;
    for (int i = 0; i < 100; i += 7) CHECK(big.at(key(i)) == i);
    CHECK(big.erase("k50"));
    CHECK_FALSE(big.contains("k50"));
    CHECK(big.at("k99") == 99);  // positions after the erased entry moved
    pt::Dict<std::string, int> copy = big;
    CHECK(copy.at("k98") == 98);
    CHECK(copy == big);
    copy["k98"] = -1;
    CHECK(copy != big);

    pt::Dict<pt::Path, int> flat{{{"a", "b"}, 1}};
    CHECK(flat.at(pt::Path{"a", "b"}) == 1);
    CHECK(pt::repr(flat) == "{('a', 'b'): 1}");
    std::ostringstream os;
    os << flat;
    CHECK(os.str() == "{('a', 'b'): 1}");
  }
}

}  // namespace test_tree
