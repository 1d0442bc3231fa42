// Included only by the library's loss .cpp files (not part of the public API): the masked
// softmax helpers that optax's `where` arguments need, and argument checks.
#pragma once

#include <optional>
#include <string>

#include <linum/autodiff/array.hpp>
#include <linum/autodiff/ops/axes.hpp>

namespace linum::optim::loss_detail {

// TypeError naming fn unless x has a floating dtype.
void check_floating(const Array& x, const char* what, const char* fn);
// ValueError naming fn unless a and b have the same shape.
void check_same_shape(const Array& a, const Array& b, const char* fn);

// x with a mask broadcast against it (a mask of lower rank is expanded at the single axis).
Array expand_mask(const Array& where, const Array& x, const Axes& axis, const char* fn);

// jax.nn.log_softmax / softmax with `where`: the masked-out entries leave the normaliser (and
// read -inf / 0).
Array masked_log_softmax(const Array& x, const Axes& axis, const Array& where);
Array masked_softmax(const Array& x, const Axes& axis, const Array& where);
// sum(x, axis, where=where): the masked-out entries count as 0.
Array masked_sum(const Array& x, const Axes& axis, const std::optional<Array>& where,
                 bool keepdims = false);

// softmax_cross_entropy with `where` (the fused kernel takes none).
Array masked_softmax_cross_entropy(const Array& logits, const Array& labels, const Axes& axis,
                                   const Array& where);
// softmax_cross_entropy_with_integer_labels with `where`, on logits and mask with the classes
// last and flattened.
Array masked_integer_cross_entropy(const Array& logits, const Array& labels, const Array& where);

}  // namespace linum::optim::loss_detail
