// Internal helpers shared by the op implementations (.cpp only, never included by users):
// dtype dispatch, shape rules for broadcasting and axes, output allocation, and the
// strided loops behind elementwise kernels.
#pragma once

#include <algorithm>
#include <complex>
#include <cstdint>
#include <span>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <linum/autodiff/array.hpp>
#include <linum/autodiff/ops.hpp>
#include <linum/autodiff/primitive.hpp>

namespace linum::detail {

template <class T>
struct is_complex_type : std::false_type {};
template <class R>
struct is_complex_type<std::complex<R>> : std::true_type {};
template <class T>
inline constexpr bool is_complex_v = is_complex_type<T>::value;

// The TypeError of a kernel without complex support, naming the running op (current_op()).
[[noreturn]] void throw_complex_unsupported(DType d);
// The TypeError of a kernel reached with a bfloat16/float16 operand outside bind (which
// computes those in float32), naming the running op.
[[noreturn]] void throw_reduced_float_unsupported(DType d);

// Calls f.template operator()<T>() with T the C++ type of dtype d (bool is stored as uint8).
// Complex dtypes are refused with a TypeError naming the op: most kernels are real-only; so are
// bfloat16/float16, which bind widens to float32 before any arithmetic kernel runs.
template <class F>
decltype(auto) dispatch(DType d, F&& f) {
  switch (d) {
    case DType::float32: return f.template operator()<float>();
    case DType::float64: return f.template operator()<double>();
    case DType::int32: return f.template operator()<std::int32_t>();
    case DType::uint32: return f.template operator()<std::uint32_t>();
    case DType::bool_: return f.template operator()<std::uint8_t>();
    case DType::complex64:
    case DType::complex128: throw_complex_unsupported(d);
    case DType::bfloat16:
    case DType::float16: throw_reduced_float_unsupported(d);
  }
  throw Error("internal error: unknown dtype");
}

// dispatch with complex64/complex128 as std::complex<float>/<double> and bfloat16/float16 as
// BFloat16/Float16, for kernels whose T is only copied, zero-initialised or converted (data
// movement, selection, conversion).
template <class F>
decltype(auto) dispatch_with_complex(DType d, F&& f) {
  if (d == DType::complex64) return f.template operator()<std::complex<float>>();
  if (d == DType::complex128) return f.template operator()<std::complex<double>>();
  if (d == DType::bfloat16) return f.template operator()<BFloat16>();
  if (d == DType::float16) return f.template operator()<Float16>();
  return dispatch(d, std::forward<F>(f));
}

template <class F>
decltype(auto) dispatch_float(DType d, const char* op, F&& f) {
  if (d == DType::float32) return f.template operator()<float>();
  if (d == DType::float64) return f.template operator()<double>();
  throw TypeError(std::string(op) + ": expected a floating dtype (float32 or float64), got " +
                  std::string(dtype_name(d)));
}

// Mutable element pointer of a freshly allocated concrete output (never of a user's array).
template <class T>
T* out_ptr(Array& a) {
  return static_cast<T*>(static_cast<ConcreteImpl*>(a.impl().get())->data);
}
template <class T>
const T* in_ptr(const Array& a) {
  return static_cast<const T*>(static_cast<const ConcreteImpl*>(a.impl().get())->data);
}

// Copies the r×s matrix x (row stride ldx) transposed into y (s×r, row stride r), in square
// blocks so that both sides are read and written in whole cache lines.
template <class T>
void transpose_into(std::int64_t r, std::int64_t s, const T* x, std::int64_t ldx, T* y) {
  constexpr std::int64_t blk = 16;
  for (std::int64_t i0 = 0; i0 < r; i0 += blk)
    for (std::int64_t j0 = 0; j0 < s; j0 += blk)
      for (std::int64_t i = i0; i < std::min(r, i0 + blk); ++i)
        for (std::int64_t j = j0; j < std::min(s, j0 + blk); ++j) y[j * r + i] = x[i * ldx + j];
}

inline std::vector<std::int64_t> strides_of(const Shape& s) {
  std::vector<std::int64_t> st(s.size());
  std::int64_t acc = 1;
  for (std::size_t i = s.size(); i-- > 0;) {
    st[i] = acc;
    acc *= s[i];
  }
  return st;
}

// numpy broadcasting of two shapes; `op` names the caller in the error.
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op);
// An axis in [-ndim, ndim) made non-negative; IndexError naming op otherwise.
int normalize_axis(int axis, int ndim, const char* op);
// Sorted, unique, non-negative axes (all axes when ax.all).
std::vector<int> normalize_axes(const Axes& ax, int ndim, const char* op);
// Throws ValueError if x is an empty handle.
void check_valid(const Array& x, const char* op);

// Sums `ct` down to `shape` (the transpose of numpy broadcasting), for VJPs of broadcasting ops.
Array sum_to_shape(const Array& ct, const Shape& shape);
// An empty vector that keeps the room of one given back earlier on this thread (else a new one).
// The tape's sweep gives back each node's vector of cotangents once it has used them, and
// arrays_of takes one, so that the hot VJP rules' results allocate nothing per node.
Arrays spare_arrays();
void give_back_arrays(Arrays&& v);

// Arrays holding the given values, moved in. A rule's `return {a, b};` copies each value out of
// its initializer list, an atomic increment and decrement per Array on every grad step.
template <class... A>
Arrays arrays_of(A&&... a) {
  Arrays v = spare_arrays();
  v.reserve(sizeof...(a));
  (v.push_back(std::forward<A>(a)), ...);
  return v;
}
// Batching helper for n-ary broadcasting elementwise ops: moves each batched operand's batch
// axis to the front and pads its rank so that numpy broadcasting lines up (output bdim 0).
Arrays align_batched(std::span<const Array> in, std::span<const int> bdims);
// Moves x's batch axis `bdim` to `to` (bdim < 0: broadcasts x along a new axis of `size`).
Array move_bdim(const Array& x, int bdim, int to, std::int64_t size);

// out[i] = f(a[ia], b[ib]) over the broadcast of a and b into out's shape.
template <class TA, class TB, class TO, class F>
void broadcast_loop(const TA* a, const Shape& as, const TB* b, const Shape& bs, TO* o,
                    const Shape& os, F f) {
  const std::int64_t n = shape_size(os);
  if (n == 0) return;
  const std::int64_t na = shape_size(as), nb = shape_size(bs);
  if (na == n && nb == n) {
    for (std::int64_t i = 0; i < n; ++i) o[i] = f(a[i], b[i]);
    return;
  }
  if (nb == 1 && na == n) {
    const TB bv = b[0];
    for (std::int64_t i = 0; i < n; ++i) o[i] = f(a[i], bv);
    return;
  }
  if (na == 1 && nb == n) {
    const TA av = a[0];
    for (std::int64_t i = 0; i < n; ++i) o[i] = f(av, b[i]);
    return;
  }
  // General case: strides with 0 on broadcast axes, inner loop over the last axis.
  const int nd = static_cast<int>(os.size());
  std::vector<std::int64_t> sa(nd, 0), sb(nd, 0);
  {
    auto ta = strides_of(as), tb = strides_of(bs);
    for (int d = 0; d < nd; ++d) {
      const int da = d - (nd - static_cast<int>(as.size()));
      const int db = d - (nd - static_cast<int>(bs.size()));
      if (da >= 0 && as[da] != 1) sa[d] = ta[da];
      if (db >= 0 && bs[db] != 1) sb[d] = tb[db];
    }
  }
  const std::int64_t inner = os[nd - 1];
  const std::int64_t ia = sa[nd - 1], ib = sb[nd - 1];
  std::vector<std::int64_t> idx(nd, 0);
  std::int64_t offa = 0, offb = 0;
  for (std::int64_t base = 0; base < n; base += inner) {
    if (ia == 1 && ib == 1)
      for (std::int64_t i = 0; i < inner; ++i) o[base + i] = f(a[offa + i], b[offb + i]);
    else if (ia == 0 && ib == 1)
      for (std::int64_t i = 0; i < inner; ++i) o[base + i] = f(a[offa], b[offb + i]);
    else if (ia == 1 && ib == 0)
      for (std::int64_t i = 0; i < inner; ++i) o[base + i] = f(a[offa + i], b[offb]);
    else
      for (std::int64_t i = 0; i < inner; ++i) o[base + i] = f(a[offa + i * ia], b[offb + i * ib]);
    for (int d = nd - 2; d >= 0; --d) {  // odometer over the outer axes
      offa += sa[d];
      offb += sb[d];
      if (++idx[d] < os[d]) break;
      offa -= sa[d] * os[d];
      offb -= sb[d] * os[d];
      idx[d] = 0;
    }
  }
}

// Copies the broadcast of x (of shape xs) into out of shape os.
template <class T>
void broadcast_copy(const T* x, const Shape& xs, T* o, const Shape& os) {
  const T zero{};
  broadcast_loop(x, xs, &zero, Shape{}, o, os, [](T v, T) { return v; });
}

// C = op(A)·op(B) (+ C when accumulate) on row-major matrices with leading dimensions (op:
// transpose when trans_*): float/double on ops/small_gemm for short contractions and small
// products, else cblas_?gemm; integers on a loop (wrapping), bool as the logical or of ands.
// Instantiated for float, double, int32, uint32, uint8 (in ops/linalg.cpp).
template <class T>
void gemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k, const T* a,
          std::int64_t lda, const T* b, std::int64_t ldb, T* c, std::int64_t ldc, bool accumulate);

}  // namespace linum::detail
