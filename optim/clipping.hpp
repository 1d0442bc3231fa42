// optax's clipping beyond clip / clip_by_global_norm / clip_by_block_rms: adaptive_grad_clip
// (AGC: each unit's gradient norm clipped relative to its parameter norm) with unitwise_norm and
// unitwise_clip, and the per-example clippings of differentially private training,
// per_example_global_norm_clip and per_example_layer_norm_clip.
#pragma once

#include <cmath>
#include <optional>
#include <utility>
#include <vector>

#include <linum/autodiff/ops/axes.hpp>
#include <linum/optim/base.hpp>
#include <linum/optim/tree_utils.hpp>

namespace linum::optim {

// optax.unitwise_norm: the 2-norm of x over axis (keepdims), or, without axis, per output unit:
// the whole of a scalar or vector, axis 0 of a rank-2/3 linear kernel, axes (0, 1, 2) of a
// rank-4 conv kernel, (0, 1, 2, 3) of a rank-5 one; broadcast back to x's shape. ValueError for
// other ranks without axis.
Array unitwise_norm(const Array& x, const std::optional<Axes>& axis = std::nullopt);

// optax.unitwise_clip: grad where g_norm < max_norm, else grad * max_norm / max(g_norm, div_eps).
// ValueError unless the three shapes are equal.
Array unitwise_clip(const Array& g_norm, const Array& max_norm, const Array& grad,
                    double div_eps = 1e-6);

using AdaptiveGradClipState = EmptyState;

// optax.adaptive_grad_clip(clipping, eps, axis): each unit's gradient clipped to
// clipping * max(|param unit|, eps). Needs params.
struct AdaptiveGradClip : StatelessTransformation<AdaptiveGradClip> {
  double clipping = 1.0, eps = 1e-3;
  std::optional<Axes> axis;
  template <class U, class Q>
  U apply(const U& updates, const Q* params) const {
    if (!params) throw_no_params("adaptive_grad_clip");
    return linum::detail::tree_apply_skip_empty(
        updates,
        [&](const Array& g, const Array& p) {
          Array max_norm = clipping * maximum(unitwise_norm(p, axis), eps);
          return unitwise_clip(unitwise_norm(g, axis), max_norm, g);
        },
        *params);
  }
};
inline AdaptiveGradClip adaptive_grad_clip(double clipping, double eps = 1e-3,
                                           std::optional<Axes> axis = std::nullopt) {
  AdaptiveGradClip t;
  t.clipping = clipping, t.eps = eps, t.axis = std::move(axis);
  return t;
}

namespace detail {
// The per-example clipping of the leaves (clipping.cpp): the sums over the batch of the clipped
// examples and the number of examples clipped.
std::pair<Arrays, Array> per_example_clip(const Arrays& grads, double l2_norm_clip);
void check_batch_dims(const Arrays& grads, const char* fn);
}  // namespace detail

// optax.per_example_global_norm_clip(grads, l2_norm_clip): grads carry a batch axis 0; each
// example's whole gradient is scaled to global norm at most l2_norm_clip, and the examples are
// summed. Returns (the summed tree, without the batch axis; the number of examples clipped).
template <class T>
std::pair<T, Array> per_example_global_norm_clip(const T& grads, double l2_norm_clip) {
  const Arrays leaves = linum::detail::tree_arrays(grads);
  detail::check_batch_dims(leaves, "per_example_global_norm_clip");
  auto [sums, clipped] = detail::per_example_clip(leaves, l2_norm_clip);
  return {pytree::tree_unflatten_like(grads, sums), clipped};
}

// optax.per_example_layer_norm_clip(grads, global_l2_norm_clip, uniform): the clip applied per
// leaf, with budget global_l2_norm_clip * sqrt(1 / number of leaves) (uniform) or
// * sqrt(leaf size / total size). Returns (tree of sums, tree of numbers clipped).
template <class T>
std::pair<T, T> per_example_layer_norm_clip(const T& grads, double global_l2_norm_clip,
                                            bool uniform = true) {
  const Arrays leaves = linum::detail::tree_arrays(grads);
  detail::check_batch_dims(leaves, "per_example_layer_norm_clip");
  std::int64_t total = 0;
  for (const Array& g : leaves) total += g.size() / g.shape()[0];
  Arrays sums, counts;
  for (const Array& g : leaves) {
    const double share =
        uniform ? 1.0 / static_cast<double>(leaves.size())
                : static_cast<double>(g.size() / g.shape()[0]) / static_cast<double>(total);
    auto [s, c] = detail::per_example_clip({g}, global_l2_norm_clip * std::sqrt(share));
    sums.push_back(s[0]);
    counts.push_back(c);
  }
  return {pytree::tree_unflatten_like(grads, sums), pytree::tree_unflatten_like(grads, counts)};
}

}  // namespace linum::optim
