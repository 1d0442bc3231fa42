// Tuple-keyed flat dicts (traverse_util.flatten_dict without sep) as pytree nodes: sorted-key
// leaf order as JAX, TreeDef printing and equality, DictKey paths with tuple keys, tree_map
// keeping the container, tree_unflatten round trips and structure errors.
#include <doctest/doctest.h>

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <linum/pytree/pytree.hpp>

namespace test_tuple_dict {

namespace pt = linum::pytree;
namespace tu = linum::traverse_util;
using Tree = pt::BasicTree<double>;
using Path = pt::Path;
using PathMap = std::map<pt::Path, double>;

namespace {

// Inserted out of order, so flatten_dict's insertion order is not the sorted order.
Tree params() {
  return Tree{{"b", Tree{{"c", 2.0}, {"a", 1.0}}}, {"a", 3.0}, {"ab", Tree{{"x", 4.0}}}};
}

}  // namespace

TEST_SUITE("pytree tuple-keyed dicts") {
  TEST_CASE("flatten_dict's result flattens in sorted-key order, as a JAX dict with tuple keys") {
    const auto flat = tu::flatten_dict(params());
    // Insertion order is depth-first: ('b','c'), ('b','a'), ('a',), ('ab','x').
    CHECK(flat.keys().front() == Path{"b", "c"});
    auto [leaves, def] = pt::tree_flatten(flat);
    CHECK(leaves == std::vector<double>{3.0, 4.0, 1.0, 2.0});
    CHECK(def.to_string() ==
          "PyTreeDef({('a',): *, ('ab', 'x'): *, ('b', 'a'): *, ('b', 'c'): *})");
    CHECK(def.num_leaves() == 4);
    // A std::map with tuple keys is the same structure; a str-keyed dict is not.
    std::map<Path, double> m{
        {{"b", "c"}, 0.0}, {{"a"}, 0.0}, {{"ab", "x"}, 0.0}, {{"b", "a"}, 0.0}};
    CHECK(pt::tree_structure(m) == def);
    CHECK_FALSE(pt::tree_structure(std::map<std::string, double>{{"a", 0.0}}) ==
                pt::tree_structure(std::map<Path, double>{{{"a"}, 0.0}}));
  }

  TEST_CASE("key paths hold the tuple key: DictKey(key=('b', 'a'))") {
    const auto lp = pt::tree_leaves_with_path(tu::flatten_dict(params()));
    REQUIRE(lp.size() == 4);
    CHECK(pt::keystr(lp[2].first) == "[('b', 'a')]");
    CHECK(lp[2].first == pt::KeyPath{pt::TupleDictKey{{"b", "a"}}});
    std::ostringstream os;
    os << lp[2].first;
    CHECK(os.str() == "(DictKey(key=('b', 'a')),)");
  }

  TEST_CASE("tree_map keeps the tuple-keyed dict and may change its leaf type") {
    const auto flat = tu::flatten_dict(params());
    auto tens = pt::tree_map([](double x) { return static_cast<int>(10 * x); }, flat);
    static_assert(std::is_same_v<decltype(tens), pt::Dict<Path, pt::BasicTree<int>>>);
    CHECK(tens.at(Path{"b", "a"}).leaf() == 10);
    CHECK(tens.at(Path{"ab", "x"}).leaf() == 40);
    auto sum = pt::tree_map([](double a, double b) { return a + b; }, flat, flat);
    CHECK(sum.at(Path{"a"}).leaf() == 6.0);
    // Unflattened again it is the original nested dict, doubled.
    CHECK(tu::unflatten_dict(sum) == pt::tree_map([](double x) { return 2 * x; }, params()));
    auto missing = flat;
    missing.erase(Path{"a"});
    CHECK_THROWS_WITH_AS(pt::tree_map([](double a, double b) { return a + b; }, flat, missing),
                         doctest::Contains("tree 1 has a dict with keys [('ab', 'x'), ('b', 'a')"),
                         linum::ValueError);
  }

  TEST_CASE("tree_unflatten rebuilds the tuple-keyed dict from its treedef") {
    // Key parts with the encoding's separator, digits and empty strings still round-trip.
    std::map<Path, double> odd{{{"1:x", ""}, 1.0}, {{"", "2:"}, 2.0}, {{"a:b"}, 3.0}};
    auto [leaves, def] = pt::tree_flatten(odd);
    CHECK(leaves == std::vector<double>{2.0, 1.0, 3.0});
    CHECK(def.to_string() == "PyTreeDef({('', '2:'): *, ('1:x', ''): *, ('a:b',): *})");
    auto back = pt::tree_unflatten<std::map<Path, double>>(def, leaves);
    CHECK(back == odd);
    const auto flat = tu::flatten_dict(params());
    auto [fl, fdef] = pt::tree_flatten(flat);
    auto fback = pt::tree_unflatten<pt::Dict<Path, Tree>>(fdef, fl);
    CHECK(fback == flat);
    // A treedef of another kind is a clear error.
    CHECK_THROWS_WITH_AS(pt::tree_unflatten<PathMap>(pt::tree_structure(params()), fl),
                         doctest::Contains("where the target type has a dict with tuple keys"),
                         linum::ValueError);
    CHECK_THROWS_AS(pt::tree_unflatten(fdef, fl), linum::TypeError);
  }
}

}  // namespace test_tuple_dict
