// InstanceNorm (flax/linen/normalization.py): Flax's params, outputs against an explicit
// double-precision loop over (example, feature), the equivalences Flax's docstring asserts
// (LayerNorm over the spatial axes, GroupNorm with one channel per group), dtypes, gradients
// against finite differences, jit, vmap and errors.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include <linum/linum.hpp>
#include <linum/nn/nn.hpp>

#include "../autodiff/check_grads.hpp"
#include "nn_testing.hpp"

namespace test_instance_norm {

using namespace linum;
using testing::allclose;
using testing::shape_of;
using Keys = std::vector<std::string>;

namespace {

std::vector<double> values(const Array& a) {
  Array c = astype(a, float64);
  return {c.data<double>(), c.data<double>() + c.size()};
}
bool same(const Array& a, const Array& b) {
  return a.shape() == b.shape() && a.dtype() == b.dtype() && all(equal(a, b)).item<bool>();
}
Tree params_of(Tree p) { return Tree{{"params", std::move(p)}}; }
void check_close(const std::vector<double>& a, const std::vector<double>& b, double tol) {
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) CHECK(a[i] == doctest::Approx(b[i]).epsilon(tol));
}

// InstanceNorm of x (N, H, W, C) with feature axis -1: mean and (fast) variance of each (n, c)
// over (H, W), y = (x - mean) / sqrt(var + eps) * scale[c] + bias[c].
std::vector<double> instance_norm_nhwc(const std::vector<double>& x, int N, int H, int W, int C,
                                       const std::vector<double>& scale,
                                       const std::vector<double>& bias, double eps) {
  std::vector<double> y(x.size());
  auto at = [&](int n, int h, int w, int c) { return ((n * H + h) * W + w) * C + c; };
  for (int n = 0; n < N; ++n)
    for (int c = 0; c < C; ++c) {
      double m = 0, m2 = 0;
      for (int h = 0; h < H; ++h)
        for (int w = 0; w < W; ++w) {
          m += x[at(n, h, w, c)];
          m2 += x[at(n, h, w, c)] * x[at(n, h, w, c)];
        }
      m /= H * W;
      m2 /= H * W;
      const double inv = 1.0 / std::sqrt(m2 - m * m + eps);
      for (int h = 0; h < H; ++h)
        for (int w = 0; w < W; ++w)
          y[at(n, h, w, c)] = (x[at(n, h, w, c)] - m) * inv * scale[c] + bias[c];
    }
  return y;
}

}  // namespace

TEST_CASE("InstanceNorm: params scale/bias of the feature shape; y against a loop over (n, c)") {
  Array x = random::normal(random::key(1), {2, 3, 4, 5});
  auto [y, v] = nn::InstanceNorm().init_with_output(random::key(0), x);
  CHECK(v.as_dict().keys() == Keys{"params"});
  CHECK(v["params"].as_dict().keys() == Keys{"scale", "bias"});
  CHECK(shape_of(v["params"]["scale"]) == Shape{5});
  CHECK(v["params"]["scale"].leaf().dtype() == float32);
  CHECK(same(v["params"]["scale"].leaf(), ones({5})));
  CHECK(same(v["params"]["bias"].leaf(), zeros({5})));
  CHECK(y.dtype() == float32);
  check_close(values(y),
              instance_norm_nhwc(values(x), 2, 3, 4, 5, std::vector<double>(5, 1.0),
                                 std::vector<double>(5, 0.0), 1e-6),
              1e-4);
  // Learned scale and bias.
  Array scale = random::normal(random::key(2), {5}), bias = random::normal(random::key(3), {5});
  Array y2 = nn::InstanceNorm().apply(params_of(Tree{{"scale", scale}, {"bias", bias}}), x);
  check_close(values(y2),
              instance_norm_nhwc(values(x), 2, 3, 4, 5, values(scale), values(bias), 1e-6), 1e-4);
  // As Flax's docstring: LayerNorm over (1, 2) and GroupNorm with one channel per group agree.
  CHECK(allclose(y, nn::LayerNorm({.reduction_axes = {1, 2}, .feature_axes = {-1}}).apply(v, x),
                 1e-6f));
  CHECK(allclose(y, nn::GroupNorm({.num_groups = 5}).apply(v, x), 1e-5f));
  // No scale nor bias: no params.
  CHECK(nn::InstanceNorm({.use_bias = false, .use_scale = false})
            .init(random::key(0), x)
            .as_dict()
            .empty());
}

TEST_CASE(
    "InstanceNorm: feature_axes {1, -1} keep (C1, C2) and reduce the rest; exact variance, "
    "mask, epsilon") {
  Array x = random::normal(random::key(4), {2, 3, 4, 5});
  Tree v = nn::InstanceNorm({.feature_axes = {1, -1}}).init(random::key(0), x);
  CHECK(shape_of(v["params"]["scale"]) == Shape{3, 5});
  CHECK(shape_of(v["params"]["bias"]) == Shape{3, 5});
  // Reduction over axis 2 only: move it last, normalize rows by hand, move it back.
  Array y = nn::InstanceNorm({.feature_axes = {1, -1}}).apply(v, x);
  Array xt = moveaxis(x, 2, 3);  // (2, 3, 5, 4): each row of 4 is one (n, c1, c2)
  std::vector<double> xr = values(xt), ref(xr.size());
  for (std::size_t r = 0; r < xr.size() / 4; ++r) {
    double m = 0, m2 = 0;
    for (int k = 0; k < 4; ++k) m += xr[r * 4 + k] / 4, m2 += xr[r * 4 + k] * xr[r * 4 + k] / 4;
    for (int k = 0; k < 4; ++k) ref[r * 4 + k] = (xr[r * 4 + k] - m) / std::sqrt(m2 - m * m + 1e-6);
  }
  check_close(values(moveaxis(y, 2, 3)), ref, 1e-4);
  // use_fast_variance = false gives the same numbers here; epsilon enters the rsqrt.
  CHECK(
      allclose(nn::InstanceNorm({.feature_axes = {1, -1}, .use_fast_variance = false}).apply(v, x),
               y, 1e-5f));
  Array tiny = x * 1e-3f;  // variance ~1e-6: epsilon 1e-6 vs 0.1 makes a difference
  Array yt =
      nn::InstanceNorm({.epsilon = 0.1}).apply(nn::InstanceNorm().init(random::key(0), tiny), tiny);
  check_close(values(yt),
              instance_norm_nhwc(values(tiny), 2, 3, 4, 5, std::vector<double>(5, 1.0),
                                 std::vector<double>(5, 0.0), 0.1),
              1e-4);
  // A mask drops entries from the statistics: masking the last row of H equals the stats of the
  // first two rows, applied to every row.
  Array mask = broadcast_to(reshape(array({true, true, false}), {1, 3, 1, 1}), {2, 3, 4, 5});
  Tree v5 = nn::InstanceNorm().init(random::key(0), x);
  Array ym = nn::InstanceNorm().apply(v5, x, mask);
  Array x2 = slice(x, {{0, 2}, {0, 2}, {0, 4}, {0, 5}});
  Array mean2 = mean(x2, Axes{1, 2}, true);
  Array var2 = mean(square(x2), Axes{1, 2}, true) - square(mean2);
  CHECK(allclose(ym, (x - mean2) / sqrt(var2 + 1e-6), 1e-4f));
}

TEST_CASE("InstanceNorm: dtype (Flax's promotion), float64 params, integer inputs") {
  Array x = random::normal(random::key(5), {2, 4, 3});
  Array x64 = astype(x, float64);
  Tree v = nn::InstanceNorm().init(random::key(0), x);
  // float64 input with float32 params: float64 result (promotion); dtype forces float32.
  CHECK(nn::InstanceNorm().apply(v, x64).dtype() == float64);
  Array y32 = nn::InstanceNorm({.dtype = float32}).apply(v, x64);
  CHECK(y32.dtype() == float32);
  CHECK(allclose(y32, nn::InstanceNorm().apply(v, x), 1e-5f));
  // param_dtype float64: params and result float64.
  Tree v64 = nn::InstanceNorm({.param_dtype = float64}).init(random::key(0), x);
  CHECK(v64["params"]["scale"].leaf().dtype() == float64);
  CHECK(nn::InstanceNorm({.param_dtype = float64}).apply(v64, x).dtype() == float64);
  // int32 input: statistics and result in float32.
  Array xi = astype(x * 10.0f, int32);
  Array yi = nn::InstanceNorm().apply(v, xi);
  CHECK(yi.dtype() == float32);
  CHECK(allclose(yi, nn::InstanceNorm().apply(v, astype(xi, float32)), 1e-5f));
}

TEST_CASE("InstanceNorm: gradients against finite differences; jit and vmap equal eager") {
  Array x = astype(random::normal(random::key(6), {2, 3, 4}), float64);
  Array scale = astype(random::normal(random::key(7), {4}), float64);
  Array bias = astype(random::normal(random::key(8), {4}), float64);
  testing::check_grads(
      [](const Arrays& a) {
        return nn::InstanceNorm({.param_dtype = float64})
            .apply(params_of(Tree{{"scale", a[1]}, {"bias", a[2]}}), a[0]);
      },
      {x, scale, bias});
  Tree v = params_of(Tree{{"scale", scale}, {"bias", bias}});
  Array eager = nn::InstanceNorm().apply(v, x);
  auto jitted = linum::jit(
      [](const Tree& vars, const Array& in) { return nn::InstanceNorm().apply(vars, in); });
  CHECK(allclose(jitted(v, x), eager, 1e-12f));
  // vmap over a leading axis of stacked batches: each slice normalized on its own.
  Array xs = astype(random::normal(random::key(9), {3, 2, 3, 4}), float64);
  Array ys = linum::vmap([&](const Array& xi) { return nn::InstanceNorm().apply(v, xi); })(xs);
  for (std::int64_t i = 0; i < 3; ++i)
    CHECK(allclose(ys[i], nn::InstanceNorm().apply(v, xs[i]), 1e-12f));
}

TEST_CASE("InstanceNorm: errors name the layer") {
  Array x = ones({2, 3, 4});
  CHECK_THROWS_WITH_AS(nn::InstanceNorm({.feature_axes = {0}}).init(random::key(0), x),
                       doctest::Contains("InstanceNorm: the feature axes cannot include the "
                                         "leading dimension"),
                       ValueError);
  CHECK_THROWS_AS(nn::InstanceNorm({.feature_axes = {-3, -1}}).init(random::key(0), x), ValueError);
  CHECK_THROWS_WITH_AS(nn::InstanceNorm({.feature_axes = {3}}).init(random::key(0), x),
                       doctest::Contains("InstanceNorm: axis 3 is out of bounds"), IndexError);
  CHECK_THROWS_WITH_AS(nn::InstanceNorm().init(random::key(0), Array(1.0f)),
                       doctest::Contains("InstanceNorm"), ValueError);
  CHECK_THROWS_AS(nn::InstanceNorm().init(random::key(0), x, ones({2, 3, 4})), TypeError);
}

}  // namespace test_instance_norm
