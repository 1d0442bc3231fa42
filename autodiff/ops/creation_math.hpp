// Creation functions that compute their values: jnp's window functions (bartlett, blackman,
// hamming, hanning, kaiser: float32 arrays of length M) and logarithmic / geometric spacing.
#pragma once

#include <cstdint>

#include <linum/autodiff/array.hpp>

namespace linum {

Array bartlett(std::int64_t m);
Array blackman(std::int64_t m);
Array hamming(std::int64_t m);
Array hanning(std::int64_t m);
Array kaiser(std::int64_t m, const Array& beta);
// base^linspace(start, stop, num) and the geometric sequence from start to stop (same signs).
Array logspace(double start, double stop, std::int64_t num = 50, bool endpoint = true,
               double base = 10.0, DType dtype = float32);
Array geomspace(double start, double stop, std::int64_t num = 50, bool endpoint = true,
                DType dtype = float32);
// jnp.empty_like: zeros of x's shape and dtype (JAX has no uninitialised arrays).
Array empty_like(const Array& x);

}  // namespace linum
