// optax.losses: regression (squared_error, l2_loss, huber_loss, log_cosh, cosine_similarity /
// cosine_distance), classification (the softmax cross-entropies on fused kernels, safe and poly
// variants, sigmoid binary cross-entropy and focal loss, hinge / perceptron / sparsemax losses,
// KL divergences, CTC), ranking, segmentation (dice), self-supervised (NT-Xent, triplet margin)
// losses, smooth_labels and make_fenchel_young_loss. Every loss is written with linum
// ops (or primitives with their own rules), so grad / vmap / jit work through it. `where`
// arguments mask entries out of the reductions, as optax's do.
#pragma once

#include <optional>
#include <string>
#include <tuple>
#include <utility>

#include <linum/autodiff/array.hpp>
#include <linum/autodiff/ops/axes.hpp>
#include <linum/autodiff/ops/elementwise.hpp>
#include <linum/autodiff/ops/reduction.hpp>
#include <linum/autodiff/transforms.hpp>

namespace linum::optim {

// ---- classification: softmax cross-entropies (losses.cpp, losses_classification.cpp) --------

// optax.softmax_cross_entropy: -sum(labels * log_softmax(logits, axis), axis). labels broadcast
// against logits; `axis` names the class axis or axes (None: all of them, a scalar result).
// With `where`, the masked-out classes leave the softmax and the sum.
Array softmax_cross_entropy(const Array& logits, const Array& labels, const Axes& axis = -1,
                            const std::optional<Array>& where = std::nullopt);

// optax.softmax_cross_entropy_with_integer_labels: logsumexp(logits, axis) - logits[label].
// labels: an integer array of logits' shape without the class axes, each in [0, num_classes)
// (several class axes are flattened in row-major order, as optax does); IndexError otherwise.
// With `where`, 0 for rows where no class is in.
Array softmax_cross_entropy_with_integer_labels(const Array& logits, const Array& labels,
                                                const Axes& axis = -1,
                                                const std::optional<Array>& where = std::nullopt);

// optax.safe_softmax_cross_entropy: softmax_cross_entropy over the last axis that stays finite
// (value and gradient) where logits are -inf and their labels 0.
Array safe_softmax_cross_entropy(const Array& logits, const Array& labels);

// optax.poly_loss_cross_entropy: cross-entropy + epsilon * sum(labels * (1 - softmax)).
Array poly_loss_cross_entropy(const Array& logits, const Array& labels, double epsilon = 2.0,
                              const Axes& axis = -1,
                              const std::optional<Array>& where = std::nullopt);

// optax.sigmoid_binary_cross_entropy: -labels log sigmoid(x) - (1 - labels) log sigmoid(-x),
// elementwise; labels (probabilities) cast to the logits' dtype.
Array sigmoid_binary_cross_entropy(const Array& logits, const Array& labels);

// optax.sigmoid_focal_loss: the binary cross-entropy times (1 - p_t)**gamma, weighted by
// alpha * labels + (1 - alpha) * (1 - labels) when alpha is given.
Array sigmoid_focal_loss(const Array& logits, const Array& labels,
                         std::optional<double> alpha = std::nullopt, double gamma = 2.0);

// optax.hinge_loss: max(0, 1 - outputs * targets), targets in {-1, 1}.
Array hinge_loss(const Array& predictor_outputs, const Array& targets);
// optax.perceptron_loss: max(0, -outputs * targets); ValueError unless the shapes are equal.
Array perceptron_loss(const Array& predictor_outputs, const Array& targets);
// optax.multiclass_hinge_loss: max(scores + 1 - one_hot(labels)) - scores[labels].
Array multiclass_hinge_loss(const Array& scores, const Array& labels);
// optax.multiclass_perceptron_loss: max(scores) - scores[labels].
Array multiclass_perceptron_loss(const Array& scores, const Array& labels);
// optax.sparsemax_loss (binary): sparse_plus(labels ? -logits : logits).
Array sparsemax_loss(const Array& logits, const Array& labels);
// optax.multiclass_sparsemax_loss: scores (batch, classes), integer labels (batch,): the
// sparsemax loss, whose gradient is sparsemax(scores) - one_hot(labels).
Array multiclass_sparsemax_loss(const Array& scores, const Array& labels);

// optax.kl_divergence: sum(targets * (log(targets) - log_predictions), axis), 0 * log 0 = 0.
Array kl_divergence(const Array& log_predictions, const Array& targets, const Axes& axis = -1,
                    const std::optional<Array>& where = std::nullopt);
// optax.kl_divergence_with_log_targets: sum(exp(log_targets) * (log_targets - log_predictions)).
Array kl_divergence_with_log_targets(const Array& log_predictions, const Array& log_targets,
                                     const Axes& axis = -1,
                                     const std::optional<Array>& where = std::nullopt);
// optax.generalized_kl_divergence (and its older name convex_kl_divergence): kl_divergence +
// sum(exp(log_predictions) - targets), for unnormalised distributions.
Array generalized_kl_divergence(const Array& log_predictions, const Array& targets,
                                const Axes& axis = -1,
                                const std::optional<Array>& where = std::nullopt);
Array convex_kl_divergence(const Array& log_predictions, const Array& targets,
                           const Axes& axis = -1, const std::optional<Array>& where = std::nullopt);

// ---- CTC (losses_ctc.cpp) ------------------------------------------------------------------

// optax.ctc_loss_with_forward_probs: logits (B, T, K), logit_paddings (B, T) (1 = padding),
// labels (B, N) integers, label_paddings (B, N). Returns (per-sequence loss (B,), log alpha of
// the blank states (T, B, N + 1), log alpha of the emit states (T, B, N)), computed by optax's
// forward recursion with log_epsilon standing for log 0.
std::tuple<Array, Array, Array> ctc_loss_with_forward_probs(
    const Array& logits, const Array& logit_paddings, const Array& labels,
    const Array& label_paddings, int blank_id = 0, double log_epsilon = -1e5);
// optax.ctc_loss: the per-sequence negative log-likelihood (B,).
Array ctc_loss(const Array& logits, const Array& logit_paddings, const Array& labels,
               const Array& label_paddings, int blank_id = 0, double log_epsilon = -1e5);

// ---- regression (losses_regression.cpp) ------------------------------------------------------

// optax.squared_error: (predictions - targets)**2 (predictions**2 without targets).
Array squared_error(const Array& predictions, const std::optional<Array>& targets = std::nullopt);
// optax.l2_loss: 0.5 * squared_error.
Array l2_loss(const Array& predictions, const std::optional<Array>& targets = std::nullopt);
// optax.huber_loss: 0.5 * err**2 where |err| <= delta, delta * (|err| - 0.5 * delta) beyond.
Array huber_loss(const Array& predictions, const std::optional<Array>& targets = std::nullopt,
                 double delta = 1.0);
// optax.log_cosh: log(cosh(err)), computed stably.
Array log_cosh(const Array& predictions, const std::optional<Array>& targets = std::nullopt);
// optax.cosine_similarity: <a, b> / (|a| |b|) over axis, the squared norms clipped below at
// epsilon.
Array cosine_similarity(const Array& predictions, const Array& targets, double epsilon = 0.0,
                        const Axes& axis = -1, const std::optional<Array>& where = std::nullopt);
// optax.cosine_distance: 1 - cosine_similarity.
Array cosine_distance(const Array& predictions, const Array& targets, double epsilon = 0.0,
                      const Axes& axis = -1, const std::optional<Array>& where = std::nullopt);

// ---- ranking and segmentation (losses_ranking.cpp) ----------------------------------------

// optax.losses.ranking_softmax_loss: the softmax cross-entropy of each list's scores (last axis)
// against its relevance labels (times weights), the where-ed out items left out; reduced by
// reduce_fn: "mean" (optax's default, over the lists with an item in, 0 when none is), "sum" or
// "none" (per list). ValueError for another reduce_fn.
Array ranking_softmax_loss(const Array& logits, const Array& labels,
                           const std::optional<Array>& where = std::nullopt,
                           const std::optional<Array>& weights = std::nullopt,
                           const std::string& reduce_fn = "mean");

// optax.losses.dice_loss: 1 - the Tversky coefficient (dice for alpha = beta = 0.5) per class
// over axis (default: all but the first and last), of softmax(predictions) over the classes
// (sigmoid for one class), or of the predictions as given with apply_softmax false (ValueError
// unless they sum to 1); times class_weights, the background class dropped with
// ignore_background, then reduced over the classes by reduction ("mean", "sum", "none").
// predictions or targets one rank short get a class axis of 1.
Array dice_loss(const Array& predictions, const Array& targets,
                const std::optional<Array>& class_weights = std::nullopt, double smooth = 1.0,
                double alpha = 0.5, double beta = 0.5, bool apply_softmax = true,
                const std::string& reduction = "mean", bool ignore_background = false,
                const std::optional<Axes>& axis = std::nullopt);
// optax.losses.multiclass_generalized_dice_loss: the mean of dice_loss with class weights
// 1 / (frequency**2 + 1e-7), normalised to sum to the number of classes.
Array multiclass_generalized_dice_loss(const Array& predictions, const Array& targets,
                                       double smooth = 1.0, bool apply_softmax = true,
                                       bool ignore_background = false);
// optax.losses.binary_dice_loss: dice_loss of sigmoid(predictions) against binary targets
// (a class axis of 1 added when the last axis is not one), averaged.
Array binary_dice_loss(const Array& predictions, const Array& targets, double smooth = 1.0,
                       bool apply_sigmoid = true);

// ---- self-supervised and smoothing (losses_misc.cpp) ---------------------------------------

// optax.ntxent: the normalized temperature-scaled cross-entropy of embeddings (N, D) whose
// integer labels (N,) mark positive pairs.
Array ntxent(const Array& embeddings, const Array& labels, double temperature = 0.07);
// optax.losses.triplet_margin_loss: max(|a - p|_d - |a - n|_d + margin, 0) over axis, with
// |x|_d = (sum x**d + eps)**(1 / d).
Array triplet_margin_loss(const Array& anchors, const Array& positives, const Array& negatives,
                          int axis = -1, double norm_degree = 2.0, double margin = 1.0,
                          double eps = 1e-6);

// optax.smooth_labels: (1 - alpha) * labels + alpha / number of classes (of the where-ed ones).
Array smooth_labels(const Array& labels, double alpha, const Axes& axis = -1,
                    const std::optional<Array>& where = std::nullopt);

// optax.losses.make_fenchel_young_loss(max_fun): the Fenchel-Young loss
// (scores, targets) -> max_fun(scores) - <targets, scores> over the last axis, max_fun taking a
// vector to a scalar (e.g. logsumexp gives the softmax cross-entropy); vmapped over the other
// axes.
template <class MaxFun>
auto make_fenchel_young_loss(MaxFun max_fun) {
  return [max_fun](const Array& scores, const Array& targets) {
    const Shape& s = scores.shape();
    if (s.empty()) throw ValueError("fenchel_young_loss: scores must have a class axis");
    const std::int64_t n = s.back(), rows = n ? scores.size() / n : 0;
    Array flat = scores.reshape({rows, n});
    Array maxes = vmap([&](const Array& row) { return max_fun(row); })(flat);
    Shape batch(s.begin(), s.end() - 1);
    return maxes.reshape(batch) - sum(targets * scores, -1);
  };
}

}  // namespace linum::optim
