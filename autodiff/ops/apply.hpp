// jax.numpy's higher-order array functions: a function applied along or over axes, on index
// grids, or piecewise. They vmap the function as JAX does, so it sees what JAX's sees (a 1-D
// slice, or scalars) and the results stay differentiable and traceable.
#pragma once

#include <cstdint>
#include <functional>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include <linum/autodiff/array.hpp>

namespace linum {

// jnp.apply_along_axis: func1d applied to every 1-D slice of arr along `axis` (vmapped over the
// other axes); func1d's output axes take the place of `axis`.
Array apply_along_axis(const std::function<Array(const Array&)>& func1d, int axis,
                       const Array& arr);
// jnp.apply_over_axes: a = func(a, axis) for each axis in turn; a result one rank lower gets
// the axis back (size 1), as numpy's.
Array apply_over_axes(const std::function<Array(const Array&, int)>& func, const Array& a,
                      const std::vector<int>& axes);
// jnp.fromfunction: out[i0, i1, ...] = function({i0, i1, ...}), with function vmapped over each
// index (it receives rank-0 index arrays of `dtype`, as in JAX, not numpy's full grids).
Array fromfunction(const std::function<Array(const Arrays&)>& function, const Shape& shape,
                   DType dtype = float32);

// One entry of piecewise's funclist: a constant, or a function of x (vmapped, so that it
// receives the scalar entries of x).
class Piece {
 public:
  template <class S>
  requires std::is_arithmetic_v<S> Piece(S value)  // NOLINT(google-explicit-constructor)
      : v_(static_cast<double>(value)) {}
  template <class F>
  requires std::is_invocable_r_v<Array, const F&, const Array&> Piece(F f)  // NOLINT
      : v_(std::function<Array(const Array&)>(std::move(f))) {}
  const std::variant<double, std::function<Array(const Array&)>>& value() const { return v_; }

 private:
  std::variant<double, std::function<Array(const Array&)>> v_;
};
// jnp.piecewise: where condlist[k] holds, funclist[k] of x (the last true condition wins);
// where none does, funclist's extra last entry (else 0). Results are cast to x's dtype.
Array piecewise(const Array& x, const Arrays& condlist, const std::vector<Piece>& funclist);

}  // namespace linum
