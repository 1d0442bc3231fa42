// optax's classification losses beyond the fused softmax cross-entropies of losses.cpp (which
// call in here for their `where` forms), written with linum ops in optax's formulas.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <linum/autodiff/ops.hpp>
#include <linum/autodiff/ops/kernel_util.hpp>
#include <linum/optim/losses.hpp>
#include <linum/optim/losses_detail.hpp>

namespace linum::optim {

namespace loss_detail {

void check_floating(const Array& x, const char* what, const char* fn) {
  linum::detail::check_valid(x, fn);
  if (!is_floating(x.dtype()))
    throw TypeError(std::string(fn) + ": Expected " + what +
                    " to have a floating dtype (float32 or float64), got " +
                    std::string(dtype_name(x.dtype())));
}

void check_same_shape(const Array& a, const Array& b, const char* fn) {
  if (a.shape() != b.shape())
    throw ValueError(std::string(fn) + ": Shape mismatch: got " + shape_str(a.shape()) + " and " +
                     shape_str(b.shape()) + ".");
}

Array expand_mask(const Array& where, const Array& x, const Axes& axis, const char* fn) {
  Array w = where;
  if (w.ndim() != x.ndim()) {
    if (axis.all || axis.axes.size() != 1)
      throw ValueError(std::string(fn) +
                       ": a `where` of lower rank needs a single class axis to expand it at");
    int a = axis.axes[0];
    w = expand_dims(w, a < 0 ? a + x.ndim() : a);
  }
  return astype(broadcast_to(w, x.shape()), bool_);
}

Array masked_sum(const Array& x, const Axes& axis, const std::optional<Array>& where,
                 bool keepdims) {
  if (!where) return sum(x, axis, keepdims);
  return sum(linum::where(*where, x, zeros_like(x)), axis, keepdims);
}

Array masked_log_softmax(const Array& x, const Axes& axis, const Array& where) {
  // jax.nn.log_softmax(x, axis, where): the max and the normaliser over the kept entries.
  const double ninf = -std::numeric_limits<double>::infinity();
  Array x_max = max(linum::where(where, x, full_like(x, ninf)), axis, true);
  x_max = stop_gradient(linum::where(isfinite(x_max), x_max, zeros_like(x_max)));
  Array shifted = linum::where(where, x, full_like(x, ninf)) - x_max;
  Array lse = log(masked_sum(exp(shifted), axis, where, true));
  return linum::where(where, shifted - lse, full_like(x, ninf));
}

Array masked_softmax(const Array& x, const Axes& axis, const Array& where) {
  Array p = exp(masked_log_softmax(x, axis, where));
  return linum::where(where, p, zeros_like(p));
}

Array masked_softmax_cross_entropy(const Array& logits, const Array& labels, const Axes& axis,
                                   const Array& where) {
  Array w = expand_mask(where, logits, axis, "softmax_cross_entropy");
  Array log_probs = masked_log_softmax(logits, axis, w);
  return -masked_sum(labels * log_probs, axis, w);
}

Array masked_integer_cross_entropy(const Array& logits, const Array& labels, const Array& where) {
  Array w = astype(where, bool_);
  Array label_logits = squeeze(take_along_axis(logits, expand_dims(labels, -1), -1), -1);
  const double ninf = -std::numeric_limits<double>::infinity();
  Array amax = max(linum::where(w, logits, full_like(logits, ninf)), -1, true);
  amax = stop_gradient(linum::where(isfinite(amax), amax, zeros_like(amax)));
  Array lse = squeeze(log(masked_sum(exp(logits - amax), -1, w, true)) + amax, -1);
  Array out = lse - label_logits;
  return linum::where(any(w, -1), out, zeros_like(out));
}

}  // namespace loss_detail

using loss_detail::check_floating;

Array safe_softmax_cross_entropy(const Array& logits, const Array& labels) {
  check_floating(logits, "logits", "safe_softmax_cross_entropy");
  // optax's weighted_logsoftmax: 0 where the label is 0, so -inf logits there stay harmless.
  Array ls = log_softmax(logits, -1);
  Array nonzero = not_equal(labels, zeros_like(labels));
  Array weighted = where(nonzero, labels * where(nonzero, ls, zeros_like(ls)), zeros_like(ls));
  return -sum(weighted, -1);
}

Array poly_loss_cross_entropy(const Array& logits, const Array& labels, double epsilon,
                              const Axes& axis, const std::optional<Array>& where) {
  constexpr const char* fn = "poly_loss_cross_entropy";
  check_floating(logits, "logits", fn);
  check_floating(labels, "labels", fn);
  std::optional<Array> w;
  if (where) w = loss_detail::expand_mask(*where, logits, axis, fn);
  Array p = w ? loss_detail::masked_softmax(logits, axis, *w) : softmax(logits, axis);
  Array one_minus_pt = loss_detail::masked_sum(labels * (1.0 - p), axis, w);
  return softmax_cross_entropy(logits, labels, axis, w) + epsilon * one_minus_pt;
}

Array sigmoid_binary_cross_entropy(const Array& logits, const Array& labels) {
  check_floating(logits, "logits", "sigmoid_binary_cross_entropy");
  Array l = astype(labels, logits.dtype());
  return -l * log_sigmoid(logits) - (1.0 - l) * log_sigmoid(-logits);
}

Array sigmoid_focal_loss(const Array& logits, const Array& labels, std::optional<double> alpha,
                         double gamma) {
  check_floating(logits, "logits", "sigmoid_focal_loss");
  Array l = astype(labels, logits.dtype());
  Array ce = sigmoid_binary_cross_entropy(logits, l);
  Array log_p = log_sigmoid(logits), log_q = log_sigmoid(-logits);
  // logsumexp([log_p, log_q], b=[1 - labels, labels]): log(1 - p_t).
  Array amax = stop_gradient(maximum(log_p, log_q));
  amax = where(isfinite(amax), amax, zeros_like(amax));
  Array s = (1.0 - l) * exp(log_p - amax) + l * exp(log_q - amax);
  Array log_one_minus_p_t = log(abs(s)) + amax;
  Array loss = ce * exp(gamma * log_one_minus_p_t);
  if (!alpha) return loss;
  return (*alpha * l + (1.0 - *alpha) * (1.0 - l)) * loss;
}

Array hinge_loss(const Array& predictor_outputs, const Array& targets) {
  return maximum(1.0 - predictor_outputs * targets, 0.0);
}

Array perceptron_loss(const Array& predictor_outputs, const Array& targets) {
  loss_detail::check_same_shape(predictor_outputs, targets, "perceptron_loss");
  return maximum(-predictor_outputs * targets, 0.0);
}

namespace {
Array one_hot_like(const Array& scores, const Array& labels) {
  return one_hot(labels, scores.shape().back(),
                 is_floating(scores.dtype()) ? scores.dtype() : float32);
}
}  // namespace

Array multiclass_hinge_loss(const Array& scores, const Array& labels) {
  Array oh = one_hot_like(scores, labels);
  return max(scores + 1.0 - oh, -1) - sum(scores * oh, -1);
}

Array multiclass_perceptron_loss(const Array& scores, const Array& labels) {
  Array oh = one_hot_like(scores, labels);
  return max(scores, -1) - sum(scores * oh, -1);
}

Array sparsemax_loss(const Array& logits, const Array& labels) {
  // jax.nn.sparse_plus of labels ? -logits : logits.
  Array x = where(not_equal(labels, zeros_like(labels)), -logits, logits);
  Array mid = (x + 1.0) * (x + 1.0) / 4.0;
  return where(x <= -1.0, zeros_like(x), where(x >= 1.0, x, mid));
}

namespace {

// optax.projections.projection_simplex over the last axis: max(x - tau, 0) with tau such that
// the result sums to 1. The support is found without a sort: x_i is in it iff
// 1 + k_i x_i > s_i, where k_i counts and s_i sums the entries >= x_i (what the sorted
// cumulative test reads at x_i's position); tau follows from the support with linum ops, so
// the gradient is the projection's (optax's custom JVP: the support's centring).
Array projection_simplex(const Array& x) {
  Array xi = expand_dims(x, -1), xj = expand_dims(x, -2);                // (..., n, 1), (..., 1, n)
  Array ge = astype(stop_gradient(xj) >= stop_gradient(xi), x.dtype());  // [i, j]: x_j >= x_i
  Array k = sum(ge, -1), s = sum(ge * stop_gradient(xj), -1);
  Array support = astype(1.0 + k * stop_gradient(x) > s, x.dtype());
  Array card = sum(support, -1, true);
  Array tau = (sum(support * x, -1, true) - 1.0) / card;
  return relu(x - tau);
}

}  // namespace

Array multiclass_sparsemax_loss(const Array& scores, const Array& labels) {
  check_floating(scores, "scores", "multiclass_sparsemax_loss");
  if (scores.ndim() != 2 || labels.ndim() != 1 || labels.shape()[0] != scores.shape()[0])
    throw ValueError(
        "multiclass_sparsemax_loss: expected scores (batch, classes) and labels "
        "(batch,), got " +
        shape_str(scores.shape()) + " and " + shape_str(labels.shape()));
  Array proba = projection_simplex(scores);
  Array oh = one_hot(labels, scores.shape()[1], scores.dtype());
  Array label_score = sum(scores * oh, -1, true);
  Array shifted = where(oh > 0.0, zeros_like(scores), scores - label_score);
  Array in_support = proba > 0.0;
  return sum(proba * where(in_support, shifted, zeros_like(shifted)), -1) +
         0.5 * (1.0 - sum(proba * proba, -1));
}

Array kl_divergence(const Array& log_predictions, const Array& targets, const Axes& axis,
                    const std::optional<Array>& where) {
  constexpr const char* fn = "kl_divergence";
  check_floating(log_predictions, "log_predictions", fn);
  check_floating(targets, "targets", fn);
  Array zero = equal(targets, zeros_like(targets));
  Array log_t = log(linum::where(zero, ones_like(targets), targets));  // 0 where targets == 0
  Array loss = targets * (log_t - log_predictions);
  return loss_detail::masked_sum(loss, axis, where);
}

Array kl_divergence_with_log_targets(const Array& log_predictions, const Array& log_targets,
                                     const Axes& axis, const std::optional<Array>& where) {
  constexpr const char* fn = "kl_divergence_with_log_targets";
  check_floating(log_predictions, "log_predictions", fn);
  check_floating(log_targets, "log_targets", fn);
  return loss_detail::masked_sum(exp(log_targets) * (log_targets - log_predictions), axis, where);
}

Array generalized_kl_divergence(const Array& log_predictions, const Array& targets,
                                const Axes& axis, const std::optional<Array>& where) {
  return kl_divergence(log_predictions, targets, axis, where) +
         loss_detail::masked_sum(exp(log_predictions) - targets, axis, where);
}

Array convex_kl_divergence(const Array& log_predictions, const Array& targets, const Axes& axis,
                           const std::optional<Array>& where) {
  return generalized_kl_divergence(log_predictions, targets, axis, where);
}

}  // namespace linum::optim
