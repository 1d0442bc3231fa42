// Typed LAPACKE / CBLAS calls behind autodiff/ops/lapack.hpp. Row-major throughout: LAPACKE
// transposes to LAPACK's column-major layout and back.
#include <linum/autodiff/ops/lapack.hpp>

#include <cblas.h>
#include <lapacke.h>

#include <algorithm>
#include <type_traits>
#include <vector>

namespace linum::detail::lapack {

template <class T>
int potrf(int n, T* a) {
  if (n == 0) return 0;
  int info;
  if constexpr (std::is_same_v<T, float>)
    info = LAPACKE_spotrf(LAPACK_ROW_MAJOR, 'L', n, a, n);
  else
    info = LAPACKE_dpotrf(LAPACK_ROW_MAJOR, 'L', n, a, n);
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j) a[i * n + j] = T(0);
  return info;
}

template <class T>
void trsm(bool left, bool lower, bool trans_a, bool unit, int m, int n, const T* a, T* b) {
  if (m == 0 || n == 0) return;
  const auto side = left ? CblasLeft : CblasRight;
  const auto uplo = lower ? CblasLower : CblasUpper;
  const auto ta = trans_a ? CblasTrans : CblasNoTrans;
  const auto diag = unit ? CblasUnit : CblasNonUnit;
  const int lda = left ? m : n;
  if constexpr (std::is_same_v<T, float>)
    cblas_strsm(CblasRowMajor, side, uplo, ta, diag, m, n, 1.0f, a, lda, b, n);
  else
    cblas_dtrsm(CblasRowMajor, side, uplo, ta, diag, m, n, 1.0, a, lda, b, n);
}

template <class T>
int getrf(int m, int n, T* a, int* ipiv) {
  if (m == 0 || n == 0) return 0;
  int info;
  if constexpr (std::is_same_v<T, float>)
    info = LAPACKE_sgetrf(LAPACK_ROW_MAJOR, m, n, a, n, ipiv);
  else
    info = LAPACKE_dgetrf(LAPACK_ROW_MAJOR, m, n, a, n, ipiv);
  for (int i = 0; i < std::min(m, n); ++i) --ipiv[i];  // LAPACK counts rows from 1
  return info;
}

template <class T>
void getrs(bool trans, int n, int nrhs, const T* lu, const int* ipiv, T* b) {
  if (n == 0 || nrhs == 0) return;
  std::vector<int> piv(ipiv, ipiv + n);
  for (int& p : piv) ++p;
  const char t = trans ? 'T' : 'N';
  if constexpr (std::is_same_v<T, float>)
    LAPACKE_sgetrs(LAPACK_ROW_MAJOR, t, n, nrhs, lu, n, piv.data(), b, nrhs);
  else
    LAPACKE_dgetrs(LAPACK_ROW_MAJOR, t, n, nrhs, lu, n, piv.data(), b, nrhs);
}

template <class T>
int qr(int m, int n, T* a, bool complete, T* q, T* r) {
  const int k = std::min(m, n), kq = complete ? m : k;
  std::vector<T> tau(static_cast<std::size_t>(std::max(k, 1)));
  int info = 0;
  if (m > 0 && n > 0) {
    if constexpr (std::is_same_v<T, float>)
      info = LAPACKE_sgeqrf(LAPACK_ROW_MAJOR, m, n, a, n, tau.data());
    else
      info = LAPACKE_dgeqrf(LAPACK_ROW_MAJOR, m, n, a, n, tau.data());
  }
  for (int i = 0; i < kq; ++i)  // R: the upper triangle of the first kq rows
    for (int j = 0; j < n; ++j) r[i * n + j] = j >= i && i < m ? a[i * n + j] : T(0);
  // Q: the k reflectors (below the diagonal of a) expanded to kq columns by orgqr.
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < kq; ++j) q[i * kq + j] = j < n ? a[i * n + j] : T(0);
  if (m == 0 || kq == 0) return info;
  if (k == 0) {  // no reflectors: Q is the identity
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < kq; ++j) q[i * kq + j] = T(i == j);
    return info;
  }
  if constexpr (std::is_same_v<T, float>)
    info = LAPACKE_sorgqr(LAPACK_ROW_MAJOR, m, kq, k, q, kq, tau.data());
  else
    info = LAPACKE_dorgqr(LAPACK_ROW_MAJOR, m, kq, k, q, kq, tau.data());
  return info;
}

template <class T>
int syevd(int n, T* a, T* w) {
  if (n == 0) return 0;
  if constexpr (std::is_same_v<T, float>)
    return LAPACKE_ssyevd(LAPACK_ROW_MAJOR, 'V', 'L', n, a, n, w);
  else
    return LAPACKE_dsyevd(LAPACK_ROW_MAJOR, 'V', 'L', n, a, n, w);
}

template <class T>
int gesdd(int m, int n, T* a, T* s, T* u, T* vt, bool full, bool compute_uv) {
  const int k = std::min(m, n);
  if (k == 0) {  // no singular values; full factors are identities
    if (compute_uv && full) {
      for (int i = 0; i < m; ++i)
        for (int j = 0; j < m; ++j) u[i * m + j] = T(i == j);
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) vt[i * n + j] = T(i == j);
    }
    return 0;
  }
  const char job = !compute_uv ? 'N' : full ? 'A' : 'S';
  const int ldu = compute_uv ? (full ? m : k) : 1,
            ldvt = n;  // row-major LAPACKE checks ldvt >= n even for jobz N
  T du = 0, dvt = 0;   // LAPACK wants valid pointers even when it writes no vectors
  T* pu = compute_uv ? u : &du;
  T* pvt = compute_uv ? vt : &dvt;
  if constexpr (std::is_same_v<T, float>)
    return LAPACKE_sgesdd(LAPACK_ROW_MAJOR, job, m, n, a, n, s, pu, ldu, pvt, ldvt);
  else
    return LAPACKE_dgesdd(LAPACK_ROW_MAJOR, job, m, n, a, n, s, pu, ldu, pvt, ldvt);
}

#define LINUM_LAPACK_INSTANTIATE(T)                                      \
  template int potrf<T>(int, T*);                                        \
  template void trsm<T>(bool, bool, bool, bool, int, int, const T*, T*); \
  template int getrf<T>(int, int, T*, int*);                             \
  template void getrs<T>(bool, int, int, const T*, const int*, T*);      \
  template int qr<T>(int, int, T*, bool, T*, T*);                        \
  template int syevd<T>(int, T*, T*);                                    \
  template int gesdd<T>(int, int, T*, T*, T*, T*, bool, bool);
LINUM_LAPACK_INSTANTIATE(float)
LINUM_LAPACK_INSTANTIATE(double)
#undef LINUM_LAPACK_INSTANTIATE

}  // namespace linum::detail::lapack
