// Conv / ConvTranspose options Flax models use: every padding spelling of Flax's PaddingLike
// ('CIRCULAR', 'REFLECT', 'CAUSAL', ints, pairs), several leading batch dims and unbatched
// inputs. Each result is checked against a loop that indexes the input directly (periodic or
// mirrored indices written out), or against an identity that only holds when the layout is right.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include <linum/linum.hpp>
#include <linum/nn/nn.hpp>

#include "../support/testing.hpp"
#include "nn_testing.hpp"

namespace test_conv_padding {

using namespace linum;
using testing::allclose;

namespace {

using i64 = std::int64_t;

// Deterministic, distinct values: v[k] = ((k * 37) % 23 - 11) / 8.
Array ramp(const Shape& s) {
  std::vector<float> v;
  for (i64 k = 0; k < shape_size(s); ++k) v.push_back(static_cast<float>((k * 37) % 23 - 11) / 8);
  return array(v, s);
}

// lax.conv_general_dilated with only the padding set.
Array lax_conv(const Array& x, const Array& w, Padding padding) {
  ConvOptions o;
  o.padding = std::move(padding);
  return conv_general_dilated(x, w, o);
}

Tree params(const Array& kernel, const Array& bias) {
  return Tree{{"params", Tree{{"kernel", kernel}, {"bias", bias}}}};
}

// A 1-D conv written out: y[b, o, f] = bias[f] + sum_{k, c} x[b, src(o * s + k * d), c] w[k, c, f],
// where src maps a position of the padded input to an input index (or -1 for a zero).
template <class Src>
Array conv1d_ref(const Array& x, const Array& w, const Array& bias, i64 stride, i64 dil, i64 out,
                 Src src) {
  const i64 B = x.shape(0), C = x.shape(2), K = w.shape(0), F = w.shape(2);
  const float* xd = x.data<float>();
  const float* wd = w.data<float>();
  const float* bd = bias.data<float>();
  std::vector<float> y;
  for (i64 b = 0; b < B; ++b)
    for (i64 o = 0; o < out; ++o)
      for (i64 f = 0; f < F; ++f) {
        double acc = bd[f];
        for (i64 k = 0; k < K; ++k) {
          const i64 i = src(o * stride + k * dil);
          if (i < 0) continue;
          for (i64 c = 0; c < C; ++c)
            acc += xd[(b * x.shape(1) + i) * C + c] * wd[(k * C + c) * F + f];
        }
        y.push_back(static_cast<float>(acc));
      }
  return array(y, {B, out, F});
}

i64 mod(i64 a, i64 n) { return ((a % n) + n) % n; }

}  // namespace

TEST_CASE("Conv padding CIRCULAR, REFLECT and CAUSAL match the loop over wrapped indices") {
  const i64 n = 5;
  const Array x = ramp({2, n, 3});
  for (i64 dil : {1, 2}) {
    for (i64 K : {3, 4}) {
      const Array w = ramp({K, 3, 2}), bias = array({0.25f, -0.5f});
      const i64 kd = (K - 1) * dil + 1, lo = (kd - 1) / 2;
      auto conv = [&](const char* pad) {
        return nn::Conv(
                   {.features = 2, .kernel_size = {K}, .padding = pad, .kernel_dilation = {dil}})
            .apply(params(w, bias), x);
      };
      // CIRCULAR: padded position p reads input (p - lo) mod n; the output keeps the length.
      CHECK(allclose(conv("CIRCULAR"),
                     conv1d_ref(x, w, bias, 1, dil, n, [&](i64 p) { return mod(p - lo, n); })));
      // REFLECT: mirrored without repeating the edge (period 2 (n - 1)).
      CHECK(allclose(conv("REFLECT"), conv1d_ref(x, w, bias, 1, dil, n, [&](i64 p) {
                       const i64 i = mod(p - lo, 2 * (n - 1));
                       return i >= n ? 2 * (n - 1) - i : i;
                     })));
      // CAUSAL: dil * (K - 1) zeros on the left only.
      CHECK(allclose(conv("CAUSAL"), conv1d_ref(x, w, bias, 1, dil, n, [&](i64 p) {
                       const i64 i = p - dil * (K - 1);
                       return i >= 0 ? i : -1;
                     })));
    }
  }
  // A pad wider than the input wraps around several times (kernel 9 on 5 pixels: pads 4 and 4).
  const Array w9 = ramp({9, 3, 2}), b9 = array({0.0f, 1.0f});
  CHECK(allclose(
      nn::Conv({.features = 2, .kernel_size = {9}, .padding = "CIRCULAR"}).apply(params(w9, b9), x),
      conv1d_ref(x, w9, b9, 1, 1, n, [&](i64 p) { return mod(p - 4, n); })));
  // Strided CIRCULAR: Flax's doc example, a (3, 3) kernel with stride 2 on an unbatched 1x8x3
  // image gives (1, 4, 4).
  auto [y, v] =
      nn::Conv({.features = 4, .kernel_size = {3, 3}, .strides = {2, 2}, .padding = "CIRCULAR"})
          .init_with_output(random::key(0), ones({1, 8, 3}));
  CHECK(y.shape() == Shape{1, 4, 4});
  CHECK(v["params"]["kernel"].leaf().shape() == Shape{3, 3, 3, 4});
  // 2-D CIRCULAR equals a conv over the input tiled 3x3 and cut at the wrap offsets.
  const Array img = ramp({1, 4, 5, 2}), k2 = ramp({3, 2, 2, 3}), b2 = array({0.5f, 0.0f, -1.0f});
  const Array tiled = concatenate({img, img, img}, 1);
  const Array tiled2 = concatenate({tiled, tiled, tiled}, 2);
  // Padding (1, 1) on H (kernel 3) and (0, 1) on W (kernel 2): rows 4-1.., cols 5-0..
  const Array window = slice(tiled2, {{0, 1}, {3, 3 + 4 + 2}, {5, 5 + 5 + 1}, {0, 2}});
  CHECK(allclose(nn::Conv({.features = 3, .kernel_size = {3, 2}, .padding = "CIRCULAR"})
                     .apply(params(k2, b2), img),
                 lax_conv(window, k2, "VALID") + b2));
  CHECK_THROWS_WITH_AS(nn::Conv({.features = 3, .kernel_size = {3, 2}, .padding = "CAUSAL"})
                           .init(random::key(0), img),
                       "Causal padding is only implemented for 1D convolutions.", ValueError);
}

TEST_CASE("Conv padding as an int, a sequence of ints or of pairs; Flax's invalid-format error") {
  const Array x = ramp({1, 5, 6, 2}), k = ramp({3, 3, 2, 2}), b = array({0.0f, 0.5f});
  auto conv = [&](nn::PaddingLike p) {
    return nn::Conv({.features = 2, .kernel_size = {3, 3}, .padding = std::move(p)})
        .apply(params(k, b), x);
  };
  const Array want = lax_conv(x, k, std::vector<std::pair<i64, i64>>{{1, 1}, {2, 2}}) + b;
  CHECK(allclose(conv({1, 2}), want));
  CHECK(allclose(conv({{1, 1}, {2, 2}}), want));
  CHECK(allclose(conv(2), conv({{2, 2}, {2, 2}})));
  CHECK(conv(2).shape() == Shape{1, 7, 8, 2});
  CHECK(allclose(conv(0), conv("VALID")));
  CHECK_THROWS_WITH_AS(
      conv({1, 2, 3}),
      "Invalid padding format: (1, 2, 3), should be str, int, or a sequence of len "
      "2 where each element is an int or pair of ints.",
      ValueError);
  CHECK_THROWS_WITH_AS(conv({{1, 1}}), doctest::Contains("Invalid padding format: ((1, 1),)"),
                       ValueError);
  // ConvTranspose canonicalizes the same way.
  const Array kt = ramp({3, 3, 2, 2});
  auto convt = [&](nn::PaddingLike p) {
    return nn::ConvTranspose({.features = 2, .kernel_size = {3, 3}, .padding = std::move(p)})
        .apply(params(kt, b), x);
  };
  CHECK(allclose(convt({1, 2}),
                 conv_transpose(x, kt, {}, std::vector<std::pair<i64, i64>>{{1, 1}, {2, 2}}) + b));
}

TEST_CASE("Conv / ConvTranspose fold several batch dims into one and unfold the output") {
  const Array x = ramp({2, 3, 5, 4, 2});  // batch dims (2, 3)
  const Array k = ramp({3, 3, 2, 4}), b = array({0.0f, 1.0f, 2.0f, 3.0f});
  nn::Conv conv({.features = 4, .kernel_size = {3, 3}, .strides = {2, 1}});
  const Array y = conv.apply(params(k, b), x);
  CHECK(y.shape() == Shape{2, 3, 3, 4, 4});
  for (i64 i = 0; i < 2; ++i) {
    const Array xi = squeeze(slice(x, {{i, i + 1}}), 0);  // (3, 5, 4, 2): one batch dim
    CHECK(allclose(squeeze(slice(y, {{i, i + 1}}), 0), conv.apply(params(k, b), xi)));
  }
  // Unbatched: the batched result's first example.
  const Array x0 = squeeze(slice(x, {{0, 1}, {0, 1}}), {0, 1});
  CHECK(allclose(conv.apply(params(k, b), x0), squeeze(slice(y, {{0, 1}, {0, 1}}), {0, 1})));
  nn::ConvTranspose ct({.features = 4, .kernel_size = {3, 3}, .strides = {2, 2}});
  const Array yt = ct.apply(params(k, b), x);
  CHECK(yt.shape() == Shape{2, 3, 10, 8, 4});
  CHECK(allclose(squeeze(slice(yt, {{1, 2}, {2, 3}}), {0, 1}),
                 ct.apply(params(k, b), squeeze(slice(x, {{1, 2}, {2, 3}}), {0, 1}))));
  // The gradient flows through the fold: d sum(y) / dx equals the per-slice gradient.
  auto loss = [&](const Array& xs) { return sum(conv.apply(params(k, b), xs)); };
  const Array g = grad(loss)(x);
  CHECK(allclose(squeeze(slice(g, {{1, 2}, {2, 3}}), {0, 1}),
                 grad(loss)(squeeze(slice(x, {{1, 2}, {2, 3}}), {0, 1}))));
}

namespace {
// ConvTranspose with CIRCULAR padding, 1-D, written out: input pixel i scatters w[k] to output
// position (i * s - k + K - 1 + left) mod P, P = n * s, where the VALID transpose conv (lax pads
// K - 1 before, so its length is n s + max(K - s, 0)) is padded to an odd number of periods with
// `left` zeros before. transpose_kernel
// reads the kernel flipped with in/out swapped and puts the odd pixel on the right.
Array circular_transpose_ref(const Array& x, const Array& w, i64 s, bool transpose_kernel) {
  const i64 n = x.shape(1), C = x.shape(2), K = w.shape(0);
  const i64 F = transpose_kernel ? w.shape(1) : w.shape(2);
  const i64 P = n * s, valid = n * s + std::max<i64>(K - s, 0);
  const i64 diff = mod(-(valid - P), 2 * P);
  const i64 left = transpose_kernel ? diff / 2 : (diff + 1) / 2;
  const float* xd = x.data<float>();
  const float* wd = w.data<float>();
  std::vector<double> y(static_cast<std::size_t>(P * F), 0.0);
  for (i64 i = 0; i < n; ++i)
    for (i64 k = 0; k < K; ++k)
      for (i64 c = 0; c < C; ++c)
        for (i64 f = 0; f < F; ++f) {
          const double wv =
              transpose_kernel ? wd[((K - 1 - k) * F + f) * C + c] : wd[(k * C + c) * F + f];
          y[static_cast<std::size_t>(mod(i * s - k + K - 1 + left, P) * F + f)] +=
              xd[i * C + c] * wv;
        }
  return array(std::vector<float>(y.begin(), y.end()), {1, P, F});
}
}  // namespace

TEST_CASE("ConvTranspose CIRCULAR wraps the VALID transpose onto input size * stride") {
  const Array zero2 = zeros({2});
  for (i64 s : {1, 2, 3}) {
    for (i64 K : {2, 3, 6}) {
      const Array x = ramp({1, 4, 3});
      for (bool tk : {false, true}) {
        const Array w = tk ? ramp({K, 2, 3}) : ramp({K, 3, 2});
        const Array y = nn::ConvTranspose({.features = 2,
                                           .kernel_size = {K},
                                           .strides = {s},
                                           .padding = "CIRCULAR",
                                           .transpose_kernel = tk})
                            .apply(params(w, zero2), x);
        CHECK(allclose(y, circular_transpose_ref(x, w, s, tk)));
      }
    }
  }
  // Flax's doc example: kernel (6, 6), strides 2, transpose_kernel, 15x15x3 -> 30x30x4.
  auto [y, v] = nn::ConvTranspose({.features = 4,
                                   .kernel_size = {6, 6},
                                   .strides = {2, 2},
                                   .padding = "CIRCULAR",
                                   .transpose_kernel = true})
                    .init_with_output(random::key(0), ones({1, 15, 15, 3}));
  CHECK(y.shape() == Shape{1, 30, 30, 4});
  CHECK(v["params"]["kernel"].leaf().shape() == Shape{6, 6, 4, 3});
  // With transpose_kernel and Conv's kernel, CIRCULAR ConvTranspose is the adjoint of the strided
  // CIRCULAR Conv (Flax's comment): <convT(y), x> == <y, conv(x)> for any x and y.
  const Array k = ramp({4, 3, 2, 3}), x = ramp({1, 6, 5, 2}), zb = zeros({3}), zb2 = zeros({2});
  const Array cx = nn::Conv({.features = 3,
                             .kernel_size = {4, 3},
                             .strides = {2, 1},
                             .padding = "CIRCULAR",
                             .use_bias = false})
                       .apply(Tree{{"params", Tree{{"kernel", k}}}}, x);
  const Array yy = ramp({1, 3, 5, 3}) * 0.5f;
  const Array ty = nn::ConvTranspose({.features = 2,
                                      .kernel_size = {4, 3},
                                      .strides = {2, 1},
                                      .padding = "CIRCULAR",
                                      .use_bias = false,
                                      .transpose_kernel = true})
                       .apply(Tree{{"params", Tree{{"kernel", k}}}}, yy);
  CHECK(ty.shape() == x.shape());
  CHECK(sum(ty * x).item<float>() == doctest::Approx(sum(yy * cx).item<float>()).epsilon(1e-5));
}

}  // namespace test_conv_padding
