// optax's regression losses (optax/losses/_regression.py) in linum ops, so they differentiate,
// vmap and jit like any other code.
#include <cmath>
#include <numbers>

#include <linum/autodiff/ops.hpp>
#include <linum/optim/losses.hpp>
#include <linum/optim/losses_detail.hpp>

namespace linum::optim {

namespace {

// predictions - targets (predictions alone without targets), predictions floating.
Array errors_of(const Array& predictions, const std::optional<Array>& targets, const char* fn,
                bool same_shape) {
  loss_detail::check_floating(predictions, "predictions", fn);
  if (!targets) return predictions;
  if (same_shape) loss_detail::check_same_shape(predictions, *targets, fn);
  return predictions - *targets;
}

}  // namespace

Array squared_error(const Array& predictions, const std::optional<Array>& targets) {
  Array e = errors_of(predictions, targets, "squared_error", true);
  return e * e;
}

Array l2_loss(const Array& predictions, const std::optional<Array>& targets) {
  Array e = errors_of(predictions, targets, "l2_loss", true);
  return 0.5 * (e * e);
}

Array huber_loss(const Array& predictions, const std::optional<Array>& targets, double delta) {
  Array abs_errors = abs(errors_of(predictions, targets, "huber_loss", false));
  Array quadratic = minimum(abs_errors, delta);
  return 0.5 * (quadratic * quadratic) + delta * (abs_errors - quadratic);
}

Array log_cosh(const Array& predictions, const std::optional<Array>& targets) {
  Array e = errors_of(predictions, targets, "log_cosh", false);
  return logaddexp(e, -e) - std::numbers::ln2;
}

Array cosine_similarity(const Array& predictions, const Array& targets, double epsilon,
                        const Axes& axis, const std::optional<Array>& where) {
  constexpr const char* fn = "cosine_similarity";
  loss_detail::check_floating(predictions, "predictions", fn);
  loss_detail::check_floating(targets, "targets", fn);
  std::optional<Array> w;
  if (where) w = astype(broadcast_to(*where, predictions.shape()), bool_);
  Array a_norm =
      sqrt(maximum(loss_detail::masked_sum(predictions * predictions, axis, w, true), epsilon));
  Array b_norm = sqrt(maximum(loss_detail::masked_sum(targets * targets, axis, w, true), epsilon));
  return loss_detail::masked_sum((predictions / a_norm) * (targets / b_norm), axis, w);
}

Array cosine_distance(const Array& predictions, const Array& targets, double epsilon,
                      const Axes& axis, const std::optional<Array>& where) {
  return 1.0 - cosine_similarity(predictions, targets, epsilon, axis, where);
}

}  // namespace linum::optim
