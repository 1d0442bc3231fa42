// Cholesky, triangular solve, LU, solve, det and slogdet: primitives over LAPACK with JAX's
// derivative rules (jax/_src/lax/linalg.py, jax/_src/numpy/linalg.py), and their lax.linalg /
// jnp.linalg entry points. Kernels loop over the matrices of the leading dims; batching moves the
// batch axis to the front, so that one kernel call handles the whole batch.
#include <cmath>
#include <limits>
#include <sstream>
#include <tuple>

#include <linum/autodiff/ops/kernel_util.hpp>
#include <linum/autodiff/ops/lapack.hpp>
#include <linum/autodiff/ops/linalg_decomp.hpp>
#include <linum/autodiff/ops/linalg_util.hpp>

namespace linum {
namespace detail {
namespace {

namespace lp = lapack;
using lax::linalg::TriangularSolveOptions;

// A fresh copy of x's buffer, which the in-place LAPACK routines overwrite.
Array copy_of(const Array& x) {
  return from_buffer(in_ptr<std::uint8_t>(x), x.shape(), x.dtype(), x.dtype());
}

// A failed factor as JAX returns it: NaN on and below the diagonal (tril of a NaN matrix).
template <class T>
void nan_lower(T* p, int n) {
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) p[i * n + j] = j <= i ? std::numeric_limits<T>::quiet_NaN() : T(0);
}

// Both operands with the batch axis in front (an unbatched one broadcast to the batch size).
std::pair<Array, Array> batch_front(std::span<const Array> in, std::span<const int> bdims) {
  const std::int64_t n = in[bdims[0] >= 0 ? 0 : 1].shape(bdims[0] >= 0 ? bdims[0] : bdims[1]);
  return {move_bdim(in[0], bdims[0], 0, n), move_bdim(in[1], bdims[1], 0, n)};
}

// ---- cholesky ---------------------------------------------------------------------------------

// tril(X) with its diagonal halved: the Phi of Murray's Cholesky rules (arXiv:1602.07527).
Array phi(const Array& x) {
  const std::int64_t n = x.shape(-1);
  return divide(tril_of(x), add(eye(n, -1, 0, x.dtype()), 1.0));
}

struct Cholesky final : Primitive {
  const char* name() const override { return "cholesky"; }
  bool vjp_reads_input(std::size_t) const override { return false; }
  Avals abstract_eval(std::span<const ShapeDtype> in) const override { return {in[0]}; }
  Arrays eval(std::span<const Array> in) const override {
    Array out = copy_of(in[0]);
    const int n = static_cast<int>(in[0].shape(-1));
    const std::int64_t mats = batch_size(in[0].shape(), 2), sz = std::int64_t(n) * n;
    dispatch_float(in[0].dtype(), name(), [&]<class T>() {
      T* o = out_ptr<T>(out);
      for (std::int64_t b = 0; b < mats; ++b)
        if (lp::potrf(n, o + b * sz) != 0) nan_lower(o + b * sz, n);  // as JAX: not PD -> NaN
    });
    return {out};
  }
  // L' = L phi(L^-1 S' L^-T).
  Arrays jvp(std::span<const Array>, std::span<const Array> t,
             std::span<const Array> o) const override {
    if (!t[0].valid()) return {Array()};
    const Array& L = o[0];
    const Array tmp = lax::linalg::triangular_solve(L, t[0], {.lower = true, .transpose_a = true});
    const Array inner = lax::linalg::triangular_solve(L, tmp, {.left_side = true, .lower = true});
    return {matmul(L, phi(inner))};
  }
  // The transpose of the JVP: S_bar = L^-T phi(L^T L_bar) L^-1.
  Arrays vjp(std::span<const Array>, std::span<const Array> ct,
             std::span<const Array> o) const override {
    if (!ct[0].valid()) return {Array()};
    const Array& L = o[0];
    const Array p = phi(matmul(mT(L), ct[0]));
    const Array left = lax::linalg::triangular_solve(
        L, p, {.left_side = true, .lower = true, .transpose_a = true});
    return {lax::linalg::triangular_solve(L, left, {.lower = true})};
  }
  Batched vmap(std::span<const Array> in, std::span<const int> bdims) const override {
    return {{bind1(singleton<Cholesky>(), {move_bdim(in[0], bdims[0], 0, 0)})}, {0}};
  }
};

// ---- triangular_solve -------------------------------------------------------------------------

struct TriangularSolve final : Primitive {
  TriangularSolveOptions o;
  explicit TriangularSolve(TriangularSolveOptions opts) : o(opts) { o.conjugate_a = false; }
  const char* name() const override { return "triangular_solve"; }
  void print_params(std::ostream& os) const override {
    os << "left_side=" << o.left_side << " lower=" << o.lower << " transpose_a=" << o.transpose_a
       << " unit_diagonal=" << o.unit_diagonal;
  }
  bool vjp_reads_input(std::size_t i) const override { return i == 0; }
  Avals abstract_eval(std::span<const ShapeDtype> in) const override { return {in[1]}; }
  Arrays eval(std::span<const Array> in) const override {
    const Array &a = in[0], &b = in[1];
    Array out = copy_of(b);
    const int m = static_cast<int>(b.shape(-2)), n = static_cast<int>(b.shape(-1));
    const std::int64_t k = a.shape(-1), mats = batch_size(b.shape(), 2);
    dispatch_float(b.dtype(), name(), [&]<class T>() {
      const T* pa = in_ptr<T>(a);
      T* pb = out_ptr<T>(out);
      for (std::int64_t i = 0; i < mats; ++i)
        lp::trsm(o.left_side, o.lower, o.transpose_a, o.unit_diagonal, m, n, pa + i * k * k,
                 pb + i * std::int64_t(m) * n);
    });
    return {out};
  }
  Array solve(const Array& a, const Array& b, bool flip_transpose = false) const {
    TriangularSolveOptions t = o;
    t.transpose_a = t.transpose_a != flip_transpose;
    return bind1(std::make_shared<const TriangularSolve>(t), {a, b});
  }
  // The triangle of a that the solve reads.
  Array mask(const Array& g) const {
    const int k = o.unit_diagonal ? 1 : 0;
    return o.lower ? tril_of(g, -k) : triu_of(g, k);
  }
  // JAX's rule for a: x' = -op(a)^-1 op(a') x (left) or -x op(a') op(a)^-1 (right); b's part is
  // the solve itself.
  Arrays jvp(std::span<const Array> p, std::span<const Array> t,
             std::span<const Array> out) const override {
    Array r;
    if (t[0].valid()) {
      Array g = negative(mask(t[0]));
      if (o.transpose_a) g = mT(g);
      r = o.left_side ? solve(p[0], matmul(g, out[0])) : solve(p[0], matmul(out[0], g));
    }
    if (t[1].valid()) r = r.valid() ? add(r, solve(p[0], t[1])) : solve(p[0], t[1]);
    return {r};
  }
  // b_bar = op(a)^-T x_bar; a_bar = the transpose of a's JVP rule, written with b_bar.
  Arrays vjp(std::span<const Array> p, std::span<const Array> ct,
             std::span<const Array> out) const override {
    if (!ct[0].valid()) return {Array(), Array()};
    const Array bb = solve(p[0], ct[0], true);
    const Array& x = out[0];
    Array g = o.left_side ? matmul(bb, mT(x)) : matmul(mT(x), bb);
    if (o.transpose_a) g = mT(g);
    return {negative(mask(g)), bb};
  }
  Batched vmap(std::span<const Array> in, std::span<const int> bdims) const override {
    const auto self = std::make_shared<const TriangularSolve>(o);
    if (bdims[0] < 0) {
      // One matrix for the whole batch: the batch joins the columns (left) or rows (right) of b.
      const int nd = in[1].ndim();
      Array y = moveaxis(in[1], bdims[1], o.left_side ? nd - 1 : nd - 2);
      const Shape ys = y.shape();
      Shape flat(ys.begin(), ys.end() - 3);
      if (o.left_side) {
        flat.push_back(ys[nd - 3]);
        flat.push_back(ys[nd - 2] * ys[nd - 1]);
      } else {
        flat.push_back(ys[nd - 3] * ys[nd - 2]);
        flat.push_back(ys[nd - 1]);
      }
      Array out = reshape(bind1(self, {in[0], reshape(y, flat)}), ys);
      return {{out}, {o.left_side ? nd - 1 : nd - 2}};
    }
    auto [a, b] = batch_front(in, bdims);
    return {{bind1(self, {a, b})}, {0}};
  }
};

// ---- lu ----------------------------------------------------------------------------------------

struct Lu final : Primitive {
  const char* name() const override { return "lu"; }
  Avals abstract_eval(std::span<const ShapeDtype> in) const override {
    const Shape& s = in[0].shape;
    Shape piv = batch_shape(s, 2), perm = piv;
    piv.push_back(std::min(s[s.size() - 2], s.back()));
    perm.push_back(s[s.size() - 2]);
    return {in[0], {piv, int32}, {perm, int32}};
  }
  Arrays eval(std::span<const Array> in) const override {
    const Array& x = in[0];
    const Avals av = abstract_eval(std::array{ShapeDtype{x.shape(), x.dtype()}});
    Array out = copy_of(x), piv = empty(av[1].shape, int32), perm = empty(av[2].shape, int32);
    const int m = static_cast<int>(x.shape(-2)), n = static_cast<int>(x.shape(-1)),
              k = std::min(m, n);
    const std::int64_t mats = batch_size(x.shape(), 2);
    dispatch_float(x.dtype(), name(), [&]<class T>() {
      T* o = out_ptr<T>(out);
      auto* pv = out_ptr<std::int32_t>(piv);
      auto* pm = out_ptr<std::int32_t>(perm);
      for (std::int64_t b = 0; b < mats; ++b) {
        int* ip = pv + b * k;
        lp::getrf(m, n, o + b * std::int64_t(m) * n, ip);  // a singular U is kept, as in JAX
        std::int32_t* q = pm + b * m;
        for (int i = 0; i < m; ++i) q[i] = i;
        for (int i = 0; i < k; ++i) std::swap(q[i], q[ip[i]]);
      }
    });
    return {out, piv, perm};
  }
  // JAX's _lu_jvp_rule: with L, U padded to square, lu' = L tril(X, -1) + triu(X) U where
  // X = L^-1 P a' U^-1.
  Arrays jvp(std::span<const Array>, std::span<const Array> t,
             std::span<const Array> o) const override {
    if (!t[0].valid()) return {Array(), Array(), Array()};
    const Array& lu = o[0];
    const std::int64_t m = lu.shape(-2), n = lu.shape(-1), k = std::min(m, n);
    const Shape batch = batch_shape(lu.shape(), 2);
    const int nd = lu.ndim();
    auto starts = [&](std::int64_t r0, std::int64_t c0) {
      std::vector<std::int64_t> s(static_cast<std::size_t>(nd), 0);
      s[nd - 2] = r0;
      s[nd - 1] = c0;
      return s;
    };
    auto limits = [&](std::int64_t r1, std::int64_t c1) {
      std::vector<std::int64_t> s(lu.shape().begin(), lu.shape().end());
      s[nd - 2] = r1;
      s[nd - 1] = c1;
      return s;
    };
    auto zeros_block = [&](std::int64_t r, std::int64_t c) {
      Shape s = batch;
      s.push_back(r);
      s.push_back(c);
      return zeros(s, lu.dtype());
    };
    Array l = tril_of(lax_slice(lu, starts(0, 0), limits(m, k)), -1);  // (m, k)
    if (m > k) l = concatenate({l, zeros_block(m, m - k)}, nd - 1);
    l = add(l, eye(m, -1, 0, lu.dtype()));
    Array u = triu_of(lax_slice(lu, starts(0, 0), limits(k, n)));  // (k, n)
    if (n > k)
      u = add(concatenate({u, zeros_block(n - k, n)}, nd - 2), tail_identity(n, k, lu.dtype()));
    const Array x = permute_rows(t[0], o[2]);
    const Array la = lax::linalg::triangular_solve(
        l, x, {.left_side = true, .lower = true, .unit_diagonal = true});
    const Array lau = lax::linalg::triangular_solve(u, la, {.lower = false});
    return {add(matmul(l, tril_of(lau, -1)), matmul(triu_of(lau), u)), Array(), Array()};
  }
  Arrays vjp(std::span<const Array> p, std::span<const Array> ct,
             std::span<const Array> o) const override {
    return transpose_jvp(*this, p, ct, o);
  }
  Batched vmap(std::span<const Array> in, std::span<const int> bdims) const override {
    return {bind(singleton<Lu>(), Arrays{move_bdim(in[0], bdims[0], 0, 0)}), {0, 0, 0}};
  }
  // (n, n): ones on the diagonal from row k on, zeros elsewhere.
  static Array tail_identity(std::int64_t n, std::int64_t k, DType dt) {
    std::vector<double> v(static_cast<std::size_t>(n * n), 0.0);
    for (std::int64_t i = k; i < n; ++i) v[i * n + i] = 1.0;
    return astype(array(v, {n, n}), dt);
  }
};

// ---- solve -------------------------------------------------------------------------------------

// a x = b for square a and b (..., m, k) with a's batch dims, through getrf + getrs. The rules
// are those of JAX's custom_linear_solve: x' = a^-1 (b' - a' x), b_bar = a^-T x_bar,
// a_bar = -b_bar x^T.
struct Solve final : Primitive {
  bool transpose_a;
  explicit Solve(bool t) : transpose_a(t) {}
  const char* name() const override { return "solve"; }
  void print_params(std::ostream& os) const override { os << "transpose_a=" << transpose_a; }
  bool vjp_reads_input(std::size_t i) const override { return i == 0; }
  Avals abstract_eval(std::span<const ShapeDtype> in) const override { return {in[1]}; }
  Arrays eval(std::span<const Array> in) const override {
    const Array &a = in[0], &b = in[1];
    Array lu = copy_of(a), out = copy_of(b);
    const int m = static_cast<int>(a.shape(-1)), k = static_cast<int>(b.shape(-1));
    const std::int64_t mats = batch_size(a.shape(), 2);
    std::vector<int> ipiv(static_cast<std::size_t>(m));
    dispatch_float(a.dtype(), name(), [&]<class T>() {
      T* pl = out_ptr<T>(lu);
      T* po = out_ptr<T>(out);
      for (std::int64_t i = 0; i < mats; ++i) {
        T* l = pl + i * std::int64_t(m) * m;
        lp::getrf(m, m, l, ipiv.data());  // a zero pivot makes getrs divide by 0: inf/NaN as JAX
        lp::getrs(transpose_a, m, k, l, ipiv.data(), po + i * std::int64_t(m) * k);
      }
    });
    return {out};
  }
  Array again(const Array& a, const Array& b, bool flip) const {
    return bind1(std::make_shared<const Solve>(transpose_a != flip), {a, b});
  }
  Arrays jvp(std::span<const Array> p, std::span<const Array> t,
             std::span<const Array> o) const override {
    if (!t[0].valid() && !t[1].valid()) return {Array()};
    Array rhs;
    if (t[0].valid()) rhs = negative(matmul(transpose_a ? mT(t[0]) : t[0], o[0]));
    if (t[1].valid()) rhs = rhs.valid() ? add(rhs, t[1]) : t[1];
    return {again(p[0], rhs, false)};
  }
  Arrays vjp(std::span<const Array> p, std::span<const Array> ct,
             std::span<const Array> o) const override {
    if (!ct[0].valid()) return {Array(), Array()};
    const Array bb = again(p[0], ct[0], true);
    const Array ab = negative(matmul(bb, mT(o[0])));
    return {transpose_a ? mT(ab) : ab, bb};
  }
  Batched vmap(std::span<const Array> in, std::span<const int> bdims) const override {
    auto [a, b] = batch_front(in, bdims);
    return {{bind1(std::make_shared<const Solve>(transpose_a), {a, b})}, {0}};
  }
};

Array solve_matrix(const Array& a, const Array& b) {
  return bind1(std::make_shared<const Solve>(false), {a, b});
}

// ---- slogdet and det ---------------------------------------------------------------------------

// Sign and log|det| of each LU: parity of the row swaps and of the negative pivots; a zero
// pivot gives sign 0 and -inf, as JAX's _slogdet_lu.
template <class T>
std::pair<T, T> lu_slogdet(int n, T* a, int* ipiv) {
  lp::getrf(n, n, a, ipiv);
  int parity = 0;
  bool zero = false;
  T logdet = 0;
  for (int i = 0; i < n; ++i) {
    const T d = a[i * n + i];
    parity += (ipiv[i] != i) + (d < 0);
    zero = zero || d == T(0);
    logdet += std::log(std::abs(d));
  }
  if (zero) return {T(0), -std::numeric_limits<T>::infinity()};
  return {parity % 2 ? T(-1) : T(1), logdet};
}

struct Slogdet final : Primitive {
  const char* name() const override { return "slogdet"; }
  bool vjp_reads_output(std::size_t) const override { return false; }
  Avals abstract_eval(std::span<const ShapeDtype> in) const override {
    const ShapeDtype s{batch_shape(in[0].shape, 2), in[0].dtype};
    return {s, s};
  }
  Arrays eval(std::span<const Array> in) const override {
    const Array& x = in[0];
    const Shape bs = batch_shape(x.shape(), 2);
    Array a = copy_of(x), sign = empty(bs, x.dtype()), logdet = empty(bs, x.dtype());
    const int n = static_cast<int>(x.shape(-1));
    std::vector<int> ipiv(static_cast<std::size_t>(n));
    dispatch_float(x.dtype(), name(), [&]<class T>() {
      T* pa = out_ptr<T>(a);
      for (std::int64_t b = 0; b < shape_size(bs); ++b) {
        auto [s, l] = lu_slogdet(n, pa + b * std::int64_t(n) * n, ipiv.data());
        out_ptr<T>(sign)[b] = s;
        out_ptr<T>(logdet)[b] = l;
      }
    });
    return {sign, logdet};
  }
  // JAX's _slogdet_jvp: log|det|' = tr(x^-1 x'); the sign is locally constant.
  Arrays jvp(std::span<const Array> p, std::span<const Array> t,
             std::span<const Array>) const override {
    if (!t[0].valid()) return {Array(), Array()};
    return {Array(), trace_of(solve_matrix(p[0], t[0]))};
  }
  Arrays vjp(std::span<const Array> p, std::span<const Array> ct,
             std::span<const Array> o) const override {
    return transpose_jvp(*this, p, ct, o);
  }
  Batched vmap(std::span<const Array> in, std::span<const int> bdims) const override {
    return {bind(singleton<Slogdet>(), Arrays{move_bdim(in[0], bdims[0], 0, 0)}), {0, 0}};
  }
};

// JAX's _cofactor_solve(a, b): (det a, adj(a) b) from the LU of a, finite at singular a: a
// rank n-1 matrix gives the adjugate, lower ranks zeros (the NaN filters on U^-1 1).
std::pair<Array, Array> cofactor_solve(const Array& a, const Array& b) {
  const std::int64_t n = a.shape(-1);
  if (n == 0) return {ones(batch_shape(a.shape(), 2), a.dtype()), b};  // det of 0x0 is 1
  if (n == 1) return {squeeze(a, {-2, -1}), b};
  const DType dt = a.dtype();
  const auto f = lax::linalg::lu(a);
  const Array diag = diagonal_of(f.lu);
  const Array iota = arange(std::int64_t(0), n, std::int64_t(1), int32);
  const Array sign = prod(where(not_equal(f.pivots, iota), full({}, -1, dt), full({}, 1, dt)), -1);
  std::vector<bool> last_v(static_cast<std::size_t>(n), false),
      corner_v(static_cast<std::size_t>(n * n), false);
  last_v.back() = corner_v.back() = true;
  const Array last = array(last_v, {n}), corner = array(corner_v, {n, n});
  const Array det_but_last = multiply(prod(where(last, 1, diag), -1), sign);
  const Array det = multiply(det_but_last, sum(where(last, diag, 0), -1));
  auto as_matrix = [](const Array& v) { return expand_dims(expand_dims(v, -1), -1); };
  const Array lu2 = where(corner, as_matrix(divide(1, det_but_last)), f.lu);
  const Array probe =
      lax::linalg::triangular_solve(lu2, ones_like(diag), {.left_side = true, .lower = false});
  const Array singular = as_matrix(any(logical_not(isfinite(probe)), -1));
  Array x = permute_rows(where(singular, 0, b), f.permutation);
  x = lax::linalg::triangular_solve(lu2, x,
                                    {.left_side = true, .lower = true, .unit_diagonal = true});
  x = multiply(x, where(array(last_v, {n, 1}), 1, as_matrix(det)));
  x = lax::linalg::triangular_solve(lu2, x, {.left_side = true, .lower = false});
  return {det, where(singular, 0, x)};
}

// det as jnp.linalg.det computes it: the 2x2 and 3x3 expansions, sign * exp(log|det|) from the
// LU otherwise. Its JVP is tr(adj(x) x') through the cofactor solve.
struct Det final : Primitive {
  const char* name() const override { return "det"; }
  bool vjp_reads_output(std::size_t) const override { return false; }
  Avals abstract_eval(std::span<const ShapeDtype> in) const override {
    return {{batch_shape(in[0].shape, 2), in[0].dtype}};
  }
  template <class T>
  static T small_det(int n, const T* a) {
    if (n == 2) return a[0] * a[3] - a[1] * a[2];
    return a[0] * a[4] * a[8] + a[1] * a[5] * a[6] + a[2] * a[3] * a[7] - a[2] * a[4] * a[6] -
           a[0] * a[5] * a[7] - a[1] * a[3] * a[8];
  }
  Arrays eval(std::span<const Array> in) const override {
    const Array& x = in[0];
    const Shape bs = batch_shape(x.shape(), 2);
    Array a = copy_of(x), out = empty(bs, x.dtype());
    const int n = static_cast<int>(x.shape(-1));
    std::vector<int> ipiv(static_cast<std::size_t>(n));
    dispatch_float(x.dtype(), name(), [&]<class T>() {
      T* pa = out_ptr<T>(a);
      T* o = out_ptr<T>(out);
      for (std::int64_t b = 0; b < shape_size(bs); ++b) {
        T* m = pa + b * std::int64_t(n) * n;
        if (n == 2 || n == 3) {
          o[b] = small_det(n, m);
        } else {
          auto [s, l] = lu_slogdet(n, m, ipiv.data());
          o[b] = s * std::exp(l);
        }
      }
    });
    return {out};
  }
  Arrays jvp(std::span<const Array> p, std::span<const Array> t,
             std::span<const Array>) const override {
    if (!t[0].valid()) return {Array()};
    return {trace_of(cofactor_solve(p[0], t[0]).second)};
  }
  Arrays vjp(std::span<const Array> p, std::span<const Array> ct,
             std::span<const Array> o) const override {
    return transpose_jvp(*this, p, ct, o);
  }
  Batched vmap(std::span<const Array> in, std::span<const int> bdims) const override {
    return {{bind1(singleton<Det>(), {move_bdim(in[0], bdims[0], 0, 0)})}, {0}};
  }
};

// a and b promoted to one floating dtype.
std::pair<Array, Array> promote_pair(const Array& a, const Array& b) {
  ResultType r = result_type(a, b);
  if (!is_floating(r.dtype)) r.dtype = float32;
  r.weak_type = false;
  return {promote_to(a, r), promote_to(b, r)};
}

// x broadcast to `batch` followed by its last two dims.
Array with_batch(const Array& x, const Shape& batch) {
  Shape s = batch;
  s.push_back(x.shape(-2));
  s.push_back(x.shape(-1));
  return x.shape() == s ? x : broadcast_to(x, s);
}

}  // namespace
}  // namespace detail

using namespace detail;

namespace lax::linalg {

Array cholesky(const Array& x, bool symmetrize_input) {
  Array a = check_matrix(x, "cholesky", true);
  if (symmetrize_input) a = divide(add(a, mT(a)), 2);
  return bind1(singleton<Cholesky>(), a);
}

Array triangular_solve(const Array& a, const Array& b, const TriangularSolveOptions& opts) {
  check_valid(b, "triangular_solve");
  Array am = check_matrix(a, "triangular_solve", true);
  const bool vector = b.ndim() == a.ndim() - 1;
  Array bm = vector ? expand_dims(b, opts.left_side ? -1 : -2) : b;
  if (bm.ndim() < 2 || am.shape(-1) != bm.shape(opts.left_side ? -2 : -1))
    throw ValueError("triangular_solve: incompatible shapes for arguments to triangular_solve: " +
                     shape_str(a.shape()) + " and " + shape_str(b.shape()));
  std::tie(am, bm) = promote_pair(am, bm);
  const Shape batch =
      broadcast_shapes(batch_shape(am.shape(), 2), batch_shape(bm.shape(), 2), "triangular_solve");
  Array x = bind1(std::make_shared<const TriangularSolve>(opts),
                  {with_batch(am, batch), with_batch(bm, batch)});
  return vector ? squeeze(x, opts.left_side ? -1 : -2) : x;
}

LuResult lu(const Array& x) {
  const Arrays r = bind(singleton<Lu>(), Arrays{check_matrix(x, "lu", false)});
  return {r[0], r[1], r[2]};
}

}  // namespace lax::linalg

namespace linalg {

Array cholesky(const Array& a, bool upper, bool symmetrize_input) {
  const Array L = lax::linalg::cholesky(a, symmetrize_input);
  return upper ? mT(L) : L;
}

Array solve(const Array& a, const Array& b) {
  check_valid(a, "solve");
  check_valid(b, "solve");
  if (a.ndim() < 2)
    throw ValueError("solve: left hand array must be at least two dimensional; got a.shape=" +
                     shape_str(a.shape()));
  if (b.ndim() > 1 && a.ndim() == b.ndim() + 1 && a.shape(-1) == b.shape(-1) &&
      a.shape(-1) != b.shape(-2))
    throw ValueError("solve: invalid shapes " + shape_str(a.shape()) + ", " + shape_str(b.shape()) +
                     "; a batch of vectors b must be written solve(a, b[..., None]).squeeze(-1)");
  Array am = check_matrix(a, "solve", true);
  const bool vector = b.ndim() == 1;
  Array bm = vector ? expand_dims(b, -1) : b;
  if (bm.ndim() < 2 || bm.shape(-2) != am.shape(-1))
    throw ValueError(
        "solve: the arguments must have shapes a=[..., m, m] and b=[..., m, k] or b=[m]; got a=" +
        shape_str(a.shape()) + " and b=" + shape_str(b.shape()));
  std::tie(am, bm) = promote_pair(am, bm);
  const Shape batch =
      broadcast_shapes(batch_shape(am.shape(), 2), batch_shape(bm.shape(), 2), "solve");
  Array x = solve_matrix(with_batch(am, batch), with_batch(bm, batch));
  return vector ? squeeze(x, -1) : x;
}

Array det(const Array& a) {
  check_valid(a, "det");
  if (a.ndim() < 2 || a.shape(-1) != a.shape(-2))
    throw ValueError("det: argument must have shape [..., n, n], got " + shape_str(a.shape()));
  return bind1(singleton<Det>(), {check_matrix(a, "det", true)});
}

SlogdetResult slogdet(const Array& a) {
  check_valid(a, "slogdet");
  if (a.ndim() < 2 || a.shape(-1) != a.shape(-2))
    throw ValueError("slogdet: argument must have shape [..., n, n], got " + shape_str(a.shape()));
  const Arrays r = bind(singleton<Slogdet>(), Arrays{check_matrix(a, "slogdet", true)});
  return {r[0], r[1]};
}

}  // namespace linalg

}  // namespace linum
