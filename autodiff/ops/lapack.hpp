// Internal: LAPACK (through LAPACKE, on OpenBLAS's LAPACK) and BLAS's triangular solve on one
// row-major matrix at a time, for float and double. The batched kernels of the linalg
// primitives loop over the leading dims and call these once per matrix, as XLA:CPU does.
#pragma once

namespace linum::detail::lapack {

// Cholesky factor A = L L^T of an n x n matrix in place (its lower triangle is read); the strict
// upper triangle is zeroed. Returns LAPACK's info: 0, or k > 0 when A is not positive definite.
template <class T>
int potrf(int n, T* a);

// b := op(a)^-1 b (left) or b op(a)^-1 (right) for triangular a (n x n, n = m when left) and
// b of m x n; op is the transpose when trans_a; unit: the diagonal of a is read as ones.
template <class T>
void trsm(bool left, bool lower, bool trans_a, bool unit, int m, int n, const T* a, T* b);

// P A = L U of an m x n matrix in place (unit-diagonal L below, U on and above the diagonal);
// ipiv gets min(m, n) 0-based row swaps. Returns info: k > 0 when U(k-1, k-1) is exactly zero.
template <class T>
int getrf(int m, int n, T* a, int* ipiv);

// Solves op(A) x = b with getrf's factors of an n x n A; b (n x nrhs) is overwritten by x.
template <class T>
void getrs(bool trans, int n, int nrhs, const T* lu, const int* ipiv, T* b);

// Householder QR of an m x n matrix (a is overwritten): q (m x k), r (k x n), k = m when
// complete, else min(m, n). Returns info (0).
template <class T>
int qr(int m, int n, T* a, bool complete, T* q, T* r);

// Eigendecomposition of a symmetric n x n matrix (lower triangle read): w ascending, a
// overwritten by the eigenvectors as columns. Returns info: k > 0 when it did not converge.
template <class T>
int syevd(int n, T* a, T* w);

// Singular values s (descending, min(m, n) of them) of an m x n matrix by divide and conquer (a
// is overwritten); with compute_uv also u (m x ku) and vt (kv x n): ku = kv = min(m, n), or m
// and n when full. Returns info: k > 0 when it did not converge.
template <class T>
int gesdd(int m, int n, T* a, T* s, T* u, T* vt, bool full, bool compute_uv);

}  // namespace linum::detail::lapack
