// lax.conv_transpose: JAX's output sizes, an explicit scatter loop, the transposed kernel as the
// VJP of a strided convolution, gradients by finite differences, errors.
#include <doctest/doctest.h>

#include "op_testing.hpp"

namespace test_conv_transpose {

using namespace linum;
using linum::testing::check_error;
using linum::testing::check_grads;
using linum::testing::values;

namespace {

using i64 = std::int64_t;

// The 1-d transposed convolution by hand: input pixel i, tap j lands on i*s + pad_a - j*dil
// (pad_a as JAX pads: k-1 for VALID and for SAME when s > k-1, else ceil((k+s-2)/2)).
std::vector<double> scatter_1d(const Array& x, const Array& w, i64 s, i64 dil, bool same) {
  const i64 n = x.shape(0), W = x.shape(1), C = x.shape(2), K = w.shape(0), F = w.shape(2);
  const i64 k = (K - 1) * dil + 1;
  const i64 out = same ? W * s : W * s + std::max<i64>(k - s, 0);
  const i64 pad_a = same && s <= k - 1 ? (k + s - 1) / 2 : k - 1;
  const auto xv = values(x), wv = values(w);
  std::vector<double> y(static_cast<std::size_t>(n * out * F), 0.0);
  for (i64 b = 0; b < n; ++b)
    for (i64 i = 0; i < W; ++i)
      for (i64 j = 0; j < K; ++j) {
        const i64 o = i * s + pad_a - j * dil;
        if (o < 0 || o >= out) continue;
        for (i64 c = 0; c < C; ++c)
          for (i64 f = 0; f < F; ++f)
            y[(b * out + o) * F + f] += xv[(b * W + i) * C + c] * wv[(j * C + c) * F + f];
      }
  return y;
}

}  // namespace

TEST_CASE("conv_transpose: SAME gives in * stride outputs, VALID in * stride + max(k - s, 0)") {
  const Array x = ones({2, 5, 6, 3});
  const Array w = ones({3, 2, 3, 4});
  CHECK(conv_transpose(x, w, {2, 3}, "SAME").shape() == Shape{2, 10, 18, 4});
  CHECK(conv_transpose(x, w, {2, 3}, "VALID").shape() == Shape{2, 11, 18, 4});
  CHECK(conv_transpose(x, w, {1, 1}, "SAME").shape() == Shape{2, 5, 6, 4});
  // A dilated kernel counts with its dilated size: k = 5 along the first axis.
  CHECK(conv_transpose(x, w, {2, 1}, "VALID", {2, 1}).shape() == Shape{2, 13, 7, 4});
  // Explicit padding is passed to the convolution of the dilated input as it is.
  CHECK(conv_transpose(x, w, {2, 1}, Padding({{0, 0}, {1, 1}})).shape() == Shape{2, 7, 7, 4});
}

TEST_CASE("conv_transpose equals an explicit scatter loop for SAME and VALID, strides, dilation") {
  const Array x = random::normal(random::key(0), {2, 5, 3}, float64);
  const Array w = random::normal(random::key(1), {3, 3, 4}, float64);
  for (bool same : {true, false})
    for (i64 s : {1, 2, 3})
      for (i64 dil : {1, 2}) {
        CAPTURE(same);
        CAPTURE(s);
        CAPTURE(dil);
        const Array y = conv_transpose(x, w, {s}, same ? "SAME" : "VALID", {dil});
        const auto want = scatter_1d(x, w, s, dil, same);
        const auto got = values(y);
        REQUIRE(got.size() == want.size());
        for (std::size_t i = 0; i < got.size(); ++i) CHECK(got[i] == doctest::Approx(want[i]));
      }
}

TEST_CASE("conv_transpose with transpose_kernel is the VJP of the strided convolution") {
  // conv: x (1, 9, 6, 2) * w (3, 2, 2, 4), strides (2, 2), VALID, kernel dilation (2, 1); the
  // kernel's (dilated) size is at least the stride in each dim and no input pixel is left over,
  // so the transpose has exactly x's shape.
  const Array x = random::normal(random::key(2), {1, 9, 6, 2}, float64);
  const Array w = random::normal(random::key(3), {3, 2, 2, 4}, float64);
  const ConvOptions o{
      .window_strides = {2, 2}, .padding = "VALID", .lhs_dilation = {}, .rhs_dilation = {2, 1}};
  auto [y, pull] = vjp([&](const Array& a) { return conv_general_dilated(a, w, o); }, x);
  REQUIRE(y.shape() == Shape{1, 3, 3, 4});
  const Array ct = random::normal(random::key(4), y.shape(), float64);
  const auto [dx] = pull(ct);
  const Array t = conv_transpose(ct, w, {2, 2}, "VALID", {2, 1}, /*transpose_kernel=*/true);
  REQUIRE(t.shape() == x.shape());
  const auto a = values(t), b = values(dx);
  for (std::size_t i = 0; i < a.size(); ++i) CHECK(a[i] == doctest::Approx(b[i]));
}

TEST_CASE("conv_transpose differentiates in both arguments (finite differences)") {
  const Array x = random::normal(random::key(5), {2, 3, 4, 2}, float64);
  const Array w = random::normal(random::key(6), {2, 3, 2, 3}, float64);
  check_grads([](const Arrays& a) { return conv_transpose(a[0], a[1], {2, 2}, "SAME"); }, {x, w});
  check_grads(
      [](const Arrays& a) {
        return conv_transpose(a[0], a[1], {2, 1}, "VALID", {1, 2}, true);
      },
      {x, random::normal(random::key(7), {2, 3, 3, 2}, float64)});
}

TEST_CASE("conv_transpose: bad ranks, strides and padding name the op and what came") {
  check_error<ValueError>(
      [] {
        conv_transpose(ones({4, 3}), ones({3, 3}), {1}, "SAME");
      },
      {"conv_transpose", "(4, 3)"});
  check_error<ValueError>(
      [] {
        conv_transpose(ones({1, 4, 3}), ones({2, 3, 2}), {1, 1}, "SAME");
      },
      {"conv_transpose", "strides", "1 entries"});
  check_error<ValueError>(
      [] {
        conv_transpose(ones({1, 4, 3}), ones({2, 3, 2}), {0}, "SAME");
      },
      {"conv_transpose", "strides must be positive"});
  check_error<ValueError>(
      [] {
        conv_transpose(ones({1, 4, 3}), ones({2, 3, 2}), {1}, "CIRCULAR");
      },
      {"conv_transpose", "'CIRCULAR'"});
  check_error<ValueError>(
      [] {
        conv_transpose(ones({1, 4, 3}), ones({2, 5, 2}), {1}, "SAME");
      },
      {"conv_transpose", "feature dimension 3", "(2, 5, 2)"});
}

}  // namespace test_conv_transpose
