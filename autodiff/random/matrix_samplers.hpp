// jax.random's matrix samplers: multivariate_normal (a factor of the covariance times standard
// normals) and orthogonal (Haar-distributed orthogonal matrices from a sign-fixed QR). Kept apart
// from random.hpp because they run linear algebra.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include <linum/autodiff/array.hpp>

namespace linum::random {

// mean (..., n) + factor(cov) @ z with z ~ N(0, I) of shape shape + (n,); cov (..., n, n). shape
// defaults to the broadcast of mean's and cov's batch shapes; dtype to mean's (after promoting
// mean and cov together to a float dtype). method: "cholesky" (default), "svd" or "eigh" (for
// singular covariances), as jax.random.multivariate_normal.
Array multivariate_normal(const Array& key, const Array& mean, const Array& cov,
                          const std::optional<Shape>& shape = std::nullopt,
                          std::optional<DType> dtype = std::nullopt,
                          std::string_view method = "cholesky");

// Uniform over the orthogonal group O(n): shape (*shape, n, m), m = n by default. For n != m a
// semi-orthogonal matrix (orthonormal rows when n < m, columns when n > m), as
// jax.random.orthogonal: Q * sign(diag R) of the QR of a (max(n, m), min(n, m)) normal sample.
Array orthogonal(const Array& key, std::int64_t n, const Shape& shape = {}, DType dtype = float32,
                 std::optional<std::int64_t> m = std::nullopt);

}  // namespace linum::random
