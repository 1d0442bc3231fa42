// Contractions: dot_general, THE contraction primitive (a batched GEMM), with its JVP, VJP (JAX's
// transpose rules) and batching rule; dot and matmul (numpy semantics) built on it; the shared
// gemm helper (small products on ops/small_gemm.cpp, the rest on oneDNN or BLAS).
#include <cblas.h>

#include <algorithm>
#include <climits>
#include <numeric>

#include <linum/autodiff/ops/backends.hpp>
#include <linum/autodiff/ops/blas_runtime.hpp>
#include <linum/autodiff/ops/dnnl_backend.hpp>
#include <linum/autodiff/ops/kernel_util.hpp>
#include <linum/autodiff/ops/recorded_params.hpp>
#include <linum/autodiff/ops/small_gemm.hpp>

namespace linum {
namespace detail {

// ---- gemm -------------------------------------------------------------------------------------

namespace {

// CBLAS's int arguments (OpenBLAS's blasint, BLIS's f77_int: an int converts to either).
int blas_int(std::int64_t v) {
  if (v > INT_MAX)
    throw ValueError("gemm: dimension " + std::to_string(v) + " exceeds the BLAS int range");
  return static_cast<int>(v);
}

}  // namespace

template <class T>
void gemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, const T* a,
          std::int64_t lda, const T* b, std::int64_t ldb, T* c, std::int64_t ldc, bool accumulate) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    if (!accumulate)
      for (std::int64_t i = 0; i < m; ++i) std::fill(c + i * ldc, c + i * ldc + n, T(0));
    return;
  }
  if constexpr (std::is_floating_point_v<T>) {
    if (small_gemm_preferred<T>(trans_a, trans_b, m, n, k))
      return small_gemm(trans_a, trans_b, m, n, k, a, lda, b, ldb, c, ldc, accumulate);
    if constexpr (std::is_same_v<T, float>)
      if (gemm_backend() == GemmBackend::onednn &&
          onednn_sgemm(trans_a, trans_b, m, n, k, a, lda, b, ldb, c, ldc, accumulate))
        return;
    ensure_fast_blas_core();
    const auto ta = trans_a ? CblasTrans : CblasNoTrans, tb = trans_b ? CblasTrans : CblasNoTrans;
    const T beta = accumulate ? T(1) : T(0);
    if constexpr (std::is_same_v<T, float>)
      cblas_sgemm(CblasRowMajor, ta, tb, blas_int(m), blas_int(n), blas_int(k), 1.0f, a,
                  blas_int(lda), b, blas_int(ldb), beta, c, blas_int(ldc));
    else
      cblas_dgemm(CblasRowMajor, ta, tb, blas_int(m), blas_int(n), blas_int(k), 1.0, a,
                  blas_int(lda), b, blas_int(ldb), beta, c, blas_int(ldc));
  } else {
    // Integers wrap (two's complement, as XLA); bool is the logical or of ands.
    std::vector<std::uint32_t> acc(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < m; ++i) {
      std::fill(acc.begin(), acc.end(), 0u);
      for (std::int64_t p = 0; p < k; ++p) {
        const auto av = static_cast<std::uint32_t>(trans_a ? a[p * lda + i] : a[i * lda + p]);
        if (av == 0) continue;
        if (trans_b)
          for (std::int64_t j = 0; j < n; ++j)
            acc[j] += av * static_cast<std::uint32_t>(b[j * ldb + p]);
        else
          for (std::int64_t j = 0; j < n; ++j)
            acc[j] += av * static_cast<std::uint32_t>(b[p * ldb + j]);
      }
      T* row = c + i * ldc;
      for (std::int64_t j = 0; j < n; ++j) {
        if constexpr (std::is_same_v<T, std::uint8_t>)
          row[j] = static_cast<T>((accumulate && row[j]) || acc[j] != 0);
        else
          row[j] =
              static_cast<T>(accumulate ? static_cast<std::uint32_t>(row[j]) + acc[j] : acc[j]);
      }
    }
  }
}

template void gemm<float>(bool, bool, std::int64_t, std::int64_t, std::int64_t, const float*,
                          std::int64_t, const float*, std::int64_t, float*, std::int64_t, bool);
template void gemm<double>(bool, bool, std::int64_t, std::int64_t, std::int64_t, const double*,
                           std::int64_t, const double*, std::int64_t, double*, std::int64_t, bool);
template void gemm<std::int32_t>(bool, bool, std::int64_t, std::int64_t, std::int64_t,
                                 const std::int32_t*, std::int64_t, const std::int32_t*,
                                 std::int64_t, std::int32_t*, std::int64_t, bool);
template void gemm<std::uint32_t>(bool, bool, std::int64_t, std::int64_t, std::int64_t,
                                  const std::uint32_t*, std::int64_t, const std::uint32_t*,
                                  std::int64_t, std::uint32_t*, std::int64_t, bool);
template void gemm<std::uint8_t>(bool, bool, std::int64_t, std::int64_t, std::int64_t,
                                 const std::uint8_t*, std::int64_t, const std::uint8_t*,
                                 std::int64_t, std::uint8_t*, std::int64_t, bool);

namespace {

using Dims = std::vector<int>;

std::string dims_str(const Dims& d) { return shape_str(Shape(d.begin(), d.end())); }

// The dims of an operand of rank n that are neither contracted nor batch dims, in order.
Dims free_dims(int n, const Dims& contract, const Dims& batch) {
  Dims r;
  for (int i = 0; i < n; ++i)
    if (std::find(contract.begin(), contract.end(), i) == contract.end() &&
        std::find(batch.begin(), batch.end(), i) == batch.end())
      r.push_back(i);
  return r;
}

Dims concat(std::initializer_list<const Dims*> parts) {
  Dims r;
  for (const Dims* p : parts) r.insert(r.end(), p->begin(), p->end());
  return r;
}

bool is_identity(const Dims& p) {
  for (std::size_t i = 0; i < p.size(); ++i)
    if (p[i] != static_cast<int>(i)) return false;
  return true;
}

Dims argsort(const Dims& v) {
  Dims r(v.size());
  std::iota(r.begin(), r.end(), 0);
  std::sort(r.begin(), r.end(), [&](int a, int b) { return v[a] < v[b]; });
  return r;
}

std::int64_t prod(const Shape& s, const Dims& dims) {
  std::int64_t n = 1;
  for (int d : dims) n *= s[d];
  return n;
}

Dims shifted(Dims v, int b) {
  for (int& a : v)
    if (a >= b) ++a;
  return v;
}

std::string dnums_str(const DotDimensionNumbers& d) {
  return "((" + dims_str(d.lhs_contract) + ", " + dims_str(d.rhs_contract) + "), (" +
         dims_str(d.lhs_batch) + ", " + dims_str(d.rhs_batch) + "))";
}

Array dot_general_bind(const Array& x, const Array& y, const DotDimensionNumbers& d,
                       std::optional<DType> preferred = std::nullopt);

// The cotangent of x in out = dot_general(x, y) (JAX's _dot_general_transpose_lhs): g contracted
// with y over y's free dims, then put into x's dim order. Of the two operand orders we take the
// one whose result already is in x's order, so that no transpose is needed when possible.
// `swap` says that g's free dims hold y's before x's (the rhs case).
Array transpose_operand(const Array& g, const Array& y, const Dims& xc, const Dims& xb,
                        const Dims& yc, const Dims& yb, int x_ndim, bool swap);

// The cotangent of x as transpose_operand gives it, back in x's dtype: with a
// preferred_element_type, g is of the result's wider dtype and meets y (promoted to it).
Array operand_cotangent(const Array& g, const Array& x, const Array& y, const Dims& xc,
                        const Dims& xb, const Dims& yc, const Dims& yb, bool swap) {
  const Array yw = y.dtype() == g.dtype() ? y : convert_element_type(y, g.dtype(), y.weak_type());
  const Array r = transpose_operand(g, yw, xc, xb, yc, yb, x.ndim(), swap);
  return r.dtype() == x.dtype() ? r : convert_element_type(r, x.dtype(), x.weak_type());
}

Array transpose_operand(const Array& g, const Array& y, const Dims& xc, const Dims& xb,
                        const Dims& yc, const Dims& yb, int x_ndim, bool swap) {
  const int nb = static_cast<int>(xb.size());
  const Dims x_kept = free_dims(x_ndim, xc, xb), y_kept = free_dims(y.ndim(), yc, yb);
  Dims g_batch(nb), g_y(y_kept.size());
  std::iota(g_batch.begin(), g_batch.end(), 0);
  std::iota(g_y.begin(), g_y.end(), nb + (swap ? 0 : static_cast<int>(x_kept.size())));
  // y's free dims in the result are y's contracted dims in ascending order: x's contracted
  // dims sorted by their partners in y.
  Dims xc_by_y;
  for (int i : argsort(yc)) xc_by_y.push_back(xc[i]);
  const Dims order_gy = concat({&xb, &x_kept, &xc_by_y}),
             order_yg = concat({&xb, &xc_by_y, &x_kept});
  if (!is_identity(order_gy) && is_identity(order_yg))
    return dot_general_bind(y, g, {y_kept, g_y, yb, g_batch});
  Array r = dot_general_bind(g, y, {g_y, y_kept, g_batch, yb});
  return is_identity(order_gy) ? r : transpose(r, argsort(order_gy));
}

// An operand laid out as (B, rows, cols) row-major, possibly transposed, for the batched GEMM.
struct Operand {
  Array a;
  bool trans;
};

// Views x as (batch, first, second) when its dims are in that order, as the transposed
// (batch, second, first) when they are in that order, and copies it otherwise.
Operand canonical(const Array& x, const Dims& batch, const Dims& first, const Dims& second) {
  const Dims p = concat({&batch, &first, &second});
  if (is_identity(p)) return {x, false};
  if (is_identity(concat({&batch, &second, &first}))) return {x, true};
  return {transpose(x, p), false};
}

// Whether a product of 2-byte float operands `in` into `out` runs on the native kernel: oneDNN
// selected and multiplying `in` natively, the result `in` or float32, and the product large enough
// that small_gemm on converted operands would not be faster.
bool takes_native_gemm(DType in, DType out, bool trans_a, bool trans_b, std::int64_t m,
                       std::int64_t n, std::int64_t k) {
  return native_reduced_gemm(in) && (out == in || out == float32) && m > 0 && n > 0 && k > 0 &&
         !small_gemm_preferred<float>(trans_a, trans_b, m, n, k);
}

struct DotGeneral final : Primitive {
  DotDimensionNumbers d;           // validated: non-negative, consistent sizes
  std::optional<DType> preferred;  // validated, and unlike the operands' dtype
  DotGeneral(DotDimensionNumbers dn, std::optional<DType> p) : d(std::move(dn)), preferred(p) {}
  const char* name() const override { return "dot_general"; }
  // 2-byte floats run natively where oneDNN can, else eval widens them itself.
  bool handles_reduced_floats() const override { return true; }
  bool vjp_reads_output(std::size_t) const override { return false; }

  Avals abstract_eval(std::span<const ShapeDtype> in) const override {
    const Shape &xs = in[0].shape, &ys = in[1].shape;
    Shape os;
    for (int b : d.lhs_batch) os.push_back(xs[b]);
    for (int f : free_dims(static_cast<int>(xs.size()), d.lhs_contract, d.lhs_batch))
      os.push_back(xs[f]);
    for (int f : free_dims(static_cast<int>(ys.size()), d.rhs_contract, d.rhs_batch))
      os.push_back(ys[f]);
    return {{os, preferred.value_or(in[0].dtype)}};
  }
  void print_params(std::ostream& os) const override {
    os << "dimension_numbers=" << dnums_str(d);
    if (preferred) os << " preferred_element_type=" << *preferred;
  }

  Arrays eval(std::span<const Array> in) const override {
    const Array &x = in[0], &y = in[1];
    const Dims xf = free_dims(x.ndim(), d.lhs_contract, d.lhs_batch);
    const Dims yf = free_dims(y.ndim(), d.rhs_contract, d.rhs_batch);
    Shape os;
    for (int b : d.lhs_batch) os.push_back(x.shape()[b]);
    for (int f : xf) os.push_back(x.shape()[f]);
    for (int f : yf) os.push_back(y.shape()[f]);
    const DType out_t = preferred.value_or(x.dtype());
    Array out = empty(os, out_t);
    const std::int64_t B = prod(x.shape(), d.lhs_batch), M = prod(x.shape(), xf),
                       N = prod(y.shape(), yf), K = prod(x.shape(), d.lhs_contract);
    // The contracted pairs may be taken in any order; prefer the one that spares a copy.
    Dims xc = d.lhs_contract, yc = d.rhs_contract;
    Operand a = canonical(x, d.lhs_batch, xf, xc);
    if (a.a.impl() != x.impl()) {  // try the pairs ordered by the lhs dims instead
      Dims o = argsort(xc), xc2, yc2;
      for (int i : o) xc2.push_back(xc[i]), yc2.push_back(yc[i]);
      Operand a2 = canonical(x, d.lhs_batch, xf, xc2);
      if (a2.a.impl() == x.impl()) a = a2, xc = xc2, yc = yc2;
    }
    Operand b = canonical(y, d.rhs_batch, yc, yf);
    const std::int64_t lda = a.trans ? M : K, ldb = b.trans ? K : N;
    if (B > 0 && takes_native_gemm(x.dtype(), out_t, a.trans, b.trans, M, N, K)) {
      const std::size_t in_size = itemsize(x.dtype()), out_size = itemsize(out_t);
      auto native = [&](std::int64_t i) {
        return onednn_gemm_reduced(x.dtype(), out_t, a.trans, b.trans, M, N, K,
                                   in_ptr<std::uint8_t>(a.a) + i * M * K * in_size, lda,
                                   in_ptr<std::uint8_t>(b.a) + i * K * N * in_size, ldb,
                                   out_ptr<std::uint8_t>(out) + i * M * N * out_size, N);
      };
      // Every batch has the same geometry: the first says whether oneDNN has the kernel.
      if (native(0)) {
        for (std::int64_t i = 1; i < B; ++i)
          if (!native(i)) throw Error("dot_general: oneDNN's kernel ran for one batch, not all");
        return {out};
      }
    }
    // Otherwise the product runs in `compute`: the result's dtype, or float32 for a 2-byte float
    // result, the operands converted to it (exact) and the result rounded once.
    const DType compute = is_reduced_float(out_t) ? float32 : out_t;
    auto widened = [&](const Array& v) {
      return v.dtype() == compute
                 ? v
                 : from_buffer(in_ptr<std::uint8_t>(v), v.shape(), v.dtype(), compute);
    };
    const Array wa = widened(a.a), wb = widened(b.a);
    Array res = compute == out_t ? out : empty(os, compute);
    dispatch(compute, [&]<class T>() {
      const T* pa = in_ptr<T>(wa);
      const T* pb = in_ptr<T>(wb);
      T* po = out_ptr<T>(res);
      for (std::int64_t i = 0; i < B; ++i)
        gemm<T>(a.trans, b.trans, M, N, K, pa + i * M * K, lda, pb + i * K * N, ldb, po + i * M * N,
                N, false);
    });
    return {compute == out_t ? res : from_buffer(in_ptr<std::uint8_t>(res), os, compute, out_t)};
  }

  // Bilinear: d(x·y) = dx·y + x·dy.
  Arrays jvp(std::span<const Array> p, std::span<const Array> t,
             std::span<const Array>) const override {
    Array r;
    if (t[0].valid()) r = dot_general_bind(t[0], p[1], d, preferred);
    if (t[1].valid()) {
      Array s = dot_general_bind(p[0], t[1], d, preferred);
      r = r.valid() ? add(r, s) : s;
    }
    return {r};
  }

  Arrays vjp(std::span<const Array> p, std::span<const Array> ct,
             std::span<const Array> o) const override {
    const bool both[2] = {true, true};
    return vjp_needed(p, ct, o, both);
  }
  // A constant operand (data, not a parameter) gets no cotangent: that GEMM is never run.
  Arrays vjp_needed(std::span<const Array> p, std::span<const Array> ct, std::span<const Array>,
                    std::span<const bool> needed) const override {
    if (!ct[0].valid()) return {Array(), Array()};
    return {needed[0] ? operand_cotangent(ct[0], p[0], p[1], d.lhs_contract, d.lhs_batch,
                                          d.rhs_contract, d.rhs_batch, false)
                      : Array(),
            needed[1] ? operand_cotangent(ct[0], p[1], p[0], d.rhs_contract, d.rhs_batch,
                                          d.lhs_contract, d.lhs_batch, true)
                      : Array()};
  }

  // Both batched: a new dot_general batch dim (leading in the result). One side batched: its
  // batch axis is one more free dim, so the batch folds into one bigger GEMM.
  Batched vmap(std::span<const Array> in, std::span<const int> bdims) const override {
    const int lb = bdims[0], rb = bdims[1];
    DotDimensionNumbers n = d;
    if (lb >= 0)
      n.lhs_contract = shifted(d.lhs_contract, lb), n.lhs_batch = shifted(d.lhs_batch, lb);
    if (rb >= 0)
      n.rhs_contract = shifted(d.rhs_contract, rb), n.rhs_batch = shifted(d.rhs_batch, rb);
    const int nb = static_cast<int>(d.lhs_batch.size());
    if (lb >= 0 && rb >= 0) {
      n.lhs_batch.insert(n.lhs_batch.begin(), lb);
      n.rhs_batch.insert(n.rhs_batch.begin(), rb);
      return {{dot_general_bind(in[0], in[1], n, preferred)}, {0}};
    }
    Array r = dot_general_bind(in[0], in[1], n, preferred);
    if (lb >= 0) {
      const Dims xf = free_dims(in[0].ndim(), n.lhs_contract, n.lhs_batch);
      const int pos = static_cast<int>(std::find(xf.begin(), xf.end(), lb) - xf.begin());
      return {{r}, {nb + pos}};
    }
    const Dims xf = free_dims(in[0].ndim(), n.lhs_contract, n.lhs_batch);
    const Dims yf = free_dims(in[1].ndim(), n.rhs_contract, n.rhs_batch);
    const int pos = static_cast<int>(std::find(yf.begin(), yf.end(), rb) - yf.begin());
    return {{r}, {nb + static_cast<int>(xf.size()) + pos}};
  }
};

Array dot_general_bind(const Array& x, const Array& y, const DotDimensionNumbers& d,
                       std::optional<DType> preferred) {
  return bind1(std::make_shared<const DotGeneral>(d, preferred), {x, y});
}

// JAX's rule: integer operands may accumulate in floats; otherwise both integral (a signed
// operand keeping its sign), both floating or both complex, and never narrower.
void check_preferred_element_type(DType in, DType preferred) {
  auto fail = [&](const std::string& why) {
    throw TypeError("dot_general: preferred_element_type " + std::string(dtype_name(preferred)) +
                    " for " + std::string(dtype_name(in)) + " operands: " + why);
  };
  if (!(is_integer(in) && is_floating(preferred))) {
    if ((is_integer(in) && !is_integer(preferred)) ||
        (is_floating(in) && !is_floating(preferred)) || (is_complex(in) && !is_complex(preferred)))
      fail(
          "the compatible combinations of (operands, preferred_element_type) are (integral, "
          "integral), (integral, floating), (floating, floating) and (complex, complex)");
    if (in == int32 && preferred == uint32)
      fail("preferred_element_type must have the same signedness as the operands");
  }
  if (itemsize(preferred) < itemsize(in))
    fail("preferred_element_type must not be narrower than the operands");
}

// Promotes both operands to their common dtype (jnp.dot and friends accept mixed dtypes).
std::pair<Array, Array> promote_pair(const Array& a, const Array& b, const char* op) {
  check_valid(a, op);
  check_valid(b, op);
  const ResultType r = result_type(a, b);
  return {promote_to(a, r), promote_to(b, r)};
}

[[noreturn]] void throw_contract(const char* op, const Array& a, const Array& b) {
  throw ValueError(std::string(op) + ": contracting dimensions differ: lhs shape " +
                   shape_str(a.shape()) + ", rhs shape " + shape_str(b.shape()));
}

}  // namespace

const DotDimensionNumbers* dot_general_dims(const Primitive& p) {
  // jit's rewrites rebuild plain products; one with its own result dtype is left as it is.
  const auto* g = dynamic_cast<const DotGeneral*>(&p);
  return g && !g->preferred ? &g->d : nullptr;
}

}  // namespace detail

using namespace detail;

Array dot_general(const Array& lhs, const Array& rhs, const DotDimensionNumbers& dims,
                  std::optional<DType> preferred_element_type) {
  auto [x, y] = promote_pair(lhs, rhs, "dot_general");
  if (preferred_element_type) {
    check_preferred_element_type(x.dtype(), *preferred_element_type);
    if (*preferred_element_type == x.dtype()) preferred_element_type.reset();  // the plain product
  }
  auto fail = [&](const std::string& why) {
    throw ValueError("dot_general: " + why + "; lhs shape " + shape_str(x.shape()) +
                     ", rhs shape " + shape_str(y.shape()) + ", dimension_numbers " +
                     dnums_str(dims));
  };
  if (dims.lhs_contract.size() != dims.rhs_contract.size())
    fail("lhs and rhs must have the same number of contracting dimensions");
  if (dims.lhs_batch.size() != dims.rhs_batch.size())
    fail("lhs and rhs must have the same number of batch dimensions");
  DotDimensionNumbers d;
  auto norm = [&](const Dims& v, int nd, Dims& out) {
    for (int a : v) {
      if (a < -nd || a >= nd)
        fail("dimension " + std::to_string(a) + " is out of bounds for rank " + std::to_string(nd));
      out.push_back(a < 0 ? a + nd : a);
    }
  };
  norm(dims.lhs_contract, x.ndim(), d.lhs_contract);
  norm(dims.rhs_contract, y.ndim(), d.rhs_contract);
  norm(dims.lhs_batch, x.ndim(), d.lhs_batch);
  norm(dims.rhs_batch, y.ndim(), d.rhs_batch);
  for (auto [c, b] :
       {std::pair{&d.lhs_contract, &d.lhs_batch}, std::pair{&d.rhs_contract, &d.rhs_batch}}) {
    Dims all = concat({c, b});
    std::sort(all.begin(), all.end());
    if (std::adjacent_find(all.begin(), all.end()) != all.end())
      fail("a dimension appears more than once among the contracting and batch dimensions");
  }
  for (std::size_t i = 0; i < d.lhs_batch.size(); ++i)
    if (x.shape()[d.lhs_batch[i]] != y.shape()[d.rhs_batch[i]])
      fail("batch dimensions differ in size");
  for (std::size_t i = 0; i < d.lhs_contract.size(); ++i)
    if (x.shape()[d.lhs_contract[i]] != y.shape()[d.rhs_contract[i]])
      fail("contracting dimensions differ in size");
  return dot_general_bind(x, y, d, preferred_element_type);
}

Array dot(const Array& a, const Array& b) {
  auto [x, y] = promote_pair(a, b, "dot");
  if (x.ndim() == 0 || y.ndim() == 0) return multiply(x, y);
  const int yc = y.ndim() == 1 ? 0 : y.ndim() - 2;
  if (x.shape(-1) != y.shape()[yc]) throw_contract("dot", x, y);
  return dot_general_bind(x, y, {{x.ndim() - 1}, {yc}, {}, {}});
}

// jnp.matmul, following JAX's lowering: batch dims present in both operands with equal sizes
// become dot_general batch dims; size-1 or missing ones become free dims (no broadcast copy).
Array matmul(const Array& a, const Array& b) {
  auto [x, y] = promote_pair(a, b, "matmul");
  for (int i = 0; i < 2; ++i)
    if ((i ? y : x).ndim() == 0)
      throw ValueError("matmul: input operand " + std::to_string(i) +
                       " must have ndim at least 1, but it has ndim 0");
  const bool xm = x.ndim() > 1, ym = y.ndim() > 1;
  if (x.shape(-1) != y.shape(ym ? -2 : -1)) throw_contract("matmul", x, y);
  const int xnb = xm ? x.ndim() - 2 : 0, ynb = ym ? y.ndim() - 2 : 0;
  const int nb = std::max(xnb, ynb);
  Dims x_batch, y_batch, idx_batch, idx_x, idx_y;
  Shape xs, ys;  // the operands' shapes after dropping squeezed size-1 batch dims
  for (int i = 0; i < nb; ++i) {
    const int xi = i - (nb - xnb), yi = i - (nb - ynb);
    const std::int64_t bx = xi >= 0 ? x.shape()[xi] : -1, by = yi >= 0 ? y.shape()[yi] : -1;
    if (bx < 0) {
      idx_y.push_back(i);
      ys.push_back(by);
    } else if (by < 0) {
      idx_x.push_back(i);
      xs.push_back(bx);
    } else if (bx == 1) {
      idx_y.push_back(i);
      ys.push_back(by);
    } else if (by == 1) {
      idx_x.push_back(i);
      xs.push_back(bx);
    } else if (bx == by) {
      x_batch.push_back(static_cast<int>(xs.size()));
      y_batch.push_back(static_cast<int>(ys.size()));
      idx_batch.push_back(i);
      xs.push_back(bx);
      ys.push_back(by);
    } else {
      throw ValueError("matmul: batch dimensions are incompatible for broadcasting: lhs shape " +
                       shape_str(x.shape()) + ", rhs shape " + shape_str(y.shape()));
    }
  }
  for (int i = xnb; i < x.ndim(); ++i) xs.push_back(x.shape()[i]);
  for (int i = ynb; i < y.ndim(); ++i) ys.push_back(y.shape()[i]);
  if (xm) idx_x.push_back(nb);
  if (ym) idx_y.push_back(nb + (xm ? 1 : 0));
  Array xr = xs == x.shape() ? x : reshape(x, xs), yr = ys == y.shape() ? y : reshape(y, ys);
  const int yc = yr.ndim() - 1 - (ym ? 1 : 0);
  Array out = dot_general_bind(xr, yr, {{xr.ndim() - 1}, {yc}, x_batch, y_batch});
  const Dims perm = argsort(concat({&idx_batch, &idx_x, &idx_y}));
  return is_identity(perm) ? out : transpose(out, perm);
}

}  // namespace linum
