// The small-matrix GEMM kernel behind gemm<float/double> (ops/linalg.cpp) for the shapes where
// OpenBLAS's packing and its separate beta = 0 zeroing pass cost more than the products: outer
// products (k = 1) of batched VJPs, the M = 16 GEMMs of a scanned RNN. Internal (.cpp only).
#pragma once

#include <cstdint>

namespace linum::detail {

// Whether small_gemm should serve this product instead of BLAS (sizes chosen by measurement,
// see the commit messages of ops/small_gemm.cpp). Instantiated for float and double.
template <class T>
bool small_gemm_preferred(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n,
                          std::int64_t k);

// C = op(A)·op(B) (+ C when accumulate), row-major with leading dimensions, same contract as
// gemm<T>; any m, n, k >= 1. Instantiated for float and double.
template <class T>
void small_gemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k,
                const T* a, std::int64_t lda, const T* b, std::int64_t ldb, T* c, std::int64_t ldc,
                bool accumulate);

}  // namespace linum::detail
