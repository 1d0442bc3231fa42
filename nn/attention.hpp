// flax.linen.attention: dot_product_attention(_weights) with mask, bias and dropout; masks
// (make_attention_mask, make_causal_mask, combine_masks); MultiHeadDotProductAttention and
// SelfAttention with Flax's parameter tree (query/key/value/out DenseGeneral) and the decode
// path that caches keys and values in the "cache" collection for autoregressive sampling.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <linum/nn/initializers.hpp>
#include <linum/nn/linear.hpp>
#include <linum/nn/module.hpp>

namespace linum::nn {

struct AttentionOptions {
  std::optional<Array> bias = {};  // added to the logits, broadcast to (..., heads, q, kv)
  std::optional<Array> mask = {};  // true / nonzero: attend; broadcast to (..., heads, q, kv)
  bool broadcast_dropout = true;   // one dropout mask shared over batch and heads
  std::optional<Array> dropout_rng = {};
  double dropout_rate = 0.0;
  bool deterministic = false;
  // The computation dtype: query, key and value are cast to it (default: their promoted dtype,
  // float32 at least), as flax.linen.dtypes.promote_dtype.
  std::optional<DType> dtype = {};
  ModuleBase* module = nullptr;  // if set, sows 'attention_weights' (after softmax, before dropout)
  // The softmax in float32 whatever dtype is; the weights then stay float32, as Flax's.
  bool force_fp32_for_softmax = false;
};

// query (..., q, heads, d), key (..., kv, heads, d) -> weights (..., heads, q, kv):
// softmax(q k^T / sqrt(d) + bias, masked to the dtype's lowest value) in dtype, then dropout.
Array dot_product_attention_weights(const Array& query, const Array& key,
                                    const AttentionOptions& opts = {});
// The weights applied to value (..., kv, heads, dv) -> (..., q, heads, dv).
Array dot_product_attention(const Array& query, const Array& key, const Array& value,
                            const AttentionOptions& opts = {});

using PairwiseFn = std::function<Array(const Array&, const Array&)>;
// mask[..., 1, q, k] = pairwise_fn(query_input[..., q], key_input[..., k]) as dtype, with
// extra_batch_dims leading ones.
Array make_attention_mask(const Array& query_input, const Array& key_input,
                          const PairwiseFn& pairwise_fn = {}, int extra_batch_dims = 0,
                          DType dtype = float32);
// x (..., len) -> (..., 1, len, len) with ones where key position <= query position.
Array make_causal_mask(const Array& x, int extra_batch_dims = 0, DType dtype = float32);
// The logical and of the given masks (all of one rank) as dtype; nullopt if none is given.
std::optional<Array> combine_masks(const std::vector<std::optional<Array>>& masks,
                                   DType dtype = float32);

struct MultiHeadAttentionConfig {
  std::int64_t num_heads = 0;
  std::optional<std::int64_t> qkv_features = {};  // default: inputs_q's features
  std::optional<std::int64_t> out_features = {};  // default: inputs_q's features
  bool broadcast_dropout = true;
  double dropout_rate = 0.0;
  std::optional<bool> deterministic = {};
  initializers::Initializer kernel_init = default_kernel_init();
  std::optional<initializers::Initializer> out_kernel_init = {};
  initializers::Initializer bias_init = initializers::zeros_init();
  std::optional<initializers::Initializer> out_bias_init = {};
  bool use_bias = true;
  bool decode = false;
  bool normalize_qk = false;
  bool force_fp32_for_softmax = false;
  std::optional<DType> dtype = {};  // the computation dtype of every projection and the attention
  DType param_dtype = float32;
  std::optional<std::string> name = {};
};

struct AttentionCallArgs {
  std::optional<Array> mask = {};
  std::optional<bool> deterministic = {};
  std::optional<Array> dropout_rng = {};
  bool sow_weights = false;
};

namespace detail {
Array multi_head_attention(ModuleBase& m, const MultiHeadAttentionConfig& cfg,
                           const Array& inputs_q, const std::optional<Array>& inputs_k,
                           const std::optional<Array>& inputs_v, const AttentionCallArgs& args);
}  // namespace detail

// Projects inputs to (..., len, num_heads, head_dim) queries/keys/values ('query', 'key',
// 'value': DenseGeneral with features (num_heads, head_dim)), attends, and projects back with
// 'out' (DenseGeneral over the last two axes). inputs_k defaults to inputs_q, inputs_v to inputs_k.
struct MultiHeadDotProductAttention : Module<MultiHeadDotProductAttention>,
                                      MultiHeadAttentionConfig {
  explicit MultiHeadDotProductAttention(std::int64_t num_heads) { this->num_heads = num_heads; }
  explicit MultiHeadDotProductAttention(MultiHeadAttentionConfig c)
      : MultiHeadAttentionConfig(std::move(c)) {
    if (name) named(*name);
  }
  Array call(const Array& inputs_q, const std::optional<Array>& inputs_k = std::nullopt,
             const std::optional<Array>& inputs_v = std::nullopt,
             const AttentionCallArgs& args = {}) {
    return detail::multi_head_attention(*this, *this, inputs_q, inputs_k, inputs_v, args);
  }
};
using MultiHeadAttention = MultiHeadDotProductAttention;

// MultiHeadDotProductAttention with keys and values from the queries' inputs.
struct SelfAttention : Module<SelfAttention>, MultiHeadAttentionConfig {
  explicit SelfAttention(std::int64_t num_heads) { this->num_heads = num_heads; }
  explicit SelfAttention(MultiHeadAttentionConfig c) : MultiHeadAttentionConfig(std::move(c)) {
    if (name) named(*name);
  }
  Array call(const Array& inputs_q, const AttentionCallArgs& args = {}) {
    return detail::multi_head_attention(*this, *this, inputs_q, std::nullopt, std::nullopt, args);
  }
};

}  // namespace linum::nn
