// Elementwise ops (jax.numpy / jax.lax names): numpy broadcasting, JAX type promotion, and
// weakly typed C++ scalars (x * 2.0 keeps x's float dtype, as a Python scalar would).
#pragma once

#include <type_traits>

#include <linum/autodiff/array.hpp>

namespace linum {

// ---- binary arithmetic --------------------------------------------------------------------
Array add(const Array& a, const Array& b);
Array subtract(const Array& a, const Array& b);
Array multiply(const Array& a, const Array& b);
Array divide(const Array& a, const Array& b);  // true division: integers promote to float32
Array power(const Array& a, const Array& b);
Array maximum(const Array& a, const Array& b);
Array minimum(const Array& a, const Array& b);
Array logaddexp(const Array& a, const Array& b);  // log(exp(a) + exp(b)) without overflow

// ---- unary math ---------------------------------------------------------------------------
Array negative(const Array& x);
Array exp(const Array& x);
Array log(const Array& x);
Array log1p(const Array& x);
Array expm1(const Array& x);
Array sqrt(const Array& x);
Array rsqrt(const Array& x);
Array square(const Array& x);
Array abs(const Array& x);
Array sign(const Array& x);
Array sin(const Array& x);
Array cos(const Array& x);
Array tanh(const Array& x);
Array sigmoid(const Array& x);
Array erf(const Array& x);
Array floor(const Array& x);
Array ceil(const Array& x);
Array round(const Array& x);  // half to even, as jnp.round

// ---- comparisons and logic (bool results, not differentiable) -----------------------------
Array equal(const Array& a, const Array& b);
Array not_equal(const Array& a, const Array& b);
Array less(const Array& a, const Array& b);
Array less_equal(const Array& a, const Array& b);
Array greater(const Array& a, const Array& b);
Array greater_equal(const Array& a, const Array& b);
Array logical_and(const Array& a, const Array& b);
Array logical_or(const Array& a, const Array& b);
Array logical_not(const Array& x);
Array isfinite(const Array& x);
Array isnan(const Array& x);

// ---- selection, casting, gradients ---------------------------------------------------------
// jnp.where: the three operands broadcast together; a non-bool cond reads nonzero as true.
Array where(const Array& cond, const Array& x, const Array& y);
// jnp.clip = minimum(hi, maximum(lo, x)); an empty Array() bound means None (no bound).
Array clip(const Array& x, const Array& lo, const Array& hi);
// A strongly typed copy in `dtype` (x itself when it is strong and of that dtype already).
Array astype(const Array& x, DType dtype);
Array stop_gradient(const Array& x);

// ---- jax.nn activations built from the above --------------------------------------------------
Array relu(const Array& x);       // relu'(0) = 0, as jax.nn.relu's custom JVP
Array relu6(const Array& x);      // min(max(x, 0), 6); derivative 0 at both kinks, as jax.nn.relu6
Array softplus(const Array& x);   // logaddexp(x, 0)
Array soft_sign(const Array& x);  // x / (|x| + 1)
Array silu(const Array& x);       // x * sigmoid(x)
Array swish(const Array& x);      // = silu
Array log_sigmoid(const Array& x);                    // -softplus(-x)
Array gelu(const Array& x, bool approximate = true);  // tanh approximation by default, as JAX
Array elu(const Array& x, double alpha = 1.0);
Array celu(const Array& x, double alpha = 1.0);
Array selu(const Array& x);
Array leaky_relu(const Array& x, double negative_slope = 0.01);
Array hard_tanh(const Array& x);
Array hard_sigmoid(const Array& x);        // relu6(x + 3) / 6
Array hard_silu(const Array& x);           // x * hard_sigmoid(x)
Array hard_swish(const Array& x);          // = hard_silu
Array glu(const Array& x, int axis = -1);  // a * sigmoid(b), a and b the halves of `axis`

// ---- operators ------------------------------------------------------------------------------
namespace detail {
// A C++ scalar next to an array, as a weakly typed rank-0 array of the JAX result dtype.
Array weak_scalar(double value, DType scalar_kind, const Array& like);
// The dtype and weak type of a binary op's result (jnp's promote_dtypes).
ResultType result_type(const Array& a, const Array& b);
// lax's convert_element_type with an explicit result weak type (astype: always strong).
Array convert_element_type(const Array& x, DType dtype, bool weak_type);
// x converted to a promotion result's dtype (unchanged when it has it already).
Array promote_to(const Array& x, ResultType r);
template <class S>
constexpr DType scalar_kind() {
  if constexpr (std::is_same_v<S, bool>)
    return bool_;
  else if constexpr (std::is_floating_point_v<S>)
    return float32;
  else
    return int32;
}
template <class S>
Array weak(S s, const Array& like) {
  return weak_scalar(static_cast<double>(s), scalar_kind<S>(), like);
}
}  // namespace detail

template <class S>
concept Scalar = std::is_arithmetic_v<S>;

inline Array operator+(const Array& a, const Array& b) { return add(a, b); }
inline Array operator-(const Array& a, const Array& b) { return subtract(a, b); }
inline Array operator*(const Array& a, const Array& b) { return multiply(a, b); }
inline Array operator/(const Array& a, const Array& b) { return divide(a, b); }
inline Array operator-(const Array& a) { return negative(a); }
inline Array operator<(const Array& a, const Array& b) { return less(a, b); }
inline Array operator<=(const Array& a, const Array& b) { return less_equal(a, b); }
inline Array operator>(const Array& a, const Array& b) { return greater(a, b); }
inline Array operator>=(const Array& a, const Array& b) { return greater_equal(a, b); }
inline Array operator&&(const Array& a, const Array& b) { return logical_and(a, b); }
inline Array operator||(const Array& a, const Array& b) { return logical_or(a, b); }
inline Array operator!(const Array& a) { return logical_not(a); }

#define LINUM_SCALAR_OPERATOR(op, fn)      \
  template <Scalar S>                      \
  Array operator op(const Array& a, S s) { \
    return fn(a, detail::weak(s, a));      \
  }                                        \
  template <Scalar S>                      \
  Array operator op(S s, const Array& a) { \
    return fn(detail::weak(s, a), a);      \
  }
LINUM_SCALAR_OPERATOR(+, add)
LINUM_SCALAR_OPERATOR(-, subtract)
LINUM_SCALAR_OPERATOR(*, multiply)
LINUM_SCALAR_OPERATOR(/, divide)
LINUM_SCALAR_OPERATOR(<, less)
LINUM_SCALAR_OPERATOR(<=, less_equal)
LINUM_SCALAR_OPERATOR(>, greater)
LINUM_SCALAR_OPERATOR(>=, greater_equal)
#undef LINUM_SCALAR_OPERATOR

template <Scalar S>
Array power(const Array& a, S s) {
  return power(a, detail::weak(s, a));
}
template <Scalar S>
Array maximum(const Array& a, S s) {
  return maximum(a, detail::weak(s, a));
}
template <Scalar S>
Array minimum(const Array& a, S s) {
  return minimum(a, detail::weak(s, a));
}
template <Scalar L, Scalar H>
Array clip(const Array& x, L lo, H hi) {
  return clip(x, detail::weak(lo, x), detail::weak(hi, x));
}
template <Scalar S>
Array where(const Array& c, const Array& x, S y) {
  return where(c, x, detail::weak(y, x));
}
template <Scalar S>
Array where(const Array& c, S x, const Array& y) {
  return where(c, detail::weak(x, y), y);
}

// Elementwise equality is `equal`; operator== on Arrays is deliberately not provided, so that
// `a == b` cannot silently mean identity or an ambiguous truth value.

}  // namespace linum
