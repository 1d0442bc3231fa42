// nn::ConvLocal (flax.linen.ConvLocal) and lax.conv_general_dilated_{patches,local}: Flax's
// parameter shapes (its docstring's cases), the values against an explicit loop over output
// positions that indexes the (dilated, padded) input directly, ConvLocal with a Conv kernel tiled
// at every position against Conv itself (which also pins the kernel's channel-major window
// layout), the init key and fan-in, gradients, jit, vmap and the errors.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include <linum/linum.hpp>
#include <linum/nn/nn.hpp>

#include "../autodiff/check_grads.hpp"
#include "../support/testing.hpp"
#include "nn_testing.hpp"

namespace test_conv_local {

using namespace linum;
using testing::allclose;
using testing::shape_of;

namespace {

using i64 = std::int64_t;
using Keys = std::vector<std::string>;

// ConvOptions with only the padding set.
ConvOptions padded(Padding p) {
  ConvOptions o;
  o.padding = std::move(p);
  return o;
}

Tree params(const Array& kernel, const Array& bias) {
  return Tree{{"params", Tree{{"kernel", kernel}, {"bias", bias}}}};
}

// A 2-D local convolution written out: for output position (oh, ow),
//   y[n, oh, ow, f] = bias[oh, ow, f] + sum_{kh, kw, c} xd[n, oh*sh + kh*dh - lo_h,
//                     ow*sw + kw*dw - lo_w, c] * K[oh, ow, c*KH*KW + kh*KW + kw, f]
// where xd is x with (idil - 1) zeros between its elements, zero outside. The kernel's middle
// axis is channel-major, as JAX's conv_general_dilated_local documents its "I" dimension
// (c followed by the window dims).
struct Loop2d {
  i64 KH, KW, sh = 1, sw = 1, dh = 1, dw = 1, ih = 1, iw = 1, lo_h = 0, hi_h = 0, lo_w = 0,
              hi_w = 0;
  Shape out_shape(const Shape& x, i64 F) const {
    const i64 H = (x[1] - 1) * ih + 1, W = (x[2] - 1) * iw + 1;
    const i64 OH = (H + lo_h + hi_h - ((KH - 1) * dh + 1)) / sh + 1;
    const i64 OW = (W + lo_w + hi_w - ((KW - 1) * dw + 1)) / sw + 1;
    return {x[0], OH, OW, F};
  }
  Array run(const Array& x, const Array& kernel, const Array& bias) const {
    const Shape& xs = x.shape();
    const i64 N = xs[0], H = xs[1], W = xs[2], C = xs[3], F = kernel.shape(-1);
    const Shape os = out_shape(xs, F);
    const auto xv = testing::values(x), kv = testing::values(kernel), bv = testing::values(bias);
    std::vector<double> y;
    for (i64 n = 0; n < N; ++n)
      for (i64 oh = 0; oh < os[1]; ++oh)
        for (i64 ow = 0; ow < os[2]; ++ow)
          for (i64 f = 0; f < F; ++f) {
            double acc = bv[static_cast<std::size_t>((oh * os[2] + ow) * F + f)];
            for (i64 kh = 0; kh < KH; ++kh)
              for (i64 kw = 0; kw < KW; ++kw) {
                const i64 ph = oh * sh + kh * dh - lo_h, pw = ow * sw + kw * dw - lo_w;
                if (ph < 0 || pw < 0 || ph % ih || pw % iw) continue;
                const i64 r = ph / ih, q = pw / iw;
                if (r >= H || q >= W) continue;
                for (i64 c = 0; c < C; ++c) {
                  const i64 k = c * KH * KW + kh * KW + kw;
                  acc +=
                      xv[static_cast<std::size_t>(((n * H + r) * W + q) * C + c)] *
                      kv[static_cast<std::size_t>(((oh * os[2] + ow) * C * KH * KW + k) * F + f)];
                }
              }
            y.push_back(acc);
          }
    return array(y, os);
  }
};

// A Conv kernel (KH, KW, C, F) as a ConvLocal kernel: the same weights at every output position,
// its window flattened channel-major (c * KH * KW + kh * KW + kw).
Array tile_conv_kernel(const Array& k, const Shape& out_spatial) {
  const i64 C = k.shape(-2), F = k.shape(-1);
  i64 S = 1;
  for (int d = 0; d < k.ndim() - 2; ++d) S *= k.shape(d);
  Array flat = reshape(moveaxis(reshape(k, {S, C, F}), 1, 0), {C * S, F});
  Shape full = out_spatial;
  full.push_back(C * S);
  full.push_back(F);
  return broadcast_to(flat, full);
}
Array tile_bias(const Array& b, const Shape& out_spatial) {
  Shape full = out_spatial;
  full.push_back(b.shape(0));
  return broadcast_to(b, full);
}

// A module whose only param is `kernel` of `shape`, drawn with lecun_normal as a layer at the
// same path would draw it.
struct KernelProbe : nn::Module<KernelProbe> {
  Shape kernel_shape;
  explicit KernelProbe(Shape s) : kernel_shape(std::move(s)) {}
  Array call(const Array&) {
    return param("kernel", nn::initializers::lecun_normal(), kernel_shape, float32);
  }
};

}  // namespace

TEST_CASE("ConvLocal: Flax's docstring shapes: kernel (out spatial, window * in, features)") {
  // nn.ConvLocal(features=4, kernel_size=(3,), padding='VALID') on ones((1, 8, 3)):
  // {'bias': (6, 4), 'kernel': (6, 9, 4)}, output (1, 6, 4).
  auto [y, v] = nn::ConvLocal({.features = 4, .kernel_size = {3}, .padding = "VALID"})
                    .init_with_output(random::key(0), ones({1, 8, 3}));
  CHECK(y.shape() == Shape{1, 6, 4});
  CHECK(v["params"].as_dict().keys() == Keys{"kernel", "bias"});  // Flax creates kernel first
  CHECK(shape_of(v["params"]["kernel"]) == Shape{6, 9, 4});
  CHECK(shape_of(v["params"]["bias"]) == Shape{6, 4});
  CHECK(v["params"]["kernel"].leaf().dtype() == float32);
  // kernel_size=(3, 3), strides=2, padding='CIRCULAR' on (1, 8, 3): one spatial position fewer
  // than the rank, so (1, 8) is the image and a batch dim is added and removed. Flax:
  // {'bias': (1, 4, 4), 'kernel': (1, 4, 27, 4)}, output (1, 4, 4).
  auto [y2, v2] =
      nn::ConvLocal(
          {.features = 4, .kernel_size = {3, 3}, .strides = {2, 2}, .padding = "CIRCULAR"})
          .init_with_output(random::key(0), ones({1, 8, 3}));
  CHECK(y2.shape() == Shape{1, 4, 4});
  CHECK(shape_of(v2["params"]["kernel"]) == Shape{1, 4, 27, 4});
  CHECK(shape_of(v2["params"]["bias"]) == Shape{1, 4, 4});
  // use_bias=false: only the kernel; param_dtype is the params' dtype.
  Tree nb = nn::ConvLocal(
                {.features = 2, .kernel_size = {2, 2}, .use_bias = false, .param_dtype = float64})
                .init(random::key(0), ones({2, 4, 5, 3}))["params"];
  CHECK(nb.as_dict().keys() == Keys{"kernel"});
  CHECK(shape_of(nb["kernel"]) == Shape{4, 5, 12, 2});  // SAME keeps 4 x 5
  CHECK(nb["kernel"].leaf().dtype() == float64);
}

TEST_CASE("ConvLocal: its kernel is lecun_normal of Flax's shape from the param's own key") {
  // The same key as any layer's `kernel` at that path: equal to a probe drawing lecun_normal with
  // the shape Flax computes, bit for bit.
  const Shape x_shape{2, 6, 7, 3};
  Tree p = nn::ConvLocal({.features = 8, .kernel_size = {3, 3}, .padding = "VALID"})
               .init(random::key(3), ones(x_shape))["params"];
  const Shape ks{4, 5, 27, 8};
  REQUIRE(shape_of(p["kernel"]) == ks);
  Array probe = KernelProbe(ks).init(random::key(3), ones(x_shape))["params"]["kernel"].leaf();
  CHECK(allclose(p["kernel"].leaf(), probe, 0.0f));
  // variance_scaling's fan_in for that shape: in_axis -2 times the receptive field (every axis
  // but the last two), 4 * 5 * 27 = 540, so the kernel's std is about sqrt(1 / 540) ~ 0.043.
  const double sd = std::sqrt(mean(square(p["kernel"].leaf())).item<double>());
  CHECK(sd == doctest::Approx(std::sqrt(1.0 / 540)).epsilon(0.08));
  CHECK(allclose(p["bias"].leaf(), zeros({4, 5, 8}), 0.0f));
}

TEST_CASE("ConvLocal equals a loop over output positions (strides, padding, both dilations)") {
  Array x = astype(random::normal(random::key(1), {2, 5, 6, 3}), float64);
  struct Case {
    nn::ConvConfig cfg;
    Loop2d loop;
  };
  const std::vector<Case> cases{
      // Strides and explicit asymmetric padding.
      {{.features = 4,
        .kernel_size = {3, 2},
        .strides = {2, 1},
        .padding = std::vector<std::pair<i64, i64>>{{1, 0}, {0, 2}}},
       {.KH = 3, .KW = 2, .sh = 2, .sw = 1, .lo_h = 1, .hi_h = 0, .lo_w = 0, .hi_w = 2}},
      // Kernel dilation, VALID.
      {{.features = 2, .kernel_size = {2, 2}, .padding = "VALID", .kernel_dilation = {2, 3}},
       {.KH = 2, .KW = 2, .dh = 2, .dw = 3}},
      // Input dilation (zeros between input elements) with int padding 1 on every side.
      {{.features = 3,
        .kernel_size = {2, 3},
        .strides = {1, 2},
        .padding = 1,
        .input_dilation = {2, 1}},
       {.KH = 2, .KW = 3, .sw = 2, .ih = 2, .lo_h = 1, .hi_h = 1, .lo_w = 1, .hi_w = 1}},
      // SAME on 5 x 6 with a 3 x 3 window: one each side.
      {{.features = 2, .kernel_size = {3, 3}},
       {.KH = 3, .KW = 3, .lo_h = 1, .hi_h = 1, .lo_w = 1, .hi_w = 1}},
  };
  for (const Case& c : cases) {
    nn::ConvConfig cfg = c.cfg;
    cfg.param_dtype = float64;
    cfg.bias_init = nn::initializers::normal(1.0);  // biases that matter
    nn::ConvLocal layer(cfg);
    auto [y, v] = layer.init_with_output(random::key(2), x);
    const Shape os = c.loop.out_shape(x.shape(), cfg.features);
    REQUIRE(y.shape() == os);
    const Tree& p = v["params"];
    CHECK(shape_of(p["kernel"]) ==
          Shape{os[1], os[2], cfg.kernel_size[0] * cfg.kernel_size[1] * 3, cfg.features});
    CHECK(shape_of(p["bias"]) == Shape{os[1], os[2], cfg.features});
    CHECK(allclose(y, c.loop.run(x, p["kernel"].leaf(), p["bias"].leaf()), 1e-10f));
    // The lax function alone gives the same without the bias.
    ConvOptions o{.window_strides = cfg.strides,
                  .padding = nn::canonicalize_padding(cfg.padding, 2),
                  .lhs_dilation = cfg.input_dilation,
                  .rhs_dilation = cfg.kernel_dilation};
    CHECK(allclose(nn::conv_general_dilated_local(x, p["kernel"].leaf(), cfg.kernel_size, o),
                   y - p["bias"].leaf(), 1e-10f));
  }
}

TEST_CASE("conv_general_dilated_patches: each window flattened channel-major (c, then window)") {
  // x[0, h, w, c] = 100 c + 10 h + w: the value names its position.
  std::vector<float> xv;
  for (i64 h = 0; h < 3; ++h)
    for (i64 w = 0; w < 4; ++w)
      for (i64 c = 0; c < 2; ++c) xv.push_back(static_cast<float>(100 * c + 10 * h + w));
  Array x = array(xv, {1, 3, 4, 2});
  Array p = nn::conv_general_dilated_patches(x, {2, 2}, padded("VALID"));
  REQUIRE(p.shape() == Shape{1, 2, 3, 8});
  const auto pv = testing::values(p);
  for (i64 oh = 0; oh < 2; ++oh)
    for (i64 ow = 0; ow < 3; ++ow)
      for (i64 c = 0; c < 2; ++c)
        for (i64 kh = 0; kh < 2; ++kh)
          for (i64 kw = 0; kw < 2; ++kw)
            CHECK(pv[static_cast<std::size_t>((oh * 3 + ow) * 8 + c * 4 + kh * 2 + kw)] ==
                  static_cast<double>(100 * c + 10 * (oh + kh) + (ow + kw)));
}

TEST_CASE("ConvLocal with a Conv kernel tiled at every position equals Conv (every padding form)") {
  struct Case {
    Shape x;
    nn::ConvConfig cfg;
  };
  const std::vector<Case> cases{
      {{2, 6, 5, 3}, {.features = 4, .kernel_size = {3, 3}}},
      {{2, 6, 5, 3},
       {.features = 4, .kernel_size = {3, 2}, .strides = {2, 2}, .padding = "CIRCULAR"}},
      {{2, 6, 5, 3}, {.features = 2, .kernel_size = {3, 3}, .padding = "REFLECT"}},
      {{2, 7, 3}, {.features = 3, .kernel_size = {3}, .padding = "CAUSAL", .kernel_dilation = {2}}},
      {{2, 6, 5, 3}, {.features = 2, .kernel_size = {2, 2}, .padding = {1, 2}}},
      // Several batch dims, folded and restored; no batch dim, added and removed.
      {{2, 3, 5, 4, 2}, {.features = 2, .kernel_size = {2, 3}, .padding = "VALID"}},
      {{5, 4, 2}, {.features = 2, .kernel_size = {2, 2}}},
  };
  for (const Case& c : cases) {
    Array x = random::normal(random::key(4), c.x);
    Tree cv = nn::Conv(c.cfg).init(random::key(5), x);
    Array expected = nn::Conv(c.cfg).apply(cv, x);
    Tree lv = nn::ConvLocal(c.cfg).init(random::key(5), x);
    const Shape kshape = shape_of(lv["params"]["kernel"]);
    const Shape out_spatial(kshape.begin(), kshape.end() - 2);
    Array k = tile_conv_kernel(cv["params"]["kernel"].leaf(), out_spatial);
    Array b = tile_bias(cv["params"]["bias"].leaf(), out_spatial);
    REQUIRE(k.shape() == kshape);
    CHECK(allclose(nn::ConvLocal(c.cfg).apply(params(k, b), x), expected, 1e-5f));
  }
}

TEST_CASE("ConvLocal: gradients match finite differences; jit and vmap equal the eager call") {
  nn::ConvLocal layer({.features = 2,
                       .kernel_size = {2, 3},
                       .strides = {1, 2},
                       .padding = "SAME",
                       .param_dtype = float64});
  Array x = astype(random::normal(random::key(6), {2, 4, 5, 2}), float64);
  Tree v = layer.init(random::key(0), x);
  const Array k0 = v["params"]["kernel"].leaf(), b0 = v["params"]["bias"].leaf();
  auto run = [&](const Array& xx, const Array& k, const Array& b) {
    return layer.apply(params(k, b), xx);
  };
  testing::check_grads([&](const Arrays& a) { return run(a[0], a[1], a[2]); }, {x, k0, b0});

  Array eager = run(x, k0, b0);
  auto jrun = jit([&](const Array& xx, const Array& k) { return run(xx, k, b0); });
  CHECK(allclose(jrun(x, k0), eager, 1e-12f));
  CHECK(allclose(jrun(x * 2.0, k0), run(x * 2.0, k0, b0), 1e-12f));

  // vmap over a stack of kernels (one per example) equals calling each example alone.
  Array ks = stack({k0, k0 * 0.5 + 1.0});
  auto per_example = [&](const Array& xi, const Array& k) {
    return run(expand_dims(xi, 0), k, b0);
  };
  Array vy = vmap(per_example, {.in_axes = {0, 0}})(x, ks);
  for (i64 i = 0; i < 2; ++i) CHECK(allclose(vy[i], per_example(x[i], ks[i]), 1e-12f));
}

TEST_CASE("ConvLocal errors: feature groups, input rank, a kernel for another input size") {
  testing::check_error<NotImplementedError>(
      [] {
        nn::ConvLocal({.features = 4, .kernel_size = {3}, .feature_group_count = 2})
            .init(random::key(0), ones({1, 8, 4}));
      },
      {"ConvLocal", "conv_general_dilated_local", "feature_group_count != 1", "got `2`"});
  testing::check_error<ValueError>(
      [] {
        nn::ConvLocal({.features = 4, .kernel_size = {3, 3}}).init(random::key(0), ones({8, 3}));
      },
      {"ConvLocal", "rank at least 3", "got rank 2"});
  testing::check_error<ValueError>(
      [] {
        nn::ConvLocal({.features = 4, .kernel_size = {3, 3}, .padding = {1, 2, 3}})
            .init(random::key(0), ones({1, 5, 5, 3}));
      },
      {"Invalid padding format"});
  // The kernel depends on the input's spatial size: applying it to another size is Flax's
  // ScopeParamShapeError.
  nn::ConvLocal layer({.features = 2, .kernel_size = {3}});
  Tree v = layer.init(random::key(0), ones({1, 8, 3}));
  testing::check_error(
      [&] {
        layer.apply(v, ones({1, 9, 3}));
      },
      {"kernel", "expected to generate shape (9, 9, 2)", "(8, 9, 2)"});
  testing::check_error<ValueError>(
      [] {
        nn::conv_general_dilated_local(ones({1, 5, 3}), ones({5, 9, 2}), {3}, padded("VALID"));
      },
      {"conv_general_dilated_local", "(3, 9, 2)", "got rhs shape (5, 9, 2)"});
  testing::check_error<ValueError>(
      [] {
        nn::conv_general_dilated_patches(ones({1, 5, 3}), {3, 3});
      },
      {"conv_general_dilated_patches", "(1, 5, 3)"});
}

}  // namespace test_conv_local
