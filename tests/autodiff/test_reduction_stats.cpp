// jnp's statistics: std, ptp, average, count_nonzero, the nan* reductions and the quantile
// family. Values were derived with numpy here (or by hand where jnp differs from numpy: its
// "nearest" sends ties to the lower index); derivatives with check_grads and by hand, vmap
// against a loop, jit against eager, and errors.
#include <cmath>
#include <limits>

#include "op_testing.hpp"

namespace test_reduction_stats {

using namespace linum;
using optest::axes;
using optest::check_array;
using optest::check_close;
using optest::check_vmap;
using optest::data;
using optest::kNone;
using optest::values;
using testing::check_grads;

namespace {
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

bool same(const Array& a, const Array& b) {
  if (a.shape() != b.shape() || a.dtype() != b.dtype()) return false;
  const auto va = values(a), vb = values(b);
  for (std::size_t i = 0; i < va.size(); ++i)
    if (!(va[i] == vb[i] || (std::isnan(va[i]) && std::isnan(vb[i])))) return false;
  return true;
}

Array sample() { return array({{3.0, 1.0, 4.0, 1.5}, {5.0, 9.0, 2.0, 6.0}, {5.0, 3.0, 5.0, 8.0}}); }
Array with_nans() { return array({{1.0, kNan, 3.0}, {kNan, kNan, kNan}, {4.0, 2.0, kNan}}); }
}  // namespace

TEST_CASE("std, ptp, amax, amin, count_nonzero") {
  Array x = sample();
  check_array(linum::std(x), {}, float64, {2.3728060041506414}, 1e-14);
  check_array(linum::std(x, 1, false, 1), {3}, float64,
              {1.3768926368215255, 2.886751345948129, 2.0615528128088303}, 1e-14);
  check_array(linum::std(x, 1, true), {3, 1}, float64, values(sqrt(var(x, 1, true))), 1e-15);
  // N - ddof <= 0 gives NaN, as jnp.var / jnp.std.
  check_array(var(array({1.0, 2.0}), Axes{}, false, 2), {}, float64, {kNan});
  check_array(linum::std(array({1.0, 2.0}), Axes{}, false, 3), {}, float64, {kNan});
  check_array(linum::std(array({1, 3})), {}, float32, {1});
  check_array(ptp(x, 0), {4}, float64, {2, 8, 3, 6.5});
  check_array(ptp(array({{1, 5}, {-2, 0}}), 1, true), {2, 1}, int32, {4, 2});
  CHECK(same(amax(x, 1), max(x, 1)));
  CHECK(same(amin(x, Axes{}, true), min(x, Axes{}, true)));
  check_array(count_nonzero(array({{0, 1, 2}, {0, 0, 3}}), 1), {2}, int32, {2, 1});
  check_array(count_nonzero(array({0.0, kNan, -0.0})), {}, int32, {1});
}

TEST_CASE("average with weights of the full shape or along given axes") {
  Array x = sample();
  check_array(average(x, 1, array({1.0, 2.0, 3.0, 4.0})), {3}, float64, {2.3, 5.3, 5.8}, 1e-14);
  check_array(average(x, Axes{}, reshape(arange(12, float64), {3, 4})), {}, float64,
              {5.113636363636363}, 1e-14);
  CHECK(same(average(x, 0), mean(x, 0)));
  check_array(average(array({1, 2}), Axes{}), {}, float32, {1.5});
  // Weights along axes (2, 0) have shape (4, 3) and are laid out in that order (numpy einsum here).
  Array a = reshape(arange(24, float64), {3, 2, 4}),
        w = reshape(arange(1.0, 13.0, 1.0, float64), {4, 3});
  check_array(average(a, {2, 0}, w), {2}, float64, {10.897435897435898, 14.897435897435898}, 1e-14);
  check_array(average(a, {2, 0}, w, true), {1, 2, 1}, float64,
              {10.897435897435898, 14.897435897435898}, 1e-14);
  LINUM_CHECK_ERROR(average(x, Axes{}, array({1.0, 2.0})), ValueError,
                    "average: axis must be specified when shapes of a and weights differ");
  LINUM_CHECK_ERROR(average(x, 1, array({1.0, 2.0})), ValueError,
                    "average: shape of weights (2,) must be consistent with shape of a along the "
                    "specified axis (4,)");
}

TEST_CASE("nan reductions ignore NaN; an all-NaN slice gives NaN (or -1 for nanarg*)") {
  Array y = with_nans();
  check_array(nansum(y, 1), {3}, float64, {4, 0, 6});
  check_array(nanprod(y, 1), {3}, float64, {3, 1, 8});
  check_array(nanmax(y, 1), {3}, float64, {3, kNan, 4});
  check_array(nanmin(y, 1), {3}, float64, {1, kNan, 2});
  check_array(nanmean(y, 1), {3}, float64, {2, kNan, 3});
  check_array(nanvar(y, 1), {3}, float64, {1, kNan, 1});
  check_array(nanvar(y, 1, false, 1), {3}, float64, {2, kNan, 2});
  check_array(nanstd(y, 1, true), {3, 1}, float64, {1, kNan, 1});
  check_array(nanargmax(y, 1), {3}, int32, {2, -1, 0});
  check_array(nanargmin(y, 1), {3}, int32, {0, -1, 1});
  check_array(nanargmax(y), {}, int32, {6});
  check_array(nanargmin(y, 0, true), {1, 3}, int32, {0, 2, 0});
  check_array(nanmax(y), {}, float64, {4});
  check_array(nanmax(array({kNan, kNan})), {}, float64, {kNan});
  // Integers have no NaN: the plain reductions (nanmean of ints is float32, as mean).
  check_array(nansum(array({1, 2})), {}, int32, {3});
  check_array(nanmean(array({1, 2})), {}, float32, {1.5});
  check_array(nanargmax(array({1, 5, 2})), {}, int32, {1});
}

TEST_CASE("quantile methods along an axis, q a vector (numpy; jnp's nearest by hand)") {
  Array x = sample(), q = array({0.1, 0.5, 0.9});
  check_array(quantile(x, q, 1), {3, 3}, float64, {1.15, 2.9, 3.6, 2.25, 5.5, 5.0, 3.7, 8.1, 7.1},
              1e-14);
  check_array(quantile(x, q, 1, "lower"), {3, 3}, float64, {1, 2, 3, 1.5, 5, 5, 3, 6, 5});
  check_array(quantile(x, q, 1, "higher"), {3, 3}, float64, {1.5, 5, 5, 3, 6, 5, 4, 9, 8});
  check_array(quantile(x, q, 1, "midpoint"), {3, 3}, float64,
              {1.25, 3.5, 4, 2.25, 5.5, 5, 3.5, 7.5, 6.5});
  // jnp's nearest: the lower neighbour unless the position's fraction exceeds 1/2 (q = 0.5 sits
  // at 1.5 in each sorted row of 4: the lower element, where numpy would round to even).
  check_array(quantile(x, q, 1, "nearest"), {3, 3}, float64, {1, 2, 3, 1.5, 5, 5, 4, 9, 8});
  check_array(quantile(x, q, 0), {3, 4}, float64,
              {3.4, 1.4, 2.4, 2.4, 5, 3, 4, 6, 5, 7.8, 4.8, 7.6}, 1e-14);
  check_array(quantile(x, q, 1, "linear", true), {3, 3, 1}, float64, values(quantile(x, q, 1)));
  check_array(median(x), {}, float64, {4.5});
  check_array(median(x, 1), {3}, float64, {2.25, 5.5, 5.0});
  check_array(median(x, 0, true), {1, 4}, float64, {5, 3, 4, 6});
  check_array(percentile(x, Array(37.0)), {}, float64, {3.07}, 1e-14);
  CHECK(same(percentile(x, array({10.0, 50.0, 90.0}), 1), quantile(x, q, 1)));
  // Several axes at once (numpy: axis=(0, 2), keepdims).
  check_array(quantile(reshape(x, {3, 2, 2}), Array(0.3), {0, 2}, "linear", true), {1, 2, 1},
              float64, {3, 3}, 1e-14);
  // Integers and float32 keep jnp's dtypes: the input's float dtype (integers: float32).
  check_array(median(array({1, 4, 2})), {}, float32, {2});
  check_array(quantile(array({1.0f, 2.0f}), Array(0.5)), {}, float32, {1.5});
  // A NaN in a slice makes its quantiles NaN.
  check_array(quantile(array({{1.0, kNan}, {1.0, 2.0}}), Array(0.5), 1), {2}, float64, {kNan, 1.5});
}

TEST_CASE("nanquantile, nanmedian, nanpercentile skip NaNs") {
  Array y = with_nans();
  check_array(nanmedian(y, 1), {3}, float64, {2, kNan, 3});
  check_array(nanquantile(y, array({0.25, 0.75}), 1), {2, 3}, float64,
              {1.5, kNan, 2.5, 2.5, kNan, 3.5});
  check_array(nanpercentile(y, array({25.0, 75.0}), 1), {2, 3}, float64,
              {1.5, kNan, 2.5, 2.5, kNan, 3.5});
  check_array(nanquantile(y, Array(1.0), 1, "lower", true), {3, 1}, float64, {3, kNan, 4});
  check_array(nanmedian(y), {}, float64, {2.5});
}

TEST_CASE("quantile errors") {
  LINUM_CHECK_ERROR(quantile(sample(), Array(0.5), 1, "cubic"), ValueError,
                    "quantile: method can only be 'linear', 'lower', 'higher', 'midpoint' or "
                    "'nearest', got 'cubic'");
  LINUM_CHECK_ERROR(quantile(sample(), Array(0.5), 1, "inverted_cdf"), NotImplementedError,
                    "inverted_cdf");
  LINUM_CHECK_ERROR(quantile(sample(), ones({2, 2}), 1), ValueError,
                    "quantile: q must have rank <= 1, got shape (2, 2)");
  LINUM_CHECK_ERROR(quantile(sample(), Array(0.5), {1, -1}), ValueError, "quantile: repeated axis");
  LINUM_CHECK_ERROR(median(zeros({2, 0}), 1), ValueError,
                    "median: cannot take a quantile of an empty slice");
  LINUM_CHECK_ERROR(quantile(sample(), Array(0.5), 2), IndexError, "quantile");
  LINUM_CHECK_ERROR(nanstd(Array()), ValueError, "nanvar: got an empty Array handle");
}

TEST_CASE("derivatives: check_grads and the selected order statistics") {
  Array x = data({3, 4}, 41);
  for (const char* m : {"linear", "lower", "higher", "midpoint", "nearest"}) {
    INFO(m);
    check_grads([m](const Array& v) { return quantile(v, array({0.3, 0.8}), 1, m); }, x);
  }
  check_grads([](const Array& v) { return median(v, 0); }, x);
  check_grads([](const Array& v) { return linum::std(v, 1, false, 1); }, x);
  check_grads([](const Array& v) { return ptp(v, 0); }, x);
  check_grads([](const Array& v) { return average(v, 1, array({1.0, 2.0, 3.0, 4.0})); }, x);
  check_grads([](const Arrays& a) { return average(a[0], Axes{}, a[1]); },
              Arrays{x, data({3, 4}, 42, 0.5, 2.0)});
  Array xn =
      where(array({{true, false, true, true}, {true, true, true, false}, {true, true, true, true}}),
            x, kNan);
  for (auto f :
       {+[](const Array& v) { return nansum(v, 1); }, +[](const Array& v) { return nanmean(v, 1); },
        +[](const Array& v) { return nanvar(v, 1); }, +[](const Array& v) { return nanstd(v, 1); },
        +[](const Array& v) { return nanmax(v, 1); }, +[](const Array& v) { return nanprod(v, 1); },
        +[](const Array& v) { return nanmedian(v, 1); }}) {
    // Directional derivatives over the non-NaN entries only (a NaN direction would poison them).
    Array mask = astype(logical_not(isnan(xn)), float64);
    check_grads([f, &xn, &mask](const Array& d) { return f(where(isnan(xn), xn, xn + d * mask)); },
                zeros({3, 4}, float64));
  }
  // The median of an odd slice routes the whole gradient to its middle element; linear
  // interpolation splits it between the neighbours by the position's fraction.
  check_array(grad([](const Array& v) { return median(v); })(array({5.0, 1.0, 3.0})), {3}, float64,
              {0, 0, 1});
  check_array(grad([](const Array& v) { return quantile(v, Array(0.25)); })(
                  array({4.0, 1.0, 3.0, 2.0, 5.0})),
              {5}, float64, {0, 0, 0, 1, 0});
  check_array(
      grad([](const Array& v) { return quantile(v, Array(0.3)); })(array({4.0, 1.0, 3.0, 2.0})),
      {4}, float64, {0, 0.1, 0, 0.9}, 1e-14);
}

TEST_CASE("vmap and jit of the statistics") {
  Array a = data({3, 4, 5}, 51);
  check_vmap([](const Array& v) { return quantile(v, array({0.2, 0.7}), 1); }, axes({1}, 1), a);
  check_vmap([](const Array& v) { return median(v) + linum::std(v) + ptp(v); }, axes({2}), a);
  check_vmap([](const Array& v) { return nanmedian(v, 0) + nanmean(v, 0) + nanstd(v, 0); },
             axes({0}), where(a > 1.5, kNan, a));
  check_vmap([](const Array& v, const Array& w) { return average(v, 0, w); }, axes({2, kNone}), a,
             data({3}, 52, 0.5, 1));
  check_vmap(
      [](const Array& v) {
        return astype(nanargmax(v, 0), float64) + astype(count_nonzero(v > 0.0, 0), float64);
      },
      axes({1}), where(a > 1.5, kNan, a));
  auto f = [](const Array& v) {
    return std::make_pair(quantile(v, array({0.1f, 0.6f}), 1, "nearest") + median(v, 1),
                          nanstd(v, 0) + average(v, 0, ones({3}, v.dtype())) + ptp(v, 0));
  };
  for (DType dt : {float32, float64}) {
    const Array v = astype(data({3, 17}, 53), dt);
    auto jf = jit(f);
    auto got = jf(v), want = f(v);
    CHECK(same(got.first, want.first));
    CHECK(same(got.second, want.second));
  }
  auto loss = [](const Array& v) {
    return sum(quantile(v, array({0.25, 0.5}), 0) * 3.0) + linum::std(v);
  };
  const Array v = data({6, 2}, 54);
  CHECK(same(jit(grad(loss))(v), grad(loss)(v)));
}

TEST_CASE("cov, corrcoef, trapezoid (numpy here)") {
  Array m = array({{1.0, 2.0, 4.0}, {2.0, 1.0, 0.0}});
  check_array(cov(m), {2, 2}, float64, {7.0 / 3, -1.5, -1.5, 1}, 1e-14);
  check_array(cov(m, Array(), true, true), {2, 2}, float64, {14.0 / 9, -1, -1, 2.0 / 3}, 1e-14);
  check_array(cov(transpose(m), Array(), false), {2, 2}, float64, {7.0 / 3, -1.5, -1.5, 1}, 1e-14);
  check_array(cov(array({1.0, 2.0, 4.0})), {}, float64, {7.0 / 3}, 1e-14);
  check_array(cov(array({1.0, 2.0, 4.0}), array({2.0, 1.0, 0.0})), {2, 2}, float64,
              {7.0 / 3, -1.5, -1.5, 1}, 1e-14);
  check_array(cov(array({1, 2, 4}), Array(), true, false, 0), {}, float32, {14.0 / 9}, 1e-6);
  check_array(corrcoef(m), {2, 2}, float64, {1, -0.9819805060619659, -0.9819805060619659, 1},
              1e-14);
  check_array(corrcoef(array({1.0, 2.0})), {}, float64, {1});
  LINUM_CHECK_ERROR(cov(ones({2, 2, 2})), ValueError, "cov: m has more than 2 dimensions");
  check_array(trapezoid(array({1.0, 2.0, 4.0})), {}, float64, {4.5});
  check_array(trapezoid(array({1.0, 2.0, 4.0}), Array(), 0.5), {}, float64, {2.25});
  check_array(trapezoid(array({1.0, 2.0, 4.0}), array({0.0, 1.0, 3.0})), {}, float64, {7.5});
  check_array(trapezoid(array({{1.0, 2.0}, {3.0, 4.0}}), Array(), 1.0, 0), {2}, float64, {2, 3});
  check_array(trapezoid(array({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}}),
                        array({{0.0, 1.0, 3.0}, {0.0, 2.0, 3.0}})),
              {2}, float64, {6.5, 14.5});
  check_array(trapezoid(array({1, 3})), {}, float32, {2});
  check_grads([](const Array& v) { return cov(v); }, data({2, 5}, 61));
  check_grads([](const Array& v) { return corrcoef(v); }, data({3, 4}, 62));
  check_grads([](const Arrays& a) { return trapezoid(a[0], a[1]); },
              Arrays{data({2, 4}, 63), data({4}, 64)});
  check_vmap([](const Array& v) { return cov(v) + corrcoef(v); }, axes({0}), data({3, 2, 4}, 65));
  check_vmap([](const Array& v) { return trapezoid(v, Array(), 0.25, 0); }, axes({1}),
             data({3, 4, 2}, 66));
  auto f = [](const Array& v) { return std::make_pair(cov(v), trapezoid(v)); };
  const Array v = data({3, 6}, 67);
  auto got = jit(f)(v);
  CHECK(same(got.first, f(v).first));
  CHECK(same(got.second, f(v).second));
}

}  // namespace test_reduction_stats
