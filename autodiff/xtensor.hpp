// xtensor interop (opt-in, not part of <linum/linum.hpp>): linum::Array <-> xt::xarray.
//   to_xarray<T>(a)   a copy converted to T (like np.asarray(a, dtype=T)).
//   as_xtensor<T>(a)  a zero-copy, read-only xtensor view of a's buffer; it shares ownership of
//                     that buffer, so it stays valid after `a` is gone. T must be a's element type.
//   array(x)          an Array holding a copy of an xtensor expression.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

#include <xtensor/xadapt.hpp>
#include <xtensor/xarray.hpp>

#include <linum/autodiff/array.hpp>

namespace linum {

namespace detail {
inline std::vector<std::size_t> xt_shape(const Shape& s) { return {s.begin(), s.end()}; }
}  // namespace detail

// A read-only xtensor view of a's buffer (row-major), without copying. The view holds a
// reference to the buffer, which Arrays never mutate. Throws for tracers and for a T that is not
// a's element type (bool arrays are viewed as T = bool).
template <class T>
auto as_xtensor(const Array& a) {
  const T* p = a.data<T>();  // checks concreteness and dtype
  return xt::adapt_smart_ptr(static_cast<const T*>(p), detail::xt_shape(a.shape()), a.impl());
}

// A row-major copy of a's values converted to T (bool, float, double, int32 or uint32).
template <class T>
xt::xarray<T> to_xarray(const Array& a) {
  Array c = a.concrete();
  if (c.dtype() != dtype_of<T>()) c = array(c, dtype_of<T>());
  const T* p = c.data<T>();
  xt::xarray<T> r = xt::xarray<T>::from_shape(detail::xt_shape(c.shape()));
  std::copy(p, p + c.size(), r.data());
  return r;
}

// An Array from any xtensor expression (evaluated row-major); dtype follows its value type.
template <class E>
Array array(const xt::xexpression<E>& e) {
  using T = typename E::value_type;
  const xt::xarray<T, xt::layout_type::row_major> x = e.derived_cast();
  Shape s(x.shape().begin(), x.shape().end());
  if constexpr (std::is_same_v<T, bool>) {
    std::vector<std::uint8_t> bytes(x.begin(), x.end());
    return detail::from_buffer(bytes.data(), s, bool_, bool_);
  } else {
    return detail::from_values(x.data(), s);
  }
}

template <class T, xt::layout_type L>
Array array(const xt::xarray<T, L>& x) {
  return array(static_cast<const xt::xexpression<xt::xarray<T, L>>&>(x));
}

}  // namespace linum
