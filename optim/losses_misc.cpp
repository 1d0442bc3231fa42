// optax's self-supervised losses (ntxent, triplet_margin_loss) and smooth_labels, in linum ops.
#include <limits>
#include <string>

#include <linum/autodiff/ops.hpp>
#include <linum/optim/losses.hpp>
#include <linum/optim/losses_detail.hpp>

namespace linum::optim {

Array smooth_labels(const Array& labels, double alpha, const Axes& axis,
                    const std::optional<Array>& where) {
  loss_detail::check_floating(labels, "labels", "smooth_labels");
  // jnp.size(labels, axis), or the number of where-ed classes, counted as labels' dtype.
  Array num_categories =
      where ? sum(astype(*where, labels.dtype()), axis, true) : sum(ones_like(labels), axis, true);
  return (1.0 - alpha) * labels + alpha / num_categories;
}

Array ntxent(const Array& embeddings, const Array& labels, double temperature) {
  constexpr const char* fn = "ntxent";
  loss_detail::check_floating(embeddings, "embeddings", fn);
  if (embeddings.ndim() != 2 || labels.ndim() != 1)
    throw ValueError(std::string(fn) + ": expected embeddings (N, D) and labels (N,), got " +
                     shape_str(embeddings.shape()) + " and " + shape_str(labels.shape()));
  if (labels.shape()[0] != embeddings.shape()[0])
    throw ValueError(std::string(fn) +
                     ": Labels and embeddings must have the same leading dimension, found " +
                     std::to_string(labels.shape()[0]) + " for labels and " +
                     std::to_string(embeddings.shape()[0]) + " for embeddings.");
  const std::int64_t n = embeddings.shape()[0];
  // jnp.finfo(dtype).eps clips the squared norms, as optax does.
  const double eps = finfo(embeddings.dtype()).eps;
  Array xcs = cosine_similarity(expand_dims(embeddings, 0), expand_dims(embeddings, 1), eps) /
              temperature;  // [i, j]: cos(e_i, e_j) / temperature
  Array same = equal(expand_dims(labels, 1), expand_dims(labels, 0));
  Array diffs = logical_not(same);
  Array matches = logical_and(same, logical_not(astype(eye(n), bool_)));  // no self pairs
  const double ninf = -std::numeric_limits<double>::infinity();
  Array xcs_diffs = where(diffs, xcs, ninf);
  Array xcs_matches = where(matches, xcs, ninf);
  Array xcs_max = stop_gradient(max(concatenate({xcs_diffs, xcs_matches}, -1), 1, true));
  Array shift_diffs = xcs_diffs - xcs_max, shift_matches = xcs_matches - xcs_max;
  Array denom = sum(exp(shift_diffs), 1, true) + exp(shift_matches);
  Array log_softmax_matches = shift_matches - log(denom);
  return -sum(where(matches, log_softmax_matches, 0.0)) / sum(astype(matches, embeddings.dtype()));
}

Array triplet_margin_loss(const Array& anchors, const Array& positives, const Array& negatives,
                          int axis, double norm_degree, double margin, double eps) {
  constexpr const char* fn = "triplet_margin_loss";
  loss_detail::check_floating(anchors, "anchors", fn);
  loss_detail::check_floating(positives, "positives", fn);
  loss_detail::check_floating(negatives, "negatives", fn);
  auto distance = [&](const Array& other) {
    return power(sum(power(anchors - other, norm_degree), axis) + eps, 1.0 / norm_degree);
  };
  return maximum(distance(positives) - distance(negatives) + margin, 0.0);
}

}  // namespace linum::optim
