// Attention, as flax/linen/attention.py.
#include <linum/nn/attention.hpp>

#include <cmath>

#include <linum/autodiff/control_flow.hpp>
#include <linum/autodiff/ops.hpp>
#include <linum/autodiff/random/random.hpp>
#include <linum/nn/dense_general.hpp>
#include <linum/nn/dtypes.hpp>
#include <linum/nn/normalization.hpp>

namespace linum::nn {

namespace {
std::string aval(const Array& a) { return linum::detail::aval_str(a); }

bool same_prefix(const Array& a, const Array& b, int drop) {
  if (a.ndim() != b.ndim()) return false;
  for (int i = 0; i < a.ndim() - drop; ++i)
    if (a.shape(i) != b.shape(i)) return false;
  return true;
}

Array as_bool(const Array& m) { return m.dtype() == bool_ ? m : not_equal(m, zeros_like(m)); }

// (..., len, heads, d) -> (..., heads, len, d).
Array heads_first(const Array& x) { return moveaxis(x, -2, -3); }
}  // namespace

Array dot_product_attention_weights(const Array& query, const Array& key,
                                    const AttentionOptions& opts) {
  if (query.ndim() != key.ndim() || query.ndim() < 3) {
    throw ValueError("dot_product_attention_weights: q, k must have the same rank (>= 3), got " +
                     aval(query) + " and " + aval(key));
  }
  if (!same_prefix(query, key, 3))
    throw ValueError("dot_product_attention_weights: q, k batch dims must match, got " +
                     aval(query) + " and " + aval(key));
  if (query.shape(-2) != key.shape(-2))
    throw ValueError("dot_product_attention_weights: q, k num_heads must match, got " +
                     aval(query) + " and " + aval(key));
  if (query.shape(-1) != key.shape(-1))
    throw ValueError("dot_product_attention_weights: q, k depths must match, got " + aval(query) +
                     " and " + aval(key));
  // Flax's promote_dtype(query, key, dtype=dtype): the computation dtype.
  const DType dtype =
      detail::canonicalize_dtype("dot_product_attention_weights", opts.dtype, {query, key});
  const double depth = static_cast<double>(query.shape(-1));
  Array q = detail::cast(query, dtype) / astype(Array(std::sqrt(depth)), dtype);
  // (..., heads, q, d) @ (..., heads, d, kv) -> (..., heads, q, kv)
  Array w = matmul(heads_first(q), moveaxis(detail::cast(key, dtype), -3, -1));
  if (opts.bias) w = w + *opts.bias;
  if (opts.mask) {
    const double big_neg = finfo(dtype).min;  // jnp.finfo(dtype).min, as Flax masks
    w = where(as_bool(*opts.mask), w, full_like(w, big_neg));
  }
  // force_fp32_for_softmax keeps the weights float32 after the softmax, as Flax does (the value
  // product then promotes to float32 too).
  if (opts.force_fp32_for_softmax && dtype != float32)
    w = softmax(detail::cast(w, float32), -1);
  else
    w = detail::cast(softmax(w, -1), dtype);
  if (opts.module) opts.module->sow("intermediates", "attention_weights", Tree(w));
  if (!opts.deterministic && opts.dropout_rate > 0.0) {
    if (!opts.dropout_rng)
      throw ValueError("dot_product_attention: dropout needs a dropout_rng when not deterministic");
    const double keep_prob = 1.0 - opts.dropout_rate;
    Shape dshape = w.shape();
    if (opts.broadcast_dropout)
      for (int i = 0; i < w.ndim() - 2; ++i) dshape[static_cast<std::size_t>(i)] = 1;
    Array keep = random::bernoulli(*opts.dropout_rng, keep_prob, dshape);
    w = w * (astype(keep, dtype) / astype(Array(keep_prob), dtype));
  }
  return w;
}

Array dot_product_attention(const Array& query, const Array& key, const Array& value,
                            const AttentionOptions& opts) {
  if (value.ndim() != key.ndim() || !same_prefix(key, value, 3) ||
      key.shape(-2) != value.shape(-2) || key.shape(-3) != value.shape(-3)) {
    throw ValueError(
        "dot_product_attention: k, v must have the same rank, batch dims, length and heads, got " +
        aval(key) + " and " + aval(value));
  }
  // Flax's promote_dtype(query, key, value, dtype=dtype).
  const DType dtype =
      detail::canonicalize_dtype("dot_product_attention", opts.dtype, {query, key, value});
  AttentionOptions weight_opts = opts;
  weight_opts.dtype = dtype;
  Array w = dot_product_attention_weights(detail::cast(query, dtype), detail::cast(key, dtype),
                                          weight_opts);
  // (..., heads, q, kv) @ (..., heads, kv, dv) -> (..., heads, q, dv) -> (..., q, heads, dv)
  return moveaxis(matmul(w, heads_first(detail::cast(value, dtype))), -3, -2);
}

Array make_attention_mask(const Array& query_input, const Array& key_input,
                          const PairwiseFn& pairwise_fn, int extra_batch_dims, DType dtype) {
  Array q = expand_dims(query_input, -1), k = expand_dims(key_input, -2);
  Array mask = pairwise_fn ? pairwise_fn(q, k) : multiply(q, k);
  mask = expand_dims(mask, -3);
  for (int i = 0; i < extra_batch_dims; ++i) mask = expand_dims(mask, 0);
  return astype(mask, dtype);
}

Array make_causal_mask(const Array& x, int extra_batch_dims, DType dtype) {
  if (x.ndim() < 1) throw ValueError("make_causal_mask: expected an input with a length axis");
  Array idxs = broadcast_to(arange(x.shape(-1), int32), x.shape());
  return make_attention_mask(
      idxs, idxs, [](const Array& a, const Array& b) { return greater_equal(a, b); },
      extra_batch_dims, dtype);
}

std::optional<Array> combine_masks(const std::vector<std::optional<Array>>& masks, DType dtype) {
  std::optional<Array> out;
  for (const auto& m : masks) {
    if (!m) continue;
    if (out && out->ndim() != m->ndim()) {
      throw ValueError("combine_masks: masks must have same rank, got " + aval(*out) + " and " +
                       aval(*m));
    }
    out = out ? logical_and(as_bool(*out), as_bool(*m)) : as_bool(*m);
  }
  if (out) out = astype(*out, dtype);
  return out;
}

namespace detail {

Array multi_head_attention(ModuleBase& m, const MultiHeadAttentionConfig& cfg,
                           const Array& inputs_q, const std::optional<Array>& inputs_k_arg,
                           const std::optional<Array>& inputs_v_arg,
                           const AttentionCallArgs& args) {
  if (!inputs_k_arg && inputs_v_arg) {
    throw ValueError(
        "MultiHeadDotProductAttention: inputs_k cannot be None if inputs_v is not None. To have "
        "both key and value be the same array, pass it as inputs_k and leave inputs_v None");
  }
  if (inputs_q.ndim() < 2) {
    throw ValueError("MultiHeadDotProductAttention: expected inputs (..., length, features), got " +
                     aval(inputs_q));
  }
  const Array inputs_k = inputs_k_arg.value_or(inputs_q);
  const Array inputs_v = inputs_v_arg.value_or(inputs_k);
  const std::int64_t features = cfg.out_features.value_or(inputs_q.shape(-1));
  const std::int64_t qkv_features = cfg.qkv_features.value_or(inputs_q.shape(-1));
  if (cfg.num_heads <= 0 || qkv_features % cfg.num_heads != 0) {
    throw ValueError("MultiHeadDotProductAttention: memory dimension (" +
                     std::to_string(qkv_features) + ") must be divisible by number of heads (" +
                     std::to_string(cfg.num_heads) + ")");
  }
  const std::int64_t head_dim = qkv_features / cfg.num_heads;
  auto dense = [&](const char* name) {
    return DenseGeneral({.features = {cfg.num_heads, head_dim},
                         .axis = {-1},
                         .use_bias = cfg.use_bias,
                         .dtype = cfg.dtype,
                         .param_dtype = cfg.param_dtype,
                         .kernel_init = cfg.kernel_init,
                         .bias_init = cfg.bias_init,
                         .name = name});
  };
  Array query = dense("query")(inputs_q);
  Array key = dense("key")(inputs_k);
  Array value = dense("value")(inputs_v);
  if (cfg.normalize_qk) {
    // Normalized query/key projections stabilize training with higher learning rates (ViT-22B).
    auto qk_norm = [&](const char* name) {
      return LayerNorm(
          {.dtype = cfg.dtype, .param_dtype = cfg.param_dtype, .use_bias = false, .name = name});
    };
    query = qk_norm("query_ln")(query);
    key = qk_norm("key_ln")(key);
  }
  std::optional<Array> mask = args.mask;
  if (cfg.decode) {
    const bool is_initialized = m.has_variable("cache", "cached_key");
    auto cached_key =
        m.variable("cache", "cached_key", [&] { return zeros(key.shape(), key.dtype()); });
    auto cached_value =
        m.variable("cache", "cached_value", [&] { return zeros(value.shape(), value.dtype()); });
    auto cache_index = m.variable("cache", "cache_index", [] { return zeros(Shape{}, int32); });
    if (is_initialized) {
      const Shape cshape = cached_key.value().shape();
      const std::int64_t max_length = cshape[cshape.size() - 3];
      Shape expected(cshape.begin(), cshape.end() - 3);
      const Shape batch_dims = expected;
      expected.insert(expected.end(), {1, cshape[cshape.size() - 2], cshape.back()});
      if (query.shape() != expected) {
        throw ValueError("Autoregressive cache shape error, expected query shape " +
                         linum::shape_str(expected) + " instead got " +
                         linum::shape_str(query.shape()));
      }
      const Array cur = cache_index.value();
      const Array zero = zeros(Shape{}, int32);
      Arrays indices(batch_dims.size(), zero);
      indices.insert(indices.end(), {cur, zero, zero});
      key = dynamic_update_slice(cached_key.value(), key, indices);
      value = dynamic_update_slice(cached_value.value(), value, indices);
      cached_key.value() = key;
      cached_value.value() = value;
      cache_index.value() = cur + 1;
      // The one query position attends to the keys generated so far, not the zeros after them.
      Shape mshape = batch_dims;
      mshape.insert(mshape.end(), {1, 1, max_length});
      mask =
          combine_masks({mask, broadcast_to(less_equal(arange(max_length, int32), cur), mshape)});
    }
  }
  bool deterministic = true;
  std::optional<Array> dropout_rng = args.dropout_rng;
  if (cfg.dropout_rate > 0.0) {
    if (cfg.deterministic && args.deterministic) {
      throw ValueError(
          "MultiHeadDotProductAttention: deterministic was passed both to the "
          "constructor and to the call; pass it only once");
    }
    if (!cfg.deterministic && !args.deterministic) {
      throw ValueError(
          "MultiHeadDotProductAttention: deterministic must be passed to the "
          "constructor or to the call when dropout_rate > 0");
    }
    deterministic = cfg.deterministic ? *cfg.deterministic : *args.deterministic;
    if (!deterministic && !dropout_rng) dropout_rng = m.make_rng("dropout");
  }
  Array x = dot_product_attention(query, key, value,
                                  {.mask = mask,
                                   .broadcast_dropout = cfg.broadcast_dropout,
                                   .dropout_rng = dropout_rng,
                                   .dropout_rate = cfg.dropout_rate,
                                   .deterministic = deterministic,
                                   .dtype = cfg.dtype,
                                   .module = args.sow_weights ? &m : nullptr,
                                   .force_fp32_for_softmax = cfg.force_fp32_for_softmax});
  return DenseGeneral({.features = {features},
                       .axis = {-2, -1},
                       .use_bias = cfg.use_bias,
                       .dtype = cfg.dtype,
                       .param_dtype = cfg.param_dtype,
                       .kernel_init = cfg.out_kernel_init.value_or(cfg.kernel_init),
                       .bias_init = cfg.out_bias_init.value_or(cfg.bias_init),
                       .name = "out"})(x);
}

}  // namespace detail

}  // namespace linum::nn
