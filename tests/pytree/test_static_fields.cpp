// Static struct fields (Flax's struct.field(pytree_node=False)) declared with
// LINUM_PYTREE_STATIC_FIELDS: not leaves, kept by tree_map, part of the treedef (compared
// with ==), restored by tree_unflatten; Static<T> holders compare by identity or value.
#include <doctest/doctest.h>

#include <functional>
#include <string>
#include <vector>

#include <linum/pytree/pytree.hpp>

namespace test_static_fields {

namespace pt = linum::pytree;

namespace {

// A Flax-style dataclass: two pytree fields and two static ones.
template <class W>
struct Layer {
  BOOST_HANA_DEFINE_STRUCT(Layer, (W, kernel), (W, bias));
  int features = 0;
  pt::Static<std::function<double(double)>> act;
  LINUM_PYTREE_STATIC_FIELDS(Layer, features, act);
};

Layer<double> make_layer(int features) {
  Layer<double> l;
  l.kernel = 2.0;
  l.bias = 0.5;
  l.features = features;
  l.act = std::function<double(double)>([](double x) { return x > 0 ? x : 0.0; });
  return l;
}

// A value type without ==: statics of the same type then compare equal.
struct Tag {
  std::string name;
};
struct Tagged {
  BOOST_HANA_DEFINE_STRUCT(Tagged, (double, x));
  Tag tag;
  LINUM_PYTREE_STATIC_FIELDS(Tagged, tag);
};

// Same type name, static field of a type given by the template argument.
template <class S>
struct Holder {
  BOOST_HANA_DEFINE_STRUCT(Holder, (double, x));
  S s{};
  LINUM_PYTREE_STATIC_FIELDS(Holder, s);
};

}  // namespace

TEST_SUITE("pytree static fields") {
  TEST_CASE("static fields are not leaves and have no key paths") {
    const auto l = make_layer(3);
    CHECK(pt::tree_leaves(l) == std::vector<double>{2.0, 0.5});
    const auto lp = pt::tree_leaves_with_path(l);
    REQUIRE(lp.size() == 2);
    CHECK(pt::keystr(lp[0].first) == ".kernel");
    CHECK(pt::keystr(lp[1].first) == ".bias");
    CHECK(pt::tree_structure(l).to_string() ==
          "PyTreeDef(CustomNode(namedtuple[Layer; static features, act], [*, *]))");
  }

  TEST_CASE("tree_map keeps static fields, also when it changes the leaf type") {
    const auto l = make_layer(3);
    auto doubled = pt::tree_map([](double x) { return 2 * x; }, l);
    CHECK(doubled.kernel == 4.0);
    CHECK(doubled.features == 3);
    CHECK(doubled.act(-1.0) == 0.0);
    CHECK(doubled.act(2.5) == 2.5);
    auto as_int = pt::tree_map([](double x) { return static_cast<int>(x * 10); }, l);
    static_assert(std::is_same_v<decltype(as_int), Layer<int>>);
    CHECK(as_int.kernel == 20);
    CHECK(as_int.features == 3);
    CHECK(as_int.act == l.act);
    // Over several trees, the static fields must agree (JAX compares the aux data with ==).
    auto sum = pt::tree_map([](double a, double b) { return a + b; }, l, doubled);
    CHECK(sum.bias == 1.5);
    CHECK(sum.features == 3);
    auto other = make_layer(4);
    bool threw = false;
    try {
      pt::tree_map([](double a, double b) { return a + b; }, l, other);
    } catch (const linum::ValueError& e) {
      threw = true;
      CHECK(std::string(e.what()).find("static fields differ") != std::string::npos);
    }
    CHECK(threw);
  }

  TEST_CASE("structures differing only in static fields are unequal treedefs") {
    const auto a = make_layer(3);
    auto same = a;  // a copy shares the act object and has equal features
    CHECK(pt::tree_structure(a) == pt::tree_structure(same));
    auto wider = a;
    wider.features = 4;
    CHECK_FALSE(pt::tree_structure(a) == pt::tree_structure(wider));
    // Another function object is another static value (Python compares functions by identity).
    auto relu2 = a;
    relu2.act = std::function<double(double)>([](double x) { return x > 0 ? x : 0.0; });
    CHECK_FALSE(pt::tree_structure(a) == pt::tree_structure(relu2));
    // Without ==, values of one type compare equal (documented in static_field.hpp).
    CHECK(pt::tree_structure(Tagged{1.0, {"a"}}) == pt::tree_structure(Tagged{2.0, {"b"}}));
    // Children and treedef_tuple carry the static values along.
    const auto pair = pt::TreeDef::tuple({pt::tree_structure(a), pt::tree_structure(wider)});
    const auto kids = pair.children();
    REQUIRE(kids.size() == 2);
    CHECK(kids[0] == pt::tree_structure(a));
    CHECK(kids[1] == pt::tree_structure(wider));
    CHECK_FALSE(kids[0] == kids[1]);
  }

  TEST_CASE("tree_unflatten restores static fields from the treedef") {
    const auto l = make_layer(7);
    auto [leaves, def] = pt::tree_flatten(l);
    auto back = pt::tree_unflatten<Layer<double>>(def, std::vector<double>{1.0, -1.0});
    CHECK(back.kernel == 1.0);
    CHECK(back.bias == -1.0);
    CHECK(back.features == 7);
    CHECK(back.act == l.act);
    CHECK(back.act(-3.0) == 0.0);
    // A static value of another C++ type than the target's field is a clear TypeError.
    auto [hleaves, hdef] = pt::tree_flatten(Holder<int>{1.5, 5});
    CHECK(pt::tree_unflatten<Holder<int>>(hdef, hleaves).s == 5);
    CHECK_FALSE(hdef == pt::tree_structure(Holder<long>{1.5, 5}));
    CHECK_THROWS_WITH_AS(pt::tree_unflatten<Holder<std::string>>(hdef, hleaves),
                         doctest::Contains("static field s of Holder"), linum::TypeError);
  }
}

}  // namespace test_static_fields
