// small_gemm: register-blocked xsimd GEMM for small products, without packing the operands
// (except a transposed B with short rows) and without a zeroing pass over C.
#include <linum/autodiff/ops/small_gemm.hpp>

#include <xsimd/xsimd.hpp>

#include <vector>

namespace linum::detail {
namespace {

template <class T>
using Vec = xsimd::batch<T>;

// Register tile of the broadcast kernel: kRows rows of C by kVecs SIMD vectors (6 x 16 floats
// on AVX2: 12 accumulators, 2 B vectors and 1 broadcast fill the 16 registers).
constexpr int kRows = 6, kVecs = 2;
// Register tile of the dot kernel (A·Bᵀ, both contiguous along k): kDotA rows by kDotB rows.
constexpr int kDotA = 3, kDotB = 4;

// C[0:R, 0:V·W] (+)= A[0:R, :]·B[:, 0:V·W] with A(i, p) = a[i·ars + p·acs] (so a transposed A
// costs nothing) and the rows of B contiguous with stride ldb.
template <class T, int R, int V>
void tile_nn(std::int64_t k, const T* a, std::int64_t ars, std::int64_t acs, const T* b,
             std::int64_t ldb, T* c, std::int64_t ldc, bool acc) {
  using B = Vec<T>;
  constexpr std::int64_t w = B::size;
  B r[R][V];
#pragma GCC unroll 8
  for (int i = 0; i < R; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) r[i][v] = B(T(0));
  for (std::int64_t p = 0; p < k; ++p) {
    B bv[V];
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) bv[v] = B::load_unaligned(b + p * ldb + v * w);
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i) {
      const B av(a[i * ars + p * acs]);
#pragma GCC unroll 4
      for (int v = 0; v < V; ++v) r[i][v] = xsimd::fma(av, bv[v], r[i][v]);
    }
  }
#pragma GCC unroll 8
  for (int i = 0; i < R; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) {
      T* o = c + i * ldc + v * w;
      (acc ? r[i][v] + B::load_unaligned(o) : r[i][v]).store_unaligned(o);
    }
}

// One column strip of V vectors over all m rows, in tiles of kRows and a tail of fewer rows.
template <class T, int V>
void strip_nn(std::int64_t m, std::int64_t k, const T* a, std::int64_t ars, std::int64_t acs,
              const T* b, std::int64_t ldb, T* c, std::int64_t ldc, bool acc) {
  std::int64_t i = 0;
  for (; i + kRows <= m; i += kRows)
    tile_nn<T, kRows, V>(k, a + i * ars, ars, acs, b, ldb, c + i * ldc, ldc, acc);
  const T* ai = a + i * ars;
  T* ci = c + i * ldc;
  switch (m - i) {
    case 5: tile_nn<T, 5, V>(k, ai, ars, acs, b, ldb, ci, ldc, acc); break;
    case 4: tile_nn<T, 4, V>(k, ai, ars, acs, b, ldb, ci, ldc, acc); break;
    case 3: tile_nn<T, 3, V>(k, ai, ars, acs, b, ldb, ci, ldc, acc); break;
    case 2: tile_nn<T, 2, V>(k, ai, ars, acs, b, ldb, ci, ldc, acc); break;
    case 1: tile_nn<T, 1, V>(k, ai, ars, acs, b, ldb, ci, ldc, acc); break;
    default: break;
  }
  static_assert(kRows == 6, "the row tail above covers kRows - 1 rows");
}

// C (+)= A·B with B row-contiguous: strips of kVecs vectors, one of a single vector, then the
// columns short of a vector one by one.
template <class T>
void kernel_nn(std::int64_t m, std::int64_t n, std::int64_t k, const T* a, std::int64_t ars,
               std::int64_t acs, const T* b, std::int64_t ldb, T* c, std::int64_t ldc, bool acc) {
  constexpr std::int64_t w = Vec<T>::size;
  std::int64_t j = 0;
  for (; j + kVecs * w <= n; j += kVecs * w)
    strip_nn<T, kVecs>(m, k, a, ars, acs, b + j, ldb, c + j, ldc, acc);
  for (; j + w <= n; j += w) strip_nn<T, 1>(m, k, a, ars, acs, b + j, ldb, c + j, ldc, acc);
  for (; j < n; ++j)
    for (std::int64_t i = 0; i < m; ++i) {
      T s(0);
      for (std::int64_t p = 0; p < k; ++p) s += a[i * ars + p * acs] * b[p * ldb + j];
      T& o = c[i * ldc + j];
      o = acc ? o + s : s;
    }
}

// C[0:RA, 0:RB] (+)= A[0:RA, :]·B[0:RB, :]ᵀ, rows of A and B contiguous along k: SIMD products
// along k, one horizontal sum per output.
template <class T, int RA, int RB>
void tile_dot(std::int64_t k, const T* a, std::int64_t lda, const T* b, std::int64_t ldb, T* c,
              std::int64_t ldc, bool acc) {
  using B = Vec<T>;
  constexpr std::int64_t w = B::size;
  B r[RA][RB];
#pragma GCC unroll 4
  for (int i = 0; i < RA; ++i)
#pragma GCC unroll 4
    for (int j = 0; j < RB; ++j) r[i][j] = B(T(0));
  std::int64_t p = 0;
  for (; p + w <= k; p += w) {
    B av[RA];
#pragma GCC unroll 4
    for (int i = 0; i < RA; ++i) av[i] = B::load_unaligned(a + i * lda + p);
#pragma GCC unroll 4
    for (int j = 0; j < RB; ++j) {
      const B bv = B::load_unaligned(b + j * ldb + p);
#pragma GCC unroll 4
      for (int i = 0; i < RA; ++i) r[i][j] = xsimd::fma(av[i], bv, r[i][j]);
    }
  }
  for (int i = 0; i < RA; ++i)
    for (int j = 0; j < RB; ++j) {
      T s = xsimd::hadd(r[i][j]);
      for (std::int64_t q = p; q < k; ++q) s += a[i * lda + q] * b[j * ldb + q];
      T& o = c[i * ldc + j];
      o = acc ? o + s : s;
    }
}

template <class T, int RA>
void row_dot(std::int64_t n, std::int64_t k, const T* a, std::int64_t lda, const T* b,
             std::int64_t ldb, T* c, std::int64_t ldc, bool acc) {
  std::int64_t j = 0;
  for (; j + kDotB <= n; j += kDotB)
    tile_dot<T, RA, kDotB>(k, a, lda, b + j * ldb, ldb, c + j, ldc, acc);
  switch (n - j) {
    case 3: tile_dot<T, RA, 3>(k, a, lda, b + j * ldb, ldb, c + j, ldc, acc); break;
    case 2: tile_dot<T, RA, 2>(k, a, lda, b + j * ldb, ldb, c + j, ldc, acc); break;
    case 1: tile_dot<T, RA, 1>(k, a, lda, b + j * ldb, ldb, c + j, ldc, acc); break;
    default: break;
  }
  static_assert(kDotB == 4, "the column tail above covers kDotB - 1 columns");
}

// C (+)= A·Bᵀ with A (m×k) and B (n×k) both row-major.
template <class T>
void kernel_dot(std::int64_t m, std::int64_t n, std::int64_t k, const T* a, std::int64_t lda,
                const T* b, std::int64_t ldb, T* c, std::int64_t ldc, bool acc) {
  std::int64_t i = 0;
  for (; i + kDotA <= m; i += kDotA)
    row_dot<T, kDotA>(n, k, a + i * lda, lda, b, ldb, c + i * ldc, ldc, acc);
  switch (m - i) {
    case 2: row_dot<T, 2>(n, k, a + i * lda, lda, b, ldb, c + i * ldc, ldc, acc); break;
    case 1: row_dot<T, 1>(n, k, a + i * lda, lda, b, ldb, c + i * ldc, ldc, acc); break;
    default: break;
  }
  static_assert(kDotA == 3, "the row tail above covers kDotA - 1 rows");
}

}  // namespace

bool small_gemm_preferred(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n,
                          std::int64_t k) {
  (void)trans_a;
  (void)m;
  // Short contractions (outer products of batched VJPs) are all stores: BLAS only adds its
  // zeroing pass and packing. Beyond that, BLAS wins for a transposed B and for narrow C.
  if (k <= 8) return true;
  if (trans_b || n < 8) return false;
  return m * n * k <= (std::int64_t(1) << 20);
}

template <class T>
void small_gemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k,
                const T* a, std::int64_t lda, const T* b, std::int64_t ldb, T* c, std::int64_t ldc,
                bool accumulate) {
  constexpr std::int64_t w = Vec<T>::size;
  const std::int64_t ars = trans_a ? 1 : lda, acs = trans_a ? lda : 1;
  if (!trans_b) return kernel_nn(m, n, k, a, ars, acs, b, ldb, c, ldc, accumulate);
  if (!trans_a && k >= 4 * w) return kernel_dot(m, n, k, a, lda, b, ldb, c, ldc, accumulate);
  // A transposed B with short rows: copy it to k×n (at most the size of the product's reads).
  thread_local std::vector<T> packed;
  packed.resize(static_cast<std::size_t>(k * n));
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t p = 0; p < k; ++p) packed[p * n + j] = b[j * ldb + p];
  kernel_nn(m, n, k, a, ars, acs, packed.data(), n, c, ldc, accumulate);
}

template void small_gemm<float>(bool, bool, std::int64_t, std::int64_t, std::int64_t, const float*,
                                std::int64_t, const float*, std::int64_t, float*, std::int64_t,
                                bool);
template void small_gemm<double>(bool, bool, std::int64_t, std::int64_t, std::int64_t,
                                 const double*, std::int64_t, const double*, std::int64_t, double*,
                                 std::int64_t, bool);

}  // namespace linum::detail
