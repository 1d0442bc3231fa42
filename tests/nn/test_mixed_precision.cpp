// Mixed precision in nn, as Flax: `dtype` (the computation dtype) and `param_dtype` on every
// layer. Expected dtypes follow Flax's source (promote_dtype casts inputs, kernel and bias to
// dtype; norms reduce in float32 at least; attention's force_fp32_for_softmax keeps float32
// weights); expected numbers are the float32 layer applied to bfloat16-rounded operands.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include <linum/linum.hpp>
#include <linum/nn/nn.hpp>

#include "../support/testing.hpp"

namespace test_mixed_precision {

using namespace linum;
using testing::values;
namespace init = linum::nn::initializers;

namespace {

// The float32 (or float64) array with each element rounded to bfloat16.
Array rounded(const Array& a) { return astype(astype(a, bfloat16), a.dtype()); }
Tree rounded(const Tree& t) {
  return pytree::tree_map([](const Array& a) { return rounded(a); }, t);
}
Array bf(const Array& a) { return astype(a, bfloat16); }

// Same dtype, shape and values, element for element.
void check_same(const Array& got, const Array& want) {
  REQUIRE(got.dtype() == want.dtype());
  REQUIRE(got.shape() == want.shape());
  const auto g = values(got), w = values(want);
  for (std::size_t i = 0; i < g.size(); ++i) CHECK(g[i] == w[i]);
}

// |got - want| <= ulps bfloat16 ulps of want (8 significant bits: one ulp <= 2^-7 |want|),
// plus `floor` for entries near zero, where cancellation leaves no relative precision.
void check_bf16_close(const Array& got, const Array& want, double ulps, double floor = 0.0) {
  REQUIRE(got.shape() == want.shape());
  const auto g = values(got), w = values(want);
  for (std::size_t i = 0; i < g.size(); ++i) {
    INFO("element ", i, ": got ", g[i], ", want ", w[i]);
    CHECK(std::abs(g[i] - w[i]) <= ulps * std::ldexp(std::abs(w[i]), -7) + floor);
  }
}

// A layer computing in bfloat16 against the float32 layer: close, but not identical (so the
// bfloat16 computation really happened).
void check_rounded_version(const Array& got, const Array& want32) {
  check_bf16_close(got, want32, 4.0, 1e-2);
  const auto g = values(got), w = values(want32);
  CHECK(g != w);
}

double max_abs(const Array& a) { return max(abs(astype(a, float64))).item<double>(); }

Array leaf(const Tree& v, const char* a, const char* b) { return v["params"][a][b].leaf(); }

}  // namespace

TEST_CASE("Dense dtype=bfloat16, param_dtype=float32: float32 params, bfloat16 output") {
  // promote_dtype(x, kernel, bias, dtype=bfloat16): all three rounded, the dot and the add in
  // bfloat16 (each computed in float32 and rounded once).
  const Array x = random::normal(random::key(1), {4, 6});
  nn::Dense dense({.features = 5, .dtype = bfloat16, .bias_init = init::normal(1.0)});
  auto [y, v] = dense.init_with_output(random::key(0), x);
  const Array kernel = v["params"]["kernel"].leaf(), bias = v["params"]["bias"].leaf();
  CHECK(kernel.dtype() == float32);
  CHECK(bias.dtype() == float32);
  CHECK(y.dtype() == bfloat16);
  const Array dot = bf(matmul(rounded(x), rounded(kernel)));
  check_same(y, bf(astype(dot, float32) + rounded(bias)));
  // The float32 layer on the rounded operands: off by the two roundings, half an ulp of the
  // result and half an ulp of the dot before the bias (which may cancel most of it).
  nn::Dense dense32({.features = 5, .bias_init = init::normal(1.0)});
  check_bf16_close(y, dense32.apply(rounded(v), rounded(x)), 0.5, std::ldexp(max_abs(dot), -8));
  // A bfloat16 input with float32 params and no dtype promotes to float32 (result_type).
  CHECK(nn::Dense(5).apply(v, bf(x)).dtype() == float32);
  // float16 likewise.
  CHECK(nn::Dense({.features = 5, .dtype = float16}).apply(v, x).dtype() == float16);
}

TEST_CASE("DenseGeneral, Einsum, Conv, ConvTranspose, ConvLocal compute in dtype=bfloat16") {
  // Zero biases: the bfloat16 layer rounds its float32 dot/conv once, so it equals the float32
  // layer on the bfloat16-rounded operands, rounded.
  auto check_layer = [](auto bf16_layer, auto f32_layer, const Array& x) {
    auto [y, v] = bf16_layer.init_with_output(random::key(0), x);
    pytree::tree_map(
        [](const Array& p) {
          CHECK(p.dtype() == float32);
          return p;
        },
        v);
    CHECK(y.dtype() == bfloat16);
    check_same(y, bf(f32_layer.apply(rounded(v), rounded(x))));
  };
  const Array x3 = random::normal(random::key(2), {2, 3, 4});
  check_layer(nn::DenseGeneral({.features = {2, 3}, .axis = {-2, -1}, .dtype = bfloat16}),
              nn::DenseGeneral({.features = {2, 3}, .axis = {-2, -1}}), x3);
  check_layer(nn::Einsum({.shape = {4, 5}, .einsum_str = "abc,cd->abd", .dtype = bfloat16}),
              nn::Einsum({.shape = {4, 5}, .einsum_str = "abc,cd->abd"}), x3);
  const Array img = random::normal(random::key(3), {2, 5, 5, 3});
  check_layer(nn::Conv({.features = 4, .kernel_size = {3, 3}, .dtype = bfloat16}),
              nn::Conv({.features = 4, .kernel_size = {3, 3}}), img);
  check_layer(nn::ConvTranspose(
                  {.features = 4, .kernel_size = {3, 3}, .strides = {2, 2}, .dtype = bfloat16}),
              nn::ConvTranspose({.features = 4, .kernel_size = {3, 3}, .strides = {2, 2}}), img);
  check_layer(nn::ConvLocal({.features = 2, .kernel_size = {2, 2}, .dtype = bfloat16}),
              nn::ConvLocal({.features = 2, .kernel_size = {2, 2}}), img);
  // Conv with dtype unset and a bfloat16 input: promoted with the float32 params to float32.
  const Tree cv = nn::Conv({.features = 4, .kernel_size = {3, 3}}).init(random::key(0), img);
  CHECK(nn::Conv({.features = 4, .kernel_size = {3, 3}}).apply(cv, bf(img)).dtype() == float32);
}

TEST_CASE("Embed dtype=bfloat16: the looked-up rows and attend's logits in bfloat16") {
  nn::Embed emb({.num_embeddings = 6, .features = 4, .dtype = bfloat16});
  const Array ids = array(std::vector<int>{0, 5, 2}, {3});
  auto [y, v] = emb.init_with_output(random::key(0), ids);
  const Array table = v["params"]["embedding"].leaf();
  CHECK(table.dtype() == float32);
  // promote_dtype(embedding, dtype=bfloat16, inexact=False): the table rounded, then taken.
  check_same(y, take(bf(table), ids, 0));
  const Array q = random::normal(random::key(1), {2, 4});
  const Array logits = emb.apply(v, q, &nn::Embed::attend);
  check_same(logits, bf(matmul(rounded(q), transpose(rounded(table)))));
  // dtype unset: lookups keep the table's dtype; attend promotes a bfloat16 query to float32.
  nn::Embed plain(6, 4);
  CHECK(plain.apply(v, ids).dtype() == float32);
  CHECK(plain.apply(v, bf(q), &nn::Embed::attend).dtype() == float32);
}

TEST_CASE(
    "LayerNorm on bfloat16 with mean 1000: float32 statistics normalize, bfloat16 would not") {
  // Entries 1000 + 4k (exact in bfloat16, whose spacing there is 4): the variance is tiny next
  // to the mean, so E[x^2] - E[x]^2 cancels catastrophically in bfloat16 (spacing 4096 at 1e6).
  std::vector<float> xs;
  for (int r = 0; r < 3; ++r)
    for (int j = 0; j < 8; ++j) xs.push_back(1000.0f + 4.0f * static_cast<float>((j * 3 + r) % 7));
  const Array x = bf(array(xs, {3, 8}));
  // The float64 answer from the same bfloat16 values.
  std::vector<double> want(xs.size());
  for (int r = 0; r < 3; ++r) {
    double m = 0, m2 = 0;
    for (int j = 0; j < 8; ++j) m += xs[r * 8 + j] / 8.0;
    for (int j = 0; j < 8; ++j) m2 += (xs[r * 8 + j] - m) * (xs[r * 8 + j] - m) / 8.0;
    for (int j = 0; j < 8; ++j) want[r * 8 + j] = (xs[r * 8 + j] - m) / std::sqrt(m2 + 1e-6);
  }
  const Array ref = array(want, {3, 8});
  auto [y, v] = nn::LayerNorm().init_with_output(random::key(0), x);
  // _normalize's canonicalize_dtype(x, scale, bias): bfloat16 with float32 params is float32.
  CHECK(y.dtype() == float32);
  CHECK(v["params"]["scale"].leaf().dtype() == float32);
  check_bf16_close(y, ref, 0.0, 1e-3);  // float32 statistics: float32-accurate
  const Array yb = nn::LayerNorm({.dtype = bfloat16}).apply(v, x);
  CHECK(yb.dtype() == bfloat16);
  check_bf16_close(yb, ref, 1.0, 1e-3);
  // The same layer with the reductions left in bfloat16 is far off.
  const Array bad =
      nn::LayerNorm({.dtype = bfloat16, .force_float32_reductions = false}).apply(v, x);
  CHECK(bad.dtype() == bfloat16);
  CHECK(max_abs(astype(bad, float64) - ref) > 0.5);
  // RMSNorm, GroupNorm and InstanceNorm share the statistics: float32 at least, output in dtype.
  const Tree rv = nn::RMSNorm().init(random::key(0), x);
  const Array rms = nn::RMSNorm({.dtype = bfloat16}).apply(rv, x);
  CHECK(rms.dtype() == bfloat16);
  const Array ms = sqrt(mean(square(astype(x, float64)), -1, true) + 1e-6);
  check_bf16_close(rms, astype(x, float64) / ms, 1.0);
  const Tree gv = nn::GroupNorm({.num_groups = 1}).init(random::key(0), x);
  const Array gn = nn::GroupNorm({.num_groups = 1, .dtype = bfloat16}).apply(gv, x);
  CHECK(gn.dtype() == bfloat16);
  check_bf16_close(gn, ref, 1.0, 1e-3);
}

TEST_CASE("BatchNorm with a bfloat16 input: float32 running statistics and float32 reductions") {
  std::vector<float> xs;
  for (int r = 0; r < 8; ++r)
    for (int j = 0; j < 2; ++j) xs.push_back(1000.0f + 4.0f * static_cast<float>((r * 5 + j) % 7));
  const Array x = bf(array(xs, {8, 2}));
  nn::BatchNorm bn({.use_running_average = false, .momentum = 0.5, .dtype = bfloat16});
  const Tree v = bn.init(random::key(0), x);
  CHECK(v["batch_stats"]["mean"].leaf().dtype() == float32);
  auto [y, st] = bn.apply(v, x, std::nullopt, {.mutable_ = lift::Filter{"batch_stats"}});
  CHECK(y.dtype() == bfloat16);
  // The batch mean in float32 (exact here) moves the running mean half way from 0.
  const Array mu = mean(astype(x, float64), 0);
  check_same(astype(st["batch_stats"]["mean"].leaf(), float64), mu * 0.5);
  const Array sd = sqrt(mean(square(astype(x, float64) - mu), 0) + 1e-5);
  check_bf16_close(y, (astype(x, float64) - mu) / sd, 1.0, 1e-3);
  // Without forced float32 reductions the running statistics take param_dtype (Flax's choice).
  nn::BatchNorm bn16(
      {.use_running_average = false, .param_dtype = bfloat16, .force_float32_reductions = false});
  const Tree v16 = bn16.init(random::key(0), x);
  CHECK(v16["batch_stats"]["var"].leaf().dtype() == bfloat16);
  CHECK(v16["params"]["scale"].leaf().dtype() == bfloat16);
  CHECK(bn16.apply(v16, x, std::nullopt, {.mutable_ = lift::Filter{"batch_stats"}}).first.dtype() ==
        bfloat16);
}

TEST_CASE("attention in bfloat16: weights in dtype, or float32 with force_fp32_for_softmax") {
  // depth 4: q / sqrt(4) is exact, so the bfloat16 logits are the float32 product rounded once.
  const Array q = rounded(random::normal(random::key(1), {1, 3, 2, 4}));
  const Array k = rounded(random::normal(random::key(2), {1, 5, 2, 4}));
  const Array val = rounded(random::normal(random::key(3), {1, 5, 2, 4}));
  const Array logits = bf(matmul(moveaxis(q / 2.0f, -2, -3), moveaxis(k, -3, -1)));  // (1, 2, 3, 5)
  const Array w = nn::dot_product_attention_weights(bf(q), bf(k));
  CHECK(w.dtype() == bfloat16);
  const Array w32 =
      nn::dot_product_attention_weights(bf(q), bf(k), {.force_fp32_for_softmax = true});
  CHECK(w32.dtype() == float32);
  check_same(w32, softmax(astype(logits, float32), -1));
  check_bf16_close(w, w32, 2.0, 1e-6);
  // dtype=bfloat16 on float32 inputs casts them first (promote_dtype).
  check_same(nn::dot_product_attention_weights(q, k, {.dtype = bfloat16}), w);
  // The float32 weights times the bfloat16 values promote: the output is float32 (Flax's quirk).
  CHECK(nn::dot_product_attention(bf(q), bf(k), bf(val)).dtype() == bfloat16);
  const Array o32 =
      nn::dot_product_attention(bf(q), bf(k), bf(val), {.force_fp32_for_softmax = true});
  CHECK(o32.dtype() == float32);
  check_same(o32, moveaxis(matmul(w32, moveaxis(val, -2, -3)), -3, -2));

  // The module: float32 params, bfloat16 projections, output in dtype either way.
  const Array x = random::normal(random::key(4), {2, 3, 4});
  for (bool force : {false, true}) {
    nn::MultiHeadDotProductAttention mha(
        {.num_heads = 2, .normalize_qk = true, .force_fp32_for_softmax = force, .dtype = bfloat16});
    auto [y, v] = mha.init_with_output(random::key(0), x);
    CHECK(y.dtype() == bfloat16);
    CHECK(leaf(v, "query", "kernel").dtype() == float32);
    CHECK(leaf(v, "query_ln", "scale").dtype() == float32);
    CHECK(leaf(v, "out", "bias").dtype() == float32);
    // Within bfloat16 precision of the float32 module (a chain of ~10 rounded ops).
    nn::MultiHeadDotProductAttention mha32({.num_heads = 2, .normalize_qk = true});
    const Array y32 = mha32.apply(v, x);
    CHECK(max_abs(astype(y, float64) - astype(y32, float64)) <= 0.05 * max_abs(y32));
  }
}

TEST_CASE("attention: sow_weights stores the softmax weights (before dropout), as Flax") {
  const Array x = random::normal(random::key(5), {2, 3, 4});
  nn::SelfAttention sa({.num_heads = 2, .dtype = bfloat16});
  const Tree v = sa.init(random::key(0), x);
  auto [y, st] = sa.apply(v, x, nn::AttentionCallArgs{.sow_weights = true},
                          {.mutable_ = lift::Filter{"intermediates"}});
  const Array w = st["intermediates"]["attention_weights"][0].leaf();
  CHECK(w.dtype() == bfloat16);
  CHECK(w.shape() == Shape{2, 2, 3, 3});
  // Rows of a softmax: non-negative, summing to 1 up to bfloat16 rounding of each entry.
  CHECK(min(astype(w, float32)).item<float>() >= 0.0f);
  check_bf16_close(sum(astype(w, float64), -1), ones({2, 2, 3}, float64), 4.0);
}

TEST_CASE("recurrent cells with dtype=bfloat16: Denses in bfloat16, the carry in param_dtype") {
  const Array x = random::normal(random::key(1), {2, 3});
  // LSTM: c' = f c + i g with c float32 (initialize_carry in param_dtype) promotes to float32,
  // and h' = o tanh(c') too, so the carry keeps its dtype across steps.
  nn::LSTMCell lstm({.features = 4, .dtype = bfloat16});
  nn::LSTMCell lstm32(4);
  auto carry = lstm.initialize_carry(random::key(2), x.shape());
  carry.second = random::normal(random::key(3), {2, 4});
  CHECK(carry.first.dtype() == float32);
  auto [out, v] = lstm.init_with_output(random::key(0), carry, x);
  CHECK(leaf(v, "ii", "kernel").dtype() == float32);
  CHECK(out.first.first.dtype() == float32);
  CHECK(out.first.second.dtype() == float32);
  const auto out32 = lstm32.apply(v, carry, x);
  check_rounded_version(out.second, out32.second);
  // OptimizedLSTMCell promotes its concatenated kernels the same way.
  const auto opt = nn::OptimizedLSTMCell({.features = 4, .dtype = bfloat16}).apply(v, carry, x);
  CHECK(opt.first.first.dtype() == float32);
  check_bf16_close(opt.second, out.second, 4.0, 1e-2);
  // GRU: h' = (1 - z) n + z h with h float32: float32.
  nn::GRUCell gru({.features = 4, .dtype = bfloat16});
  const Array h = random::normal(random::key(4), {2, 4});
  auto [gout, gv] = gru.init_with_output(random::key(0), h, x);
  CHECK(gout.first.dtype() == float32);
  check_rounded_version(gout.second, nn::GRUCell(4).apply(gv, h, x).second);
  // SimpleCell: act(dense_i(x) + dense_h(h)) stays bfloat16 (Flax's scan would then refuse the
  // changed carry dtype; one step shows the dtype Flax gives).
  nn::SimpleCell simple({.features = 4, .dtype = bfloat16});
  CHECK(simple.init_with_output(random::key(0), h, x).first.first.dtype() == bfloat16);
  // MGU: h' = (1 - f) n + f h, float32 as GRU's; ConvLSTM: c' = f c + ..., float32 as LSTM's.
  nn::MGUCell mgu({.features = 4, .dtype = bfloat16});
  auto [mout, mv] = mgu.init_with_output(random::key(0), h, x);
  CHECK(mout.first.dtype() == float32);
  check_rounded_version(mout.second, nn::MGUCell(4).apply(mv, h, x).second);
  nn::ConvLSTMCell conv_lstm({.features = 2, .kernel_size = {3}, .dtype = bfloat16});
  const Array frames = random::normal(random::key(6), {2, 5, 3});  // (batch, width, features)
  const auto cc = conv_lstm.initialize_carry(random::key(7), frames.shape());
  auto [cout, cv] = conv_lstm.init_with_output(random::key(0), cc, frames);
  CHECK(leaf(cv, "ih", "kernel").dtype() == float32);
  CHECK(cout.first.first.dtype() == float32);
  CHECK(cout.first.second.dtype() == float32);
  // The convs really ran in bfloat16: close to the float32 cell, not equal to it.
  const auto cout32 = nn::ConvLSTMCell({.features = 2, .kernel_size = {3}}).apply(cv, cc, frames);
  const double conv_err = max_abs(astype(cout.second, float64) - astype(cout32.second, float64));
  CHECK(conv_err > 0.0);
  CHECK(conv_err <= 0.02);
  // RNN scans the LSTM over time with the float32 carry.
  const Array seq = random::normal(random::key(5), {2, 5, 3});
  nn::RNN rnn(nn::LSTMCell({.features = 4, .dtype = bfloat16}));
  auto [ys, rv] = rnn.init_with_output(random::key(0), seq);
  CHECK(ys.dtype() == float32);
  const Array ys32 = nn::RNN(nn::LSTMCell(4)).apply(rv, seq);
  CHECK(max_abs(astype(ys, float64) - astype(ys32, float64)) <= 0.03);
}

TEST_CASE("PReLU and Dropout keep a bfloat16 input's dtype") {
  const Array x = bf(random::normal(random::key(1), {3, 4}));
  auto [y, v] = nn::PReLU().init_with_output(random::key(0), x);
  CHECK(v["params"]["negative_slope"].leaf().dtype() == float32);
  CHECK(y.dtype() == bfloat16);
  // The slope is cast to the input's dtype: 0.01 rounded to bfloat16, times x, rounded.
  check_same(y, where(greater_equal(x, 0), x,
                      bf(astype(bf(full({}, 0.01f)), float32) * astype(x, float32))));
  nn::Dropout drop(0.5);
  const Array d = drop.apply(Tree::dict(), x, false, lift::Rngs{{"dropout", random::key(2)}});
  CHECK(d.dtype() == bfloat16);
  // Kept entries are x / 0.5 (exact), dropped ones 0.
  const auto dv = values(d), xv = values(x);
  for (std::size_t i = 0; i < dv.size(); ++i) CHECK((dv[i] == 0.0 || dv[i] == 2.0 * xv[i]));
}

namespace {
// Dense -> relu -> LayerNorm -> Dense, all in `dtype` with float32 params.
struct MixedMLP : nn::Module<MixedMLP> {
  std::optional<DType> dtype;
  explicit MixedMLP(std::optional<DType> d) : dtype(d) {}
  Array call(const Array& x) {
    Array h = nn::Dense({.features = 16, .dtype = dtype})(x);
    h = nn::LayerNorm({.dtype = dtype})(relu(h));
    return nn::Dense({.features = 1, .dtype = dtype})(h);
  }
};
}  // namespace

TEST_CASE("a bfloat16 model's loss and float32 grads are within bfloat16 tolerance of float32's") {
  const Array x = random::normal(random::key(1), {32, 8});
  const Array target = random::normal(random::key(2), {32, 1});
  MixedMLP mixed(bfloat16), full32(std::nullopt);
  const Tree params = full32.init(random::key(0), x);
  auto loss_of = [&](MixedMLP& model) {
    return [&](const Tree& p) { return mean(square(astype(model.apply(p, x), float32) - target)); };
  };
  auto [loss16, g16] = value_and_grad(loss_of(mixed))(params);
  auto [loss32, g32] = value_and_grad(loss_of(full32))(params);
  CHECK(mixed.apply(params, x).dtype() == bfloat16);
  CHECK(loss16.dtype() == float32);
  // Measured: 0.13% on the loss, 0.3-0.8% of each gradient's largest entry (one bfloat16 ulp is
  // 2^-7 = 0.78%); the bounds allow about two and a half ulps.
  CHECK(std::abs(loss16.item<float>() - loss32.item<float>()) <= 0.005 * loss32.item<float>());
  bool any_different = false;
  pytree::tree_map(
      [&](const Array& a, const Array& b) {
        CHECK(a.dtype() == float32);  // grads in the params' dtype
        const double err = max_abs(astype(a, float64) - astype(b, float64));
        INFO("max |g_bf16 - g_f32| = ", err, ", max |g_f32| = ", max_abs(b));
        CHECK(err <= 0.02 * max_abs(b));
        any_different = any_different || err > 0.0;
        return a;
      },
      g16, g32);
  CHECK(any_different);  // the bfloat16 model really rounded
}

TEST_CASE("param_dtype=bfloat16 with non-random initializers: bfloat16 params and outputs") {
  const Array x = random::normal(random::key(1), {2, 4});
  nn::Dense dense({.features = 3,
                   .param_dtype = bfloat16,
                   .kernel_init = init::constant(0.1),
                   .bias_init = init::constant(0.3)});
  auto [y, v] = dense.init_with_output(random::key(0), x);
  CHECK(v["params"]["kernel"].leaf().dtype() == bfloat16);
  // x (float32) with bfloat16 params promotes to float32: result_type(float32, bfloat16).
  CHECK(y.dtype() == float32);
  check_same(y, matmul(x, astype(v["params"]["kernel"].leaf(), float32)) +
                    astype(v["params"]["bias"].leaf(), float32));
  CHECK(dense.apply(v, bf(x)).dtype() == bfloat16);
  auto [ln, lv] = nn::LayerNorm({.param_dtype = bfloat16}).init_with_output(random::key(0), bf(x));
  CHECK(lv["params"]["scale"].leaf().dtype() == bfloat16);
  CHECK(ln.dtype() == bfloat16);  // the statistics float32, the output x's and the params' dtype
  // An LSTM with bfloat16 params: a bfloat16 carry (initialize_carry in param_dtype), outputs.
  nn::LSTMCell lstm({.features = 4,
                     .kernel_init = init::constant(0.25),
                     .recurrent_kernel_init = init::constant(-0.5),
                     .param_dtype = bfloat16});
  const auto carry = lstm.initialize_carry(random::key(2), x.shape());
  CHECK(carry.first.dtype() == bfloat16);
  auto [out, lsv] = lstm.init_with_output(random::key(0), carry, bf(x));
  CHECK(leaf(lsv, "hi", "kernel").dtype() == bfloat16);
  CHECK(out.first.first.dtype() == bfloat16);
  CHECK(out.second.dtype() == bfloat16);
}

TEST_CASE("param_dtype=bfloat16 with the default (random) initializers, as Flax") {
  // lecun_normal and variance_scaling sample in param_dtype.
  const Array x = random::normal(random::key(1), {2, 4});
  auto [y, v] =
      nn::Dense({.features = 3, .param_dtype = bfloat16}).init_with_output(random::key(0), bf(x));
  CHECK(v["params"]["kernel"].leaf().dtype() == bfloat16);
  CHECK(y.dtype() == bfloat16);
  const Tree ev = nn::Embed({.num_embeddings = 5, .features = 4, .param_dtype = bfloat16})
                      .init(random::key(0), array(std::vector<int>{1}, {1}));
  CHECK(ev["params"]["embedding"].leaf().dtype() == bfloat16);
}

}  // namespace test_mixed_precision
