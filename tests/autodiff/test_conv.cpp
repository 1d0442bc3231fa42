// conv_general_dilated, reduce_window and the Flax pools: hand-computed values, a direct
// nested-loop reference, check_grads (float64) including grad of grad, vmap against loops, errors.
#include <doctest/doctest.h>

#include <limits>

#include "op_testing.hpp"

namespace test_conv {

using namespace linum;
using namespace linum::optest;
using linum::testing::check_grads;

namespace {

using i64 = std::int64_t;
using Pairs = std::vector<std::pair<i64, i64>>;

// ConvOptions with a few fields set (aggregate initialisation would leave the others unnamed).
template <class F>
ConvOptions with(F set) {
  ConvOptions o;
  set(o);
  return o;
}

struct Conv2d {
  i64 sh = 1, sw = 1;
  Pairs pad{{0, 0}, {0, 0}};
  i64 ldh = 1, ldw = 1, rdh = 1, rdw = 1, groups = 1;
  ConvOptions opts() const { return {{sh, sw}, Padding(pad), {ldh, ldw}, {rdh, rdw}, groups}; }
};

// The definition of a 2-D NHWC x HWIO convolution, written out as loops: output pixel (oh, ow)
// reads the base-dilated, padded input at oh*sh + kh*rdh - pad_lo.
Array conv2d_ref(const Array& x, const Array& w, const Conv2d& c) {
  const i64 N = x.shape(0), H = x.shape(1), W = x.shape(2), C = x.shape(3);
  const i64 KH = w.shape(0), KW = w.shape(1), I = w.shape(2), O = w.shape(3);
  const i64 Og = O / c.groups;
  const i64 OH =
      ((H - 1) * c.ldh + 1 + c.pad[0].first + c.pad[0].second - ((KH - 1) * c.rdh + 1)) / c.sh + 1;
  const i64 OW =
      ((W - 1) * c.ldw + 1 + c.pad[1].first + c.pad[1].second - ((KW - 1) * c.rdw + 1)) / c.sw + 1;
  const auto xv = values(x), wv = values(w);
  std::vector<double> out;
  for (i64 n = 0; n < N; ++n)
    for (i64 oh = 0; oh < OH; ++oh)
      for (i64 ow = 0; ow < OW; ++ow)
        for (i64 o = 0; o < O; ++o) {
          const i64 g = o / Og;
          double acc = 0;
          for (i64 kh = 0; kh < KH; ++kh)
            for (i64 kw = 0; kw < KW; ++kw) {
              const i64 ph = oh * c.sh + kh * c.rdh - c.pad[0].first,
                        pw = ow * c.sw + kw * c.rdw - c.pad[1].first;
              if (ph < 0 || pw < 0 || ph % c.ldh || pw % c.ldw || ph / c.ldh >= H ||
                  pw / c.ldw >= W)
                continue;
              for (i64 ci = 0; ci < I; ++ci)
                acc += xv[((n * H + ph / c.ldh) * W + pw / c.ldw) * C + g * I + ci] *
                       wv[((kh * KW + kw) * I + ci) * O + o];
            }
          out.push_back(acc);
        }
  return array(out, {N, OH, OW, O});
}

// reduce_window over the two spatial dims of an NHWC input, by loops (padding contributes the
// init value: 0 for sum, -inf for max).
Array pool_ref(const Array& x, bool is_max, i64 kh, i64 kw, i64 sh, i64 sw, Pairs pad) {
  const i64 N = x.shape(0), H = x.shape(1), W = x.shape(2), C = x.shape(3);
  const i64 OH = (H + pad[0].first + pad[0].second - kh) / sh + 1,
            OW = (W + pad[1].first + pad[1].second - kw) / sw + 1;
  const auto xv = values(x);
  std::vector<double> out;
  for (i64 n = 0; n < N; ++n)
    for (i64 oh = 0; oh < OH; ++oh)
      for (i64 ow = 0; ow < OW; ++ow)
        for (i64 c = 0; c < C; ++c) {
          double acc = is_max ? -std::numeric_limits<double>::infinity() : 0.0;
          for (i64 i = 0; i < kh; ++i)
            for (i64 j = 0; j < kw; ++j) {
              const i64 h = oh * sh + i - pad[0].first, ww = ow * sw + j - pad[1].first;
              if (h < 0 || ww < 0 || h >= H || ww >= W) continue;
              const double v = xv[((n * H + h) * W + ww) * C + c];
              acc = is_max ? std::max(acc, v) : acc + v;
            }
          out.push_back(acc);
        }
  return array(out, {N, OH, OW, C});
}

}  // namespace

TEST_CASE("conv_general_dilated: hand-computed 1-D and 2-D convolutions") {
  Array x = reshape(array({1.0f, 2.0f, 3.0f, 4.0f}), {1, 4, 1});
  Array w = reshape(array({1.0f, 0.0f, -1.0f}), {3, 1, 1});
  check_array(conv_general_dilated(x, w), {1, 2, 1}, float32, {-2, -2});
  ConvOptions same;
  same.padding = "SAME";
  check_array(conv_general_dilated(x, w, same), {1, 4, 1}, float32, {-2, -2, -2, 3});
  // 3x3 image of 1..9 against a 2x2 kernel of ones; two output channels (the second doubled).
  Array img = reshape(astype(arange(1, 10), float32), {1, 3, 3, 1});
  Array k = reshape(array({1.0f, 2.0f, 1.0f, 2.0f, 1.0f, 2.0f, 1.0f, 2.0f}), {2, 2, 1, 2});
  check_array(conv_general_dilated(img, k), {1, 2, 2, 2}, float32,
              {12, 24, 16, 32, 24, 48, 28, 56});
  // Stride 2 with SAME padding on 3x3: out ceil(3/2) = 2, total padding 1 at the end.
  ConvOptions s2;
  s2.window_strides = {2, 2};
  s2.padding = "SAME";
  check_array(conv_general_dilated(img, k, s2), {1, 2, 2, 2}, float32,
              {12, 24, 9, 18, 15, 30, 9, 18});
  // int32 convolutions run on the integer GEMM loop.
  check_array(conv_general_dilated(astype(img, int32), astype(k, int32)), {1, 2, 2, 2}, int32,
              {12, 24, 16, 32, 24, 48, 28, 56});
}

TEST_CASE(
    "conv_general_dilated matches the nested-loop reference: strides, padding, dilation, groups") {
  std::vector<std::pair<Conv2d, Shape>> cases;  // options and kernel shape (input has 4 channels)
  cases.push_back({Conv2d{}, {3, 3, 4, 5}});
  cases.push_back({Conv2d{2, 1}, {3, 2, 4, 3}});
  cases.push_back({Conv2d{1, 2, {{1, 2}, {0, 1}}}, {2, 3, 4, 2}});
  cases.push_back({Conv2d{1, 1, {{1, 1}, {1, 1}}, 1, 1, 2, 2}, {2, 2, 4, 3}});     // rhs dilation
  cases.push_back({Conv2d{1, 1, {{0, 0}, {1, 0}}, 2, 3, 1, 1}, {2, 2, 4, 2}});     // lhs dilation
  cases.push_back({Conv2d{2, 2, {{2, 1}, {1, 2}}, 2, 1, 1, 2}, {3, 2, 4, 2}});     // all together
  cases.push_back({Conv2d{1, 1, {{1, 1}, {1, 1}}, 1, 1, 1, 1, 2}, {3, 3, 2, 6}});  // 2 groups
  cases.push_back({Conv2d{2, 1, {{0, 1}, {1, 1}}, 1, 1, 1, 1, 4}, {2, 2, 1, 4}});  // depthwise
  cases.push_back({Conv2d{1, 1, {{-1, 0}, {0, -1}}}, {1, 1, 4, 3}});  // negative padding
  cases.push_back({Conv2d{}, {1, 1, 4, 3}});                          // 1x1 (no im2col)
  cases.push_back({Conv2d{1, 1, {{0, 0}, {0, 0}}, 1, 1, 1, 1, 2}, {1, 1, 2, 4}});  // 1x1 grouped
  Array x = data({2, 6, 5, 4}, 1);
  for (const auto& [c, ks] : cases) {
    Array w = data(ks, 2);
    INFO("kernel " << shape_str(ks) << " strides " << c.sh << "," << c.sw << " groups "
                   << c.groups);
    Array got = conv_general_dilated(x, w, c.opts());
    check_close(got, conv2d_ref(x, w, c), 1e-12);
    check_close(conv_general_dilated(astype(x, float32), astype(w, float32), c.opts()),
                astype(conv2d_ref(x, w, c), float32), 1e-4);
  }
  // SAME (and SAME_LOWER) padding as lax computes it: 7 wide, window 3 dilated by 2, stride 2.
  Array x7 = data({1, 7, 7, 4}, 3), w3 = data({3, 3, 4, 2}, 4);
  ConvOptions o{{2, 2}, "SAME", {}, {2, 2}, 1};
  check_close(conv_general_dilated(x7, w3, o),
              conv2d_ref(x7, w3, Conv2d{2, 2, {{2, 2}, {2, 2}}, 1, 1, 2, 2}), 1e-12);
  Array x6 = data({1, 6, 6, 4}, 5);
  o.padding = "SAME";  // pad total 5 - 6 + 2*2 = 3: (1, 2)
  check_close(conv_general_dilated(x6, w3, o),
              conv2d_ref(x6, w3, Conv2d{2, 2, {{1, 2}, {1, 2}}, 1, 1, 2, 2}), 1e-12);
  o.padding = "SAME_LOWER";
  check_close(conv_general_dilated(x6, w3, o),
              conv2d_ref(x6, w3, Conv2d{2, 2, {{2, 1}, {2, 1}}, 1, 1, 2, 2}), 1e-12);
}

TEST_CASE(
    "conv_general_dilated works for 1 and 3 spatial dims (checked against the 2-D reference)") {
  Array x = data({2, 7, 3}, 6), w = data({3, 3, 4}, 7);
  ConvOptions o1{{2}, Padding(Pairs{{1, 2}}), {}, {2}, 1};
  Array r1 = conv_general_dilated(x, w, o1);
  Array ref = conv2d_ref(reshape(x, {2, 7, 1, 3}), reshape(w, {3, 1, 3, 4}),
                         Conv2d{2, 1, {{1, 2}, {0, 0}}, 1, 1, 2, 1});
  check_close(r1, reshape(ref, {2, ref.shape(1), 4}), 1e-12);
  // 3-D: a singleton depth on both sides reduces to the 2-D case.
  Array x3 = data({2, 1, 5, 6, 4}, 8), w3 = data({1, 3, 2, 2, 6}, 9);
  ConvOptions o3{{1, 2, 1}, "SAME", {}, {1, 1, 2}, 2};
  Array r3 = conv_general_dilated(x3, w3, o3);
  Array ref3 = conv2d_ref(reshape(x3, {2, 5, 6, 4}), reshape(w3, {3, 2, 2, 6}),
                          Conv2d{2, 1, {{1, 1}, {1, 1}}, 1, 1, 1, 2, 2});
  check_close(r3, reshape(ref3, {2, 1, 3, 6, 6}), 1e-12);
  // A true 3-D window over depth 3 equals the sum of 2-D convolutions of the depth slices.
  Array xd = data({1, 3, 4, 4, 2}, 10), wd = data({3, 2, 2, 2, 3}, 11);
  Array rd = conv_general_dilated(xd, wd);
  Array acc = zeros({1, 3, 3, 3}, float64);
  for (int d = 0; d < 3; ++d)
    acc = add(acc, conv2d_ref(index_axis(xd, 1, d), index_axis(wd, 0, d), Conv2d{}));
  check_close(rd, reshape(acc, {1, 1, 3, 3, 3}), 1e-12);
}

TEST_CASE("check_grads of conv_general_dilated (float64), and grad of grad") {
  Array x = data({2, 5, 4, 4}, 12);
  const std::vector<std::pair<ConvOptions, Shape>> cases = {
      {ConvOptions{}, {3, 3, 4, 3}},
      {ConvOptions{{2, 1}, Padding(Pairs{{1, 2}, {0, 1}}), {1, 2}, {2, 1}, 1}, {2, 3, 4, 2}},
      {ConvOptions{{1, 2}, "SAME", {}, {}, 2}, {3, 2, 2, 4}},
      {ConvOptions{{1, 1}, "VALID", {}, {}, 4}, {1, 1, 1, 4}},
  };
  for (const auto& [o, ks] : cases) {
    Array w = data(ks, 13);
    auto f = [o = o](const Arrays& a) { return conv_general_dilated(a[0], a[1], o); };
    check_grads(f, Arrays{x, w});
    // Second order: the transposes' own rules (both cotangent paths of each transpose).
    auto loss = [o = o](const Array& xx, const Array& ww) {
      return sum(tanh(conv_general_dilated(xx, ww, o)));
    };
    check_grads([&](const Arrays& a) { return std::get<0>(grad(loss, argnums<0, 1>)(a[0], a[1])); },
                Arrays{x, w});
    check_grads([&](const Arrays& a) { return std::get<1>(grad(loss, argnums<0, 1>)(a[0], a[1])); },
                Arrays{x, w});
  }
}

TEST_CASE("vmap of conv_general_dilated and of its gradients equals the loop over examples") {
  auto conv = [](const ConvOptions& o) {
    return [o](const Array& x, const Array& w) { return conv_general_dilated(x, w, o); };
  };
  ConvOptions plain{{1, 2}, "SAME", {}, {}, 1},
      grouped{{2, 1}, Padding(Pairs{{1, 0}, {0, 1}}), {1, 2}, {1, 1}, 2};
  Array xs = data({3, 2, 5, 4, 4}, 14), x = data({2, 5, 4, 4}, 15);
  Array ws = data({3, 2, 2, 4, 4}, 16), wg = data({3, 2, 2, 2, 4}, 17);
  check_vmap(conv(plain), axes({0, kNone}), xs, index_axis(ws, 0, 0));  // the batch joins N
  check_vmap(conv(plain), axes({kNone, 0}), x, ws);                     // joins the out features
  check_vmap(conv(plain), axes({0, 0}), xs, ws);                        // feature groups
  check_vmap(conv(grouped), axes({kNone, 0}), x, wg);
  check_vmap(conv(grouped), axes({0, 0}, 2), xs, wg);
  check_vmap(conv(plain), axes({2, 4}, 1), moveaxis(xs, 0, 2), moveaxis(ws, 0, 4));
  // Per-example gradients hit the batching rules of both transposes.
  for (const ConvOptions& o : {plain, grouped}) {
    auto loss = [o](const Array& xx, const Array& ww) {
      return sum(square(conv_general_dilated(xx, ww, o)));
    };
    Array w = index_axis(o.feature_group_count == 1 ? ws : wg, 0, 0);
    check_vmap([&](const Array& xx) { return grad(loss, argnums<1>)(xx, w); }, axes({0}), xs);
    check_vmap([&](const Array& xx) { return grad(loss)(xx, w); }, axes({0}), xs);
    check_vmap([&](const Array& ww) { return grad(loss)(x, ww); }, axes({0}),
               o.feature_group_count == 1 ? ws : wg);
    check_vmap([&](const Array& xx, const Array& ww) { return grad(loss, argnums<1>)(xx, ww); },
               axes({0, 0}), xs, o.feature_group_count == 1 ? ws : wg);
  }
}

TEST_CASE("conv_general_dilated errors name the op and the shapes") {
  Array x = zeros({1, 5, 5, 4}), w = zeros({3, 3, 4, 6});
  auto g3 = with([](ConvOptions& o) { o.feature_group_count = 3; });
  auto g2 = with([](ConvOptions& o) { o.feature_group_count = 2; });
  auto one_stride = with([](ConvOptions& o) { o.window_strides = {1}; });
  auto zero_stride = with([](ConvOptions& o) { o.window_strides = {0, 1}; });
  auto one_pad = with([](ConvOptions& o) { o.padding = Padding(Pairs{{1, 1}}); });
  auto full = with([](ConvOptions& o) { o.padding = "FULL"; });
  LINUM_CHECK_ERROR(
      conv_general_dilated(x, w, g3), ValueError,
      "conv_general_dilated: feature_group_count 3 must divide the lhs feature dimension 4; "
      "lhs shape (1, 5, 5, 4), rhs shape (3, 3, 4, 6)");
  LINUM_CHECK_ERROR(conv_general_dilated(x, zeros({3, 3, 3, 6})), ValueError,
                    "lhs feature dimension 4 must equal the rhs input feature dimension 3 times "
                    "feature_group_count 1");
  LINUM_CHECK_ERROR(conv_general_dilated(x, zeros({3, 3, 2, 3}), g2), ValueError,
                    "feature_group_count 2 must divide the rhs output feature dimension 3");
  LINUM_CHECK_ERROR(
      conv_general_dilated(x, zeros({3, 3, 6})), ValueError,
      "lhs and rhs must have the same rank, got lhs shape (1, 5, 5, 4), rhs shape (3, 3, 6)");
  LINUM_CHECK_ERROR(conv_general_dilated(zeros({5, 4}), zeros({3, 4})), ValueError,
                    "lhs must have rank at least 3 (N, spatial..., C)");
  LINUM_CHECK_ERROR(conv_general_dilated(x, w, one_stride), ValueError,
                    "window_strides (1,) must have 2 entries, one per window dimension");
  LINUM_CHECK_ERROR(conv_general_dilated(x, w, zero_stride), ValueError,
                    "window_strides must be positive");
  LINUM_CHECK_ERROR(
      conv_general_dilated(x, w, one_pad), ValueError,
      "explicit padding must have one (low, high) pair per window dimension (2), got ((1, 1),)");
  LINUM_CHECK_ERROR(conv_general_dilated(x, w, full), ValueError, "unknown padding 'FULL'");
  LINUM_CHECK_ERROR(
      conv_general_dilated(x, zeros({0, 3, 4, 6})), ValueError,
      "rhs spatial dimensions must be positive; lhs shape (1, 5, 5, 4), rhs shape (0, 3, 4, 6)");
}

TEST_CASE("reduce_window, avg_pool and max_pool match the loop reference") {
  Array x = data({2, 5, 6, 3}, 20);
  check_close(avg_pool(x, {2, 2}, {2, 2}),
              multiply(pool_ref(x, false, 2, 2, 2, 2, {{0, 0}, {0, 0}}), 0.25), 1e-12);
  check_close(max_pool(x, {2, 2}, {2, 2}), pool_ref(x, true, 2, 2, 2, 2, {{0, 0}, {0, 0}}), 1e-12);
  // SAME, stride 2 on 5x6 with a 3x2 window: out 3x3, padding (1, 1) and (0, 0) by lax's rule.
  check_close(max_pool(x, {3, 2}, {2, 2}, "SAME"), pool_ref(x, true, 3, 2, 2, 2, {{1, 1}, {0, 0}}),
              1e-12);
  // count_include_pad=True: padded windows still divide by the full window size.
  check_close(avg_pool(x, {3, 3}, {1, 1}, "SAME"),
              multiply(pool_ref(x, false, 3, 3, 1, 1, {{1, 1}, {1, 1}}), 1.0 / 9), 1e-12);
  check_close(avg_pool(x, {2, 3}, {}, Padding(Pairs{{1, 0}, {2, 1}})),
              multiply(pool_ref(x, false, 2, 3, 1, 1, {{1, 0}, {2, 1}}), 1.0 / 6), 1e-12);
  // Hand-computed: 1-D pools over (batch, length, features) and an unbatched input.
  Array s = reshape(array({1.0f, 5.0f, 2.0f, 4.0f, 3.0f}), {1, 5, 1});
  check_array(max_pool(s, {2}), {1, 4, 1}, float32, {5, 5, 4, 4});
  check_array(avg_pool(s, {2}, {2}), {1, 2, 1}, float32, {3, 3});
  check_array(max_pool(reshape(s, {5, 1}), {3}, {2}), {2, 1}, float32, {5, 4});
  // reduce_window itself, with windows over every dim (including batch and features).
  Array m = reshape(astype(arange(12), float32), {3, 4});
  check_array(reduce_window(m, WindowReduce::sum, {2, 2}, {1, 2}), {2, 2}, float32,
              {10, 18, 26, 34});
  check_array(reduce_window(m, WindowReduce::max, {3, 1}, {1, 1}, Padding(Pairs{{1, 0}, {0, 0}})),
              {2, 4}, float32, {4, 5, 6, 7, 8, 9, 10, 11});
  check_array(reduce_window(astype(m, int32), WindowReduce::max, {2, 4}, {}), {2, 1}, int32,
              {7, 11});
}

TEST_CASE("avg_pool with count_include_pad=false divides by the non-padding count per window") {
  // Hand-computed, 1-D: [1, 5, 2, 4, 3] with window 3, SAME (pads (1, 1)): the edge windows hold
  // two inputs, the inner ones three.
  Array s = reshape(array({1.0, 5.0, 2.0, 4.0, 3.0}), {1, 5, 1});
  check_array(avg_pool(s, {3}, {1}, "SAME", false), {1, 5, 1}, float64,
              {6.0 / 2, 8.0 / 3, 11.0 / 3, 9.0 / 3, 7.0 / 2});
  // 2-D against the loop reference: each window's sum over the count of its in-bounds pixels
  // (pool_ref of ones gives that count), with explicit asymmetric padding and several batch dims.
  Array x = data({2, 5, 6, 3}, 23);
  auto counts = [](const Pairs& pad, i64 wh, i64 ww, i64 sh, i64 sw) {
    return pool_ref(ones({1, 5, 6, 1}, float64), false, wh, ww, sh, sw, pad);
  };
  const Pairs same33{{1, 1}, {1, 1}};
  check_close(avg_pool(x, {3, 3}, {1, 1}, "SAME", false),
              divide(pool_ref(x, false, 3, 3, 1, 1, same33), counts(same33, 3, 3, 1, 1)), 1e-12);
  const Pairs explicit_pad{{1, 0}, {2, 1}};
  check_close(
      avg_pool(x, {2, 3}, {2, 1}, Padding(explicit_pad), false),
      divide(pool_ref(x, false, 2, 3, 2, 1, explicit_pad), counts(explicit_pad, 2, 3, 2, 1)),
      1e-12);
  Array xb = reshape(x, {1, 2, 5, 6, 3});
  check_close(avg_pool(xb, {3, 3}, {1, 1}, "SAME", false),
              reshape(avg_pool(x, {3, 3}, {1, 1}, "SAME", false), {1, 2, 5, 6, 3}), 1e-12);
  // Without padding every window is full: the same as count_include_pad=true.
  check_close(avg_pool(x, {2, 2}, {2, 2}, "VALID", false), avg_pool(x, {2, 2}, {2, 2}), 1e-12);
  // The gradient: each window's cotangent spread over its inputs, divided by the window's count.
  // d/dx_i sum_w (sum of window w)/count_w = sum over windows w holding i of 1/count_w.
  check_array(grad([](const Array& v) { return sum(avg_pool(v, {3}, {1}, "SAME", false)); })(s),
              {1, 5, 1}, float64,
              {1.0 / 2 + 1.0 / 3, 1.0 / 2 + 2.0 / 3, 1.0, 1.0 / 2 + 2.0 / 3, 1.0 / 2 + 1.0 / 3});
  check_grads([](const Array& v) { return avg_pool(v, {2, 3}, {2, 1}, "SAME", false); }, x);
}

TEST_CASE("max_pool routes the gradient to the first maximum of each window") {
  Array s = reshape(array({1.0, 5.0, 2.0, 5.0, 3.0}), {1, 5, 1});
  // Windows (1,5) (5,2) (2,5) (5,3): the two 5s take two windows each (ties: the first one).
  check_array(grad([](const Array& v) { return sum(max_pool(v, {2})); })(s), {1, 5, 1}, float64,
              {0, 2, 0, 2, 0});
  Array t = reshape(array({3.0, 3.0, 1.0}), {1, 3, 1});  // the tie (3, 3) goes to the first 3
  check_array(grad([](const Array& v) { return sum(max_pool(v, {2})); })(t), {1, 3, 1}, float64,
              {1, 1, 0});
  // avg_pool spreads each window's cotangent over the window.
  check_array(grad([](const Array& v) { return sum(avg_pool(v, {2}, {1}, "SAME")); })(s), {1, 5, 1},
              float64, {0.5, 1, 1, 1, 1});
  // The JVP of max picks the same element.
  auto [y, ty] = jvp([](const Array& v) { return max_pool(v, {2}); }, std::tuple{s},
                     std::tuple{reshape(array({10.0, 20.0, 30.0, 40.0, 50.0}), {1, 5, 1})});
  check_array(ty, {1, 4, 1}, float64, {20, 20, 40, 40});
}

TEST_CASE("check_grads of the pools and reduce_window (float64), and grad of grad") {
  Array x = data({2, 5, 6, 3}, 21);
  check_grads([](const Array& v) { return avg_pool(v, {2, 3}, {2, 1}, "SAME"); }, x);
  check_grads([](const Array& v) { return max_pool(v, {3, 2}, {2, 2}, "SAME"); }, x);
  check_grads(
      [](const Array& v) {
        return reduce_window(v, WindowReduce::sum, {2, 2, 1, 2}, {1, 2, 1, 1});
      },
      x);
  check_grads(
      [](const Array& v) {
        return reduce_window(v, WindowReduce::max, {1, 2, 2, 3}, {1, 1, 2, 1}, "SAME");
      },
      x);
  auto loss = [](const Array& v) {
    return sum(square(max_pool(v, {2, 2}, {1, 1}))) + sum(tanh(avg_pool(v, {2, 2})));
  };
  check_grads([&](const Array& v) { return grad(loss)(v); }, x);
}

TEST_CASE("vmap of the pools and their gradients equals the loop over examples") {
  Array xs = data({3, 2, 5, 6, 2}, 22);
  check_vmap([](const Array& v) { return avg_pool(v, {2, 2}, {2, 1}, "SAME"); }, axes({0}), xs);
  check_vmap([](const Array& v) { return max_pool(v, {3, 2}, {1, 2}); }, axes({0}), xs);
  check_vmap([](const Array& v) { return max_pool(v, {2, 2}); }, axes({3}, 2), moveaxis(xs, 0, 3));
  auto loss = [](const Array& v) {
    return sum(square(max_pool(v, {2, 2}))) + sum(avg_pool(v, {3, 3}, {}, "SAME"));
  };
  check_vmap([&](const Array& v) { return grad(loss)(v); }, axes({0}), xs);
  // A batched cotangent against an unbatched operand: vjp of max_pool mapped over cotangents.
  Array x = index_axis(xs, 0, 0);
  auto [y, pull] = vjp([](const Array& v) { return max_pool(v, {2, 2}); }, x);
  Array cts = data({4, 2, 4, 5, 2}, 23);
  check_vmap([&](const Array& c) { return std::get<0>(pull(c)); }, axes({0}), cts);
}

TEST_CASE("pooling errors name the op and the shapes") {
  LINUM_CHECK_ERROR(
      avg_pool(zeros({28, 28}), {2, 2}), ValueError,
      "avg_pool: window_shape (2, 2) needs an input of rank at least 3 (batch..., window dims..., "
      "features), got shape (28, 28)");
  LINUM_CHECK_ERROR(max_pool(zeros({1, 4, 4, 1}), {2, 2}, {2}), ValueError,
                    "max_pool: strides (2,) must have as many entries as window_shape (2, 2)");
  LINUM_CHECK_ERROR(
      max_pool(zeros({1, 4, 4, 1}), {2, 2}, {}, Padding(Pairs{{1, 1}})), ValueError,
      "max_pool: padding ((1, 1),) must have one (low, high) pair per window dimension (2)");
  LINUM_CHECK_ERROR(
      reduce_window(zeros({4, 4}), WindowReduce::sum, {2}, {1}), ValueError,
      "reduce_window: window_dimensions (2,) must have one entry per dimension of the operand of "
      "shape (4, 4)");
  LINUM_CHECK_ERROR(reduce_window(zeros({4, 4}), WindowReduce::max, {2, 0}, {}), ValueError,
                    "window_dimensions must be positive");
}

}  // namespace test_conv
