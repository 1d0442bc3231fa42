// The skeletons of linum's elementwise primitives (internal, .cpp only): the kernels over
// broadcast operands, the Unary/Binary rule templates, the dtype plumbing of the public ops and
// the fused-block forms that jit chains (ops/fusion.hpp). An elementwise primitive is a struct D
// with kName and a per-element f (plus, optionally, a SIMD form and a derivative), deriving from
// Unary<D> or Binary<D>; every file of elementwise ops builds on these.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

#include <linum/autodiff/ops/simd.hpp>

#include <linum/autodiff/ops/fusion.hpp>
#include <linum/autodiff/ops/kernel_util.hpp>
#include <linum/autodiff/parallel.hpp>

namespace linum::detail {

// ---- kernels --------------------------------------------------------------------------------

// Signed integers wrap as XLA's do (INT32_MIN - 1 is INT32_MAX); a signed overflow is undefined
// in C++, so their arithmetic runs in the unsigned type of the same width.
template <class T, class Op>
T wrapping(T x, T y, Op op) {
  if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(op(static_cast<U>(x), static_cast<U>(y))));
  } else {
    return static_cast<T>(op(x, y));
  }
}
template <class T>
T wrapping_negate(T x) {
  return wrapping(T(0), x, [](auto a, auto b) { return a - b; });
}


// out = D::f(x) elementwise; float types use D's SIMD form when it has one.
template <class D>
Array unary_kernel(const Array& x, DType out_dtype) {
  Array out = empty(x.shape(), out_dtype);
  const std::int64_t n = x.size();
  dispatch(x.dtype(), [&]<class T>() {
    const T* a = in_ptr<T>(x);
    if constexpr (requires { D::template f<T>(T{}); }) {
      using O = decltype(D::template f<T>(T{}));
      O* o = out_ptr<O>(out);
      parallel_for(n, [&](std::int64_t lo, std::int64_t hi) {
        std::int64_t i = lo;
        if constexpr (std::is_floating_point_v<T> && std::is_same_v<O, T> &&
                      requires { D::simd(xsimd::batch<T>(T{})); }) {
          constexpr std::int64_t w = xsimd::batch<T>::size;
          for (; i + w <= hi; i += w)
            D::simd(xsimd::batch<T>::load_unaligned(a + i)).store_unaligned(o + i);
        }
        for (; i < hi; ++i) o[i] = D::template f<T>(a[i]);
      });
    } else {
      throw TypeError(std::string(D::kName) + ": not defined for dtype " +
                      std::string(dtype_name(x.dtype())));
    }
  });
  return out;
}

template <class D>
Array binary_kernel(const Array& a, const Array& b, DType out_dtype) {
  const Shape &as = a.shape(), &bs = b.shape();
  Array out = as == bs ? empty(as, out_dtype) : empty(broadcast_shapes(as, bs, D::kName), out_dtype);
  const std::int64_t n = out.size(), na = as == bs ? n : a.size(), nb = as == bs ? n : b.size();
  dispatch(a.dtype(), [&]<class T>() {
    if constexpr (!requires { D::template f<T>(T{}, T{}); }) {
      throw TypeError(std::string(D::kName) + ": not defined for dtype " +
                      std::string(dtype_name(a.dtype())));
    } else {
      using O = decltype(D::template f<T>(T{}, T{}));
      auto f = [](T x, T y) { return D::template f<T>(x, y); };
      const T *pa = in_ptr<T>(a), *pb = in_ptr<T>(b);
      O* po = out_ptr<O>(out);
      // Same shapes, or one side of size 1: flat ranges, split over the threads when large.
      if ((na == n || na == 1) && (nb == n || nb == 1)) {
        const bool full_a = na == n, full_b = nb == n;
        parallel_for(n, [&](std::int64_t lo, std::int64_t hi) {
          const T av = pa[0], bv = pb[0];  // the operand of size 1 (n is then 1 if both are)
          if (full_a && full_b)
            for (std::int64_t i = lo; i < hi; ++i) po[i] = f(pa[i], pb[i]);
          else if (full_a)
            for (std::int64_t i = lo; i < hi; ++i) po[i] = f(pa[i], bv);
          else if (full_b)
            for (std::int64_t i = lo; i < hi; ++i) po[i] = f(av, pb[i]);
          else
            for (std::int64_t i = lo; i < hi; ++i) po[i] = f(av, bv);
        });
        return;
      }
      broadcast_loop(pa, as, pb, bs, po, out.shape(), f);
    }
  });
  return out;
}

// ---- rule skeletons ---------------------------------------------------------------------------

// A unary primitive whose JVP and VJP multiply by D::deriv(x, out). D may declare kBoolOut
// (bool result) and kNoGrad (zero derivative everywhere: no tape node, no tangent).
template <class D>
struct Unary : Primitive {
  const char* name() const override { return D::kName; }
  Avals abstract_eval(std::span<const ShapeDtype> in) const override {
    if constexpr (requires { D::kBoolOut; })
      return {{in[0].shape, bool_}};
    else
      return {in[0]};
  }
  Array eval1(std::span<const Array> in) const final {
    if constexpr (requires { D::kBoolOut; })
      return unary_kernel<D>(in[0], bool_);
    else
      return unary_kernel<D>(in[0], in[0].dtype());
  }
  Arrays eval(std::span<const Array> in) const final { return arrays_of(eval1(in)); }
  bool differentiable() const override {
    return !requires { D::kNoGrad; };
  }
  // D::kDerivFromOut: the derivative is a function of the output alone (exp, tanh, logistic).
  bool vjp_reads_input(std::size_t) const override {
    return !requires { D::kDerivFromOut; };
  }
  // Primitives without D::deriv override jvp/vjp themselves.
  static Array times_deriv(const Array& g, const Array& x, const Array& out) {
    if constexpr (requires { D::deriv(x, out); })
      return g.valid() ? multiply(g, D::deriv(x, out)) : Array();
    else
      throw NotImplementedError(std::string("derivative of ") + D::kName + " is not implemented");
  }
  Arrays jvp(std::span<const Array> p, std::span<const Array> t,
             std::span<const Array> o) const override {
    return arrays_of(times_deriv(t[0], p[0], o[0]));
  }
  Arrays vjp(std::span<const Array> p, std::span<const Array> ct,
             std::span<const Array> o) const override {
    return arrays_of(times_deriv(ct[0], p[0], o[0]));
  }
  Batched vmap(std::span<const Array> in, std::span<const int> bdims) const override {
    return {{bind1(singleton<D>(), {in[0]})}, {bdims[0]}};
  }
};

// A broadcasting binary primitive; D supplies the kernel and its JVP/VJP. D may declare
// kBoolOut (comparisons and logical connectives).
template <class D>
struct Binary : Primitive {
  const char* name() const override { return D::kName; }
  Avals abstract_eval(std::span<const ShapeDtype> in) const override {
    DType od = in[0].dtype;
    if constexpr (requires { D::kBoolOut; }) od = bool_;
    return {{broadcast_shapes(in[0].shape, in[1].shape, D::kName), od}};
  }
  Array eval_binary(const Array& a, const Array& b) const final {
    if constexpr (requires { D::kBoolOut; })
      return binary_kernel<D>(a, b, bool_);
    else
      return binary_kernel<D>(a, b, a.dtype());
  }
  Array eval1(std::span<const Array> in) const final { return eval_binary(in[0], in[1]); }
  Arrays eval(std::span<const Array> in) const final { return arrays_of(eval1(in)); }
  Batched vmap(std::span<const Array> in, std::span<const int> bdims) const override {
    Arrays a = align_batched(in, bdims);
    return {{bind1(singleton<D>(), {a[0], a[1]})}, {0}};
  }
};

// ---- op plumbing ------------------------------------------------------------------------------

// Checks broadcasting with the user's shapes (equal shapes, the common case, at one comparison).
inline void check_broadcast(const Array& a, const Array& b, const char* op) {
  if (a.shape() != b.shape()) broadcast_shapes(a.shape(), b.shape(), op);
}

// Promotes both operands to their common dtype and checks broadcasting with the user's shapes.
inline std::pair<Array, Array> promote(const Array& a, const Array& b, const char* op) {
  check_valid(a, op);
  check_valid(b, op);
  check_broadcast(a, b, op);
  const ResultType r = result_type(a, b);
  return {promote_to(a, r), promote_to(b, r)};
}

// Transcendental functions compute in floating point: integer inputs become float32, as in jnp.
inline Array to_inexact(const Array& x, const char* op) {
  check_valid(x, op);
  return is_inexact(x.dtype()) ? x : convert_element_type(x, float32, x.weak_type());
}

// jnp's numeric ops read bool as int32 (promote_dtypes_numeric).
inline Array to_numeric(const Array& x, const char* op) {
  check_valid(x, op);
  return x.dtype() == bool_ ? astype(x, int32) : x;
}

// Logical ops accept any dtype and read nonzero as true, as jnp.logical_* do.
inline Array to_bool(const Array& x, const char* op) {
  check_valid(x, op);
  return x.dtype() == bool_ ? x : not_equal(x, 0);
}

// A strongly typed scalar of x's dtype (lax._const): the constant rounds to that dtype first.
inline Array constant_like(const Array& x, double v) { return make_scalar(v, x.dtype()); }

// Both operands promoted together, then to floating point (jnp's promote_args_inexact).
inline std::pair<Array, Array> promote_inexact(const Array& a, const Array& b, const char* op) {
  auto [x, y] = promote(a, b, op);
  if (is_inexact(x.dtype())) return {x, y};
  return {to_inexact(x, op), to_inexact(y, op)};
}

// lax.rem on operands of one dtype (ops/elementwise_math.cpp): the C remainder, with XLA's
// integer division by zero (x % 0 = x).
Array rem(const Array& x, const Array& y);
// The k-th Maclaurin coefficient of sinc as x * 0 + c, whose JVP is the next one (jnp.sinc at 0).
Array sinc_maclaurin(int k, const Array& x);

template <class P>
Array unary_float(const Array& x, const char* op) {
  check_valid(x, op);
  if (is_inexact(x.dtype())) return bind1(singleton<P>(), x);
  return bind1(singleton<P>(), to_inexact(x, op));
}

template <class P>
Array binary(const Array& a, const Array& b, const char* op) {
  // One dtype, the common case, promotes to itself whatever the weak types: nothing to convert,
  // and no handle copies, neither from promote nor into a span (W4: 5-7% of its time).
  if (a.valid() && b.valid() && a.dtype() == b.dtype()) {
    check_broadcast(a, b, op);
    return bind1(singleton<P>(), a, b);
  }
  auto [x, y] = promote(a, b, op);
  return bind1(singleton<P>(), x, y);
}

// floor/ceil/round leave integers and bools unchanged, as jnp does.
template <class P>
Array rounding(const Array& x, const char* op) {
  check_valid(x, op);
  return is_inexact(x.dtype()) ? bind1(singleton<P>(), x) : x;
}

// ---- fused blocks (ops/fusion.hpp) ------------------------------------------------------------

// The loops of unary_kernel / binary_kernel on one block: the same per-element expressions.
template <class D, class T>
void unary_block(const T* a, std::int64_t sa, const T*, std::int64_t, T* o, std::int64_t n,
                 bool simd) {
  std::int64_t i = 0;
  if constexpr (requires { D::simd(xsimd::batch<T>(T{})); }) {
    constexpr std::int64_t w = xsimd::batch<T>::size;
    if (simd && sa == 1)
      for (; i + w <= n; i += w)
        D::simd(xsimd::batch<T>::load_unaligned(a + i)).store_unaligned(o + i);
  }
  for (; i < n; ++i) o[i] = D::template f<T>(a[i * sa]);
}
template <class D, class T>
void binary_block(const T* a, std::int64_t sa, const T* b, std::int64_t sb, T* o, std::int64_t n,
                  bool) {
  if (sa == 1 && sb == 1) {
    for (std::int64_t i = 0; i < n; ++i) o[i] = D::template f<T>(a[i], b[i]);
  } else if (sa == 1) {
    const T bv = b[0];
    for (std::int64_t i = 0; i < n; ++i) o[i] = D::template f<T>(a[i], bv);
  } else if (sb == 1) {
    const T av = a[0];
    for (std::int64_t i = 0; i < n; ++i) o[i] = D::template f<T>(av, b[i]);
  } else {
    for (std::int64_t i = 0; i < n; ++i) o[i] = D::template f<T>(a[0], b[0]);
  }
}
template <class D, class T>
T unary_scalar(T a, T) {
  return D::template f<T>(a);
}
template <class D, class T>
T binary_scalar(T a, T b) {
  return D::template f<T>(a, b);
}
template <class D>
FusedEntry unary_entry() {
  return {singleton<D>().get(), FusedOp{1, &unary_block<D, float>, &unary_block<D, double>,
                                        &unary_scalar<D, float>, &unary_scalar<D, double>}};
}
template <class D>
FusedEntry binary_entry() {
  return {singleton<D>().get(), FusedOp{2, &binary_block<D, float>, &binary_block<D, double>,
                                        &binary_scalar<D, float>, &binary_scalar<D, double>}};
}

}  // namespace linum::detail
