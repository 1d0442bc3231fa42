// Lifted control flow (flax/core/lift.py): cond, switch, while_loop and fori_loop, the cases of
// Flax's tests/core/core_lift_test.py and rng counters per branch and iteration as lift.py derives
// them (counters in 'state'), each against the hand loop.
#include <doctest/doctest.h>

#include <linum/lift/lift.hpp>
#include <linum/linum.hpp>
#include <linum/nn/initializers.hpp>

#include "../autodiff/check_grads.hpp"
#include "lift_testing.hpp"

namespace test_control_flow {

using namespace linum;
using namespace linum::lift::testing;
namespace init = linum::nn::initializers;
using lift::Scope;

TEST_SUITE("lift.cond") {
  Array dense2(Scope & s, const Array& x) { return dense(s, x, 2); }

  TEST_CASE("cond counts the taken branch in 'state'; the branches share the child's params") {
    auto f = [](Scope& scope, const Array& x, bool pred) {
      scope.variable("state", "true_count", [] { return zeros({}, int32); });
      scope.variable("state", "false_count", [] { return zeros({}, int32); });
      auto tf = [](Scope& s, const Array& x) {
        auto c = s.variable("state", "true_count");
        c.value() = c.value() + 1;
        return s.child(dense2, std::nullopt, "dense_")(x);
      };
      auto ff = [](Scope& s, const Array& x) {
        auto c = s.variable("state", "false_count");
        c.value() = c.value() + 1;
        return -s.child(dense2, std::nullopt, "dense_")(x);
      };
      return lift::cond(Array(pred), tf, ff, scope, x);
    };
    Array x = ones({1, 3});
    auto [y1, vars] = lift::init(f)(random::key(0), x, true);
    CHECK(vars["state"]["true_count"].leaf().item<int>() == 1);
    CHECK(vars["state"]["false_count"].leaf().item<int>() == 0);
    auto [y2, state] = lift::apply(f, "state")(vars, x, false);
    CHECK(state["state"]["true_count"].leaf().item<int>() == 1);
    CHECK(state["state"]["false_count"].leaf().item<int>() == 1);
    CHECK(close(y1, -y2));
    // By hand: the same dense with the stored params.
    Tree p = vars["params"]["dense_0"];
    CHECK(close(y1, matmul(x, p["kernel"].leaf()) + p["bias"].leaf()));
  }

  TEST_CASE("grad through lift::cond matches finite differences in both branches") {
    auto f = [](Scope& scope, const Array& x, bool pred) {
      auto tf = [](Scope& s, const Array& v) { return tanh(s.child(dense2, std::nullopt, "d_")(v)); };
      auto ff = [](Scope& s, const Array& v) { return sin(s.child(dense2, std::nullopt, "d_")(v)); };
      return lift::cond(Array(pred), tf, ff, scope, x);
    };
    Array k = astype(random::normal(random::key(1), {3, 2}), float64);
    Array b = astype(random::normal(random::key(2), {2}), float64);
    Array x = astype(random::normal(random::key(3), {2, 3}), float64);
    for (bool pred : {true, false}) {
      auto run = [&](const Arrays& a) {
        Tree v = Tree::dict(
            {{"params", Tree::dict({{"d_0", Tree::dict({{"kernel", a[0]}, {"bias", a[1]}})}})}});
        return lift::apply(f)(v, a[2], pred);
      };
      Array pre = matmul(x, k) + b;
      CHECK(close(run({k, b, x}), pred ? tanh(pre) : sin(pre), 1e-12));
      testing::check_grads(run, {k, b, x});
    }
  }

  TEST_CASE("the false branch's make_rng continues after the true branch's counters") {
    auto f = [](Scope& scope, const Array& x, bool pred) {
      auto br = [](Scope& s, const Array& x) { return s.child(dense2, std::nullopt, "dense_")(x); };
      return lift::cond(Array(pred), br, br, scope, x);
    };
    Array x = ones({1, 3});
    for (bool pred : {true, false}) {
      auto [y, vars] = lift::init(f)(random::key(0), x, pred);
      const std::uint64_t c = pred ? 1 : 3;
      Array k = init::lecun_normal()(key_for(random::key(0), {std::string("dense_0"), c}), {3, 2});
      CHECK(close(vars["params"]["dense_0"]["kernel"].leaf(), k, 0));
    }
  }

  TEST_CASE("switch runs the indexed branch; grad through it matches finite differences") {
    using Fn = std::function<Array(Scope&, const Array&)>;
    std::vector<Fn> branches{[](Scope& s, const Array& x) { return tanh(dense(s, x, 2)); },
                             [](Scope& s, const Array& x) { return -dense(s, x, 2); },
                             [](Scope& s, const Array& x) { return sin(dense(s, x, 2)); }};
    auto f = [&](Scope& scope, const Array& x, int i) {
      return lift::switch_(Array(i), branches, scope, x);
    };
    Array x = astype(random::normal(random::key(1), {2, 3}), float64);
    auto [y0, vars] = lift::init(f)(random::key(0), x, 0);
    Array k = vars["params"]["kernel"].leaf(), b = vars["params"]["bias"].leaf();
    CHECK(close(lift::apply(f)(vars, x, 2), sin(matmul(x, k) + b)));
    CHECK(close(lift::apply(f)(vars, x, 1), -(matmul(x, k) + b)));
    CHECK(close(y0, tanh(matmul(x, k) + b)));
    testing::check_grads(
        [&](const Arrays& a) {
          Tree v = Tree::dict({{"params", Tree::dict({{"kernel", a[0]}, {"bias", a[1]}})}});
          return lift::apply(f)(v, a[2], 2);
        },
        {astype(k, float64), astype(b, float64), x});
  }

}  // TEST_SUITE

TEST_SUITE("lift.while_loop") {
  // m.at[i].set(v) for a (2, 2) matrix.
  Array set_row(const Array& m, const Array& i, const Array& v) {
    Array rows = array(std::vector<int>{0, 1}, {2, 1});
    return where(equal(rows, i), broadcast_to(reshape(v, {1, 2}), {2, 2}), m);
  }

  TEST_CASE("while_loop: carried 'state', unsplit params rng, split loop rng = fold_in(base, i)") {
    auto f = [](Scope& scope, int x) {
      scope.param("inc", [](const Array&) { return Array(1); });
      scope.put_variable("state", "acc", Tree(Array(0)));
      scope.put_variable("state", "rng_params", Tree(zeros({2, 2}, uint32)));
      scope.put_variable("state", "rng_loop", Tree(zeros({2, 2}, uint32)));
      auto cond_fn = [x](Scope& s, const Array&) {
        return less(s.get_variable("state", "acc").leaf(), Array(x));
      };
      auto body_fn = [](Scope& s, const Array& c) {
        Array i = s.get_variable("state", "acc").leaf();
        Array p = s.make_rng("params"), l = s.make_rng("loop");
        s.put_variable("state", "rng_params",
                       Tree(set_row(s.get_variable("state", "rng_params").leaf(), i, p)));
        s.put_variable("state", "rng_loop",
                       Tree(set_row(s.get_variable("state", "rng_loop").leaf(), i, l)));
        s.put_variable("state", "acc", Tree(i + s.get_variable("params", "inc").leaf()));
        return c + 2;
      };
      return lift::while_loop(
          cond_fn, body_fn, scope, Array(0),
          {.carry_variables = "state", .split_rngs = {{"params", false}, {"loop", true}}});
    };
    auto [c, vars] = lift::apply(f, true)(
        Tree::dict(), 2, lift::Rngs{{"params", random::key(0)}, {"loop", random::key(1)}});
    CHECK(vars["state"]["acc"].leaf().item<int>() == 2);
    CHECK(c.item<int>() == 4);
    Array rp = vars["state"]["rng_params"].leaf(), rl = vars["state"]["rng_loop"].leaf();
    CHECK(close(at(rp, 0), at(rp, 1), 0));
    CHECK_FALSE(close(at(rl, 0), at(rl, 1), 0));
    // Exactly: the body's single trace draws the next counter in every iteration (params: 2, after
    // the 'inc' param's draw; loop: 1); the loop stream is fold_in(base, i) first, the suffix
    // after.
    for (int i = 0; i < 2; ++i) {
      CHECK(close(at(rp, i), key_for(random::key(0), {std::uint64_t{2}}), 0));
      CHECK(close(at(rl, i), key_for(random::fold_in(random::key(1), i), {std::uint64_t{1}}), 0));
    }
  }

  TEST_CASE("fori_loop over a dense == the hand loop; grad matches finite differences") {
    auto f = [](Scope& scope, const Array& x) {
      return lift::fori_loop(0, 3,
                             [](Scope& s, const Array&, const Array& h) {
                               Scope d = s.push("cell");
                               return tanh(dense(d, h, 3));
                             },
                             scope, x, {.broadcast_variables = true});
    };
    Array x = astype(random::normal(random::key(1), {3}), float64);
    Tree vars = Tree::dict(
        {{"params",
          Tree::dict({{"cell", Tree::dict({{"kernel", astype(random::normal(random::key(2), {3, 3}),
                                                             float64)},
                                           {"bias", astype(ones({3}), float64)}})}})}});
    Array k = vars["params"]["cell"]["kernel"].leaf(), b = vars["params"]["cell"]["bias"].leaf();
    Array h = x;
    for (int i = 0; i < 3; ++i) h = tanh(matmul(h, k) + b);
    CHECK(close(lift::apply(f)(vars, x), h));
    testing::check_grads(
        [&](const Arrays& a) {
          Tree v = Tree::dict(
              {{"params", Tree::dict({{"cell", Tree::dict({{"kernel", a[0]}, {"bias", a[1]}})}})}});
          return lift::apply(f)(v, a[2]);
        },
        {k, b, x});
  }

}  // TEST_SUITE

}  // namespace test_control_flow
