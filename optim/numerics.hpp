// optax.safe_norm and the other numerics helpers that user code may call directly.
#pragma once

#include <linum/autodiff/array.hpp>
#include <linum/autodiff/ops/axes.hpp>

namespace linum::optim {

// Euclidean norm over `axis` (all axes by default) that returns min_norm where the norm is at most
// min_norm, with a finite gradient there (optax.safe_norm).
Array safe_norm(const Array& x, double min_norm, const Axes& axis = {}, bool keepdims = false);

// Root mean square of all of x that returns min_rms where it is at most min_rms, with a finite
// gradient there (optax.safe_root_mean_squares).
Array safe_root_mean_squares(const Array& x, double min_rms);

}  // namespace linum::optim
