// Differences of sampled data (diff, ediff1d, gradient, unwrap), jnp.cross and the polynomial
// solvers (poly, polydiv, polyfit): values against numpy 1.24 (run here) where JAX agrees with
// it, JAX's own rules from jax/_src/numpy/lax_numpy.py and polynomial.py (polydiv keeps the
// untrimmed remainder, cross of two 2-vectors is a scalar), check_grads, vmap, jit, errors.
#include <linum/autodiff/ops/differences.hpp>
#include <linum/autodiff/ops/polynomial_solve.hpp>

#include "numerics_testing.hpp"

namespace test_differences {

using namespace linum;
using namespace linum::optest;
using linum::testing::check_grads;

TEST_CASE("diff and ediff1d (numpy here)") {
  const Array a = ints({1, 3, 6, 10, 0, 5, 6, 8}, {2, 4});
  check_array(diff(a), {2, 3}, int32, {2, 3, 4, 5, 1, 2});
  check_array(diff(a, 2), {2, 2}, int32, {1, 1, -4, 1});
  check_array(diff(a, 1, 0), {1, 4}, int32, {-1, 2, 0, -2});
  check_array(diff(a, 1, -1, Array(0), ints({1, 2}, {2, 1})), {2, 5}, int32,
              {1, 2, 3, 4, -9, 0, 5, 1, 2, -6});
  check_array(diff(array(std::vector<bool>{true, false, false, true})), {3}, bool_, {1, 0, 1});
  check_array(diff(a, 0), {2, 4}, int32, {1, 3, 6, 10, 0, 5, 6, 8});
  check_array(diff(a, 5), {2, 0}, int32, {});
  check_array(ediff1d(ints({1, 2, 4, 7}, {2, 2}), ints({9, 9}), Array(-5)), {6}, int32,
              {-5, 1, 2, 3, 9, 9});
  LINUM_CHECK_ERROR(diff(a, -1), ValueError, "diff: order must be non-negative");
  LINUM_CHECK_ERROR(diff(Array(1.0)), ValueError, "diff: requires input");
  LINUM_CHECK_ERROR(diff(a, 1, 2), IndexError, "diff");
  check_grads([](const Array& x) { return diff(x, 2, 0); }, data({4, 3}, 1));
  check_grads([](const Arrays& x) { return ediff1d(x[0], x[1]); },
              Arrays{data({5}, 2), data({2}, 3)});
  auto f = [](const Array& x) { return diff(x, 1, 0, Array(0.5)); };
  check_vmap(f, axes({1}), data({4, 3}, 4));
  check_jit(f, data({5}, 5));
}

TEST_CASE("gradient: central inside, one-sided at the edges, scalar or coordinate spacing") {
  // numpy: np.gradient of [1, 2, 4, 7, 11, 16] with no spacing, 2.0, and coordinates.
  const Array f = f64({1, 2, 4, 7, 11, 16});
  check_array(gradient(f)[0], {6}, float64, {1, 1.5, 2.5, 3.5, 4.5, 5});
  check_array(gradient(f, {Array(2.0)})[0], {6}, float64, {0.5, 0.75, 1.25, 1.75, 2.25, 2.5});
  check_array(gradient(f, {f64({0, 1, 1.5, 3.5, 4, 6})})[0], {6}, float64,
              {1, 3, 3.5, 6.7, 6.9, 2.5}, 1e-12);
  const Array g = f64({1, 2, 6, 3, 4, 5}, {2, 3});
  const Arrays both = gradient(g);
  REQUIRE(both.size() == 2);
  check_array(both[0], {2, 3}, float64, {2, 2, -1, 2, 2, -1});
  check_array(both[1], {2, 3}, float64, {1, 2.5, 4, 1, 1, 1});
  const Arrays one = gradient(g, {}, 1);
  REQUIRE(one.size() == 1);
  check_array(one[0], {2, 3}, float64, {1, 2.5, 4, 1, 1, 1});
  const Arrays mixed = gradient(g, {Array(2.0), f64({0, 1, 3})});
  check_array(mixed[0], {2, 3}, float64, {1, 1, -0.5, 1, 1, -0.5});
  check_array(mixed[1], {2, 3}, float64, {1, 4.0 / 3, 2, 1, 5.0 / 6, 0.5}, 1e-12);
  check_array(gradient(ints({1, 4, 9}))[0], {3}, float32, {3, 4, 5});  // integers: float32
  CHECK(gradient(g, {}, std::vector<int>{}).empty());
  LINUM_CHECK_ERROR(gradient(ones({1, 3})), ValueError, "at least 2 elements are required");
  LINUM_CHECK_ERROR(gradient(g, {Array(1.0), Array(1.0), Array(1.0)}), TypeError,
                    "invalid number of spacing arguments 3");
  LINUM_CHECK_ERROR(gradient(f, {f64({0, 1})}), ValueError, "same length as the dimension");
  check_grads([](const Arrays& x) { return gradient(x[0], {x[1]})[0]; },
              Arrays{data({5}, 6), f64({0, 0.5, 1.5, 2, 3.25})});
  auto h = [](const Array& x) { return gradient(x, {Array(0.5)}, 0)[0]; };
  check_vmap(h, axes({1}), data({4, 3}, 7));
  check_jit(h, data({4, 2}, 8));
}

TEST_CASE("unwrap: jumps beyond discont replaced modulo the period (numpy here)") {
  check_array(unwrap(f64({0, 3, 6.5, 9.9, -0.2, 3.0})), {6}, float64,
              {0, 3, 0.21681469282041377, -2.666370614359172, -0.2, -3.2831853071795862}, 1e-12);
  check_array(unwrap(f64({0, 5, 10, 2}), std::nullopt, -1, 8), {4}, float64, {0, -3, -6, -6});
  check_array(unwrap(f64({0, 6, 0, 0.5}, {2, 2}), std::nullopt, 0), {2, 2}, float64,
              {0, 6, 0, 6.783185307179586}, 1e-12);
  check_array(unwrap(f64({0, 1, 2.9, 5.5}), 2.0), {4}, float64, {0, 1, 2.9, 5.5});
  CHECK(unwrap(ints({0, 7})).dtype() == float32);
  LINUM_CHECK_ERROR(unwrap(Array(1.0)), ValueError, "unwrap");
  check_grads([](const Array& x) { return unwrap(x * 3.0); }, data({6}, 9));
  auto u = [](const Array& x) { return unwrap(x * 4.0, std::nullopt, 0); };
  check_vmap(u, axes({1}), data({5, 2}, 10));
  check_jit(u, data({5}, 11));
}

TEST_CASE("cross: 3- and 2-vectors along axisa / axisb / axisc (numpy here)") {
  check_array(cross(ints({1, 2, 3}), ints({4, 5, 6})), {3}, int32, {-3, 6, -3});
  check_array(cross(ints({1, 2}), ints({4, 5})), {}, int32, {-3});
  check_array(cross(ints({1, 2}), ints({4, 5, 6})), {3}, int32, {12, -6, -3});
  check_array(cross(ints({1, 2, 3}), ints({4, 5})), {3}, int32, {-15, 12, -3});
  const Array a = ints({1, 4, 2, 5, 3, 6}, {3, 2}), b = ints({7, 1, 8, 0, 9, 2}, {3, 2});
  check_array(cross(a, b, 0, 0, 0), {3, 2}, int32, {-6, 10, 12, -2, -6, -5});
  check_array(cross(a, b, -1, -1, -1, 0), {3, 2}, int32, {-6, 10, 12, -2, -6, -5});
  // jnp.linalg.cross is the same product restricted to 3-vectors.
  check_close(linalg::cross(a, b, 0), cross(a, b, 0, 0, 0));
  LINUM_CHECK_ERROR(cross(ints({1, 2, 3, 4}), ints({1, 2, 3})), ValueError,
                    "cross: dimension must be either 2 or 3");
  LINUM_CHECK_ERROR(linalg::cross(ints({1, 2}), ints({1, 2})), ValueError, "3-dimensional");
  check_grads([](const Arrays& x) { return cross(x[0], x[1], 0, 1, 0); },
              Arrays{data({3, 2}, 12), data({2, 2}, 13)});
  auto c = [](const Array& x, const Array& y) { return cross(x, y); };
  check_vmap(c, axes({0, kNone}), data({4, 3}, 14), data({2}, 15));
  check_jit(c, data({2, 3}, 16), data({3}, 17));
}

TEST_CASE("poly, polydiv, polyfit (numpy here; JAX's untrimmed remainder)") {
  check_array(poly(ints({1, 2, 3})), {4}, float32, {1, -6, 11, -6});
  check_array(poly(zeros({0})), {}, float32, {1});
  auto [q, r] = polydiv(f64({1, -3, 2, 5}), f64({1, 1}));
  check_array(q, {3}, float64, {1, -4, 6});
  check_array(r, {4}, float64, {0, 0, 0, -1});
  auto [q2, r2] = polydiv(f64({3, 5, 2}), f64({2, 1}), true);
  check_array(q2, {2}, float64, {1.5, 1.75});
  check_array(r2, {1}, float64, {0.25});
  check_array(polydiv(ints({1, 2}), ints({1, 2, 3})).first, {1}, float32, {0});
  // numpy: np.polyfit([0..4], [1, 2.9, 9.2, 19.1, 32.8], 2) and with weights, and 2-D y.
  const Array x = f64({0, 1, 2, 3, 4}), y = f64({1, 2.9, 9.2, 19.1, 32.8});
  check_array(polyfit(x, y, 2), {3}, float64,
              {1.9428571428571428, 0.20857142857142857, 0.92571428571428571}, 1e-10);
  check_array(polyfit(x, y, 1, std::nullopt, f64({1, 2, 1, 2, 1})), {2}, float64,
              {8.025, -4.1409090909090907}, 1e-10);
  check_array(polyfit(x, stack({y, y * 2.0 + 1.0}, 1), 1), {2, 2}, float64,
              {7.98, 15.96, -2.96, -4.92}, 1e-10);
  LINUM_CHECK_ERROR(poly(eye(2)), NotImplementedError, "poly: the characteristic polynomial");
  LINUM_CHECK_ERROR(poly(zeros({2, 3})), ValueError, "poly: input must be 1d");
  LINUM_CHECK_ERROR(polydiv(zeros({2, 2}), ones({1})), ValueError, "polydiv: expected non-empty");
  LINUM_CHECK_ERROR(polyfit(x, y, -1), ValueError, "expected deg >= 0");
  LINUM_CHECK_ERROR(polyfit(x, f64({1, 2}), 1), TypeError, "same length");
  check_grads([](const Array& z) { return poly(z); }, data({3}, 18));
  check_grads([](const Arrays& a) { return polydiv(a[0], a[1] + 4.0).first; },
              Arrays{data({5}, 19), data({2}, 20)});
  check_grads([](const Array& v) { return polyfit(f64({-1, 0, 1, 2}), v, 1); }, data({4}, 21));
  auto p = [](const Array& z) { return poly(z); };
  check_vmap(p, axes({0}), data({3, 2}, 22));
  check_jit([](const Array& a, const Array& b) { return polydiv(a, b + 4.0).second; },
            data({4}, 23), data({2}, 24));
}

}  // namespace test_differences
