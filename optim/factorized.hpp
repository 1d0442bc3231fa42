// Adafactor: optax's scale_by_factored_rms (FactoredState), clip_by_block_rms,
// scale_by_param_block_rms and the adafactor alias.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>

#include <linum/optim/base.hpp>
#include <linum/optim/combine.hpp>
#include <linum/optim/transform.hpp>

namespace linum::optim {

// optax.FactoredState: v_row / v_col hold the factored second moments of leaves with two large
// enough axes (zeros((1,)) elsewhere), v the full second moment of the others.
template <class P, class C = Array>
struct FactoredState {
  BOOST_HANA_DEFINE_STRUCT(FactoredState, (C, count), (P, v_row), (P, v_col), (P, v));
};

namespace detail {

struct FactoredOptions {
  bool factored = true;
  double decay_rate = 0.8;
  std::int64_t step_offset = 0;
  std::int64_t min_dim_size_to_factor = 128;
  double epsilon = 1e-30;
};

// One leaf's (update, v_row, v_col, v) (factorized.cpp).
struct FactoredLeaf {
  Array update, v_row, v_col, v;
};
FactoredLeaf factored_init(const Array& param, const FactoredOptions& o);
FactoredLeaf factored_update(const Array& grad, const Array& v_row, const Array& v_col,
                             const Array& v, const Array& param, const Array& count,
                             const FactoredOptions& o);

Array clip_block_rms(const Array& u, double threshold);
Array safe_root_mean_squares(const Array& x, double min_rms);

}  // namespace detail

// optax.scale_by_factored_rms: updates / sqrt of a (row x column factored, for matrices with
// two axes of at least min_dim_size_to_factor) decaying average of g**2 + epsilon, with
// decay 1 - (t + 1)**-decay_rate at step t. Needs params (for their shapes).
struct ScaleByFactoredRms : Transformation<ScaleByFactoredRms> {
  detail::FactoredOptions options;

  template <class P>
  FactoredState<P> init(const P& params) const {
    Arrays ps = linum::detail::tree_arrays(params), row, col, v;
    for (const Array& p : ps) {
      detail::FactoredLeaf l =
          p.valid() ? detail::factored_init(p, options) : detail::FactoredLeaf{};
      row.push_back(l.v_row), col.push_back(l.v_col), v.push_back(l.v);
    }
    return {zero_count(), pytree::tree_unflatten_like(params, row),
            pytree::tree_unflatten_like(params, col), pytree::tree_unflatten_like(params, v)};
  }

  template <class U, class P, class Q>
  std::pair<U, FactoredState<P>> update_impl(const U& updates, const FactoredState<P>& state,
                                             const Q* params) const {
    if (!params) throw_no_params("scale_by_factored_rms");
    Arrays g = linum::detail::tree_arrays(updates), r = linum::detail::tree_arrays(state.v_row),
           c = linum::detail::tree_arrays(state.v_col), v = linum::detail::tree_arrays(state.v),
           p = linum::detail::tree_arrays(*params);
    Arrays out(g.size()), row(g.size()), col(g.size()), full(g.size());
    for (std::size_t i = 0; i < g.size(); ++i) {
      if (!g[i].valid()) continue;  // MaskedNode
      detail::FactoredLeaf l =
          detail::factored_update(g[i], r[i], c[i], v[i], p[i], state.count, options);
      out[i] = l.update, row[i] = l.v_row, col[i] = l.v_col, full[i] = l.v;
    }
    return {pytree::tree_unflatten_like(updates, out),
            {safe_increment(state.count), pytree::tree_unflatten_like(state.v_row, row),
             pytree::tree_unflatten_like(state.v_col, col),
             pytree::tree_unflatten_like(state.v, full)}};
  }
};
inline ScaleByFactoredRms scale_by_factored_rms(bool factored = true, double decay_rate = 0.8,
                                                std::int64_t step_offset = 0,
                                                std::int64_t min_dim_size_to_factor = 128,
                                                double epsilon = 1e-30) {
  ScaleByFactoredRms t;
  t.options = {factored, decay_rate, step_offset, min_dim_size_to_factor, epsilon};
  return t;
}

// optax.clip_by_block_rms(threshold): each leaf divided by max(1, rms(leaf) / threshold).
// threshold nullopt: updates pass through (adafactor's clipping_threshold=None).
struct ClipByBlockRms : StatelessTransformation<ClipByBlockRms> {
  std::optional<double> threshold;
  template <class U, class Q>
  U apply(const U& updates, const Q*) const {
    if (!threshold) return updates;
    const double t = *threshold;
    return linum::detail::tree_apply_skip_empty(
        updates, [t](const Array& u) { return detail::clip_block_rms(u, t); });
  }
};
inline ClipByBlockRms clip_by_block_rms(std::optional<double> threshold) {
  ClipByBlockRms t;
  t.threshold = threshold;
  return t;
}

// optax.scale_by_param_block_rms(min_scale): updates * max(rms(param), min_scale) per leaf.
// enabled=false passes updates through (adafactor's multiply_by_parameter_scale=False).
struct ScaleByParamBlockRms : StatelessTransformation<ScaleByParamBlockRms> {
  double min_scale = 1e-3;
  bool enabled = true;
  template <class U, class Q>
  U apply(const U& updates, const Q* params) const {
    if (!enabled) return updates;
    if (!params) throw_no_params("scale_by_param_block_rms");
    const double m = min_scale;
    U out = linum::detail::tree_apply_skip_empty(
        updates,
        [m](const Array& u, const Array& p) { return u * detail::safe_root_mean_squares(p, m); },
        *params);
    return out;
  }
};
inline ScaleByParamBlockRms scale_by_param_block_rms(double min_scale = 1e-3) {
  ScaleByParamBlockRms t;
  t.min_scale = min_scale;
  return t;
}

// optax.adafactor: scale_by_factored_rms, clip_by_block_rms(clipping_threshold),
// learning rate (not negated), scale_by_param_block_rms, scale(-1). Disabled options keep their
// (stateless) place in the chain, so the state always has these five members; optax's momentum
// and weight decay options are not provided.
template <class LR>
auto adafactor(LR learning_rate, std::int64_t min_dim_size_to_factor = 128, double decay_rate = 0.8,
               std::int64_t decay_offset = 0, bool multiply_by_parameter_scale = true,
               std::optional<double> clipping_threshold = 1.0, double eps = 1e-30,
               bool factored = true) {
  ScaleByParamBlockRms param_scale;
  param_scale.enabled = multiply_by_parameter_scale;
  return chain(
      scale_by_factored_rms(factored, decay_rate, decay_offset, min_dim_size_to_factor, eps),
      clip_by_block_rms(clipping_threshold),
      scale_by_learning_rate(std::move(learning_rate), /*flip_sign=*/false), param_scale,
      scale(-1.0));
}

}  // namespace linum::optim
