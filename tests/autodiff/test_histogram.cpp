// Counting, binning and interpolation: values against numpy 1.24 (run here) where JAX agrees
// with it, JAX's own rules from jax/_src/numpy/lax_numpy.py (bincount's static length and
// clamped negatives, int32 counts of histogramdd without weights, float32 for integer input),
// gradients, vmap against a loop, jit, and errors.
#include <linum/autodiff/ops/histogram.hpp>

#include "numerics_testing.hpp"

namespace test_histogram {

using namespace linum;
using namespace linum::optest;
using linum::testing::check_grads;

TEST_CASE("bincount: counts, minlength, weights, JAX's static length (numpy here)") {
  const Array x = ints({0, 1, 1, 3});
  check_array(bincount(x), {4}, int32, {1, 2, 0, 1});
  check_array(bincount(x, std::nullopt, 6), {6}, int32, {1, 2, 0, 1, 0, 0});
  check_array(bincount(x, f64({0.5, 1, 2, 4})), {4}, float64, {0.5, 3, 0, 4});
  // JAX: negative entries count in bin 0, entries past `length` are dropped.
  check_array(bincount(ints({-2, 1, 5}), std::nullopt, 0, 3), {3}, int32, {1, 1, 0});
  check_array(bincount(array(std::vector<bool>{true, true, false})), {2}, int32, {1, 2});
  check_array(bincount(zeros({0}, int32), std::nullopt, 2), {2}, int32, {0, 0});
  LINUM_CHECK_ERROR(bincount(f64({1})), TypeError, "bincount: x argument");
  LINUM_CHECK_ERROR(bincount(ints({1, 2}, {1, 2})), ValueError, "only 1-dimensional");
  LINUM_CHECK_ERROR(bincount(x, f64({1})), ValueError, "bincount: weights of shape (1,)");
  auto free_length = jit([](const Array& v) { return bincount(v); });
  LINUM_CHECK_ERROR(free_length(x), ConcretizationTypeError, "bincount");
  check_grads([](const Array& w) { return bincount(ints({2, 0, 2, 1}), w, 0, 4); }, data({4}, 1));
  auto sized = [](const Array& v, const Array& w) { return bincount(v, w, 0, 5); };
  check_vmap(sized, axes({0, 0}), ints({0, 4, 4, 1, 2, 2, 3, 9}, {2, 4}), data({2, 4}, 2));
  check_jit(sized, ints({0, 4, 4, 1}), data({4}, 3));
}

TEST_CASE("digitize: increasing and decreasing bins, right (numpy here)") {
  const Array x = f64({0.2, 6.4, 3.0, 1.6, 10, -1});
  const Array up = f64({0.0, 1.0, 2.5, 4.0, 10.0}), down = f64({10.0, 4.0, 2.5, 1.0, 0.0});
  check_array(digitize(x, up), {6}, int32, {1, 4, 3, 2, 5, 0});
  check_array(digitize(x, up, true), {6}, int32, {1, 4, 3, 2, 4, 0});
  check_array(digitize(x, down), {6}, int32, {4, 1, 2, 3, 0, 5});
  check_array(digitize(x, down, true), {6}, int32, {4, 1, 2, 3, 1, 5});
  check_array(digitize(x, zeros({0})), {6}, int32, {0, 0, 0, 0, 0, 0});
  LINUM_CHECK_ERROR(digitize(x, zeros({2, 2})), ValueError, "digitize: bins must be");
  auto f = [](const Array& v, const Array& b) { return digitize(v, b); };
  check_vmap(f, axes({0, kNone}), reshape(x, {2, 3}), up);
  check_jit(f, x, down);
}

TEST_CASE("histogram and histogram_bin_edges (numpy here)") {
  const Array a = f64({1, 2, 1, 4, 2.5, 3, 7});
  auto [c, e] = histogram(a, 3);
  check_array(c, {3}, float64, {4, 2, 1});
  check_array(e, {4}, float64, {1, 3, 5, 7});
  auto [c2, e2] = histogram(a, 3, std::pair{0.0, 6.0});
  check_array(c2, {3}, float64, {2, 3, 1});
  check_array(e2, {4}, float64, {0, 2, 4, 6});
  auto [c3, e3] = histogram(a, f64({0, 2, 5, 8}));
  check_array(c3, {3}, float64, {2, 4, 1});
  check_array(histogram(a, 3, std::nullopt, std::nullopt, true).first, {3}, float64,
              {0.28571428571428571, 0.14285714285714285, 0.071428571428571425}, 1e-12);
  check_array(histogram(a, 3, std::nullopt, arange(7.0)).first, {3}, float64, {7, 8, 6});
  // A zero-width range widens by 0.5 each way; integer input bins in float32.
  check_array(histogram_bin_edges(ints({2, 2, 2}), 2), {3}, float32, {1.5, 2, 2.5});
  check_array(histogram(ints({2, 2, 2}), 2).first, {2}, float32, {0, 3});
  LINUM_CHECK_ERROR(histogram(a, 0), ValueError, "number of bins must be positive");
  LINUM_CHECK_ERROR(histogram(a, 3, std::nullopt, f64({1})), ValueError,
                    "histogram: weights should have the same shape");
  // Differentiable in the weights; vmap over data with a static range; jit.
  check_grads(
      [](const Array& w) {
        return histogram(f64({1, 2, 1, 4}), 2, std::nullopt, w).first;
      },
      data({4}, 4));
  auto h = [](const Array& v) { return histogram(v, 4, std::pair{-2.0, 2.0}).first; };
  check_vmap(h, axes({1}), data({6, 3}, 5));
  check_jit([](const Array& v) { return histogram(v, 4).first + histogram_bin_edges(v, 3)[1]; },
            data({7}, 6));
}

TEST_CASE("histogram2d and histogramdd (numpy here; JAX counts int32 without weights)") {
  const Array x = f64({0, 1, 1, 2, 3.5}), y = f64({0, 0.5, 1.5, 2, 2});
  auto [h, xe, ye] = histogram2d(x, y, {2});
  check_array(h, {2, 2}, int32, {2, 1, 0, 2});
  check_array(xe, {3}, float64, {0, 1.75, 3.5});
  check_array(ye, {3}, float64, {0, 1, 2});
  auto [hd, xd, yd] =
      histogram2d(x, y, {2, 3}, {std::pair{0.0, 4.0}, std::pair{0.0, 3.0}}, std::nullopt, true);
  check_array(hd, {2, 3}, float64, {0.2, 0.1, 0, 0, 0, 0.2}, 1e-12);
  check_array(yd, {4}, float64, {0, 1, 2, 3});
  const Array s = f64({0, 0, 1, 1, 2, 0, 0.5, 1, 1, 3, 3, 3}, {4, 3});
  auto [hs, es] = histogramdd(s, {2, 1, 2});
  check_array(hs, {2, 1, 2}, int32, {3, 0, 0, 1});
  REQUIRE(es.size() == 3);
  check_array(es[1], {2}, float64, {0, 3});
  check_array(histogramdd(s, {2}, {}, f64({1, 2, 3, 4})).first, {2, 2, 2}, float64,
              {4, 0, 2, 0, 0, 0, 0, 4});
  LINUM_CHECK_ERROR(histogramdd(s, {2, 2}), ValueError, "should be a bin for each dimension");
  LINUM_CHECK_ERROR(histogramdd(s, {2}, {std::pair{0.0, 1.0}}), ValueError, "range must be");
  LINUM_CHECK_ERROR(histogramdd(s, {2}, {}, f64({1})), ValueError, "one weight for each sample");
  LINUM_CHECK_ERROR(histogram2d(x, f64({1})), ValueError, "histogram2d: x and y");
  check_grads(
      [](const Array& w) {
        return std::get<0>(histogram2d(f64({0, 1, 1, 2}), f64({2, 0, 1, 1}), {2}, {}, w));
      },
      data({4}, 7));
  auto hh = [](const Array& p) {
    return histogramdd(p, {3}, {std::pair{-2.0, 2.0}, std::pair{-2.0, 2.0}}).first;
  };
  check_vmap(hh, axes({0}), data({2, 5, 2}, 8));
  check_jit(hh, data({5, 2}, 9));
}

TEST_CASE("interp: inside, outside, left/right, extrapolate, period, repeated xp (numpy here)") {
  const Array xp = f64({0, 1, 2}), fp = f64({10, 20, 0});
  check_array(interp(f64({-1, 0, 0.5, 1.5, 2, 3.5}), xp, fp), {6}, float64, {10, 10, 15, 10, 0, 0});
  check_array(interp(f64({-1, 3.5}), xp, fp, -5.0, 99.0), {2}, float64, {-5, 99});
  // JAX's "extrapolate" continues the end segments: slope 10 on the left, -20 on the right.
  check_array(interp(f64({-1, 3}), xp, fp, "extrapolate", "extrapolate"), {2}, float64, {0, -20});
  check_array(interp(f64({-190, 190, 350, -350, 0}), f64({-180, -170, 10, 170}), f64({1, 2, 3, 4}),
                     {}, {}, 360.0),
              {5}, float64, {4, 2, 2.8888888888888888, 3, 2.9444444444444444}, 1e-12);
  check_array(interp(f64({1.5}), f64({0, 1, 1, 2}), f64({0, 1, 3, 4})), {1}, float64, {3.5});
  check_array(interp(ints({1}), ints({0, 2}), ints({0, 4})), {1}, float32, {2});
  LINUM_CHECK_ERROR(interp(f64({1}), f64({0, 1}), f64({1})), ValueError,
                    "xp and fp must be one-dimensional arrays of equal size");
  LINUM_CHECK_ERROR(interp(f64({1}), xp, fp, "nearest"), ValueError, "'extrapolate'");
  check_grads(
      [](const Arrays& a) {
        return interp(a[0], f64({-3, -1, 0.5, 3}), a[1]);
      },
      Arrays{data({5}, 10), data({4}, 11)});
  auto f = [](const Array& v, const Array& q) {
    return interp(v, f64({0, 1, 2}), q, 0.0, "extrapolate");
  };
  check_vmap(f, axes({0, 1}), data({2, 4}, 12), data({3, 2}, 13));
  check_jit(f, data({4}, 14), data({3}, 15));
}

}  // namespace test_histogram
