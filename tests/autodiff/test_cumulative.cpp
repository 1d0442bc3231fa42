// Cumulative reductions and associative_scan: values by hand and against explicit loops,
// gradients against finite differences and closed forms (cumprod with zeros, cummax's tie rule
// from JAX's associative_scan), vmap against a loop, and jit.
#include <cmath>
#include <limits>

#include "numerics_testing.hpp"

namespace test_cumulative {

using namespace linum;
using namespace linum::optest;
using linum::testing::check_grads;

namespace {
const double kNan = std::numeric_limits<double>::quiet_NaN();
}  // namespace

TEST_CASE("cumsum, cumprod, cummax, cummin and cumlogsumexp along an axis, forward or reversed") {
  const Array x = f64({1, 2, 3, 4});
  check_array(cumsum(x), {4}, float64, {1, 3, 6, 10});
  check_array(lax_cumsum(x, 0, true), {4}, float64, {10, 9, 7, 4});
  check_array(cumprod(x), {4}, float64, {1, 2, 6, 24});
  check_array(lax_cumprod(x, 0, true), {4}, float64, {24, 24, 12, 4});
  const Array y = f64({1, 3, 2, 3, 5, 0});
  check_array(cummax(y), {6}, float64, {1, 3, 3, 3, 5, 5});
  check_array(cummin(y, 0, true), {6}, float64, {0, 0, 0, 0, 0, 0});
  check_array(cummin(f64({4, 2, 3, 1})), {4}, float64, {4, 2, 2, 1});
  check_array(cummax(f64({1, kNan, 3})), {3}, float64, {1, kNan, kNan});  // NaN propagates
  // log(cumsum(exp(x))), evaluated in closed form.
  const Array c = cumlogsumexp(x);
  const auto v = linum::testing::values(c);
  double acc = 0;
  for (int i = 0; i < 4; ++i) {
    acc += std::exp(i + 1.0);
    CHECK(v[i] == doctest::Approx(std::log(acc)).epsilon(1e-14));
  }
  // Axes, the flattened default of jnp's functions, and dtypes.
  const Array m = iota({2, 3});
  check_array(cumsum(m), {6}, float64, {0, 1, 3, 6, 10, 15});
  check_array(cumsum(m, 1), {2, 3}, float64, {0, 1, 3, 3, 7, 12});
  check_array(lax_cumsum(m, -2), {2, 3}, float64, {0, 1, 2, 3, 5, 7});
  check_array(cumsum(array(std::vector<bool>{true, false, true})), {3}, int32, {1, 1, 2});
  check_array(cumsum(x, 0, float32), {4}, float32, {1, 3, 6, 10});
  check_array(cumsum(f64({1, -1, 0}), 0, bool_), {3}, bool_, {1, 1, 1});  // counts nonzeros
  check_array(cumprod(ints({2, 3, 4})), {3}, int32, {2, 6, 24});
  check_array(nancumsum(f64({1, kNan, 2})), {3}, float64, {1, 1, 3});
  check_array(nancumprod(f64({2, kNan, 3})), {3}, float64, {2, 2, 6});
  check_array(cumulative_sum(m, 1, std::nullopt, true), {2, 4}, float64, {0, 0, 1, 3, 0, 3, 7, 12});
  check_array(cumulative_prod(x, std::nullopt, std::nullopt, true), {5}, float64, {1, 1, 2, 6, 24});
  check_array(cumsum(zeros({0}, float64)), {0}, float64, {});
  LINUM_CHECK_ERROR(lax_cumsum(array(std::vector<bool>{true})), TypeError,
                    "cumsum does not accept dtype bool");
  LINUM_CHECK_ERROR(cumlogsumexp(ints({1, 2})), TypeError, "floating");
  LINUM_CHECK_ERROR(cumulative_sum(m), ValueError, "axis was not set");
  LINUM_CHECK_ERROR(cumulative_sum(Array(1.0)), ValueError, "non-scalar");
}

TEST_CASE("associative_scan follows JAX's algorithm for any associative combiner") {
  const Array x = data({7, 3}, 1);
  // Sums: the cumulative sum, forward and reversed, along either axis.
  auto plus = [](const Array& a, const Array& b) { return add(a, b); };
  check_close(associative_scan(plus, x), lax_cumsum(x, 0));
  check_close(associative_scan(plus, x, true, 1), lax_cumsum(x, 1, true));
  // A first-order linear recurrence h_i = a_i h_{i-1} + b_i as pairs: against a loop.
  const Array a = data({9}, 2), b = data({9}, 3);
  Arrays hs = associative_scan(
      [](const Arrays& l, const Arrays& r) {
        return Arrays{multiply(l[0], r[0]), add(multiply(r[0], l[1]), r[1])};
      },
      Arrays{a, b});
  const auto av = linum::testing::values(a), bv = linum::testing::values(b),
             hv = linum::testing::values(hs[1]);
  double h = 0;
  for (int i = 0; i < 9; ++i) {
    h = av[i] * h + bv[i];
    CHECK(hv[i] == doctest::Approx(h).epsilon(1e-12));
  }
  // Matrix products (not commutative): prefix products in order.
  const Array mats = data({5, 2, 2}, 4);
  const Array prods =
      associative_scan([](const Array& l, const Array& r) { return matmul(l, r); }, mats);
  Array p = index_axis(mats, 0, 0);
  for (int i = 1; i < 5; ++i) {
    p = matmul(p, index_axis(mats, 0, i));
    check_close(index_axis(prods, 0, i), p, 1e-12);
  }
  LINUM_CHECK_ERROR(
      associative_scan([](const Arrays& l, const Arrays&) { return l; }, Arrays{a, zeros({3})}),
      ValueError, "same length");
}

TEST_CASE("cumulative gradients: cumprod exact with zeros, cummax splits ties as JAX's scan") {
  // d/dx_j sum_i prod_{k<=i} x_k = sum_{i>=j} prod_{k<=i, k!=j} x_k: for x = [2, 0, 3, 4] that is
  // [1, 2 + 2*3 + 2*3*4, 0, 0] = [1, 32, 0, 0]; for [0, 2, 0] it is [1 + 2, 0, 0].
  auto total = [](const Array& a) { return sum(cumprod(a)); };
  check_array(grad(total)(f64({2, 0, 3, 4})), {4}, float64, {1, 32, 0, 0});
  check_array(grad(total)(f64({0, 2, 0})), {3}, float64, {3, 0, 0});
  // Reversed: y_i = prod_{k>=i} x_k; d/dx_j sum_i y_i = sum_{i<=j} prod_{k>=i, k!=j} x_k, for
  // [2, 0, 3] = [0 * 3, 2 * 3 + 3, 2 * 0 + 0 + 1] = [0, 9, 1].
  check_array(grad([](const Array& a) { return sum(lax_cumprod(a, 0, true)); })(f64({2, 0, 3})),
              {3}, float64, {0, 9, 1});
  // JAX's scan for x = [1, 3, 2, 3]: y3 = max(max(x0, x1), max(x2, x3)) ties 3 with 3, so its
  // tangent is (t1 + t3) / 2.
  check_array(grad([](const Array& a) { return at(cummax(a), 3).get(); })(f64({1, 3, 2, 3})), {4},
              float64, {0, 0.5, 0, 0.5});
  for (int op = 0; op < 5; ++op) {
    CAPTURE(op);
    check_grads(
        [op](const Array& a) {
          switch (op) {
            case 0: return sin(cumsum(a, 1));
            case 1: return cumprod(a, 0);
            case 2: return cummax(a, 1, true);
            case 3: return cummin(a, 0);
            default: return cumlogsumexp(a, 1);
          }
        },
        data({3, 4}, 5 + op));
  }
  check_grads([](const Array& a) { return cumprod(a, 0); }, f64({1.5, 0, -2, 0.5, 0}));
  // Second order of cumprod through associative_scan's rules.
  auto g = grad([](const Array& a) { return sum(square(cumprod(a))); });
  check_grads([&](const Array& a) { return g(a); }, f64({0.5, -1.5, 0, 2}));
}

TEST_CASE("cumulative ops under vmap equal a loop; under jit, eager") {
  const Array x = data({3, 4, 2}, 20);
  check_vmap([](const Array& a) { return lax_cumsum(a, 0, true); }, axes({1}), x);
  check_vmap([](const Array& a) { return cumprod(a, 1); }, axes({2}), x);
  check_vmap([](const Array& a) { return cummax(a, 1); }, axes({0}), x);
  check_vmap(
      [](const Array& a) { return grad([](const Array& b) { return sum(cumprod(b, 0)); })(a); },
      axes({0}), x);
  check_vmap(
      [](const Array& a) {
        return associative_scan([](const Array& l, const Array& r) { return maximum(l, r); }, a,
                                false, 0);
      },
      axes({1}), x);
  check_jit([](const Array& a) { return cumsum(a, 2); }, x);
  check_jit([](const Array& a) { return cummin(a, 1, true); }, x);
  check_jit(grad([](const Array& a) { return sum(cumprod(a, 0)); }), x);
}

}  // namespace test_cumulative
