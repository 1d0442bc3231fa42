// Lifted differentiation transforms: vjp, value_and_grad, jvp and checkpoint, the cases of Flax's
// tests/core/core_lift_test.py, each against linum's own transform of the explicit function and
// finite differences.
#include <doctest/doctest.h>

#include <linum/lift/lift.hpp>
#include <linum/linum.hpp>
#include <linum/nn/initializers.hpp>

#include "../autodiff/check_grads.hpp"
#include "lift_testing.hpp"

namespace test_transforms_ad {

using namespace linum;
using namespace linum::lift::testing;
namespace init = linum::nn::initializers;
using lift::Scope;

TEST_SUITE("lift.vjp") {
  TEST_CASE("lifted vjp gives params grads {col: grads} and the primals' grads") {
    auto g = [](Scope& s, const Array& x, const Array& y) {
      Array p = s.param("test", init::constant(0.5), Shape{});
      s.variable("state", "counter", [] { return zeros({}, int32); });
      return p * x * y;
    };
    auto f = [&](Scope& scope, const Array& x, const Array& y) {
      auto [z, bwd] = lift::vjp(g, scope, x, y);
      return bwd(ones(y.shape()));
    };
    Array x = f32({1, 2, 3}, {3}), y = f32({4, 5, 6}, {3});
    auto [unused, vars] = lift::init(f)(random::key(0), x, y);
    CHECK(vars["params"]["test"].leaf().item<float>() == 0.5f);
    CHECK(vars["state"]["counter"].leaf().item<int>() == 0);
    auto [pg, xg, yg] = lift::apply(f)(vars, x, y);
    CHECK(pg["params"]["test"].leaf().item<float>() == 32.0f);
    CHECK(close(xg, f32({2.0f, 2.5f, 3.0f}, {3})));
    CHECK(close(yg, f32({0.5f, 1.0f, 1.5f}, {3})));
  }

  TEST_CASE("lifted value_and_grad == value_and_grad of the explicit function") {
    auto g = [](Scope& s, const Array& x) { return sum(tanh(dense(s, x, 2))); };
    Array x = random::normal(random::key(4), {3, 2});
    auto f = [&](Scope& scope, const Array& x) { return lift::value_and_grad(g, scope, x); };
    auto [out, vars] = lift::init(f)(random::key(0), x);
    Array k = vars["params"]["kernel"].leaf(), b = vars["params"]["bias"].leaf();
    auto [v, gx] =
        linum::value_and_grad([&](const Array& x) { return sum(tanh(matmul(x, k) + b)); })(x);
    CHECK(close(out.first, v));
    CHECK(close(std::get<0>(out.second), gx));
  }

  TEST_CASE("lifted jvp with variable tangents; empty collections at init are dropped") {
    auto g = [](Scope& s, const Array& x) {
      return s.param("test", init::zeros_init(), Shape{}) * x;
    };
    auto f = [&](Scope& scope, const Array& x) {
      Tree vars = scope.variables();
      Tree pt =
          vars.contains("params")
              ? detail::tree_apply(vars["params"], [](const Array& a) { return ones_like(a); })
              : Tree::dict();
      return lift::jvp(g, scope, std::tuple{x}, std::tuple{zeros_like(x)},
                       Tree::dict({{"params", pt}}))
          .second;
    };
    Array x = ones({3});
    auto [t0, vars] = lift::init(f)(random::key(0), x);
    CHECK(close(t0, zeros({3})));
    CHECK(close(lift::apply(f)(vars, x), ones({3})));
  }

  TEST_CASE("grad through a lifted vjp's pullback matches finite differences") {
    auto g = [](Scope& s, const Array& x) { return tanh(dense(s, x, 2)); };
    auto f = [&](Scope& scope, const Array& x) {
      auto [y, bwd] = lift::vjp(g, scope, x);
      auto [pg, xg] = bwd(y);
      // At init the params are created inside, so they get no cotangent.
      if (!pg.contains("params") || !pg["params"].contains("kernel")) return sum(xg * xg);
      return sum(xg * xg) + sum(pg["params"]["kernel"].leaf());
    };
    Array x = astype(random::normal(random::key(5), {2, 3}), float64);
    auto [unused, vars] = lift::init(f)(random::key(0), x);
    testing::check_grads(
        [&](const Arrays& a) {
          Tree v = Tree::dict({{"params", Tree::dict({{"kernel", a[0]}, {"bias", a[1]}})}});
          return lift::apply(f)(v, a[2]);
        },
        {astype(vars["params"]["kernel"].leaf(), float64),
         astype(vars["params"]["bias"].leaf(), float64), x});
  }

}  // TEST_SUITE

TEST_SUITE("lift.jit") {
  TEST_CASE("one trace per signature and mutable filter; writes and values as un-jitted") {
    int compiles = 0;
    auto body = [&compiles](Scope& scope, const Array& x) {
      ++compiles;  // runs when traced, not when a cached program is replayed
      if (scope.is_mutable_collection("intermediates") && !scope.is_mutable_collection("params"))
        scope.put_variable("intermediates", "x", Tree(x + 1.0f));
      return dense(scope, x, 1);
    };
    auto f = lift::jit(body);
    Array x = ones({3, 2});
    auto [y0, params] = lift::init(f)(random::key(0), x);
    lift::init(f)(random::key(0), x);
    CHECK(compiles == 1);
    CHECK(f.trace_count() == 1);
    CHECK_FALSE(params.contains("intermediates"));  // params mutable at init: no write
    auto [y0_plain, params_plain] = lift::init(body)(random::key(0), x);
    CHECK(close(params["params"]["kernel"].leaf(), params_plain["params"]["kernel"].leaf(), 0));
    Array k = params["params"]["kernel"].leaf(), b = params["params"]["bias"].leaf();
    Array hand = matmul(x, k) + b;
    CHECK(close(y0, hand));
    compiles = 0;
    CHECK(close(lift::apply(f)(params, x), hand));  // apply is a new signature
    CHECK(compiles == 1);
    CHECK(close(lift::apply(f)(params, x * 2.0f), matmul(x * 2.0f, k) + b));  // replayed
    CHECK(compiles == 1);
    // Only the fingerprint (the mutable filter) differs: a new trace, which writes.
    auto [y, state] = lift::apply(f, "intermediates")(params, x);
    CHECK(compiles == 2);
    CHECK(close(y, hand));
    CHECK(state.as_dict().keys() == std::vector<std::string>{"intermediates"});
    CHECK(sum(state["intermediates"]["x"].leaf()).item<float>() == 12.0f);
    auto [y_again, state_again] = lift::apply(f, "intermediates")(params, x + 1.0f);
    CHECK(compiles == 2);
    CHECK(sum(state_again["intermediates"]["x"].leaf()).item<float>() == 18.0f);
    // Both params and intermediates mutable: the body skips the write, as in Flax.
    auto [y2, both] = lift::apply(f, lift::Filter{"params", "intermediates"})(params, x);
    CHECK(compiles == 3);
    CHECK_FALSE(both.contains("intermediates"));
    CHECK(f.trace_count() == 4);
  }

  TEST_CASE("lift.jit static_argnums: a negative entry counts from the end of fn's arguments") {
    struct Reps {
      int n;
      bool operator==(const Reps&) const = default;
    };
    auto body = [](Scope&, const Array& x, Reps r) {
      Array y = x;
      for (int i = 0; i < r.n; ++i) y = y * 2.0f;
      return y;
    };
    auto f = lift::jit(body, true, true, {.static_argnums = {-1}});
    const Array x = ones({2});
    CHECK(close(lift::apply(f)(Tree::dict(), x, Reps{2}), x * 4.0f, 0));
    CHECK(close(lift::apply(f)(Tree::dict(), x, Reps{3}), x * 8.0f, 0));
    CHECK(f.trace_count() == 2);
  }

  TEST_CASE("lift.jit rngs: the suffix is dropped; a replay advances the counters as a trace") {
    // g draws from 'dropout' twice. Flax's jit passes the stream's base key without the scope's
    // suffix, and the counters are host values fixed in the trace: a replay draws the keys of the
    // trace again, but leaves the counters where a fresh trace would (_restore_rng_counters).
    auto g = [](Scope& s, const Array& x) {
      Array a = random::uniform(s.make_rng("dropout"), {2});
      return x * a + random::uniform(s.make_rng("dropout"), {2});
    };
    auto kept = lift::jit(g);
    auto twice = [&](bool reuse) {
      return [&, reuse](Scope& scope, const Array& x) {
        Scope sub = scope.push("sub");
        Array y1 = reuse ? kept(sub, x) : lift::jit(g)(sub, x);
        Array y2 = reuse ? kept(sub, x) : lift::jit(g)(sub, x);  // a fresh object traces again
        return std::make_tuple(y1, y2, random::key_data(sub.make_rng("dropout")));
      };
    };
    lift::Rngs rngs{{"dropout", random::key(3)}};
    Array x = f32({1, 2}, {2});
    auto [a1, a2, a_after] = lift::apply(twice(true))(Tree::dict(), x, rngs);
    auto [b1, b2, b_after] = lift::apply(twice(false))(Tree::dict(), x, rngs);
    CHECK(kept.trace_count() == 1);
    CHECK(close(a1, b1, 0));
    CHECK(close(a2, a1, 0));          // replayed: the trace's keys
    CHECK_FALSE(close(b2, b1, 1e-3));  // traced again: the counters moved on
    CHECK(all(equal(a_after, b_after)).item<bool>());
    // Without the suffix, g at /sub draws what the un-jitted g draws at the root.
    auto [c1, c2] = lift::apply([&](Scope& scope, const Array& xx) {
      Array y1 = g(scope, xx);
      return std::make_pair(y1, g(scope, xx));
    })(Tree::dict(), x, rngs);
    CHECK(close(a1, c1, 0));
    CHECK(close(b2, c2, 0));
    Array at_sub = lift::apply([&](Scope& scope, const Array& xx) {
      Scope sub = scope.push("sub");
      return g(sub, xx);
    })(Tree::dict(), x, rngs);
    CHECK_FALSE(close(a1, at_sub, 1e-3));
  }

  TEST_CASE("grad and vmap through lift.jit run the body inline and match the un-jitted body") {
    auto body = [](Scope& scope, const Array& x) { return tanh(dense(scope, x, 3)); };
    auto f = lift::jit(body);
    Array x = f32({0.5f, -1.0f, 2.0f, 0.25f}, {2, 2});
    auto [unused, vars] = lift::init(body)(random::key(1), x);
    auto loss = [&](auto& fn) {
      return [&](const Tree& params) { return sum(lift::apply(fn)(params, x)); };
    };
    Tree g_jit = linum::grad(loss(f))(vars), g_plain = linum::grad(loss(body))(vars);
    CHECK(close(g_jit["params"]["kernel"].leaf(), g_plain["params"]["kernel"].leaf(), 1e-6));
    CHECK(close(g_jit["params"]["bias"].leaf(), g_plain["params"]["bias"].leaf(), 1e-6));
    CHECK(f.trace_count() == 0);  // tracers came in: inline under grad
    Array xs = f32({0.5f, -1.0f, 2.0f, 0.25f, 1.0f, 3.0f}, {3, 1, 2});
    Array batched = linum::vmap([&](const Array& xi) { return lift::apply(f)(vars, xi); })(xs);
    for (int i = 0; i < 3; ++i)
      CHECK(close(squeeze(lax_slice(batched, {i, 0, 0}, {i + 1, 1, 3}), {0}),
                  lift::apply(body)(vars, squeeze(lax_slice(xs, {i, 0, 0}, {i + 1, 1, 2}), {0})),
                  1e-6));
    // Replayed outside any transform: the same numbers as eager.
    CHECK(close(lift::apply(f)(vars, x), lift::apply(body)(vars, x), 0));
    CHECK(f.trace_count() == 1);
    // Against finite differences (which evaluate the replayed float64 program).
    testing::check_grads(
        [&](const Arrays& a) {
          Tree v = Tree::dict({{"params", Tree::dict({{"kernel", a[0]}, {"bias", a[1]}})}});
          return sum(lift::apply(f)(v, a[2]));
        },
        {astype(vars["params"]["kernel"].leaf(), float64),
         astype(vars["params"]["bias"].leaf(), float64), astype(x, float64)});
    CHECK(f.trace_count() == 2);
  }

  TEST_CASE("lift.jit: a host read of a traced value is a ConcretizationTypeError naming it") {
    auto f = lift::jit([](Scope&, const Array& x) {
      if (sum(x).item<float>() > 0) return x;
      return -x;
    });
    std::string msg =
        error_of<ConcretizationTypeError>([&] { lift::apply(f)(Tree::dict(), ones({2})); });
    CHECK(msg.find("jit(lift.jit)") != std::string::npos);
  }
}  // TEST_SUITE

TEST_SUITE("lift.checkpoint") {
  TEST_CASE("checkpoint: same value and grads as without it; the recompute draws the same keys") {
    // A dense with a dropout mask from make_rng('dropout'): the recomputation in the backward pass
    // must use the forward's mask, and the outer counter advances once.
    auto g = [](Scope& s, const Array& x) {
      Array mask = astype(random::bernoulli(s.make_rng("dropout"), 0.5, {2, 3}), float64);
      return tanh(dense(s, x, 3)) * mask;
    };
    auto f = [&](bool remat) {
      return [g, remat](Scope& scope, const Array& x) {
        Array y = remat ? lift::checkpoint(g)(scope, x) : g(scope, x);
        Array after = scope.make_rng("dropout");  // counter 2 either way
        return sum(y) + sum(astype(random::uniform(after, {1}), float64));
      };
    };
    Array x = astype(random::normal(random::key(1), {2, 4}), float64);
    lift::Rngs rngs{{"params", random::key(0)}, {"dropout", random::key(7)}};
    auto [y0, vars] = lift::init(f(false))(rngs, x);
    auto [y1, vars1] = lift::init(f(true))(rngs, x);
    CHECK(close(y0, y1));
    auto loss = [&](bool remat) {
      return [&, remat](const Array& k, const Array& x) {
        Tree v = Tree::dict(
            {{"params", Tree::dict({{"kernel", k}, {"bias", vars["params"]["bias"].leaf()}})}});
        return lift::apply(f(remat))(v, x, lift::Rngs{{"dropout", random::key(7)}});
      };
    };
    Array k = astype(vars["params"]["kernel"].leaf(), float64);
    auto g0 = linum::grad(loss(false), argnums<0, 1>)(k, x);
    auto g1 = linum::grad(loss(true), argnums<0, 1>)(k, x);
    CHECK(close(std::get<0>(g0), std::get<0>(g1)));
    CHECK(close(std::get<1>(g0), std::get<1>(g1)));
    testing::check_grads([&](const Arrays& a) { return loss(true)(a[0], a[1]); }, {k, x});
  }

}  // TEST_SUITE

}  // namespace test_transforms_ad
