// small_gemm: register-blocked xsimd GEMM for small products, without a zeroing pass over C and
// without packing (a transposed B costs one copy of B, or of A and C when those are smaller).
#include <linum/autodiff/ops/small_gemm.hpp>

#include <linum/autodiff/ops/kernel_util.hpp>
#include <linum/autodiff/ops/simd.hpp>

#include <algorithm>
#include <vector>

namespace linum::detail {
namespace {

template <class T>
using Vec = xsimd::batch<T>;

// Register tile of the broadcast kernel: kRows rows of C by kVecs SIMD vectors. AVX2's 16
// registers hold 6 x 2 (12 accumulators, 2 B vectors and a broadcast); AVX-512's 32 hold 8 x 2,
// which also covers a batch of 16 rows (an LSTM step's) in two tiles, each streaming B once.
#if defined(__AVX512F__)
constexpr int kRows = 8;
#else
constexpr int kRows = 6;
#endif
constexpr int kVecs = 2;

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
    case 7: tile_nn<T, 7, V>(k, ai, ars, acs, b, ldb, ci, ldc, acc); break;
    case 6: tile_nn<T, 6, V>(k, ai, ars, acs, b, ldb, ci, ldc, acc); break;
    case 5: tile_nn<T, 5, V>(k, ai, ars, acs, b, ldb, ci, ldc, acc); break;
    case 4: tile_nn<T, 4, V>(k, ai, ars, acs, b, ldb, ci, ldc, acc); break;
    case 3: tile_nn<T, 3, V>(k, ai, ars, acs, b, ldb, ci, ldc, acc); break;
    case 2: tile_nn<T, 2, V>(k, ai, ars, acs, b, ldb, ci, ldc, acc); break;
    case 1: tile_nn<T, 1, V>(k, ai, ars, acs, b, ldb, ci, ldc, acc); break;
    default: break;
  }
  static_assert(kRows <= 8, "the row tail above covers up to 7 rows");
}

// Per-thread buffers: 0 and 1 for small_gemm's copies, 2 and 3 for kernel_nn's last columns.
template <class T>
std::vector<T>& scratch(int which) {
  thread_local std::vector<T> buf[4];
  return buf[which];
}

// Gives back a buffer grown past 2^20 elements (a huge outer product) instead of keeping it.
template <class T>
void trim(std::vector<T>& v) {
  if (v.capacity() > (std::size_t(1) << 20)) std::vector<T>().swap(v);
}

// C (+)= A·B with B row-contiguous: strips of kVecs vectors, one of a single vector, then the
// columns short of a vector.
template <class T>
void kernel_nn(std::int64_t m, std::int64_t n, std::int64_t k, const T* a, std::int64_t ars,
               std::int64_t acs, const T* b, std::int64_t ldb, T* c, std::int64_t ldc, bool acc) {
  constexpr std::int64_t w = Vec<T>::size;
  std::int64_t j = 0;
  for (; j + kVecs * w <= n; j += kVecs * w)
    strip_nn<T, kVecs>(m, k, a, ars, acs, b + j, ldb, c + j, ldc, acc);
  for (; j + w <= n; j += w) strip_nn<T, 1>(m, k, a, ars, acs, b + j, ldb, c + j, ldc, acc);
  if (j == n) return;
  if (k <= 8) {
    // Short contractions (n = 1 outer products of per-example gradients): a chunk of rows at a
    // time, a loop along m, which vectorizes when A's column is contiguous.
    constexpr std::int64_t chunk = 64;
    T s[chunk];
    for (; j < n; ++j)
      for (std::int64_t i0 = 0; i0 < m; i0 += chunk) {
        const std::int64_t rows = std::min(chunk, m - i0);
        const T* ai = a + i0 * ars;
        std::fill(s, s + rows, T(0));
        for (std::int64_t p = 0; p < k; ++p) {
          const T bv = b[p * ldb + j];
          if (ars == 1)
            for (std::int64_t i = 0; i < rows; ++i) s[i] += ai[i + p * acs] * bv;
          else
            for (std::int64_t i = 0; i < rows; ++i) s[i] += ai[i * ars + p * acs] * bv;
        }
        T* ci = c + i0 * ldc + j;
        for (std::int64_t i = 0; i < rows; ++i) ci[i * ldc] = acc ? ci[i * ldc] + s[i] : s[i];
      }
    return;
  }
  // Longer ones: B's last columns padded with zeros to one vector into a buffer, C's computed
  // into another and copied out, so that they too run on the SIMD strip.
  const std::int64_t r = n - j;
  std::vector<T>&bt = scratch<T>(2), &ct = scratch<T>(3);
  bt.assign(static_cast<std::size_t>(k * w), T(0));
  ct.resize(static_cast<std::size_t>(m * w));
  for (std::int64_t p = 0; p < k; ++p)
    for (std::int64_t q = 0; q < r; ++q) bt[p * w + q] = b[p * ldb + j + q];
  strip_nn<T, 1>(m, k, a, ars, acs, bt.data(), w, ct.data(), w, false);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t q = 0; q < r; ++q) {
      T& o = c[i * ldc + j + q];
      o = acc ? o + ct[i * w + q] : ct[i * w + q];
    }
  trim(bt);
  trim(ct);
}

}  // namespace

template <class T>
bool small_gemm_preferred(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n,
                          std::int64_t k) {
  (void)trans_a;
  // Short contractions (outer products of batched VJPs) are all stores: BLAS only adds its
  // zeroing pass and packing. Otherwise BLAS wins on products narrower than a full strip of the
  // kernel (its strips run along n, or along m when Bᵀ is handled as Cᵀ) and from about 2^21
  // multiply-adds.
  constexpr std::int64_t strip = kVecs * Vec<T>::size;
  if (k <= 8) return true;
  if (n < strip || (trans_b && m < strip)) return false;
  return m * n * k <= (std::int64_t(1) << 20);
}

template <class T>
void small_gemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k,
                const T* a, std::int64_t lda, const T* b, std::int64_t ldb, T* c, std::int64_t ldc,
                bool accumulate) {
  const std::int64_t ars = trans_a ? 1 : lda, acs = trans_a ? lda : 1;
  if (!trans_b) return kernel_nn(m, n, k, a, ars, acs, b, ldb, c, ldc, accumulate);
  // B transposed: either copy B to k×n, or compute Cᵀ = B·op(A)ᵀ (B as stored is then the
  // broadcast operand) into a buffer and transpose that into C; whichever copies less.
  const std::int64_t copy_b = n * k, copy_swap = (trans_a ? 0 : m * k) + m * n;
  if (copy_b <= copy_swap || m < static_cast<std::int64_t>(Vec<T>::size)) {
    std::vector<T>& packed = scratch<T>(0);
    packed.resize(static_cast<std::size_t>(k * n));
    transpose_into(n, k, b, ldb, packed.data());
    kernel_nn(m, n, k, a, ars, acs, packed.data(), n, c, ldc, accumulate);
    return trim(packed);
  }
  const T* at = a;  // op(A)ᵀ, k×m with rows contiguous
  std::int64_t ldat = lda;
  if (!trans_a) {
    std::vector<T>& packed = scratch<T>(0);
    packed.resize(static_cast<std::size_t>(k * m));
    transpose_into(m, k, a, lda, packed.data());
    at = packed.data(), ldat = m;
  }
  std::vector<T>& ct = scratch<T>(1);
  ct.resize(static_cast<std::size_t>(n * m));
  kernel_nn(n, m, k, b, ldb, std::int64_t(1), at, ldat, ct.data(), m, false);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      T& o = c[i * ldc + j];
      o = accumulate ? o + ct[j * m + i] : ct[j * m + i];
    }
  trim(scratch<T>(0));
  trim(ct);
}

template bool small_gemm_preferred<float>(bool, bool, std::int64_t, std::int64_t, std::int64_t);
template bool small_gemm_preferred<double>(bool, bool, std::int64_t, std::int64_t, std::int64_t);
template void small_gemm<float>(bool, bool, std::int64_t, std::int64_t, std::int64_t, const float*,
                                std::int64_t, const float*, std::int64_t, float*, std::int64_t,
                                bool);
template void small_gemm<double>(bool, bool, std::int64_t, std::int64_t, std::int64_t,
                                 const double*, std::int64_t, const double*, std::int64_t, double*,
                                 std::int64_t, bool);

}  // namespace linum::detail
