// Lifted vmap and scan: cases from Flax's tests/core (core_lift_test, core_vmap_test,
// core_scan_test) and the keys of its RNG guide's committed outputs, each against the same
// computation written by hand with linum::vmap / linum::scan, and grads against finite differences.
#include <doctest/doctest.h>

#include <linum/lift/lift.hpp>
#include <linum/linum.hpp>
#include <linum/nn/initializers.hpp>

#include "../autodiff/check_grads.hpp"
#include "lift_testing.hpp"

namespace test_vmap_scan {

using namespace linum;
using namespace linum::lift::testing;
namespace init = linum::nn::initializers;
using lift::Scope;

TEST_SUITE("lift.vmap") {
  TEST_CASE("a descendant lifted with its ancestor is re-pushed inside from the lifted scope") {
    bool ran = false;
    auto f = [&](Scope& scope) {
      Scope a = scope.push("a");
      auto g = [&](std::vector<Scope>& s, const Array&) {
        REQUIRE(s.size() == 2);
        REQUIRE(s[1].parent());
        CHECK(*s[1].parent() == s[0]);
        CHECK_FALSE(s[0] == scope);  // the lifted scope is a new inner root
        CHECK(s[1].path() == std::vector<std::string>{"a"});
        ran = true;
        return Array(0.0f);
      };
      return lift::vmap(g, {})(std::vector<Scope>{scope, a}, ones({1}));
    };
    lift::init(f)(random::key(0));
    CHECK(ran);
  }

  TEST_CASE("a dense through the re-pushed scope == the hand vmap; its keys continue 'a's") {
    const std::int64_t n = 3;
    auto g = [](std::vector<Scope>& s, const Array& x) {
      Array scale = s[0].param("scale", init::ones_init(), Shape{2});
      return dense(s[1], x, 2) * scale;
    };
    auto f = [&](Scope& scope, const Array& x) {
      Scope a = scope.push("a");
      return lift::vmap(g, {.variable_axes = {{"params", 0}}, .split_rngs = {{"params", true}}})(
          std::vector<Scope>{scope, a}, x);
    };
    Array x = random::normal(random::key(5), {n, 4});
    auto [y, vars] = lift::init(f)(random::key(0), x);
    Array k = vars["params"]["a"]["kernel"].leaf(), b = vars["params"]["a"]["bias"].leaf();
    Array scale = vars["params"]["scale"].leaf();
    CHECK(k.shape() == Shape{n, 4, 2});
    CHECK(b.shape() == Shape{n, 2});
    CHECK(scale.shape() == Shape{n, 2});
    // Slice i of the kernel: split(key(0), n)[i] folded with ('a', 1), the counter of the outer
    // 'a' (re-pushed with reuse); 'scale' with (1,), the lifted root's own counter (inner
    // scopes share the outer counters; a split rng keeps its suffix).
    Array keys = random::split(random::key(0), n);
    for (std::int64_t i = 0; i < n; ++i) {
      CHECK(close(
          at(k, i),
          init::lecun_normal()(key_for(at(keys, i), {std::string("a"), std::uint64_t{1}}), {4, 2}),
          0));
      CHECK(close(at(scale, i), ones({2}), 0));
    }
    Array hand = linum::vmap([](const Array& k, const Array& b, const Array& s, const Array& x) {
      return (matmul(x, k) + b) * s;
    })(k, b, scale, x);
    CHECK(close(y, hand));
    CHECK(close(lift::apply(f)(vars, x), hand));
  }

  TEST_CASE("vmap over two sibling scopes lifts both; each keeps its own params") {
    auto g = [](std::vector<Scope>& s, const Array& x) {
      return dense(s[1], tanh(dense(s[0], x, 3)), 2);
    };
    auto f = [&](Scope& scope, const Array& x) {
      std::vector<Scope> both{scope.push("enc"), scope.push("dec")};
      return lift::vmap(g, {.variable_axes = {{"params", std::nullopt}},
                            .split_rngs = {{"params", false}}})(both, x);
    };
    Array x = random::normal(random::key(6), {5, 4});
    auto [y, vars] = lift::init(f)(random::key(0), x);
    Tree e = vars["params"]["enc"], d = vars["params"]["dec"];
    CHECK(e["kernel"].leaf().shape() == Shape{4, 3});
    CHECK(d["kernel"].leaf().shape() == Shape{3, 2});
    // Broadcast params, unsplit rng: each scope's first key, as an unlifted init draws it.
    CHECK(close(e["kernel"].leaf(),
                init::lecun_normal()(
                    key_for(random::key(0), {std::string("enc"), std::uint64_t{1}}), {4, 3}),
                0));
    Array hand =
        matmul(tanh(matmul(x, e["kernel"].leaf()) + e["bias"].leaf()), d["kernel"].leaf()) +
        d["bias"].leaf();
    CHECK(close(y, hand, 1e-5));
  }

  TEST_CASE("a missing param inside vmap names the lifted debug path /vmap(dense)") {
    auto dense2 = lift::vmap([](Scope& s, const Array& x) { return dense(s, x, 2); },
                             {.variable_axes = {{"params", 0}}, .split_rngs = {{"params", true}}});
    Tree vars =
        Tree::dict({{"params", Tree::dict({{"dense", Tree::dict({{"abc", ones({3, 3})}})}})}});
    std::string msg = error_of<lift::ScopeParamNotFoundError>([&] {
      lift::apply([&](Scope& scope) {
        Scope d = scope.push("dense");
        return dense2(d, ones({3, 2}));
      })(vars);
    });
    CHECK(msg.find("Could not find parameter named \"kernel\" in scope \"/vmap(dense)\".") == 0);
  }

  TEST_CASE("broadcast params (axis None, no rng split) give one kernel and equal rows") {
    auto vdense = [](std::int64_t features) {
      return lift::vmap([features](Scope& s, const Array& x) { return dense(s, x, features); },
                        {.variable_axes = {{"params", std::nullopt}},
                         .split_rngs = {{"params", false}},
                         .in_axes = 0});
    };
    auto mlp = [&](Scope& scope, const Array& x) {
      Scope h = scope.push(std::nullopt, "hidden_");
      Array y = vdense(8)(h, x);
      Scope o = scope.push("out");
      return vdense(1)(o, relu(y));
    };
    Array row = random::normal(random::key(0), {1, 4});
    Array x = concatenate({row, row}, 0);
    auto [y, vars] = lift::init(mlp)(random::key(1), x);
    CHECK(vars["params"]["hidden_0"]["kernel"].leaf().shape() == Shape{4, 8});
    CHECK(vars["params"]["hidden_0"]["bias"].leaf().shape() == Shape{8});
    CHECK(vars["params"]["out"]["kernel"].leaf().shape() == Shape{8, 1});
    CHECK(vars["params"]["out"]["bias"].leaf().shape() == Shape{1});
    CHECK(y.shape() == Shape{2, 1});
    CHECK(close(at(y, 0), at(y, 1), 0));
  }

  TEST_CASE("lifted vmap over dense == vmap of the explicit function with stacked params") {
    auto vd = lift::vmap([](Scope& s, const Array& x) { return dense(s, x, 3); },
                         {.variable_axes = {{"params", 0}}, .split_rngs = {{"params", true}}});
    Array x = random::normal(random::key(2), {4, 5, 2});
    auto [y, vars] = lift::init(vd)(random::key(0), x);
    Array k = vars["params"]["kernel"].leaf(), b = vars["params"]["bias"].leaf();
    CHECK(k.shape() == Shape{4, 2, 3});
    CHECK(b.shape() == Shape{4, 3});
    Array hand = linum::vmap(
        [](const Array& k, const Array& b, const Array& x) { return matmul(x, k) + b; })(k, b, x);
    CHECK(close(y, hand));
    CHECK(close(lift::apply(vd)(vars, x), hand));
    // Each slice's kernel is lecun_normal of split(key(0), 4)[i] with suffix (1,) (splitting keeps
    // the suffix).
    Array keys = random::split(random::key(0), 4);
    for (int i = 0; i < 4; ++i) {
      Array ki = init::lecun_normal()(key_for(at(keys, i), {std::uint64_t{1}}), {2, 3});
      CHECK(close(at(k, i), ki, 0));
    }
  }

  TEST_CASE("grad through a lifted vmap matches finite differences") {
    auto vd = lift::vmap([](Scope& s, const Array& x) { return tanh(dense(s, x, 3)); },
                         {.variable_axes = {{"params", 0}}, .split_rngs = {{"params", true}}});
    Array x = astype(random::normal(random::key(2), {4, 2}), float64);
    auto [y, vars] = lift::init(vd)(random::key(0), x);
    Array k = astype(vars["params"]["kernel"].leaf(), float64);
    Array b = astype(vars["params"]["bias"].leaf(), float64);
    testing::check_grads(
        [&](const Arrays& a) {
          Tree v = Tree::dict({{"params", Tree::dict({{"kernel", a[0]}, {"bias", a[1]}})}});
          return lift::apply(vd)(v, a[2]);
        },
        {k, b, x});
  }

  TEST_CASE("vmap: inconsistent batch sizes and a missing axis_size are Flax's ValueErrors") {
    auto vd = lift::vmap([](Scope& s, const Array& x) { return dense(s, x, 3); },
                         {.variable_axes = {{"params", 0}}, .split_rngs = {{"params", true}}});
    Tree vars = Tree::dict(
        {{"params", Tree::dict({{"kernel", zeros({3, 2, 3})}, {"bias", zeros({3, 3})}})}});
    std::string msg = error_of<ValueError>([&] { lift::apply(vd)(vars, ones({4, 2})); });
    CHECK(msg == "Inconsistent batch axis sizes: {3, 4}");
    auto none = lift::vmap([](Scope&, const Array& x) { return x; }, {.in_axes = std::nullopt});
    msg = error_of<ValueError>([&] { lift::apply(none)(Tree::dict(), ones({2})); });
    CHECK(msg == "axis_size should be specified manually.");
  }

  TEST_CASE("a visible collection mutated but in no out-filter: unmapped output variables") {
    // 'state' is in an In-only filter: frozen inside, so the write fails there first.
    auto frozen = lift::vmap(
        [](Scope& s, const Array& x) {
          s.put_variable("state", "n", x);
          return x;
        },
        {.variable_axes = {{"state", lift::In(0)}}, .axis_size = 2});
    Tree vars = Tree::dict({{"state", Tree::dict({{"n", zeros({2})}})}});
    CHECK_THROWS_AS(lift::apply(frozen, "state")(vars, ones({2})), lift::ModifyScopeVariableError);
    // That freezing makes the ValueError unreachable through the transforms; repack itself raises
    // it for a mutable collection that no out-filter maps (lift.py:244-254).
    Scope inner(Tree::dict(), {}, lift::Filter{"params", "state"});
    inner.put_variable("state", "n", Tree(zeros({2})));
    inner.put_variable("params", "w", Tree(zeros({2})));
    lift::PackSpec spec{{true}, {"params"}, {}, "vmap"};
    CHECK(error_of<ValueError>([&] { lift::repack(inner, spec); }) ==
          "unmapped output variables: ('state',)");
    CHECK_FALSE(inner.is_valid());  // invalidated before the check, as flax's repack_fn
  }

  TEST_CASE("vmap with an Out-only collection publishes it; with a broadcast one keeps it shared") {
    auto counted = lift::vmap(
        [](Scope& s, const Array& x) {
          s.put_variable("stats", "sq", x * x);
          return x;
        },
        {.variable_axes = {{"stats", lift::Out(0)}}});
    auto [y, vars] = lift::apply(counted, "stats")(Tree::dict(), f32({1, 2, 3}, {3}));
    CHECK(close(vars["stats"]["sq"].leaf(), f32({1, 4, 9}, {3})));
    CHECK(close(y, f32({1, 2, 3}, {3})));
  }

  TEST_CASE("Flax's RNG-guide vmap params, in both separator settings") {
    Array x = ones({3, 2});
    auto dense2 = [](Scope& s, const Array& x) { return dense(s, x, 2); };
    for (bool sep : {true, false}) {
      CAPTURE(sep);
      lift::FixRngSeparatorScope flag(sep);
      // v60: broadcast params, unsplit rng: the kernel of key(0) with suffix (1,).
      auto v60 = lift::vmap(
          dense2, {.variable_axes = {{"params", std::nullopt}}, .split_rngs = {{"params", false}}});
      auto [y60, vars60] = lift::init(v60)(random::key(0), x);
      Array k60 = sep ? f32({-1.2488099f, -0.6127134f, -0.07084481f, 0.60130936f}, {2, 2})
                      : f32({0.058418754f, -1.166304f, -1.2072171f, 0.54235715f}, {2, 2});
      CHECK(close(vars60["params"]["kernel"].leaf(), k60));
      CHECK(close(vars60["params"]["bias"].leaf(), zeros({2})));
      // v62: stacked params, split rng.
      auto v62 =
          lift::vmap(dense2, {.variable_axes = {{"params", 0}}, .split_rngs = {{"params", true}}});
      auto [y62, vars62] = lift::init(v62)(random::key(0), x);
      Array k62 =
          sep ? f32({-0.2526208f, -0.15088455f, -1.1987205f, -0.40843305f, -0.7064888f, -1.108805f,
                     -0.938775f, 1.4812315f, -0.59468937f, -0.2502723f, -1.33515f, 0.5067442f},
                    {3, 2, 2})
              : f32({0.76119637f, 1.0844675f, -0.54567879f, -0.49972105f, -0.23197685f,
                     -0.33653489f, 0.18674162f, -0.7139582f, 0.21411802f, 0.88457131f, 0.36252701f,
                     0.9802478f},
                    {3, 2, 2});
      CHECK(close(vars62["params"]["kernel"].leaf(), k62));
      // The guide's Model: Dense_0 plus an 'other_collection' kernel drawn from make_rng('other').
      auto model = [](Scope& s, const Array& x) {
        Scope d = s.push("Dense_0");
        Array h = dense(d, x, 2);
        s.variable("other_collection", "kernel",
                   [&] { return random::normal(s.make_rng("other"), h.shape()); });
        return h;
      };
      auto v63 = lift::vmap(model, {.variable_axes = {{"params", 0}, {"other_collection", 0}},
                                    .split_rngs = {{"params", true}, {"other", true}}});
      auto [y63, vars63] =
          lift::init(v63)(lift::Rngs{{"params", random::key(0)}, {"other", random::key(1)}}, x);
      Array k63 =
          sep ? f32({-0.9079084f, 0.76390624f, -0.01285526f, 0.4320353f, 0.12398645f, 0.7884565f,
                     1.5344163f, 1.3186085f, -0.44171348f, 0.43430036f, -0.40732604f, 0.29774475f},
                    {3, 2, 2})
              : f32({0.75421417f, 0.53073758f, -0.60915267f, -0.97381979f, -1.163906f, 0.19770263f,
                     -1.5079868f, 0.30489394f, -1.3251878f, -0.58320528f, 1.0900751f, -0.75403661f},
                    {3, 2, 2});
      Array o63 =
          sep ? f32({-0.8193048f, 0.711106f, -0.37802765f, -0.66705877f, -0.44808003f, 0.93031347f},
                    {3, 2})
              : f32({0.08320044f, -0.28798166f, 1.278924f, -0.81791246f, -0.98641366f, -1.6980069f},
                    {3, 2});
      CHECK(close(vars63["params"]["Dense_0"]["kernel"].leaf(), k63));
      CHECK(close(vars63["other_collection"]["kernel"].leaf(), o63));
    }
  }

}  // TEST_SUITE

TEST_SUITE("lift.scan") {
  TEST_CASE("a carried counter, per-iteration params from split rngs") {
    auto mlp_scan = [](Scope& scope, const Array& xs) {
      scope.variable("counter", "i", [] { return zeros({}); });
      auto body = [](Scope& s, const Tree& c, const Array& x) {
        auto counter = s.variable("counter", "i", [] { return zeros({}); });
        counter.value() = counter.value() + 1.0f;
        Scope d = s.push("dense_0");
        return std::make_pair(c, dense(d, x, 1));
      };
      return lift::scan(body, {.variable_axes = {{"params", 0}},
                               .variable_carry = "counter",
                               .split_rngs = {{"params", true}}})(scope, Tree(), xs)
          .second;
    };
    Array row = random::normal(random::key(0), {1, 4});
    Array xs = concatenate({row, row}, 0);
    auto [y, vars] = lift::init(mlp_scan)(random::key(1), xs);
    CHECK(vars["counter"]["i"].leaf().item<float>() == 2.0f);
    Array k = vars["params"]["dense_0"]["kernel"].leaf();
    CHECK(k.shape() == Shape{2, 4, 1});
    CHECK(vars["params"]["dense_0"]["bias"].leaf().shape() == Shape{2, 1});
    CHECK(y.shape() == Shape{2, 1});
    CHECK_FALSE(close(at(y, 0), at(y, 1), 0));
    CHECK_FALSE(close(at(k, 0), at(k, 1), 0));
    // apply with the counter mutable continues it; the ys equal a hand scan over stacked params.
    auto [y2, state] = lift::apply(mlp_scan, "counter")(vars, xs);
    CHECK(state["counter"]["i"].leaf().item<float>() == 4.0f);
    Array b = vars["params"]["dense_0"]["bias"].leaf();
    Array hand = linum::scan(
                     [](const Array& c, const std::tuple<Array, Array, Array>& t) {
                       auto [k, b, x] = t;
                       return std::make_pair(c, matmul(x, k) + b);
                     },
                     zeros({}), std::tuple{k, b, xs})
                     .second;
    CHECK(close(y2, hand));
    CHECK(close(y, hand));
  }

  TEST_CASE("scanned params use the counters of Flax's second trace (both separators)") {
    Array x = ones({3, 2});
    auto block = [](Scope& s, const Array& c) {
      Scope d = s.push("Dense_0");
      Array h = relu(dense(d, c, 2));
      return std::make_pair(c + h, Tree());
    };
    for (bool sep : {true, false}) {
      CAPTURE(sep);
      lift::FixRngSeparatorScope flag(sep);
      auto f66 = [&](Scope& scope, const Array& x) {
        return lift::scan(block, {.variable_axes = {{"params", 0}},
                                  .split_rngs = {{"params", true}},
                                  .length = 3})(scope, x)
            .first;
      };
      auto [y66, v66] = lift::init(f66)(random::key(0), x);
      Array k66 = sep ? f32({-0.07838312f, -0.7422982f, 0.87488323f, 0.13773395f, 0.97309333f,
                             0.9087693f, -0.12564984f, -1.0920651f, -0.99055105f, 1.1499453f,
                             -0.15721127f, -0.62520015f},
                            {3, 2, 2})
                      : f32({-0.47237748f, 0.9342351f, -0.051814452f, -0.54192263f, 0.45121637f,
                             1.3581365f, 0.0040389909f, 0.51114082f, 0.032164656f, -0.17287178f,
                             -0.8439222f, 0.36585602f},
                            {3, 2, 2});
      CHECK(close(v66["params"]["Dense_0"]["kernel"].leaf(), k66));
      auto f67 = [&](Scope& scope, const Array& x) {
        return lift::scan(block, {.variable_axes = {{"params", 0}},
                                  .split_rngs = {{"params", false}},
                                  .length = 3})(scope, x)
            .first;
      };
      auto [y67, v67] = lift::init(f67)(random::key(0), x);
      Array k67 = sep ? f32({-0.66715515f, -0.0484313f, 0.9867164f, 0.75408363f}, {2, 2})
                      : f32({0.49437523f, -1.5521431f, -1.0780724f, 0.87564963f}, {2, 2});
      Array k = v67["params"]["Dense_0"]["kernel"].leaf();
      for (int t = 0; t < 3; ++t) CHECK(close(at(k, t), k67));
    }
  }

  TEST_CASE("scan: broadcast params are created once and shared; grad matches finite differences") {
    auto body = [](Scope& s, const Array& c, const Array& x) {
      Scope d = s.push("cell");
      Array h = tanh(dense(d, concatenate({c, x}, 0), 3));
      return std::make_pair(h, h * 2.0);
    };
    auto f = [&](Scope& scope, const Array& c, const Array& xs) {
      return lift::scan(body, {.variable_broadcast = "params", .split_rngs = {{"params", false}}})(
          scope, c, xs);
    };
    Array c0 = astype(zeros({3}), float64);
    Array xs = astype(random::normal(random::key(3), {4, 2}), float64);
    auto [out, vars] = lift::init(f)(random::key(0), c0, xs);
    Array k = vars["params"]["cell"]["kernel"].leaf(), b = vars["params"]["cell"]["bias"].leaf();
    CHECK(k.shape() == Shape{5, 3});
    // The same loop by hand with linum::scan and the one kernel.
    auto hand = linum::scan(
        [&](const Array& c, const Array& x) {
          Array h = tanh(matmul(concatenate({c, x}, 0), k) + b);
          return std::make_pair(h, h * 2.0);
        },
        c0, xs);
    CHECK(close(out.first, hand.first));
    CHECK(close(out.second, hand.second));
    testing::check_grads(
        [&](const Arrays& a) {
          Tree v = Tree::dict(
              {{"params", Tree::dict({{"cell", Tree::dict({{"kernel", a[0]}, {"bias", a[1]}})}})}});
          auto [c, ys] = lift::apply(f)(v, a[2], a[3]);
          return sum(ys) + sum(c);
        },
        {astype(k, float64), astype(b, float64), c0, xs});
  }

  TEST_CASE("scan: in_axes broadcast and out_axes, inconsistent and missing lengths") {
    auto body = [](Scope&, const Array& c, const Array& b, const Array& x) {
      CHECK(b.shape() == Shape{4});
      return std::make_pair(c + sum(x * b), x);
    };
    auto f = [&](Scope& scope, const Array& b, const Array& xs) {
      return lift::scan(body, {.in_axes = {lift::broadcast, 1}, .out_axes = -1})(scope, zeros({}),
                                                                                 b, xs);
    };
    Array xs = random::normal(random::key(1), {4, 3});
    auto [out, v] = lift::init(f)(random::key(0), ones({4}), xs);
    CHECK(out.second.shape() == Shape{4, 3});
    CHECK(close(out.second, xs));
    CHECK(close(out.first, sum(xs), 1e-5));
    auto two = [](Scope& scope, const Array& a, const Array& b) {
      return lift::scan(
          [](Scope&, const Array& c, const Array&, const Array&) { return std::make_pair(c, c); },
          {})(scope, zeros({}), a, b);
    };
    CHECK(error_of<ValueError>([&] { lift::init(two)(random::key(0), ones({2}), ones({3})); }) ==
          "Inconsistent scan lengths: {2, 3}");
    auto none = [](Scope& scope) {
      return lift::scan([](Scope&, const Array& c) { return std::make_pair(c, c); }, {})(scope,
                                                                                         zeros({}));
    };
    CHECK(error_of<ValueError>([&] { lift::init(none)(random::key(0)); }) ==
          "length should be specified manually.");
  }

}  // TEST_SUITE

}  // namespace test_vmap_scan
