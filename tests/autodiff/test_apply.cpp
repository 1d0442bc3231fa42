// apply_along_axis, apply_over_axes, fromfunction and piecewise: values against numpy 1.24 (run
// here) where JAX agrees; JAX's vmap semantics from jax/_src/numpy/lax_numpy.py (the function
// sees one 1-D slice, or rank-0 indices / entries); gradients through the function, jit.
#include <linum/autodiff/ops/apply.hpp>

#include "numerics_testing.hpp"

namespace test_apply {

using namespace linum;
using namespace linum::optest;
using linum::testing::check_grads;

TEST_CASE("apply_along_axis: func1d of every 1-D slice, its output axes in place of axis") {
  const Array a = iota({2, 3, 4});
  // numpy: np.apply_along_axis(lambda v: v[::-1] * np.arange(v.size), 1, a)[1].
  auto rev_weighted = [](const Array& v) {
    CHECK(v.ndim() == 1);  // as in JAX, func1d sees one slice (vmapped)
    return flip(v) * arange(v.shape(0)).astype(float64);
  };
  const Array r = apply_along_axis(rev_weighted, 1, a);
  CHECK(r.shape() == Shape{2, 3, 4});
  check_array(r[1], {3, 4}, float64, {0, 0, 0, 0, 16, 17, 18, 19, 24, 26, 28, 30});
  auto sum_max = [](const Array& v) { return stack({sum(v), max(v)}, 0); };
  CHECK(apply_along_axis(sum_max, 2, a).shape() == Shape{2, 3, 2});
  check_array(apply_along_axis([](const Array& v) { return sum(v); }, -1, a), {2, 3}, float64,
              {6, 22, 38, 54, 70, 86});
  auto outer_self = [](const Array& v) { return outer(v, v); };
  const Array o = apply_along_axis(outer_self, 0, iota({2, 3}));
  CHECK(o.shape() == Shape{2, 2, 3});
  check_array(slice(o, {Slice{}, Slice{}, Slice{2, 3}}), {2, 2, 1}, float64, {4, 10, 10, 25});
  check_grads([&](const Array& x) { return apply_along_axis(sum_max, 1, x * x); }, data({2, 3}, 1));
  check_jit([&](const Array& x) { return apply_along_axis(rev_weighted, 0, x); }, data({3, 2}, 2));
  LINUM_CHECK_ERROR(apply_along_axis(sum_max, 3, a), IndexError, "apply_along_axis");
}

TEST_CASE("apply_over_axes: reductions keep their axes (numpy here)") {
  const Array a = iota({2, 3, 4});
  auto s = [](const Array& x, int axis) { return sum(x, axis); };
  check_array(apply_over_axes(s, a, {0, 2}), {1, 3, 1}, float64, {60, 92, 124});
  auto keep = [](const Array& x, int axis) { return cumsum(x, axis); };
  CHECK(apply_over_axes(keep, a, {1}).shape() == Shape{2, 3, 4});
  auto bad = [](const Array& x, int) { return sum(x); };
  LINUM_CHECK_ERROR(apply_over_axes(bad, a, {0}), ValueError, "apply_over_axes: function");
  check_grads([&](const Array& x) { return apply_over_axes(s, x * x, {1}); }, data({2, 3}, 3));
}

TEST_CASE("fromfunction: the function vmapped over rank-0 indices (numpy here for values)") {
  auto f = [](const Arrays& ij) {
    CHECK(ij[0].ndim() == 0);  // JAX vmaps over each index: scalars, not numpy's grids
    return ij[0] * 10.0 + ij[1];
  };
  check_array(fromfunction(f, {2, 3}), {2, 3}, float32, {0, 1, 2, 10, 11, 12});
  check_array(fromfunction([](const Arrays& i) { return i[0] * i[0]; }, {4}, int32), {4}, int32,
              {0, 1, 4, 9});
  // A non-scalar result per index adds trailing axes.
  auto pair = [](const Arrays& i) { return stack({i[0], -i[0]}, 0); };
  check_array(fromfunction(pair, {3}), {3, 2}, float32, {0, 0, 1, -1, 2, -2});
  check_array(fromfunction([](const Arrays& i) { return i[0] + i[1] + i[2]; }, {2, 1, 2}, int32),
              {2, 1, 2}, int32, {0, 1, 1, 2});
}

TEST_CASE("piecewise: the last true condition wins, the extra function is the default") {
  // numpy: np.piecewise(x, [x < 0, x >= 0], [-x, x**2]) and with constants.
  const Array x = f64({-2, -0.5, 0, 0.5, 3});
  auto neg = [](const Array& v) {
    CHECK(v.ndim() == 0);  // vmapped over the entries, as JAX's vectorize
    return -v;
  };
  auto sq = [](const Array& v) { return v * v; };
  check_array(piecewise(x, {x < 0.0, x >= 0.0}, {neg, sq}), {5}, float64, {2, 0.5, 0, 0.25, 9});
  check_array(piecewise(x, {x<0.0, x> 1.0}, {neg, 7, 100}), {5}, float64, {2, 0.5, 100, 100, 7});
  check_array(piecewise(x, {x < 1.0, x < 0.0}, {1, 2}), {5}, float64, {2, 2, 1, 1, 0});
  check_array(
      piecewise(ints({-1, 2}), {ints({-1, 2}) > 0}, {[](const Array& v) { return v * 2.5; }}), {2},
      int32, {0, 5});  // results are cast to x's dtype
  LINUM_CHECK_ERROR(piecewise(x, {x < 0.0}, {1, 2, 3}), ValueError,
                    "with 1 condition(s), either 1 or 2 functions are expected; got 3");
  check_grads([&](const Array& v) { return piecewise(v, {v < 0.0}, {sq, neg}); }, data({6}, 4));
  auto pw = [&](const Array& v) { return piecewise(v, {v<0.0, v> 1.0}, {sq, 1.5, neg}); };
  check_vmap(pw, axes({0}), data({3, 4}, 5));
  check_jit(pw, data({5}, 6));
}

}  // namespace test_apply
