// optax's softmax cross-entropy losses on fused kernels: the loss and its gradient in the logits
// each read a row of logits in one sweep, where log_softmax's composition takes several passes
// and allocates a full array per pass. Results equal optax's formulas; the tests hold them to it.
#pragma once

#include <linum/autodiff/array.hpp>
#include <linum/autodiff/ops/axes.hpp>

namespace linum::optim {

// optax.softmax_cross_entropy: -sum(labels * log_softmax(logits, axis), axis). labels broadcast
// against logits; `axis` names the class axis or axes (None: all of them, a scalar result).
Array softmax_cross_entropy(const Array& logits, const Array& labels, const Axes& axis = -1);

// optax.softmax_cross_entropy_with_integer_labels: logsumexp(logits, axis) - logits[label].
// labels: an integer array of logits' shape without the class axes, each in [0, num_classes)
// (several class axes are flattened in row-major order, as optax does); IndexError otherwise.
Array softmax_cross_entropy_with_integer_labels(const Array& logits, const Array& labels,
                                                const Axes& axis = -1);

}  // namespace linum::optim
