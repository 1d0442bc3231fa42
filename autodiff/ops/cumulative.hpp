// Cumulative reductions (jax.numpy and jax.lax names) and lax.associative_scan.
#pragma once

#include <optional>
#include <type_traits>

#include <linum/autodiff/array.hpp>

namespace linum {

// jnp.cumsum / cumprod along `axis` (nullopt: the flattened array). dtype: the accumulation and
// result dtype; by default the input's, with bool accumulated as int32.
Array cumsum(const Array& a, std::optional<int> axis = std::nullopt,
             std::optional<DType> dtype = std::nullopt);
Array cumprod(const Array& a, std::optional<int> axis = std::nullopt,
              std::optional<DType> dtype = std::nullopt);
// jnp.nancumsum / nancumprod: NaNs count as 0 / 1.
Array nancumsum(const Array& a, std::optional<int> axis = std::nullopt,
                std::optional<DType> dtype = std::nullopt);
Array nancumprod(const Array& a, std::optional<int> axis = std::nullopt,
                 std::optional<DType> dtype = std::nullopt);
// jnp.cumulative_sum / cumulative_prod: `axis` may be left out only for 1-D input;
// include_initial prepends the identity (0 / 1).
Array cumulative_sum(const Array& x, std::optional<int> axis = std::nullopt,
                     std::optional<DType> dtype = std::nullopt, bool include_initial = false);
Array cumulative_prod(const Array& x, std::optional<int> axis = std::nullopt,
                      std::optional<DType> dtype = std::nullopt, bool include_initial = false);

// lax.cumsum, cumprod, cummax, cummin, cumlogsumexp: along `axis`, from the end when reverse.
// Numeric dtypes only. Gradients of cumprod/max/min/logsumexp are those of associative_scan with
// the same combiner (JAX's rule): cumprod's stay exact where the input has zeros, and cummax's
// tangent splits evenly between tied values.
Array lax_cumsum(const Array& operand, int axis = 0, bool reverse = false);
Array lax_cumprod(const Array& operand, int axis = 0, bool reverse = false);
Array cummax(const Array& operand, int axis = 0, bool reverse = false);
Array cummin(const Array& operand, int axis = 0, bool reverse = false);
Array cumlogsumexp(const Array& operand, int axis = 0, bool reverse = false);

// lax.associative_scan: [e0, fn(e0, e1), fn(fn(e0, e1), e2), ...] along `axis` of every array
// of elems (all with the same length there), by JAX's parallel prefix algorithm (pairs combined
// recursively, then the even positions filled in). fn must be associative and act elementwise
// along the axis: it receives and returns arrays shaped like slices of elems. reverse scans from
// the end.
// The combiner, borrowed for the duration of the call (a lambda may be passed directly).
template <class R>
class ScanFn {
 public:
  using Arg = std::conditional_t<std::is_same_v<R, Array>, Array, Arrays>;
  template <class F>
  requires std::is_invocable_r_v<R, const F&, const Arg&, const Arg&> ScanFn(const F& f)  // NOLINT
      : obj_(&f), call_([](const void* o, const Arg& a, const Arg& b) -> R {
          return (*static_cast<const F*>(o))(a, b);
        }) {}
  R operator()(const Arg& a, const Arg& b) const { return call_(obj_, a, b); }

 private:
  const void* obj_;
  R (*call_)(const void*, const Arg&, const Arg&);
};
Arrays associative_scan(ScanFn<Arrays> fn, const Arrays& elems, bool reverse = false, int axis = 0);
Array associative_scan(ScanFn<Array> fn, const Array& elems, bool reverse = false, int axis = 0);

}  // namespace linum
