// Collection filters: cases from Flax's tests/core/core_scope_test.py.
#include <doctest/doctest.h>

#include <sstream>
#include <type_traits>

#include <linum/lift/lift.hpp>

namespace test_filters {

using namespace linum;
using lift::DenyList;
using lift::Filter;
using Names = std::set<std::string>;

TEST_CASE("in_filter matches True, an exact name, a collection and a DenyList") {
  CHECK(lift::in_filter(true, "any_string1"));
  CHECK(lift::in_filter("exact_match", "exact_match"));
  CHECK_FALSE(lift::in_filter("exact_match", "exact"));
  CHECK(lift::in_filter(Filter{"one", "two"}, "one"));
  CHECK_FALSE(lift::in_filter(false, "one"));
  CHECK_FALSE(lift::in_filter(DenyList("intermediates"), "intermediates"));
  CHECK(lift::in_filter(DenyList("intermediates"), "params"));
}

TEST_CASE("union_filters of sets and DenyLists") {
  CHECK(lift::union_filters(Filter{"a", "b"}, Filter{"b", "c"}) == Filter(Names{"a", "b", "c"}));
  CHECK(lift::union_filters(Filter{"b", "c"}, Filter{"a", "b"}) == Filter(Names{"a", "b", "c"}));
  CHECK(lift::union_filters(DenyList(Filter{"a", "b"}), DenyList(Filter{"b", "c"})) ==
        DenyList(Names{"b"}));
  CHECK(lift::union_filters(DenyList(Filter{"a", "b"}), Filter{"b", "c"}) == DenyList(Names{"a"}));
  CHECK(lift::union_filters(Filter{"b", "c"}, DenyList(Filter{"a", "b"})) == DenyList(Names{"a"}));
  CHECK(lift::union_filters(true, "x") == Filter(true));
}

TEST_CASE("intersect_filters") {
  CHECK(lift::intersect_filters(Filter{"a", "b"}, Filter{"b", "c"}) == Filter(Names{"b"}));
  CHECK(lift::intersect_filters(true, false) == Filter(false));
  CHECK(lift::intersect_filters(false, false) == Filter(Names{}));
  CHECK(lift::intersect_filters(true, true) == Filter(true));
  CHECK(lift::intersect_filters(DenyList(Filter{"a", "b"}), DenyList(Filter{"b", "c"})) ==
        DenyList(Names{"a", "b", "c"}));
  CHECK(lift::intersect_filters(DenyList("params"), Filter{"params", "state"}) ==
        Filter(Names{"state"}));
}

TEST_CASE("subtract_filters") {
  CHECK(lift::subtract_filters(Filter{"a", "b"}, Filter{"b", "c"}) == Filter(Names{"a"}));
  CHECK(lift::subtract_filters(true, false) == DenyList(false));
  CHECK(lift::subtract_filters(false, false) == Filter(Names{}));
  CHECK(lift::subtract_filters(true, true) == Filter(false));
  CHECK(lift::subtract_filters(true, "a") == DenyList("a"));
  CHECK(lift::subtract_filters(DenyList(Filter{"a", "b"}), DenyList(Filter{"b", "c"})) ==
        Filter(Names{"c"}));
  CHECK(lift::subtract_filters(DenyList(Filter{"a", "b"}), Filter{"b", "c"}) ==
        DenyList(Names{"a", "b", "c"}));
  CHECK(lift::subtract_filters(true, "params") == DenyList("params"));
  CHECK(lift::subtract_filters(Filter{"a", "b"}, DenyList("a")) == Filter(Names{"a"}));
}

TEST_CASE("is_filter_empty") {
  CHECK(lift::is_filter_empty(DenyList(true)));
  CHECK_FALSE(lift::is_filter_empty(DenyList(false)));
  CHECK(lift::is_filter_empty(Filter(std::vector<std::string>{})));
  CHECK_FALSE(lift::is_filter_empty(""));
  CHECK(lift::is_filter_empty(false));
}

TEST_CASE("group_collections puts each collection in the first matching group") {
  Tree xs = Tree{{"params", Tree{{"w", Array(1.0f)}}},
                 {"state", Tree{{"s", Array(2.0f)}}},
                 {"intermediates", Tree::dict()}};
  auto g = lift::group_collections(xs, {"vars"});
  REQUIRE(g.size() == 1);
  CHECK(g[0].size() == 0);
  g = lift::group_collections(xs, {false, true, true});
  REQUIRE(g.size() == 3);
  CHECK(g[0].size() == 0);
  CHECK(g[1].size() == 3);
  CHECK(g[1]["params"]["w"].leaf().item<float>() == 1.0f);
  CHECK(g[2].size() == 0);
  g = lift::group_collections(xs, {DenyList("params"), true});
  CHECK(g[0].as_dict().keys() == std::vector<std::string>{"state", "intermediates"});
  CHECK(g[1].as_dict().keys() == std::vector<std::string>{"params"});
}

TEST_CASE("filters print like Python") {
  std::ostringstream os;
  os << Filter(true) << " " << Filter("a") << " " << Filter{"b", "a"} << " " << DenyList("x");
  CHECK(os.str() == "True 'a' {'a', 'b'} DenyList(deny='x')");
}

// Flax raises InvalidFilterError('Invalid Filter: "1"') for in_filter(1, 'a'). Filters are
// typed here, so a number is no Filter and that call does not compile.
static_assert(!std::is_constructible_v<Filter, int>);
static_assert(!std::is_constructible_v<Filter, long>);
static_assert(!std::is_constructible_v<Filter, double>);
static_assert(!std::is_constructible_v<Filter, char>);
static_assert(!std::is_invocable_v<decltype(lift::in_filter), int, const char*>);
static_assert(std::is_invocable_v<decltype(lift::in_filter), const char*, const char*>);

TEST_CASE("a number is no Filter at compile time; a null name (None) is InvalidFilterError") {
  const char* none = nullptr;
  std::string msg;
  try {
    lift::in_filter(none, "a");
  } catch (const lift::InvalidFilterError& e) {
    msg = e.what();
  }
  CHECK(msg.find("Invalid Filter: \"None\"") == 0);
  CHECK(lift::in_filter(Filter("a"), "a"));
}

}  // namespace test_filters
