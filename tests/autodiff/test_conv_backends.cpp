// The convolution backends (im2col + GEMM, oneDNN): for strides, padding, rhs dilation, feature
// groups and 1 to 3 spatial dims, conv_general_dilated and both of its VJPs in float32 agree with
// the float64 result within the a-priori bound of a float32 sum (any order), on every backend;
// the VJPs also pass a finite-difference check, and second-order gradients agree across backends.
#include <doctest/doctest.h>

#include <cmath>

#include <linum/autodiff/ops/backends.hpp>

#include "op_testing.hpp"

namespace test_conv_backends {

using namespace linum;
using namespace linum::optest;

namespace {

using i64 = std::int64_t;
using Pairs = std::vector<std::pair<i64, i64>>;

// Sets the conv backend for a scope.
struct ConvBackendScope {
  ConvBackend saved = conv_backend();
  explicit ConvBackendScope(ConvBackend b) { set_conv_backend(b); }
  ~ConvBackendScope() { set_conv_backend(saved); }
};

std::vector<ConvBackend> backends() {
  std::vector<ConvBackend> b{ConvBackend::im2col};
  if (onednn_available()) b.push_back(ConvBackend::onednn);
  return b;
}

struct Case {
  const char* what;
  Shape x, w;
  ConvOptions o;
};

std::vector<Case> cases() {
  auto opts = [](std::vector<i64> s, Padding p, std::vector<i64> rd, i64 g) {
    return ConvOptions{std::move(s), std::move(p), {}, std::move(rd), g};
  };
  return {
      {"3x3 VALID", {2, 7, 6, 4}, {3, 3, 4, 5}, opts({1, 1}, "VALID", {1, 1}, 1)},
      {"SAME, strides 2", {2, 7, 6, 4}, {3, 3, 4, 5}, opts({2, 2}, "SAME", {1, 1}, 1)},
      {"uneven padding, strides (1, 2)",
       {2, 7, 6, 4},
       {2, 3, 4, 3},
       opts({1, 2}, Padding(Pairs{{1, 2}, {0, 1}}), {1, 1}, 1)},
      {"rhs dilation 2",
       {2, 7, 6, 4},
       {2, 2, 4, 3},
       opts({1, 1}, Padding(Pairs{{1, 1}, {1, 1}}), {2, 2}, 1)},
      {"strides, dilation and padding",
       {2, 9, 8, 4},
       {3, 2, 4, 2},
       opts({2, 2}, Padding(Pairs{{2, 1}, {1, 2}}), {1, 2}, 1)},
      {"stride past the window", {2, 8, 7, 4}, {2, 2, 4, 3}, opts({3, 3}, "VALID", {1, 1}, 1)},
      {"padding wider than the window",
       {1, 4, 5, 4},
       {2, 2, 4, 3},
       opts({1, 1}, Padding(Pairs{{3, 2}, {2, 3}}), {1, 1}, 1)},
      {"2 groups", {2, 7, 6, 4}, {3, 3, 2, 6}, opts({1, 1}, "SAME", {1, 1}, 2)},
      {"2 groups of 4 channels, strides 2",
       {2, 7, 6, 8},
       {3, 3, 4, 6},
       opts({2, 2}, "SAME", {1, 1}, 2)},
      {"depthwise, strides",
       {2, 7, 6, 4},
       {2, 2, 1, 4},
       opts({2, 1}, Padding(Pairs{{0, 1}, {1, 1}}), {1, 1}, 4)},
      {"1x1", {2, 5, 4, 4}, {1, 1, 4, 3}, opts({1, 1}, "VALID", {1, 1}, 1)},
      {"1x1 grouped, strides 2", {2, 5, 4, 4}, {1, 1, 2, 4}, opts({2, 2}, "VALID", {1, 1}, 2)},
      {"W2's second conv", {4, 14, 14, 32}, {3, 3, 32, 64}, opts({1, 1}, "SAME", {1, 1}, 1)},
      {"1-D", {2, 9, 3}, {3, 3, 4}, opts({2}, Padding(Pairs{{1, 2}}), {2}, 1)},
      {"3-D", {1, 4, 5, 5, 2}, {2, 3, 2, 2, 3}, opts({1, 2, 1}, "SAME", {1, 1, 1}, 1)},
      {"3-D grouped, dilated",
       {1, 5, 4, 4, 4},
       {2, 2, 2, 2, 4},
       opts({1, 1, 1}, "VALID", {2, 1, 1}, 2)},
  };
}

// conv(x, w) and its two VJPs at cotangent ct.
Arrays conv_and_vjps(const Array& x, const Array& w, const Array& ct, const ConvOptions& o) {
  auto [y, vjp_fn] =
      vjp([&](const Array& a, const Array& b) { return conv_general_dilated(a, b, o); }, x, w);
  auto [gx, gw] = vjp_fn(ct);
  return {y, gx, gw};
}

// |got - exact| <= 2 K u · magnitude, u = 2^-24: the bound of a float32 sum of K products in any
// order (magnitude: the same sum of absolute values, in float64).
void check_rounding(const Array& got, const Array& exact, const Array& magnitude, double K) {
  REQUIRE(got.dtype() == float32);
  REQUIRE(shape_str(got.shape()) == shape_str(exact.shape()));
  const auto g = values(got), e = values(exact), m = values(magnitude);
  const double u = std::ldexp(1.0, -24);
  int bad = 0;
  for (std::size_t i = 0; i < g.size(); ++i)
    if (!(std::abs(g[i] - e[i]) <= 2 * K * u * m[i] + 1e-30)) ++bad;
  CHECK(bad == 0);
}

}  // namespace

TEST_CASE("conv backends: forward and both VJPs within float32 rounding of the float64 result") {
  for (const Case& c : cases()) {
    // float32 operands, and the same values in float64 for the exact result.
    const Array x = astype(data(c.x, 1), float32), w = astype(data(c.w, 2), float32);
    const Array x64 = astype(x, float64), w64 = astype(w, float64);
    const Array y64 = conv_general_dilated(x64, w64, c.o);
    const Array ct = astype(data(y64.shape(), 3), float32), ct64 = astype(ct, float64);
    const Arrays ex = conv_and_vjps(x64, w64, ct64, c.o);
    const Arrays mag = conv_and_vjps(abs(x64), abs(w64), abs(ct64), c.o);
    // Terms per sum: the window times the input features (forward and lhs VJP, bounded by the
    // larger feature count), every output pixel (rhs VJP).
    const double win = static_cast<double>(shape_size(c.w)) / c.w.back() / c.w[c.w.size() - 2];
    const double k_fwd = win * std::max(c.w[c.w.size() - 2], c.w.back()),
                 k_rhs = static_cast<double>(shape_size(y64.shape())) / y64.shape(-1);
    for (ConvBackend b : backends()) {
      INFO(c.what << " on " << to_string(b));
      ConvBackendScope scope(b);
      const Arrays got = conv_and_vjps(x, w, ct, c.o);
      check_rounding(got[0], ex[0], mag[0], k_fwd);
      check_rounding(got[1], ex[1], mag[1], k_fwd);
      check_rounding(got[2], ex[2], mag[2], k_rhs);
    }
  }
}

TEST_CASE("conv backends: the VJPs agree with central finite differences") {
  // L(x, w) = <ct, conv(x, w)> is linear in each operand, so the central difference has no
  // truncation error and a large step keeps rounding small.
  for (const Case& c : cases()) {
    const Array x = astype(data(c.x, 4), float32), w = astype(data(c.w, 5), float32);
    const Array ct = astype(data(conv_general_dilated(x, w, c.o).shape(), 6), float32);
    const Array dx = astype(data(c.x, 7), float32), dw = astype(data(c.w, 8), float32);
    auto L = [&](const Array& a, const Array& b) {
      return static_cast<double>(
          sum(astype(ct * conv_general_dilated(a, b, c.o), float64)).item<double>());
    };
    for (ConvBackend b : backends()) {
      INFO(c.what << " on " << to_string(b));
      ConvBackendScope scope(b);
      const Arrays g = conv_and_vjps(x, w, ct, c.o);
      const double h = 0.5;
      const double fd_x = (L(x + h * dx, w) - L(x - h * dx, w)) / (2 * h),
                   fd_w = (L(x, w + h * dw) - L(x, w - h * dw)) / (2 * h);
      const double an_x = sum(astype(g[1] * dx, float64)).item<double>(),
                   an_w = sum(astype(g[2] * dw, float64)).item<double>();
      CHECK(an_x == doctest::Approx(fd_x).epsilon(1e-4));
      CHECK(an_w == doctest::Approx(fd_w).epsilon(1e-4));
    }
  }
}

TEST_CASE("conv backends: grad of grad (the transposes' own VJPs) agrees across backends") {
  const std::vector<Case> some = {cases()[2], cases()[4], cases()[8], cases()[14]};
  for (const Case& c : some) {
    const Array x = astype(data(c.x, 9, -1, 1), float32), w = astype(data(c.w, 10, -1, 1), float32);
    auto loss = [o = c.o](const Array& a, const Array& b) {
      return sum(tanh(conv_general_dilated(a, b, o)));
    };
    // The gradient norm's gradient: each first-order cotangent differentiated again.
    auto second = [&](const Array& a, const Array& b) {
      auto [ga, gb] = grad(loss, argnums<0, 1>)(a, b);
      return sum(square(ga)) + sum(square(gb));
    };
    Arrays ref;
    for (ConvBackend b : backends()) {
      INFO(c.what << " on " << to_string(b));
      ConvBackendScope scope(b);
      auto [gx, gw] = grad(second, argnums<0, 1>)(x, w);
      if (ref.empty()) {
        ref = {gx, gw};
        continue;
      }
      check_close(gx, ref[0], 1e-4);
      check_close(gw, ref[1], 1e-4);
    }
  }
}

TEST_CASE("conv backends: set_conv_backend round-trips and names its backends") {
  ConvBackendScope scope(ConvBackend::im2col);
  CHECK(conv_backend() == ConvBackend::im2col);
  CHECK(std::string(to_string(ConvBackend::im2col)) == "im2col");
  CHECK(std::string(to_string(ConvBackend::onednn)) == "onednn");
  if (onednn_available()) {
    set_conv_backend(ConvBackend::onednn);
    CHECK(conv_backend() == ConvBackend::onednn);
  } else {
    CHECK_THROWS_AS(set_conv_backend(ConvBackend::onednn), ValueError);
  }
}

}  // namespace test_conv_backends
