// tree_util over every pytree kind: structures and their printing, flatten/unflatten round trips,
// heterogeneous trees, tree_map over several trees (prefixes, mismatches, leaf-type changes),
// key paths, reductions, and user types joining by a Hana declaration or node_traits.
#include <doctest/doctest.h>

#include <array>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include <linum/pytree/pytree.hpp>

namespace pt = linum::pytree;
using Tree = pt::BasicTree<double>;
using Shape = std::vector<std::int64_t>;

namespace {

struct Point {
  BOOST_HANA_DEFINE_STRUCT(Point, (double, x), (double, y));
  friend bool operator==(const Point&, const Point&) = default;
};

// An optax-like state: a template over its fields, so tree_map may change its leaf types.
template <class Count, class Params>
struct AdamState {
  BOOST_HANA_DEFINE_STRUCT(AdamState, (Count, count), (Params, mu), (Params, nu));
};
struct EmptyState {
  BOOST_HANA_DEFINE_STRUCT(EmptyState);
  friend bool operator==(const EmptyState&, const EmptyState&) = default;
};

// A user container joining with one node_traits specialisation.
template <class T>
struct Interval {
  T lo, hi;
  friend bool operator==(const Interval&, const Interval&) = default;
};
struct Pair {
  int a;
  double b;
  friend bool operator==(const Pair&, const Pair&) = default;
};

// A leaf type that is neither arithmetic nor convertible: declared with is_leaf.
struct Tensor {
  Shape shape;
  friend bool operator==(const Tensor&, const Tensor&) = default;
};

}  // namespace

template <class T>
struct linum::pytree::node_traits<Interval<T>> {
  static constexpr std::string_view name = "Interval";
  static constexpr std::array<std::string_view, 2> keys = {"lo", "hi"};
  static auto children(const Interval<T>& i) { return std::tie(i.lo, i.hi); }
  template <class A, class B>
  static Interval<A> from_children(A lo, B hi) {
    return {std::move(lo), static_cast<A>(std::move(hi))};
  }
};
template <>
struct linum::pytree::node_traits<Pair> {
  static constexpr std::string_view name = "Pair";
  static auto children(const Pair& p) { return std::tie(p.a, p.b); }
  static Pair from_children(int a, double b) { return {a, b}; }
};
template <>
struct linum::pytree::is_leaf<Tensor> : std::true_type {};

// Round trip through tree_flatten / tree_unflatten<T>, checking the structure string too.
template <class L = void, class T>
void check_round_trip(const T& x, const std::string& structure) {
  auto [leaves, def] = pt::tree_flatten<L>(x);
  CHECK(def.to_string() == structure);
  CHECK(def == pt::tree_structure(x));
  CHECK(def.num_leaves() == leaves.size());
  CHECK(pt::tree_unflatten<T>(def, leaves) == x);
  CHECK(pt::tree_unflatten<T>(def, std::move(leaves)) == x);  // moving the leaves in
  auto [leaves2, def2] = pt::tree_flatten<L>(x);
  CHECK(pt::tree_unflatten_like(x, leaves2) == x);
}

TEST_SUITE("tree_util") {
  TEST_CASE("every container kind flattens in JAX's order and round-trips") {
    check_round_trip(2.5, "PyTreeDef(*)");
    check_round_trip(std::tuple<double, int>{1, 2}, "PyTreeDef((*, *))");
    check_round_trip<double>(std::tuple<>{}, "PyTreeDef(())");
    check_round_trip(std::pair<double, double>{1, 2}, "PyTreeDef((*, *))");
    check_round_trip(std::array<double, 1>{3}, "PyTreeDef((*,))");
    check_round_trip(std::vector<double>{1, 2, 3}, "PyTreeDef([*, *, *])");
    check_round_trip(std::vector<std::vector<double>>{{1}, {}}, "PyTreeDef([[*], []])");
    check_round_trip(std::map<std::string, double>{{"b", 1}, {"a", 2}},
                     "PyTreeDef({'a': *, 'b': *})");
    check_round_trip(std::unordered_map<std::string, double>{{"b", 1}, {"a", 2}, {"c", 3}},
                     "PyTreeDef({'a': *, 'b': *, 'c': *})");
    check_round_trip(pt::Dict<std::string, double>{{"b", 1}, {"a", 2}},
                     "PyTreeDef({'a': *, 'b': *})");
    check_round_trip<double>(std::optional<double>(), "PyTreeDef(None)");
    check_round_trip(std::optional<double>(4), "PyTreeDef(*)");
    check_round_trip(Point{1, 2}, "PyTreeDef(CustomNode(namedtuple[Point], [*, *]))");
    check_round_trip<double>(EmptyState{}, "PyTreeDef(CustomNode(namedtuple[EmptyState], []))");
    check_round_trip(Interval<double>{0, 1}, "PyTreeDef(CustomNode(Interval[()], [*, *]))");
    check_round_trip<double>(Pair{1, 2.5}, "PyTreeDef(CustomNode(Pair[()], [*, *]))");
    check_round_trip(pt::FrozenDict<double>{{"b", 1}, {"a", Tree{{"c", 2}}}},
                     "PyTreeDef(CustomNode(FrozenDict[('a', 'b')], [{'c': *}, *]))");
    check_round_trip(pt::FrozenDict<double>{{"only", 1}},
                     "PyTreeDef(CustomNode(FrozenDict[('only',)], [*]))");
    check_round_trip(Tree{{"b", Tree::tuple({1, Tree()})}, {"a", Tree::list({2, pt::empty_node})}},
                     "PyTreeDef({'a': [*, CustomNode(_EmptyNode[()], [])], 'b': (*, None)})");
    check_round_trip(Tree(1.0), "PyTreeDef(*)");
    check_round_trip<double>(Tree(), "PyTreeDef(None)");
    check_round_trip(Tensor{{2, 3}}, "PyTreeDef(*)");
  }

  TEST_CASE("a heterogeneous tree: tuple of map of vector of Hana struct, and friends") {
    using Hetero = std::tuple<std::map<std::string, std::vector<Point>>, int, std::optional<Tree>,
                              std::array<float, 2>>;
    Hetero h{{{"b", {Point{1, 2}}}, {"a", {Point{3, 4}, Point{5, 6}}}},
             7,
             Tree{{"z", Tree::tuple({8})}},
             {9.f, 10.f}};
    auto [leaves, def] = pt::tree_flatten(h);
    static_assert(std::is_same_v<decltype(leaves), std::vector<double>>);  // the common leaf type
    CHECK(leaves == std::vector<double>{3, 4, 5, 6, 1, 2, 7, 8, 9, 10});
    CHECK(def.to_string() ==
          "PyTreeDef(({'a': [CustomNode(namedtuple[Point], [*, *]), CustomNode(namedtuple[Point], "
          "[*, *])], 'b': [CustomNode(namedtuple[Point], [*, *])]}, *, {'z': (*,)}, (*, *)))");
    CHECK(pt::tree_unflatten<Hetero>(def, leaves) == h);

    auto paths = pt::tree_leaves_with_path(h);
    std::vector<std::string> strs;
    for (const auto& [p, v] : paths) strs.push_back(pt::keystr(p));
    CHECK(strs == std::vector<std::string>{"[0]['a'][0].x", "[0]['a'][0].y", "[0]['a'][1].x",
                                           "[0]['a'][1].y", "[0]['b'][0].x", "[0]['b'][0].y", "[1]",
                                           "[2]['z'][0]", "[3][0]", "[3][1]"});
    CHECK(pt::keystr(paths[2].first, true, "/") == "0/a/1/x");

    // Doubling keeps every type; the int leaf stays an int.
    auto twice = pt::tree_map([](auto x) { return x + x; }, h);
    static_assert(std::is_same_v<decltype(twice), Hetero>);
    CHECK(std::get<0>(twice).at("a")[1] == Point{10, 12});
    CHECK(std::get<1>(twice) == 14);
    CHECK(pt::repr(twice) ==
          "({'a': [Point(x=6.0, y=8.0), Point(x=10.0, y=12.0)], 'b': [Point(x=2.0, y=4.0)]}, 14, "
          "{'z': (16.0,)}, (18.0, 20.0))");
  }

  TEST_CASE("tree_leaves converts to the requested leaf type and back") {
    std::tuple<int, float, bool> t{3, 1.5f, true};
    CHECK(pt::tree_leaves(t) == std::vector<float>{3, 1.5f, 1});
    auto [leaves, def] = pt::tree_flatten<double>(t);
    CHECK(leaves == std::vector<double>{3, 1.5, 1});
    leaves = {4.9, 2.25, 0};
    auto back = pt::tree_unflatten<std::tuple<int, float, bool>>(def, leaves);
    CHECK(back == std::tuple<int, float, bool>{4, 2.25f, false});
    CHECK(pt::tree_leaves(std::vector<Tensor>{{{1}}, {{2, 2}}}) ==
          std::vector<Tensor>{{{1}}, {{2, 2}}});
  }

  TEST_CASE("tree_unflatten without a type builds a dynamic Tree; TreeDefs ignore C++ types") {
    std::tuple<std::vector<double>, std::map<std::string, double>, std::optional<double>> x{
        {1, 2}, {{"k", 3}}, std::nullopt};
    auto [leaves, def] = pt::tree_flatten(x);
    Tree t = pt::tree_unflatten(def, leaves);
    CHECK(pt::repr(t) == "([1.0, 2.0], {'k': 3.0}, None)");
    CHECK(pt::tree_structure(t) == def);
    CHECK(pt::tree_unflatten<decltype(x)>(pt::tree_structure(t), pt::tree_leaves(t)) == x);
    CHECK(pt::tree_unflatten(pt::tree_structure(std::pair<int, int>()), {1.0, 2.0}) ==
          Tree::tuple({1, 2}));
    CHECK_THROWS_WITH_AS(
        pt::tree_unflatten(pt::tree_structure(Point{}), {1.0, 2.0}),
        "tree_unflatten: a dynamic Tree cannot hold a namedtuple Point (at the root); "
        "unflatten into the C++ type instead: tree_unflatten<T>(treedef, leaves)",
        linum::TypeError);
  }

  TEST_CASE("tree_unflatten checks the leaf count and that the treedef describes the type") {
    using M = std::map<std::string, std::vector<double>>;
    auto def = pt::tree_structure(M{{"a", {1, 2}}});
    CHECK_THROWS_WITH_AS(
        pt::tree_unflatten<M>(def, {1.0}),
        "tree_unflatten: the treedef has 2 leaves, got 1; treedef: PyTreeDef({'a': [*, *]})",
        linum::ValueError);
    using Wrong = std::map<std::string, std::tuple<double, double>>;
    CHECK_THROWS_WITH_AS(
        pt::tree_unflatten<Wrong>(def, {1.0, 2.0}),
        "tree_unflatten: the treedef has a list of 2 at ['a'] where the target type "
        "has a tuple of 2; treedef: PyTreeDef({'a': [*, *]})",
        linum::ValueError);
    CHECK_THROWS_AS(
        pt::tree_unflatten<Point>(pt::tree_structure(std::pair<double, double>()), {1.0, 2.0}),
        linum::ValueError);
    CHECK_THROWS_AS(
        pt::tree_unflatten<pt::FrozenDict<double>>(pt::tree_structure(Tree{{"a", 1}}), {1.0}),
        linum::ValueError);
  }

  TEST_CASE("TreeDef: equality, children, tuple composition") {
    auto a = pt::tree_structure(std::tuple<double, std::vector<double>>{1, {2, 3}});
    CHECK(a == pt::tree_structure(Tree::tuple({1, Tree::list({2, 3})})));
    CHECK(a != pt::tree_structure(Tree::tuple({1, Tree::tuple({2, 3})})));
    CHECK(pt::tree_structure(std::map<std::string, double>{{"a", 1}}) !=
          pt::tree_structure(std::map<std::string, double>{{"b", 1}}));
    CHECK(pt::tree_structure(pt::FrozenDict<double>{{"a", 1}}) !=
          pt::tree_structure(Tree{{"a", 1}}));
    CHECK(a.num_leaves() == 3);
    CHECK(a.num_nodes() == 5);
    auto kids = a.children();
    REQUIRE(kids.size() == 2);
    CHECK(kids[0].to_string() == "PyTreeDef(*)");
    CHECK(kids[1].to_string() == "PyTreeDef([*, *])");
    auto both = pt::TreeDef::tuple({pt::tree_structure(Tree{{"k", 1}}), pt::TreeDef()});
    CHECK(both.to_string() == "PyTreeDef(({'k': *}, *))");
    CHECK(both.num_leaves() == 2);
    CHECK(both.children()[0] == pt::tree_structure(Tree{{"k", 1}}));
    CHECK(pt::TreeDef().is_leaf());
  }

  TEST_CASE("tree_map over several trees, with the first as a prefix of the others") {
    std::vector<double> xs{1, 2};
    std::vector<std::pair<double, double>> ps{{10, 20}, {30, 40}};
    auto sums = pt::tree_map(
        [](double x, const std::pair<double, double>& p) { return x + p.first + p.second; }, xs,
        ps);
    CHECK(sums == std::vector<double>{31, 72});
    // A static tree with a dynamic tree of the same structure.
    std::map<std::string, double> m{{"a", 1}, {"b", 2}};
    auto prod =
        pt::tree_map([](double x, double y) { return x * y; }, m, Tree{{"b", 10}, {"a", 100}});
    CHECK(prod == std::map<std::string, double>{{"a", 100}, {"b", 20}});
    // A Tree parameter receives the other tree's whole subtree.
    Tree prefix{{"a", 1}, {"b", 2}};
    Tree full{{"a", Tree::tuple({1, 2, 3})}, {"b", 5}};
    auto sizes =
        pt::tree_map([](double x, const Tree& t) { return x + double(t.is_leaf() ? 1 : t.size()); },
                     prefix, full);
    CHECK(sizes == Tree{{"a", 4}, {"b", 3}});
  }

  TEST_CASE("tree_map on mismatched structures names the path and both structures") {
    using V = std::map<std::string, std::vector<double>>;
    V a{{"k", {1, 2}}};
    V b{{"k", {1, 2, 3}}};
    auto add = [](double x, double y) { return x + y; };
    CHECK_THROWS_WITH_AS(pt::tree_map(add, a, b),
                         "tree_map: tree structures do not match at ['k']: tree 0 has a list of 2, "
                         "tree 1 has a list of 3",
                         linum::ValueError);
    V c{{"j", {1, 2}}};
    CHECK_THROWS_WITH_AS(
        pt::tree_map(add, a, c),
        "tree_map: tree structures do not match at the root: tree 0 has a dict with "
        "keys ['k'], tree 1 has a dict with keys ['j']",
        linum::ValueError);
    Tree t0{{"x", Tree::tuple({1, Tree{{"y", 2}}})}};
    Tree t1{{"x", Tree::tuple({1, Tree::list({2})})}};
    auto add3 = [](double x, double y, double z) { return x + y + z; };
    CHECK_THROWS_WITH_AS(
        pt::tree_map(add3, t0, t0, t1),
        "tree_map: tree structures do not match at ['x'][1]: tree 0 has a dict with "
        "keys ['y'], tree 2 has a list of 1",
        linum::ValueError);
    Tree t2{{"x", Tree::tuple({Tree::list({1}), Tree{{"y", 2}}})}};
    CHECK_THROWS_WITH_AS(
        pt::tree_map(add, t0, t2),
        "tree_map: tree structures do not match at ['x'][0]: tree 0 has a leaf, tree 1 "
        "has a list of 1",
        linum::ValueError);
    std::vector<std::optional<std::pair<double, double>>> o0{std::pair<double, double>{1, 2}};
    std::vector<std::optional<std::pair<double, double>>> o1{std::nullopt};
    CHECK_THROWS_WITH_AS(pt::tree_map(add, o0, o1),
                         "tree_map: tree structures do not match at [0]: tree 0 has a tuple of 2, "
                         "tree 1 has None",
                         linum::ValueError);
    CHECK_THROWS_WITH_AS(
        pt::tree_map_with_path([](const pt::KeyPath&, double x, double) { return x; },
                               std::vector<double>{1}, Tree::tuple({1})),
        "tree_map_with_path: tree structures do not match at the root: tree 0 has a "
        "list of 1, tree 1 has a tuple of 1",
        linum::ValueError);
    CHECK_THROWS_AS(
        pt::tree_map(add, pt::FrozenDict<double>{{"a", 1}}, pt::FrozenDict<double>{{"b", 1}}),
        linum::ValueError);
  }

  TEST_CASE("tree_map changes leaf types and re-types containers, structs included") {
    std::vector<Tensor> ts{{{3, 3}}, {{32}}};
    auto shapes = pt::tree_map([](const Tensor& t) { return t.shape; }, ts);
    static_assert(std::is_same_v<decltype(shapes), std::vector<Shape>>);
    CHECK(pt::repr(shapes) == "[(3, 3), (32,)]");

    using State = std::tuple<AdamState<Tensor, pt::FrozenDict<Tensor>>, EmptyState>;
    pt::FrozenDict<Tensor> mu{
        {"Dense_0", pt::BasicTree<Tensor>{{"kernel", Tensor{{4, 2}}}, {"bias", Tensor{{2}}}}}};
    State state{{Tensor{{}}, mu, mu}, {}};
    auto state_shapes = pt::tree_map([](const Tensor& t) { return t.shape; }, state);
    static_assert(std::is_same_v<decltype(state_shapes),
                                 std::tuple<AdamState<Shape, pt::FrozenDict<Shape>>, EmptyState>>);
    CHECK(pt::repr(state_shapes) ==
          "(AdamState(count=(), mu=FrozenDict({\n    Dense_0: {\n        bias: (2,),\n        "
          "kernel: (4, 2),\n"
          "    },\n}), nu=FrozenDict({\n    Dense_0: {\n        bias: (2,),\n        kernel: (4, "
          "2),\n    },\n})), "
          "EmptyState())");
    CHECK(pt::tree_structure(state).to_string() ==
          "PyTreeDef((CustomNode(namedtuple[AdamState], [*, CustomNode(FrozenDict[('Dense_0',)], "
          "[{'bias': *, 'kernel': *}]), CustomNode(FrozenDict[('Dense_0',)], [{'bias': *, "
          "'kernel': *}])]), "
          "CustomNode(namedtuple[EmptyState], [])))");

    // Custom nodes re-type through their from_children.
    auto widths = pt::tree_map([](double x) { return int(x * 2); }, Interval<double>{0.5, 1.5});
    static_assert(std::is_same_v<decltype(widths), Interval<int>>);
    CHECK(widths == Interval<int>{1, 3});
  }

  TEST_CASE("tree_map_with_path and keystr") {
    auto strs = pt::tree_map_with_path(
        [](const pt::KeyPath& p, double x) { return pt::keystr(p) + "=" + pt::repr(x); },
        std::map<std::string, std::vector<double>>{{"a", {1, 2}}});
    CHECK(strs.at("a") == std::vector<std::string>{"['a'][0]=1.0", "['a'][1]=2.0"});
    auto dyn = pt::tree_map_with_path(
        [](const pt::KeyPath& p, double x, double y) {
          return pt::keystr(p, true, "/") + ":" + pt::repr(x + y);
        },
        Tree{{"w", Tree::list({1})}}, Tree{{"w", Tree::list({2})}});
    CHECK(pt::repr(dyn) == "{'w': ['w/0:3.0']}");
    CHECK(pt::keystr({pt::DictKey{"a"}, pt::SequenceKey{0}, pt::GetAttrKey{"b"}}) == "['a'][0].b");
    CHECK(pt::keystr({}) == "");
    CHECK(pt::keystr({pt::FlattenedIndexKey{2}, pt::DictKey{"it's"}}) == "[2][\"it's\"]");
    auto [with_path, def] = pt::tree_flatten_with_path(Pair{1, 2});
    CHECK(with_path[1].first == pt::KeyPath{pt::FlattenedIndexKey{1}});
    auto ipaths = pt::tree_leaves_with_path(Interval<double>{0, 1});
    CHECK(pt::keystr(ipaths[1].first) == ".hi");
  }

  TEST_CASE("tree_reduce and tree_all") {
    std::tuple<std::vector<int>, Tree> t{{1, 2, 3}, Tree{{"a", 4}}};
    CHECK(pt::tree_reduce([](double acc, double x) { return acc + x; }, t, 0.0) == 10);
    CHECK(pt::tree_reduce([](double acc, double x) { return acc * x; }, t) == 24);
    CHECK(pt::tree_reduce([](std::string acc, double x) { return acc + pt::repr(x); },
                          Tree::list({1, 2}), std::string(">")) == ">1.02.0");
    CHECK_THROWS_WITH_AS(pt::tree_reduce([](double a, double b) { return a + b; }, Tree::dict()),
                         "tree_reduce: reduce of a tree with no leaves and no initializer",
                         linum::TypeError);
    CHECK(pt::tree_all(std::vector<bool>{true, true}));
    CHECK_FALSE(pt::tree_all(Tree{{"a", 1}, {"b", 0}}));
    CHECK(pt::tree_all(Tree::dict()));
    CHECK(pt::tree_all(t, [](double x) { return x > 0; }));
    CHECK_FALSE(pt::tree_all(t, [](double x) { return x > 1; }));
  }

  TEST_CASE("tree_unflatten_like rebuilds the same type from new leaves") {
    std::pair<Point, std::vector<double>> like{{1, 2}, {3}};
    auto out = pt::tree_unflatten_like(like, std::vector<double>{10, 20, 30});
    CHECK(out == std::pair<Point, std::vector<double>>{{10, 20}, {30}});
    CHECK_THROWS_AS(pt::tree_unflatten_like(like, std::vector<double>{1, 2}), linum::ValueError);
    CHECK_THROWS_AS(pt::tree_unflatten_like(like, std::vector<double>{1, 2, 3, 4}),
                    linum::ValueError);
  }

  TEST_CASE("type traits: leaves, nodes, and default leaf types") {
    using pt::detail::Category;
    static_assert(pt::detail::category_v<double> == Category::Leaf);
    static_assert(pt::detail::category_v<Tensor> == Category::Leaf);
    static_assert(pt::detail::category_v<Point> == Category::Struct);
    static_assert(pt::detail::category_v<Pair> == Category::Custom);
    static_assert(pt::detail::category_v<std::string> == Category::Invalid);
    static_assert(std::is_same_v<pt::detail::default_leaf_t<std::tuple<int, float>>, float>);
    static_assert(std::is_same_v<pt::detail::default_leaf_t<pt::FrozenDict<Tensor>>, Tensor>);
    static_assert(std::is_void_v<pt::detail::default_leaf_t<std::tuple<Tensor, double>>>);
    CHECK(pt::detail::short_type_name(typeid(AdamState<int, int>).name()) == "AdamState");
  }
}
