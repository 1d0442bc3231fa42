// from_dynamic, the walk from a dynamic Tree back to a typed pytree: every node category read
// with and without a target, round trips through to_dynamic, the target's non-pytree members
// kept, the target leaf paired with each leaf, and the place each kind of mismatch is named at.
#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <linum/pytree/from_dynamic.hpp>
#include <linum/pytree/pytree.hpp>
#include <linum/pytree/to_dynamic.hpp>

namespace test_from_dynamic {

namespace pt = linum::pytree;
using Tree = pt::BasicTree<double>;
using Frozen = pt::FrozenDict<double>;
using pt::detail::Category;

namespace {

// `note` is not a field: not pytree data, kept from a target.
struct Layer {
  BOOST_HANA_DEFINE_STRUCT(Layer, (std::vector<double>, w), (std::optional<double>, b),
                           (std::map<std::string, int>, counts));
  std::string note;
};

// Custom nodes, one naming its children and one not.
struct Point {
  double x, y;
};
struct Span {
  double lo, hi;
};

struct Model {
  BOOST_HANA_DEFINE_STRUCT(Model, (Layer, dense), (std::tuple<int, Point, Span>, extra),
                           (std::array<double, 2>, pair), (std::optional<Layer>, head));
};

// A struct with no default constructor: readable only into a target.
struct Sized {
  BOOST_HANA_DEFINE_STRUCT(Sized, (double, v));
  explicit Sized(double x) : v(x) {}
};

}  // namespace

}  // namespace test_from_dynamic

template <>
struct linum::pytree::node_traits<test_from_dynamic::Point> {
  static constexpr std::string_view name = "Point";
  static auto children(const test_from_dynamic::Point& p) { return std::tie(p.x, p.y); }
  static test_from_dynamic::Point from_children(double x, double y) { return {x, y}; }
  static constexpr std::array<std::string_view, 2> keys = {"x", "y"};
};
template <>
struct linum::pytree::node_traits<test_from_dynamic::Span> {
  static constexpr std::string_view name = "Span";
  static auto children(const test_from_dynamic::Span& s) { return std::make_tuple(s.lo, s.hi); }
  static test_from_dynamic::Span from_children(double lo, double hi) { return {lo, hi}; }
};

namespace test_from_dynamic {

namespace {

// to_dynamic's plain form: tuples and custom nodes as tuples, vectors as lists.
struct ToPlain {
  Tree dynamic(const Tree& x) const { return x; }
  template <class KeyOf>
  Tree sequence(Tree::seq_type items, pt::SequenceKind kind, const KeyOf&) const {
    return kind == pt::SequenceKind::List ? Tree::list(std::move(items))
                                          : Tree::tuple(std::move(items));
  }
};

// Its inverse. A map with a target reads the target's keys, else the tree's. Every leaf read
// records the target leaf it was read alongside (NaN without one); errors name the place as
// root, then [i] for a sequence item, ['k'] for a dict entry, .name for a field or custom child.
struct FromPlain {
  std::vector<pt::ChildKey> path;
  std::vector<double> targets;

  [[noreturn]] void fail(const std::string& what) const {
    std::string where = "root";
    for (const pt::ChildKey& k : path) {
      if (k.parent == Category::Dict)
        where += pt::detail::cat("['", k.name, "']");
      else if (k.parent == Category::Struct || k.parent == Category::Custom)
        where += pt::detail::cat(".", k.name);
      else
        where += pt::detail::cat("[", k.index, "]");
    }
    throw linum::TypeError("read at " + where + ": " + what);
  }
  void expect(bool ok, const std::string& want, const Tree& t) const {
    if (!ok) fail("expected " + want + ", got a " + std::string(pt::kind_name(t.kind())));
  }

  template <class T>
  T leaf(const T* target, const Tree& t) {
    expect(t.is_leaf(), "a leaf", t);
    targets.push_back(target ? static_cast<double>(*target) : NAN);
    return static_cast<T>(t.leaf());
  }
  template <class T>
  T dynamic(const T*, const Tree& t) {
    if constexpr (std::is_same_v<T, Frozen>) expect(t.is_dict(), "a dict", t);
    return T(t);
  }
  template <class T, class KeyOf>
  std::size_t node(const Tree& t, std::size_t size, const KeyOf& key) {
    constexpr Category c = pt::detail::category_v<T>;
    if constexpr (c == Category::List) {
      expect(t.is_list(), "a list", t);
      return t.size();
    } else if constexpr (c == Category::Struct) {
      expect(t.is_dict(), "a dict", t);
      for (std::size_t i = 0; i < size; ++i) {
        if (!t.contains(key(i))) fail(pt::detail::cat("no field '", key(i), "'"));
      }
    } else {
      expect(t.is_tuple() && t.size() == size, pt::detail::cat("a tuple of ", size), t);
    }
    return size;
  }
  std::vector<std::string> dict(const Tree& t, std::vector<std::string> target_keys) {
    expect(t.is_dict(), "a dict", t);
    if (target_keys.empty()) {
      for (const auto& kv : t.as_dict()) target_keys.push_back(kv.first);
    }
    for (const auto& k : target_keys) {
      if (!t.contains(k)) fail("no key '" + k + "'");
    }
    return target_keys;
  }
  template <class Read>
  auto child(const Tree& t, const pt::ChildKey& key, const Read& read) {
    path.push_back(key);
    const bool named = key.parent == Category::Dict || key.parent == Category::Struct;
    auto out = read(named ? t.at(key.name) : t.items()[key.index]);
    path.pop_back();
    return out;
  }
};

Tree plain(const auto& x) { return pt::to_dynamic<double>(x, ToPlain{}); }

template <class T>
T read(const Tree& t) {
  FromPlain style;
  return pt::from_dynamic<T>(nullptr, t, style);
}

Model model() {
  Model m;
  m.dense.w = {1.0, 2.0};
  m.dense.b = 3.0;
  m.dense.counts = {{"b", 4}, {"a", 5}};
  m.dense.note = "dense";
  m.extra = {6, Point{7.0, 8.0}, Span{9.0, 10.0}};
  m.pair = {11.0, 12.0};
  return m;
}

}  // namespace

TEST_SUITE("pytree from_dynamic") {
  TEST_CASE("leaves: arithmetic types read from a leaf, the target beside it") {
    FromPlain style;
    CHECK(pt::from_dynamic<double>(nullptr, Tree(2.5), style) == 2.5);
    const int target = 7;
    CHECK(pt::from_dynamic(&target, Tree(3.0), style) == 3);
    REQUIRE(style.targets.size() == 2);
    CHECK(std::isnan(style.targets[0]));
    CHECK(style.targets[1] == 7.0);
  }

  TEST_CASE("each node category read without a target") {
    CHECK(read<std::optional<double>>(Tree()) == std::nullopt);
    CHECK(read<std::optional<double>>(Tree(1.5)) == 1.5);
    CHECK(read<std::tuple<double, int>>(Tree::tuple({1.0, 2.0})) == std::tuple<double, int>{1, 2});
    CHECK(read<std::pair<int, double>>(Tree::tuple({3.0, 4.0})) == std::pair<int, double>{3, 4});
    CHECK(read<std::array<double, 3>>(Tree::tuple({1.0, 2.0, 3.0})) ==
          std::array<double, 3>{1, 2, 3});
    CHECK(read<std::vector<double>>(Tree::list({5.0, 6.0})) == std::vector<double>{5, 6});
    CHECK(read<std::vector<double>>(Tree::list()).empty());
    CHECK(read<std::map<std::string, int>>(Tree{{"a", 1.0}, {"b", 2.0}}) ==
          std::map<std::string, int>{{"a", 1}, {"b", 2}});
    const Point p = read<Point>(Tree::tuple({1.0, 2.0}));
    CHECK((p.x == 1.0 && p.y == 2.0));
    const Span s = read<Span>(Tree::tuple({3.0, 4.0}));
    CHECK((s.lo == 3.0 && s.hi == 4.0));
    const Tree dyn = Tree::tuple({1.0, Tree{{"k", 2.0}}});
    CHECK(read<Tree>(dyn) == dyn);
    const Frozen f = read<Frozen>(Tree{{"k", 2.0}});
    CHECK(f.at("k").leaf() == 2.0);
    const Layer l =
        read<Layer>(Tree{{"w", Tree::list({1.0})}, {"b", Tree()}, {"counts", Tree::dict()}});
    CHECK(l.w == std::vector<double>{1.0});
    CHECK(l.b == std::nullopt);
    CHECK(l.counts.empty());
    CHECK(l.note.empty());
  }

  TEST_CASE("round trip to_dynamic -> from_dynamic through every container kind") {
    const Model m = model();
    const Tree t = plain(m);
    // Fields by name, tuples and custom nodes as tuples, vectors as lists, None for the head.
    CHECK(t.at("extra").is_tuple());
    CHECK(t.at("extra").at(1).is_tuple());
    CHECK(t.at("dense").at("w").is_list());
    CHECK(t.at("head").is_none());
    const Model r = read<Model>(t);
    CHECK(plain(r) == t);
    CHECK(r.dense.counts == m.dense.counts);
    CHECK(std::get<1>(r.extra).y == 8.0);
    CHECK(r.dense.note.empty());  // no target: the default

    Model h = m;
    h.head = m.dense;
    h.head->w = {20.0, 21.0, 22.0};
    CHECK(plain(read<Model>(plain(h))) == plain(h));

    // A dynamic tree and a FrozenDict inside a tuple come back as they were.
    using Mixed = std::tuple<Tree, Frozen, std::optional<Point>>;
    const Mixed x{Tree::list({1.0, Tree{{"a", 2.0}}}), Frozen(Tree{{"f", 3.0}}), Point{4.0, 5.0}};
    const Mixed y = read<Mixed>(plain(x));
    CHECK(std::get<0>(y) == std::get<0>(x));
    CHECK(std::get<1>(y) == std::get<1>(x));
    CHECK(std::get<2>(y)->x == 4.0);
  }

  TEST_CASE("with a target: each leaf beside its target leaf, non-pytree members kept") {
    Model m = model();
    m.head = Layer{};
    m.head->w = {13.0};
    m.head->note = "head";
    Tree t = pt::tree_map([](double v) { return v + 100.0; }, plain(m));
    FromPlain style;
    const Model r = pt::from_dynamic(&m, t, style);
    CHECK(plain(r) == t);
    CHECK(r.dense.note == "dense");
    CHECK(r.head->note == "head");
    CHECK(style.targets == pt::tree_leaves<double>(m));

    // A map reads the target's keys and leaves the tree's extra ones.
    const std::map<std::string, double> target{{"a", 1.0}};
    FromPlain s2;
    CHECK(pt::from_dynamic(&target, Tree{{"a", 5.0}, {"z", 6.0}}, s2) ==
          std::map<std::string, double>{{"a", 5.0}});

    // A struct with no default constructor is read into its target, not without one.
    const Sized sized(1.0);
    FromPlain s3;
    CHECK(pt::from_dynamic(&sized, Tree{{"v", 2.0}}, s3).v == 2.0);
    CHECK_THROWS_WITH_AS(read<Sized>(Tree{{"v", 2.0}}),
                         "from_dynamic: Sized has no default value, so it can only be read into a "
                         "target",
                         linum::TypeError);
  }

  TEST_CASE("each kind of mismatch is named at its place") {
    Tree t = plain(model());
    auto fails_with = [](const Tree& bad, const char* msg) {
      CHECK_THROWS_WITH_AS(read<Model>(bad), msg, linum::TypeError);
    };
    Tree bad = t;
    bad["dense"]["counts"]["a"] = Tree::dict();
    fails_with(bad, "read at root.dense.counts['a']: expected a leaf, got a dict");
    bad = t;
    bad["dense"]["w"] = Tree::tuple({1.0});
    fails_with(bad, "read at root.dense.w: expected a list, got a tuple");
    bad = t;
    bad["dense"]["counts"] = Tree::list();
    fails_with(bad, "read at root.dense.counts: expected a dict, got a list");
    bad = t;
    bad["dense"] = Tree{{"w", Tree::list()}, {"b", Tree()}};
    fails_with(bad, "read at root.dense: no field 'counts'");
    bad = t;
    bad["extra"] = Tree::tuple({1.0, 2.0});
    fails_with(bad, "read at root.extra: expected a tuple of 3, got a tuple");
    bad = t;
    bad["extra"][1] = Tree::tuple({1.0, Tree::list()});
    fails_with(bad, "read at root.extra[1].y: expected a leaf, got a list");
    bad = t;
    bad["extra"][2] = Tree::tuple({Tree::list(), 1.0});
    fails_with(bad, "read at root.extra[2].0: expected a leaf, got a list");
    bad = t;
    bad["pair"] = Tree::list({1.0, 2.0});
    fails_with(bad, "read at root.pair: expected a tuple of 2, got a list");
    // An optional adds no place of its own.
    bad = t;
    bad["head"] = Tree{{"w", Tree::list({Tree::tuple()})}, {"b", Tree()}, {"counts", Tree::dict()}};
    fails_with(bad, "read at root.head.w[0]: expected a leaf, got a tuple");
    CHECK_THROWS_WITH_AS(read<Frozen>(Tree::list()), "read at root: expected a dict, got a list",
                         linum::TypeError);
    const std::map<std::string, double> target{{"a", 1.0}, {"b", 2.0}};
    FromPlain style;
    CHECK_THROWS_WITH_AS(pt::from_dynamic(&target, Tree{{"a", 1.0}}, style),
                         "read at root: no key 'b'", linum::TypeError);
  }
}

}  // namespace test_from_dynamic
