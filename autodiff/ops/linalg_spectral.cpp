// QR, symmetric eigendecomposition and SVD: primitives over LAPACK (geqrf/orgqr, syevd,
// gesdd) with JAX's JVP rules (jax/_src/lax/linalg.py) and VJPs as their transposes, and their
// lax.linalg / jnp.linalg entry points.
#include <algorithm>
#include <limits>

#include <linum/autodiff/ops/kernel_util.hpp>
#include <linum/autodiff/ops/lapack.hpp>
#include <linum/autodiff/ops/linalg_decomp.hpp>
#include <linum/autodiff/ops/linalg_util.hpp>

namespace linum {
namespace detail {
namespace {

namespace lp = lapack;

template <class T>
void fill_nan(T* p, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) p[i] = std::numeric_limits<T>::quiet_NaN();
}

Shape with_core(const Shape& batch, std::int64_t r, std::int64_t c = -1) {
  Shape s = batch;
  s.push_back(r);
  if (c >= 0) s.push_back(c);
  return s;
}

// ---- qr ----------------------------------------------------------------------------------------

// JAX's _thin_qr_jvp for x = q r with r square: dq, dr from dx.
std::pair<Array, Array> thin_qr_jvp(const Array& q, const Array& r, const Array& dx) {
  const Array dx_rinv = lax::linalg::triangular_solve(r, dx);  // dx r^-1
  const Array qt_dx_rinv = matmul(mT(q), dx_rinv);
  const Array low = tril_of(qt_dx_rinv, -1);
  const Array d_omega = subtract(low, mT(low));  // skew-symmetric
  return {add(matmul(q, subtract(d_omega, qt_dx_rinv)), dx_rinv),
          matmul(subtract(qt_dx_rinv, d_omega), r)};
}

struct Qr final : Primitive {
  bool full;
  explicit Qr(bool f) : full(f) {}
  const char* name() const override { return "qr"; }
  void print_params(std::ostream& os) const override { os << "full_matrices=" << full; }
  Avals abstract_eval(std::span<const ShapeDtype> in) const override {
    const Shape& s = in[0].shape;
    const std::int64_t m = s[s.size() - 2], n = s.back(), k = full ? m : std::min(m, n);
    const Shape b = batch_shape(s, 2);
    return {{with_core(b, m, k), in[0].dtype}, {with_core(b, k, n), in[0].dtype}};
  }
  Arrays eval(std::span<const Array> in) const override {
    const Array& x = in[0];
    const Avals av = abstract_eval(std::array{ShapeDtype{x.shape(), x.dtype()}});
    Array q = empty(av[0].shape, x.dtype()), r = empty(av[1].shape, x.dtype());
    const int m = static_cast<int>(x.shape(-2)), n = static_cast<int>(x.shape(-1));
    const int k = static_cast<int>(av[0].shape.back());
    dispatch_float(x.dtype(), name(), [&]<class T>() {
      const T* px = in_ptr<T>(x);
      std::vector<T> a(static_cast<std::size_t>(m) * n);
      for (std::int64_t b = 0; b < batch_size(x.shape(), 2); ++b) {
        std::copy(px + b * m * n, px + (b + 1) * m * n, a.begin());
        lp::qr(m, n, a.data(), full, out_ptr<T>(q) + b * m * k, out_ptr<T>(r) + b * k * n);
      }
    });
    return {q, r};
  }
  // JAX's qr_jvp_rule.
  Arrays jvp(std::span<const Array> p, std::span<const Array> t,
             std::span<const Array> o) const override {
    if (!t[0].valid()) return {Array(), Array()};
    const Array &x = p[0], &dx = t[0], &q = o[0], &r = o[1];
    const std::int64_t m = x.shape(-2), n = x.shape(-1);
    const int nd = x.ndim();
    if (m < n) {
      auto [dq, dr1] = thin_qr_jvp(q, block(r, 0, -1, 0, m), block(dx, 0, -1, 0, m));
      const Array dr2 =
          add(matmul(mT(dq), block(x, 0, -1, m, -1)), matmul(mT(q), block(dx, 0, -1, m, -1)));
      return {dq, concatenate({dr1, dr2}, nd - 1)};
    }
    const Array q_mn = full ? block(q, 0, -1, 0, n) : q, r_nn = full ? block(r, 0, n, 0, -1) : r;
    auto [dq_mn, dr_nn] = thin_qr_jvp(q_mn, r_nn, dx);
    if (!full || m == n) return {dq_mn, dr_nn};
    // The m - n extra columns of a complete q (JAX's rule, through a solve with q_nn - I).
    const Array q_nn = block(q_mn, 0, n, 0, -1), q_pn = block(q_mn, n, -1, 0, -1),
                q_mp = block(q, 0, -1, n, -1);
    const Array dq_nn = block(dq_mn, 0, n, 0, -1), dq_pn = block(dq_mn, n, -1, 0, -1);
    const Array z_pn_h = linalg::solve(mT(subtract(q_nn, eye(n, -1, 0, x.dtype()))), mT(q_pn));
    const Array z_pn = mT(z_pn_h);
    const Array dq_mp =
        subtract(matmul(dq_mn, z_pn_h),
                 matmul(add(q_mn, matmul(q_mp, z_pn)), mT(subtract(dq_pn, matmul(z_pn, dq_nn)))));
    const Array zero_rows = zeros(with_core(batch_shape(x.shape(), 2), m - n, n), x.dtype());
    return {concatenate({dq_mn, dq_mp}, nd - 1), concatenate({dr_nn, zero_rows}, nd - 2)};
  }
  Arrays vjp(std::span<const Array> p, std::span<const Array> ct,
             std::span<const Array> o) const override {
    return transpose_jvp(*this, p, ct, o);
  }
  Batched vmap(std::span<const Array> in, std::span<const int> bdims) const override {
    return {bind(std::make_shared<const Qr>(full), Arrays{move_bdim(in[0], bdims[0], 0, 0)}),
            {0, 0}};
  }
};

// ---- eigh --------------------------------------------------------------------------------------

// (v, w) of a symmetric matrix whose lower triangle is read; NaNs where syevd fails, as JAX.
struct Eigh final : Primitive {
  const char* name() const override { return "eigh"; }
  bool vjp_reads_input(std::size_t) const override { return false; }
  Avals abstract_eval(std::span<const ShapeDtype> in) const override {
    return {in[0], {with_core(batch_shape(in[0].shape, 2), in[0].shape.back()), in[0].dtype}};
  }
  Arrays eval(std::span<const Array> in) const override {
    const Array& x = in[0];
    Array v = from_buffer(in_ptr<std::uint8_t>(x), x.shape(), x.dtype(), x.dtype());
    const int n = static_cast<int>(x.shape(-1));
    Array w = empty(with_core(batch_shape(x.shape(), 2), n), x.dtype());
    dispatch_float(x.dtype(), name(), [&]<class T>() {
      for (std::int64_t b = 0; b < batch_size(x.shape(), 2); ++b) {
        T* pv = out_ptr<T>(v) + b * n * n;
        T* pw = out_ptr<T>(w) + b * n;
        if (lp::syevd(n, pv, pw) != 0) {
          fill_nan(pv, std::int64_t(n) * n);
          fill_nan(pw, n);
        }
      }
    });
    return {v, w};
  }
  // JAX's _eigh_jvp_rule: with F_ij = 1 / (w_j - w_i) off the diagonal, v' = v (F * v^T a' v)
  // and w' = diag(v^T a' v).
  Arrays jvp(std::span<const Array>, std::span<const Array> t,
             std::span<const Array> o) const override {
    if (!t[0].valid()) return {Array(), Array()};
    const Array &v = o[0], &w = o[1];
    const Array I = eye(w.shape(-1), -1, 0, w.dtype());
    const Array F =
        subtract(divide(1, add(I, subtract(expand_dims(w, -2), expand_dims(w, -1)))), I);
    const Array vt_a_v = matmul(matmul(mT(v), t[0]), v);
    return {matmul(v, multiply(F, vt_a_v)), diagonal_of(vt_a_v)};
  }
  Arrays vjp(std::span<const Array> p, std::span<const Array> ct,
             std::span<const Array> o) const override {
    return transpose_jvp(*this, p, ct, o);
  }
  Batched vmap(std::span<const Array> in, std::span<const int> bdims) const override {
    return {bind(singleton<Eigh>(), Arrays{move_bdim(in[0], bdims[0], 0, 0)}), {0, 0}};
  }
};

// ---- svd ---------------------------------------------------------------------------------------

struct Svd final : Primitive {
  bool full, uv;
  Svd(bool f, bool c) : full(f), uv(c) {}
  const char* name() const override { return "svd"; }
  void print_params(std::ostream& os) const override {
    os << "full_matrices=" << full << " compute_uv=" << uv;
  }
  Avals abstract_eval(std::span<const ShapeDtype> in) const override {
    const Shape& s = in[0].shape;
    const std::int64_t m = s[s.size() - 2], n = s.back(), k = std::min(m, n);
    const Shape b = batch_shape(s, 2);
    Avals r{{with_core(b, k), in[0].dtype}};
    if (uv) {
      r.push_back({with_core(b, m, full ? m : k), in[0].dtype});
      r.push_back({with_core(b, full ? n : k, n), in[0].dtype});
    }
    return r;
  }
  Arrays eval(std::span<const Array> in) const override {
    const Array& x = in[0];
    const Avals av = abstract_eval(std::array{ShapeDtype{x.shape(), x.dtype()}});
    Arrays out;
    for (const auto& a : av) out.push_back(empty(a.shape, a.dtype));
    const int m = static_cast<int>(x.shape(-2)), n = static_cast<int>(x.shape(-1)),
              k = std::min(m, n);
    const std::int64_t su = uv ? shape_size(Shape(av[1].shape.end() - 2, av[1].shape.end())) : 0;
    const std::int64_t sv = uv ? shape_size(Shape(av[2].shape.end() - 2, av[2].shape.end())) : 0;
    dispatch_float(x.dtype(), name(), [&]<class T>() {
      const T* px = in_ptr<T>(x);
      std::vector<T> a(static_cast<std::size_t>(m) * n);
      for (std::int64_t b = 0; b < batch_size(x.shape(), 2); ++b) {
        std::copy(px + b * m * n, px + (b + 1) * m * n, a.begin());
        T* s = out_ptr<T>(out[0]) + b * k;
        T* u = uv ? out_ptr<T>(out[1]) + b * su : nullptr;
        T* vt = uv ? out_ptr<T>(out[2]) + b * sv : nullptr;
        if (lp::gesdd(m, n, a.data(), s, u, vt, full, uv) != 0) {
          fill_nan(s, k);
          if (uv) {
            fill_nan(u, su);
            fill_nan(vt, sv);
          }
        }
      }
    });
    return out;
  }
  // JAX's _svd_jvp_rule (on the thin factors).
  Arrays jvp(std::span<const Array> p, std::span<const Array> t,
             std::span<const Array> o) const override {
    if (!t[0].valid()) return Arrays(o.size());
    const Array &A = p[0], &dA = t[0];
    const std::int64_t m = A.shape(-2), n = A.shape(-1);
    if (uv && full && m != n)
      throw NotImplementedError(
          "svd: the derivative is not implemented for full_matrices=True with non-square input (as "
          "in JAX)");
    const Arrays thin = uv && !full ? Arrays(o.begin(), o.end())
                                    : bind(std::make_shared<const Svd>(false, true), Arrays{A});
    const Array &s = thin[0], &U = thin[1], &Vt = thin[2];
    const Array Ut = mT(U), V = mT(Vt), s_dim = expand_dims(s, -2);
    const Array dS = matmul(matmul(Ut, dA), V);
    const Array ds = diagonal_of(dS);
    if (!uv) return {ds};
    const Array I = eye(s.shape(-1), -1, 0, s.dtype());
    const Array s_diffs = multiply(add(s_dim, mT(s_dim)), subtract(s_dim, mT(s_dim)));
    const Array F = subtract(divide(1, add(s_diffs, I)), I);
    const Array dSS = multiply(s_dim, dS), SdS = multiply(mT(s_dim), dS);
    const Array s_zeros = astype(equal(s, 0), s.dtype());
    const Array s_inv = subtract(divide(1, add(s, s_zeros)), s_zeros);
    const Array dUdV_diag = multiply(multiply(subtract(dS, mT(dS)), 0.5), diag_matrix(s_inv));
    Array dU = matmul(U, add(multiply(F, add(dSS, mT(dSS))), dUdV_diag));
    Array dV = matmul(V, multiply(F, add(SdS, mT(SdS))));
    if (m > n) {
      const Array dAV = matmul(dA, V);
      dU = add(dU, divide(subtract(dAV, matmul(U, matmul(Ut, dAV))), s_dim));
    }
    if (n > m) {
      const Array dAHU = matmul(mT(dA), U);
      dV = add(dV, divide(subtract(dAHU, matmul(V, matmul(Vt, dAHU))), s_dim));
    }
    return {ds, dU, mT(dV)};
  }
  Arrays vjp(std::span<const Array> p, std::span<const Array> ct,
             std::span<const Array> o) const override {
    return transpose_jvp(*this, p, ct, o);
  }
  Batched vmap(std::span<const Array> in, std::span<const int> bdims) const override {
    Arrays r =
        bind(std::make_shared<const Svd>(full, uv), Arrays{move_bdim(in[0], bdims[0], 0, 0)});
    return {r, std::vector<int>(r.size(), 0)};
  }
};

}  // namespace
}  // namespace detail

using namespace detail;

namespace lax::linalg {

std::pair<Array, Array> qr(const Array& x, bool full_matrices) {
  const Arrays r =
      bind(std::make_shared<const Qr>(full_matrices), Arrays{check_matrix(x, "qr", false)});
  return {r[0], r[1]};
}

std::pair<Array, Array> eigh(const Array& x, bool lower, bool symmetrize_input) {
  Array a = check_matrix(x, "eigh", true);
  if (symmetrize_input)
    a = divide(add(a, mT(a)), 2);
  else if (!lower)
    a = mT(a);  // the kernel reads the lower triangle
  const Arrays r = bind(singleton<Eigh>(), Arrays{a});
  return {r[0], r[1]};
}

SvdResult svd(const Array& x, bool full_matrices, bool compute_uv) {
  const Arrays r = bind(std::make_shared<const Svd>(full_matrices, compute_uv),
                        Arrays{check_matrix(x, "svd", false)});
  if (!compute_uv) return {Array(), r[0], Array()};
  return {r[1], r[0], r[2]};
}

}  // namespace lax::linalg

namespace linalg {

QRResult qr(const Array& a, const std::string& mode) {
  if (mode != "reduced" && mode != "complete" && mode != "r")
    throw ValueError("qr: unsupported QR decomposition mode '" + mode +
                     "' (linum supports 'reduced', 'complete' and 'r')");
  auto [q, r] = lax::linalg::qr(a, mode == "complete");
  if (mode == "r") return {Array(), r};
  return {q, r};
}

SVDResult svd(const Array& a, bool full_matrices, bool compute_uv) {
  const auto r = lax::linalg::svd(a, full_matrices, compute_uv);
  return {r.u, r.s, r.vh};
}

Array svdvals(const Array& x) { return lax::linalg::svd(x, false, false).s; }

EighResult eigh(const Array& a, const std::string& UPLO, bool symmetrize_input) {
  if (UPLO != "L" && UPLO != "U")
    throw ValueError("eigh: UPLO must be one of None, 'L', or 'U', got " + UPLO);
  auto [v, w] = lax::linalg::eigh(a, UPLO == "L", symmetrize_input);
  return {w, v};
}

Array eigvalsh(const Array& a, const std::string& UPLO, bool symmetrize_input) {
  return eigh(a, UPLO, symmetrize_input).eigenvalues;
}

}  // namespace linalg

}  // namespace linum
