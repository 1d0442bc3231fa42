// Attention: dot_product_attention against an explicit softmax(q k^T / sqrt(d)) v loop with the
// mask and bias applied; the masks; DenseGeneral's flat kernel init; MultiHeadDotProductAttention
// and SelfAttention's parameter trees and outputs from their params by hand; the decode cache
// equal to the full causal pass; dropout; gradients against finite differences.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include <linum/linum.hpp>
#include <linum/nn/dense_general.hpp>
#include <linum/nn/nn.hpp>

#include "../autodiff/check_grads.hpp"
#include "nn_testing.hpp"
#include "support/testing.hpp"

namespace test_attention {

using namespace linum;
using lift::Filter;
using testing::allclose;
using testing::shape_of;
using testing::sorted_keys;
using testing::values;

namespace {
// out[b, i, h, :] = sum_j softmax_j(q[b,i,h]·k[b,j,h] / sqrt(D) + bias[b,h,i,j], masked) v[b,j,h]
// for q (B, Q, H, D), k/v (B, K, H, D), mask/bias (B, H, Q, K) or empty.
std::vector<double> attention_loop(const Array& q, const Array& k, const Array& v,
                                   const std::vector<double>& mask,
                                   const std::vector<double>& bias) {
  const auto B = q.shape(0), Q = q.shape(1), H = q.shape(2), D = q.shape(3), K = k.shape(1);
  const auto qv = values(q), kv = values(k), vv = values(v);
  std::vector<double> out(static_cast<std::size_t>(B * Q * H * D), 0.0);
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t h = 0; h < H; ++h)
      for (std::int64_t i = 0; i < Q; ++i) {
        std::vector<double> logit(static_cast<std::size_t>(K));
        double mx = -1e300;
        for (std::int64_t j = 0; j < K; ++j) {
          double s = 0;
          for (std::int64_t d = 0; d < D; ++d)
            s += qv[((b * Q + i) * H + h) * D + d] * kv[((b * K + j) * H + h) * D + d];
          s /= std::sqrt(double(D));
          const std::size_t mi = ((b * H + h) * Q + i) * K + j;
          if (!bias.empty()) s += bias[mi];
          if (!mask.empty() && mask[mi] == 0) s = std::numeric_limits<float>::lowest();
          logit[j] = s;
          mx = std::max(mx, s);
        }
        double z = 0;
        for (auto& l : logit) z += (l = std::exp(l - mx));
        for (std::int64_t j = 0; j < K; ++j)
          for (std::int64_t d = 0; d < D; ++d)
            out[((b * Q + i) * H + h) * D + d] += logit[j] / z * vv[((b * K + j) * H + h) * D + d];
      }
  return out;
}
void check_close(const std::vector<double>& a, const std::vector<double>& b, double tol = 1e-5) {
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) CHECK(a[i] == doctest::Approx(b[i]).epsilon(tol));
}
}  // namespace

TEST_CASE("dot_product_attention equals softmax(q k^T / sqrt(d) + bias, masked) v by a loop") {
  const std::int64_t B = 2, Q = 3, K = 4, H = 2, D = 5;
  Array q = random::normal(random::key(1), {B, Q, H, D});
  Array k = random::normal(random::key(2), {B, K, H, D});
  Array v = random::normal(random::key(3), {B, K, H, D});
  check_close(values(nn::dot_product_attention(q, k, v)), attention_loop(q, k, v, {}, {}));
  // A mask with one fully masked query row (it attends uniformly, as Flax's finfo.min gives).
  Array mask = random::bernoulli(random::key(4), 0.6, {B, H, Q, K});
  Array bias = random::normal(random::key(5), {B, H, Q, K});
  Array y = nn::dot_product_attention(q, k, v, {.bias = bias, .mask = mask});
  check_close(values(y), attention_loop(q, k, v, values(mask), values(bias)));
  Array w = nn::dot_product_attention_weights(q, k, {.mask = mask});
  CHECK(w.shape() == Shape{B, H, Q, K});
  CHECK(allclose(sum(w, -1), ones({B, H, Q}), 1e-5f));
  // Masked positions get (numerically) zero weight wherever a row has an unmasked entry.
  Array any_row = any(mask, -1, true);
  CHECK(all(logical_or(logical_or(mask, logical_not(broadcast_to(any_row, mask.shape()))),
                       less(w, full_like(w, 1e-30))))
            .item<bool>());
  CHECK_THROWS_AS(nn::dot_product_attention(q, random::normal(random::key(6), {B, K, H, 4}), v),
                  ValueError);
}

TEST_CASE("make_causal_mask, make_attention_mask and combine_masks give Flax's shapes and values") {
  Array x = ones({2, 4});
  Array c = nn::make_causal_mask(x);
  CHECK(c.shape() == Shape{2, 1, 4, 4});
  CHECK(c.dtype() == float32);
  const auto cv = values(c);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) CHECK(cv[static_cast<std::size_t>(i * 4 + j)] == (j <= i ? 1 : 0));
  // A padding mask: token id 0 is padding; pairs with a padding token are masked.
  Array tokens = array(std::vector<std::int32_t>{5, 3, 0, 7, 0, 0}, {2, 3});
  Array pad = nn::make_attention_mask(greater(tokens, 0), greater(tokens, 0));
  CHECK(pad.shape() == Shape{2, 1, 3, 3});
  const auto pv = values(pad);
  CHECK(pv[0 * 3 + 1] == 1);  // (0, 1) both real
  CHECK(pv[0 * 3 + 2] == 0);  // key 2 is padding
  CHECK(pv[9 + 0] == 1);
  CHECK(pv[9 + 1] == 0);
  CHECK(nn::make_causal_mask(x, 2).shape() == Shape{1, 1, 2, 1, 4, 4});
  auto both = nn::combine_masks({nn::make_causal_mask(ones({2, 3})), std::nullopt, pad});
  REQUIRE(both.has_value());
  CHECK(allclose(*both, nn::make_causal_mask(ones({2, 3})) * pad, 0.0f));
  CHECK_FALSE(nn::combine_masks({std::nullopt}).has_value());
  CHECK_THROWS_AS(nn::combine_masks({pad, ones({3, 3})}), ValueError);
}

TEST_CASE("DenseGeneral: kernel (in, *features) drawn as the flat (in, prod features) matrix") {
  Array x = random::normal(random::key(7), {2, 3, 6});
  auto [y, v] = nn::DenseGeneral({.features = {2, 4}}).init_with_output(random::key(0), x);
  CHECK(shape_of(v["params"]["kernel"]) == Shape{6, 2, 4});
  CHECK(shape_of(v["params"]["bias"]) == Shape{2, 4});
  CHECK(y.shape() == Shape{2, 3, 2, 4});
  // The same draw as Dense(8) (fan_in 6, not 6 * 2 of the unflattened shape).
  Tree dv = nn::Dense(8).init(random::key(0), x);
  CHECK(
      allclose(reshape(v["params"]["kernel"].leaf(), {6, 8}), dv["params"]["kernel"].leaf(), 0.0f));
  CHECK(allclose(reshape(y, {2, 3, 8}), nn::Dense(8).apply(dv, x), 1e-5f));
  // Contracting the last two axes.
  Array z = random::normal(random::key(8), {2, 3, 2, 4});
  auto [yo, vo] =
      nn::DenseGeneral({.features = {5}, .axis = {-2, -1}}).init_with_output(random::key(0), z);
  CHECK(shape_of(vo["params"]["kernel"]) == Shape{2, 4, 5});
  CHECK(allclose(yo,
                 matmul(reshape(z, {2, 3, 8}), reshape(vo["params"]["kernel"].leaf(), {8, 5})) +
                     vo["params"]["bias"].leaf(),
                 1e-5f));
  CHECK_THROWS_AS(nn::DenseGeneral({.features = {5}, .batch_dims = {1}}).init(random::key(0), z),
                  ValueError);
}

TEST_CASE("MultiHeadDotProductAttention: Flax's params; output from the params by hand") {
  const std::int64_t B = 2, L = 3, S = 4, F = 6, H = 2, D = 4, Fo = 5;
  Array xq = random::normal(random::key(9), {B, L, F});
  Array xkv = random::normal(random::key(10), {B, S, F});
  nn::MultiHeadDotProductAttention mha({.num_heads = H, .qkv_features = H * D, .out_features = Fo});
  auto [y, v] = mha.init_with_output(random::key(0), xq, xkv);
  const Tree& p = v["params"];
  CHECK(sorted_keys(p) == std::vector<std::string>{"key", "out", "query", "value"});
  for (const char* n : {"query", "key", "value"}) {
    CHECK(shape_of(p[n]["kernel"]) == Shape{F, H, D});
    CHECK(shape_of(p[n]["bias"]) == Shape{H, D});
  }
  CHECK(shape_of(p["out"]["kernel"]) == Shape{H, D, Fo});
  CHECK(shape_of(p["out"]["bias"]) == Shape{Fo});
  CHECK(y.shape() == Shape{B, L, Fo});
  auto proj = [&](const char* n, const Array& x, std::int64_t len) {
    return reshape(matmul(x, reshape(p[n]["kernel"].leaf(), {F, H * D})) +
                       reshape(p[n]["bias"].leaf(), {H * D}),
                   {B, len, H, D});
  };
  auto att =
      attention_loop(proj("query", xq, L), proj("key", xkv, S), proj("value", xkv, S), {}, {});
  Array a = reshape(array(att, {B, L, H, D}), {B, L, H * D});
  Array ref = matmul(astype(a, float32), reshape(p["out"]["kernel"].leaf(), {H * D, Fo})) +
              p["out"]["bias"].leaf();
  CHECK(allclose(y, ref, 1e-4f));
  // inputs_v defaults to inputs_k, inputs_k to inputs_q; SelfAttention is the latter.
  CHECK(allclose(mha.apply(v, xq, xkv, xkv), y));
  Tree vs = nn::SelfAttention({.num_heads = H, .qkv_features = H * D, .out_features = Fo})
                .init(random::key(0), xq);
  CHECK(allclose(
      nn::SelfAttention({.num_heads = H, .qkv_features = H * D, .out_features = Fo}).apply(vs, xq),
      mha.apply(vs, xq)));
  CHECK_THROWS_AS(nn::MultiHeadDotProductAttention(4).init(random::key(0), xq), ValueError);
  CHECK_THROWS_AS(mha.apply(v, xq, std::nullopt, xkv), ValueError);
}

TEST_CASE("MultiHeadDotProductAttention decode: the cached one-token steps equal the causal pass") {
  const std::int64_t B = 2, L = 5, F = 8, H = 2;
  Array x = random::normal(random::key(11), {B, L, F});
  nn::SelfAttention full({.num_heads = H});
  Tree v = full.init(random::key(0), x);
  Array causal = nn::make_causal_mask(ones({B, L}));
  Array y_full = full.apply(v, x, nn::AttentionCallArgs{.mask = causal});
  // The cache is sized by an init on the full-length input.
  nn::SelfAttention dec({.num_heads = H, .decode = true});
  Tree cache = dec.init(random::key(0), x)["cache"];
  CHECK(shape_of(cache["cached_key"]) == Shape{B, L, H, F / H});
  CHECK(shape_of(cache["cached_value"]) == Shape{B, L, H, F / H});
  CHECK(cache["cache_index"].leaf().item<std::int32_t>() == 0);
  for (std::int64_t t = 0; t < L; ++t) {
    Array xt = slice(x, {{}, {t, t + 1}});
    auto [yt, mut] = dec.apply(Tree{{"params", v["params"]}, {"cache", cache}}, xt,
                               nn::AttentionCallArgs{}, {.mutable_ = Filter{"cache"}});
    CHECK(allclose(yt, slice(y_full, {{}, {t, t + 1}}), 1e-5f));
    cache = mut["cache"];
    CHECK(cache["cache_index"].leaf().item<std::int32_t>() == t + 1);
  }
  // A wrong step shape is a clear error.
  CHECK_THROWS_AS(dec.apply(Tree{{"params", v["params"]}, {"cache", cache}}, x,
                            nn::AttentionCallArgs{}, {.mutable_ = Filter{"cache"}}),
                  ValueError);
}

TEST_CASE("attention dropout: needs deterministic; broadcast mask shared over batch and heads") {
  Array x = random::normal(random::key(12), {2, 4, 6});
  nn::SelfAttention drop({.num_heads = 2, .dropout_rate = 0.5});
  Tree v = drop.init(random::key(0), x, nn::AttentionCallArgs{.deterministic = true});
  Array det = drop.apply(v, x, nn::AttentionCallArgs{.deterministic = true});
  CHECK(allclose(det, nn::SelfAttention(2).apply(v, x)));
  CHECK_THROWS_AS(drop.apply(v, x), ValueError);
  Array rnd = drop.apply(v, x, nn::AttentionCallArgs{.deterministic = false},
                         lift::Rngs{{"dropout", random::key(1)}});
  CHECK_FALSE(allclose(rnd, det, 1e-3f));
  // The weights' dropout: kept entries scaled by 1 / keep_prob, the same pattern in every
  // batch element and head.
  Array q = random::normal(random::key(13), {2, 3, 2, 4});
  Array w0 = nn::dot_product_attention_weights(q, q);
  Array w1 = nn::dot_product_attention_weights(
      q, q, {.dropout_rng = random::key(2), .dropout_rate = 0.5, .deterministic = false});
  Array ratio = w1 / w0;
  CHECK(all(logical_or(less(abs(ratio), full_like(ratio, 1e-6)),
                       less(abs(ratio - 2.0f), full_like(ratio, 1e-4))))
            .item<bool>());
  CHECK(allclose(ratio, broadcast_to(slice(ratio, {{0, 1}, {0, 1}}), ratio.shape()), 1e-4f));
}

TEST_CASE("attention: sow_weights stores the weights; gradients match finite differences") {
  Array x = random::normal(random::key(14), {2, 3, 4});
  nn::SelfAttention sa(2);
  Tree v = sa.init(random::key(0), x);
  auto [y, st] = sa.apply(v, x, nn::AttentionCallArgs{.sow_weights = true},
                          {.mutable_ = Filter{"intermediates"}});
  CHECK(shape_of(st["intermediates"]["attention_weights"][0]) == Shape{2, 2, 3, 3});

  Array q = astype(random::normal(random::key(15), {1, 3, 2, 2}), float64);
  Array k = astype(random::normal(random::key(16), {1, 4, 2, 2}), float64);
  Array val = astype(random::normal(random::key(17), {1, 4, 2, 2}), float64);
  Array mask = random::bernoulli(random::key(18), 0.7, {1, 2, 3, 4});
  testing::check_grads(
      [&](const Arrays& a) { return nn::dot_product_attention(a[0], a[1], a[2], {.mask = mask}); },
      {q, k, val});
  Array x64 = astype(x, float64);
  nn::SelfAttention sa64({.num_heads = 2, .param_dtype = float64});
  Tree v64 = sa64.init(random::key(0), x64);
  testing::check_grads(
      [&](const Arrays& a) {
        Tree p = v64;
        p["params"]["query"]["kernel"] = Tree(a[1]);
        p["params"]["out"]["kernel"] = Tree(a[2]);
        return sa64.apply(p, a[0]);
      },
      {x64, v64["params"]["query"]["kernel"].leaf(), v64["params"]["out"]["kernel"].leaf()});
}

}  // namespace test_attention
