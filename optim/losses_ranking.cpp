// optax's ranking (ranking_softmax_loss) and segmentation (dice) losses, in linum ops.
#include <limits>
#include <string>
#include <vector>

#include <linum/autodiff/ops.hpp>
#include <linum/optim/losses.hpp>
#include <linum/optim/losses_detail.hpp>

namespace linum::optim {

namespace {

void check_reduction(const std::string& r, const char* what, const char* fn) {
  if (r != "mean" && r != "sum" && r != "none")
    throw ValueError(std::string(fn) + ": Unsupported " + what + ": '" + r +
                     "' (expected 'mean', 'sum' or 'none')");
}

// sum over axes; an empty list reduces nothing (jnp.sum(x, axis=())).
Array sum_over(const Array& x, const Axes& axes) {
  if (!axes.all && axes.axes.empty()) return x;
  return sum(x, axes);
}

}  // namespace

Array ranking_softmax_loss(const Array& logits, const Array& labels,
                           const std::optional<Array>& where, const std::optional<Array>& weights,
                           const std::string& reduce_fn) {
  constexpr const char* fn = "ranking_softmax_loss";
  loss_detail::check_floating(logits, "logits", fn);
  check_reduction(reduce_fn, "reduce_fn", fn);
  if (logits.ndim() == 0)
    throw ValueError(std::string(fn) + ": logits must have a list axis, got a scalar");
  Array l = astype(labels, logits.dtype());
  Array x = logits;
  std::optional<Array> w;
  if (where) {
    w = astype(broadcast_to(*where, logits.shape()), bool_);
    l = linum::where(*w, l, 0.0);
    x = linum::where(*w, x, -std::numeric_limits<double>::infinity());
  }
  if (weights) l = l * *weights;
  Array loss = -loss_detail::masked_sum(l * log_softmax(x, -1), -1, w);
  if (!w) {
    if (reduce_fn == "none") return loss;
    return reduce_fn == "sum" ? sum(loss) : mean(loss);
  }
  Array rows = any(*w, -1);  // the lists with an item in
  Array kept = linum::where(rows, loss, 0.0);
  if (reduce_fn == "none") return kept;
  if (reduce_fn == "sum") return sum(kept);
  Array m = sum(kept) / sum(astype(rows, loss.dtype()));
  // optax's _safe_reduce: a mean over no list (NaN) is 0 unless the losses themselves hold NaN.
  Array valid = logical_not(any(isnan(loss)));
  return linum::where(logical_and(isnan(m), valid), 0.0, m);
}

Array dice_loss(const Array& predictions, const Array& targets,
                const std::optional<Array>& class_weights, double smooth, double alpha, double beta,
                bool apply_softmax, const std::string& reduction, bool ignore_background,
                const std::optional<Axes>& axis) {
  constexpr const char* fn = "dice_loss";
  loss_detail::check_floating(predictions, "predictions", fn);
  check_reduction(reduction, "reduction", fn);
  Array p = predictions, t = astype(targets, predictions.dtype());
  if (p.ndim() == t.ndim() - 1) p = expand_dims(p, -1);
  if (t.ndim() == p.ndim() - 1) t = expand_dims(t, -1);
  loss_detail::check_same_shape(p, t, fn);
  if (p.ndim() == 0) throw ValueError(std::string(fn) + ": predictions must have a class axis");
  if (!apply_softmax) {
    // jnp.allclose(sums, 1, rtol=1e-5): |sum - 1| <= 1e-8 + 1e-5.
    Array sums = sum(p, -1);
    if (!all(abs(sums - 1.0) <= 1e-8 + 1e-5).concrete().item<bool>())
      throw ValueError(std::string(fn) +
                       ": When apply_softmax=False, predictions must be valid probability "
                       "distributions that sum to 1 along the class axis. Found sum range: [" +
                       std::to_string(min(sums).concrete().item<double>()) + ", " +
                       std::to_string(max(sums).concrete().item<double>()) + "]");
  }
  Array probs = p;
  if (apply_softmax) probs = p.shape().back() == 1 ? sigmoid(p) : softmax(p, -1);
  Axes ax;
  if (axis) {
    ax = *axis;
  } else {
    std::vector<int> spatial;
    for (int d = 1; d < probs.ndim() - 1; ++d) spatial.push_back(d);
    ax = Axes(spatial);
  }
  Array intersection = sum_over(probs * t, ax);
  Array pred_sum = sum_over(probs, ax), target_sum = sum_over(t, ax);
  Array coeff = (intersection + smooth) / (intersection + alpha * (pred_sum - intersection) +
                                           beta * (target_sum - intersection) + smooth);
  Array dl = 1.0 - coeff;  // [..., classes]
  if (class_weights) {
    if (class_weights->ndim() != 1)
      throw ValueError(std::string(fn) + ": class_weights must have rank 1, got shape " +
                       shape_str(class_weights->shape()));
    dl = dl * *class_weights;
  }
  const std::int64_t classes = probs.shape().back();
  if (ignore_background && classes > 1) {
    Shape start(dl.ndim(), 0);
    start.back() = 1;
    dl = lax_slice(dl, start, dl.shape());
  }
  if (reduction == "none") return dl;
  return reduction == "sum" ? sum(dl, -1) : mean(dl, -1);
}

Array multiclass_generalized_dice_loss(const Array& predictions, const Array& targets,
                                       double smooth, bool apply_softmax, bool ignore_background) {
  constexpr const char* fn = "multiclass_generalized_dice_loss";
  loss_detail::check_floating(predictions, "predictions", fn);
  loss_detail::check_same_shape(predictions, targets, fn);
  if (targets.ndim() == 0) throw ValueError(std::string(fn) + ": targets must have a class axis");
  std::vector<int> lead;
  for (int d = 0; d < targets.ndim() - 1; ++d) lead.push_back(d);
  Array freq = sum_over(astype(targets, predictions.dtype()), Axes(lead));
  Array w = 1.0 / (freq * freq + 1e-7);
  w = w / sum(w) * static_cast<double>(w.size());
  return mean(dice_loss(predictions, targets, w, smooth, 0.5, 0.5, apply_softmax, "none",
                        ignore_background));
}

Array binary_dice_loss(const Array& predictions, const Array& targets, double smooth,
                       bool apply_sigmoid) {
  loss_detail::check_floating(predictions, "predictions", "binary_dice_loss");
  Array p = predictions, t = targets;
  if (p.ndim() == t.ndim() && p.ndim() > 0 && p.shape().back() != 1) {
    p = expand_dims(p, -1);
    t = expand_dims(t, -1);
  }
  return dice_loss(p, t, std::nullopt, smooth, 0.5, 0.5, apply_sigmoid, "mean");
}

}  // namespace linum::optim
