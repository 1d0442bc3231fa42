// Python-style printing: repr of scalars, strings, containers and structs, the Repr
// customisation point, and pprint-style pformat.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <map>
#include <sstream>

#include <linum/pytree/pytree.hpp>

namespace pt = linum::pytree;

namespace {

struct Point {
  BOOST_HANA_DEFINE_STRUCT(Point, (double, x), (int, y));
};
struct EmptyState {
  BOOST_HANA_DEFINE_STRUCT(EmptyState);
};

// A leaf whose printing is chosen with a Repr specialisation.
struct Celsius {
  double value;
};

}  // namespace

template <>
struct linum::pytree::Repr<Celsius> {
  static void print(std::ostream& os, const Celsius& c) { os << "Celsius(" << c.value << ")"; }
};

TEST_SUITE("repr") {
  TEST_CASE("floats print like Python's repr") {
    CHECK(pt::repr(1.0) == "1.0");
    CHECK(pt::repr(0.1) == "0.1");
    CHECK(pt::repr(0.1 + 0.2) == "0.30000000000000004");
    CHECK(pt::repr(-0.0) == "-0.0");
    CHECK(pt::repr(2.5) == "2.5");
    CHECK(pt::repr(1e15) == "1000000000000000.0");
    CHECK(pt::repr(1e16) == "1e+16");
    CHECK(pt::repr(123456789012345678.0) == "1.2345678901234568e+17");
    CHECK(pt::repr(0.0001) == "0.0001");
    CHECK(pt::repr(0.00001) == "1e-05");
    CHECK(pt::repr(1.5e-7) == "1.5e-07");
    CHECK(pt::repr(std::numeric_limits<double>::infinity()) == "inf");
    CHECK(pt::repr(-std::numeric_limits<double>::infinity()) == "-inf");
    CHECK(pt::repr(std::nan("")) == "nan");
    CHECK(pt::repr(0.1f) == "0.1");  // shortest digits of the float itself
    CHECK(pt::repr(1e300) == "1e+300");
  }

  TEST_CASE("ints, bools and strings") {
    CHECK(pt::repr(42) == "42");
    CHECK(pt::repr(-7L) == "-7");
    CHECK(pt::repr(true) == "True");
    CHECK(pt::repr(false) == "False");
    CHECK(pt::repr(std::uint8_t(200)) == "200");
    CHECK(pt::repr(std::string("a")) == "'a'");
    CHECK(pt::repr("it's") == "\"it's\"");
    CHECK(pt::repr(std::string("both ' and \"")) == "'both \\' and \"'");
    CHECK(pt::repr(std::string("tab\tnl\n\x01")) == "'tab\\tnl\\n\\x01'");
    CHECK(pt::repr(std::string("\xc3\xa9")) == "'\xc3\xa9'");
  }

  TEST_CASE("containers print as Python's tuples, lists, dicts and None") {
    CHECK(pt::repr(std::tuple<int, double>{1, 2.0}) == "(1, 2.0)");
    CHECK(pt::repr(std::tuple<int>{1}) == "(1,)");
    CHECK(pt::repr(std::tuple<>{}) == "()");
    CHECK(pt::repr(std::pair<int, bool>{1, true}) == "(1, True)");
    CHECK(pt::repr(std::array<int, 2>{1, 2}) == "(1, 2)");
    CHECK(pt::repr(std::vector<double>{1, 2}) == "[1.0, 2.0]");
    CHECK(pt::repr(std::vector<int>{}) == "[]");
    CHECK(pt::repr(std::optional<int>()) == "None");
    CHECK(pt::repr(std::optional<int>(3)) == "3");
    CHECK(pt::repr(std::map<std::string, int>{{"b", 1}, {"a", 2}}) == "{'a': 2, 'b': 1}");
    CHECK(pt::repr(std::unordered_map<std::string, int>{{"b", 1}, {"a", 2}}) == "{'a': 2, 'b': 1}");
  }

  TEST_CASE("linum's Shape (std::vector<std::int64_t>) prints as a tuple, like jnp.shape") {
    CHECK(pt::repr(std::vector<std::int64_t>{3, 3, 1, 32}) == "(3, 3, 1, 32)");
    CHECK(pt::repr(std::vector<std::int64_t>{32}) == "(32,)");
    CHECK(pt::repr(std::vector<std::int64_t>{}) == "()");
    CHECK(pt::repr_as_tuple(std::vector<int>{7}) == "(7,)");
  }

  TEST_CASE("Hana structs print like namedtuples") {
    CHECK(pt::repr(Point{1.5, 2}) == "Point(x=1.5, y=2)");
    CHECK(pt::repr(EmptyState{}) == "EmptyState()");
    CHECK(pt::repr(std::tuple<Point, EmptyState>{}) == "(Point(x=0.0, y=0), EmptyState())");
  }

  TEST_CASE("Repr<T> chooses how a leaf prints, everywhere") {
    CHECK(pt::repr(Celsius{21.5}) == "Celsius(21.5)");
    pt::BasicTree<Celsius> t{{"room", Celsius{20}}};
    CHECK(pt::repr(t) == "{'room': Celsius(20)}");
    CHECK(pt::repr(pt::freeze(t)) == "FrozenDict({\n    room: Celsius(20),\n})");
  }

  TEST_CASE("KeyEntry and KeyPath reprs") {
    std::ostringstream os;
    os << pt::KeyPath{pt::DictKey{"a"}, pt::SequenceKey{0}, pt::GetAttrKey{"b"},
                      pt::FlattenedIndexKey{1}};
    CHECK(os.str() ==
          "(DictKey(key='a'), SequenceKey(idx=0), GetAttrKey(name='b'), FlattenedIndexKey(key=1))");
    std::ostringstream one;
    one << pt::KeyPath{pt::DictKey{"c"}};
    CHECK(one.str() == "(DictKey(key='c'),)");
  }

  TEST_CASE("pformat: one line when it fits, pprint's layout otherwise") {
    std::map<std::string, int> small{{"a", 1}};
    CHECK(pt::pformat(small) == "{'a': 1}");
    pt::BasicTree<int> nested{{"zeta", pt::BasicTree<int>::list({1, 2, 3})},
                              {"alpha", pt::BasicTree<int>{{"x", 1}, {"y", 2}}}};
    CHECK(pt::pformat(nested) == "{'alpha': {'x': 1, 'y': 2}, 'zeta': [1, 2, 3]}");  // sorted keys
    CHECK(pt::pformat(nested, 20) ==
          "{'alpha': {'x': 1,\n           'y': 2},\n 'zeta': [1, 2, 3]}");
    std::vector<std::string> words(4, "abcdefghij");
    CHECK(pt::pformat(words, 30) ==
          "['abcdefghij',\n 'abcdefghij',\n 'abcdefghij',\n 'abcdefghij']");
    std::tuple<std::vector<int>> one{{1, 2, 3, 4, 5, 6, 7, 8}};
    CHECK(pt::pformat(one, 12) == "([1,\n  2,\n  3,\n  4,\n  5,\n  6,\n  7,\n  8],)");
  }
}
