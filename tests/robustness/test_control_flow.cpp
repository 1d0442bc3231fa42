// Loop carries that change structure (dict keys), shape or dtype between iterations: JAX's errors,
// eagerly and when jit stages the loop under a transform; switch's clamping; empty batches.
#include <doctest/doctest.h>

#include <map>
#include <string>
#include <tuple>

#include <linum/autodiff/control_flow.hpp>
#include <linum/autodiff/jit.hpp>
#include <linum/autodiff/transforms.hpp>

#include "support.hpp"

namespace test_control_flow {

using namespace linum;

namespace {
using Params = std::map<std::string, Array>;
// Same leaf count, shape and dtype under a renamed key: only a structure check catches it.
Params rekey(const Params& p) { return Params{{"b", p.at("a") + 1.0}}; }
const Params kInit{{"a", zeros({2}, float64)}};
}  // namespace

TEST_CASE("scan rejects a carry whose dict keys change, with JAX's message") {
  auto step = [](const Params& c, const Array& x) { return std::make_pair(rekey(c), x); };
  robust::check_error<TypeError>(
      [&] {
        scan(step, kInit, zeros({3, 1}));
      },
      {"scan body function carry input and carry output must have the same pytree structure", "'a'",
       "'b'"});
}

TEST_CASE("while_loop rejects a carry whose dict keys change") {
  auto cond = [](const Params& p) { return sum(p.begin()->second) < 5.0; };
  robust::check_error<TypeError>([&] { while_loop(cond, rekey, kInit); },
                                 {"while_loop", "must have the same pytree structure", "'b'"});
}

TEST_CASE("fori_loop rejects a carry whose dict keys, shape or dtype change") {
  robust::check_error<TypeError>(
      [&] {
        fori_loop(
            Array(0), Array(3), [](const Array&, const Params& p) { return rekey(p); }, kInit);
      },
      {"fori_loop", "must have the same pytree structure"});
  robust::check_error<TypeError>(
      [&] {
        fori_loop(
            Array(0), Array(3),
            [](const Array&, const Params& p) {
              return Params{{"a", astype(p.at("a"), float32)}};
            },
            kInit);
      },
      {"fori_loop", "carry['a'] has type float64[2]", "float32[2], so the dtypes do not match"});
}

TEST_CASE("switch clamps its index as JAX does") {
  std::vector<std::function<Array(const Array&)>> br{[](const Array& x) { return x + 1.0; },
                                                     [](const Array& x) { return x + 2.0; }};
  CHECK(switch_(Array(-5), br, Array(0.0)).item<double>() == 1.0);
  CHECK(switch_(Array(7), br, Array(0.0)).item<double>() == 2.0);
}

TEST_CASE("under jit(jvp) and jit(vmap), staged loops keep the eager checks and empty batches") {
  // The loop is traced as a primitive there: the carry check still runs, with the same message.
  auto below = [](const Params& p) { return sum(p.begin()->second) < 5.0; };
  auto keys = jit([&](const Array& x) {
    return jvp(
               [&](const Array& a) {
                 return while_loop(below, rekey, Params{{"a", a}}).begin()->second;
               },
               std::tuple{x}, std::tuple{x})
        .second;
  });
  robust::check_error<TypeError>([&] { keys(zeros({2}, float64)); },
                                 {"while_loop", "must have the same pytree structure", "'b'"});
  // Zero examples: the per-example predicate holds for none, so the loop stops at once.
  auto grow = [](const Array& x, const Array& limit) {
    return while_loop([&](const Array& c) { return sum(c) < limit; },
                      [](const Array& c) { return c * 2.0 + 1.0; }, x);
  };
  auto vgrow = vmap(grow, {.in_axes = AxisSpec::seq({0, std::nullopt})});
  CHECK(jit(vgrow)(zeros({0, 3}, float64), Array(4.0)).shape() == Shape{0, 3});
  auto pick = [](const Array& x, const Array& s) {
    return cond(
        s > 0.0, [](const Array& a) { return a + 1.0; }, [](const Array& a) { return a; }, x);
  };
  auto vpick = vmap(pick, {.in_axes = AxisSpec::seq({0, std::nullopt})});
  CHECK(jit(vpick)(zeros({0, 3}, float64), Array(1.0)).shape() == Shape{0, 3});
}

}  // namespace test_control_flow
