// The README's "Scopes" tour, as written there: a lifted vmap (an ensemble), a lifted scan (an
// RNN cell with shared params) and lift::jit, each against the computation written by hand.
#include <doctest/doctest.h>

#include <linum/lift/lift.hpp>
#include <linum/linum.hpp>

#include "lift_testing.hpp"

namespace test_readme {

using namespace linum;
using namespace linum::lift::testing;

TEST_SUITE("lift README") {
  TEST_CASE("the lifted vmap, scan and jit of the README") {
    auto ensemble = [](lift::Scope& scope, const Array& x) {
      return lift::vmap([](lift::Scope& s, const Array& xi) { return dense(s, xi, 5); },
                        {.variable_axes = {{"params", 0}}, .split_rngs = {{"params", true}}})(
          scope, x);
    };
    auto rnn = [](lift::Scope& scope, const Array& xs) {
      auto body = [](lift::Scope& s, const Array& c, const Array& x) {
        Array h = tanh(dense(s, concatenate({c, x}, -1), 8));
        return std::make_pair(h, h);
      };
      return lift::scan(body, {.variable_broadcast = "params", .split_rngs = {{"params", false}}})(
          scope, zeros({8}), xs);
    };
    auto step = lift::jit(rnn);

    Array x = random::normal(random::key(1), {4, 3});
    auto [y, ev] = lift::init(ensemble)(random::key(0), x);
    Array k = ev["params"]["kernel"].leaf(), b = ev["params"]["bias"].leaf();
    CHECK(k.shape() == Shape{4, 3, 5});  // one member per row of x, stacked on axis 0
    Array hand = squeeze(matmul(expand_dims(x, 1), k), {1}) + b;
    CHECK(close(y, hand, 1e-5));

    Array xs = random::normal(random::key(2), {6, 3});
    auto [out, rv] = lift::init(rnn)(random::key(0), xs);
    Array kr = rv["params"]["kernel"].leaf(), br = rv["params"]["bias"].leaf();
    CHECK(kr.shape() == Shape{11, 8});  // one cell for all steps
    Array c = zeros({8});
    for (std::int64_t t = 0; t < 6; ++t) {
      Array xt = squeeze(lax_slice(xs, {t, 0}, {t + 1, 3}), {0});
      c = tanh(matmul(concatenate({c, xt}, -1), kr) + br);
    }
    CHECK(close(out.first, c, 1e-5));
    auto jitted = lift::apply(step)(rv, xs);
    CHECK(close(jitted.first, out.first, 0));
    CHECK(close(jitted.second, out.second, 0));
    CHECK(step.trace_count() == 1);
  }
}

}  // namespace test_readme
