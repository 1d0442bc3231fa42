// jax.nn activations, jax.nn.standardize and jnp.logaddexp, composed from primitives: their
// derivatives come from the primitives' rules, written so that the kinks get JAX's values.
#include <cmath>

#include <linum/autodiff/ops/kernel_util.hpp>
#include <linum/autodiff/ops/reduction.hpp>
#include <linum/autodiff/ops/shape.hpp>

namespace linum {

// max + log1p(exp(min - max)): min - max (not -|a - b|) keeps the derivative at a == b at 1/2
// each, because maximum/minimum split ties evenly. NaN or same-signed infinities take a + b.
Array logaddexp(const Array& a, const Array& b) {
  detail::check_valid(a, "logaddexp");
  detail::check_valid(b, "logaddexp");
  detail::broadcast_shapes(a.shape(), b.shape(), "logaddexp");
  ResultType r = detail::result_type(a, b);
  if (!is_inexact(r.dtype)) r.dtype = float32;
  Array x = detail::promote_to(a, r), y = detail::promote_to(b, r);
  Array hi = maximum(x, y), lo = minimum(x, y);
  return where(isnan(subtract(x, y)), add(x, y), add(hi, log1p(exp(subtract(lo, hi)))));
}

Array softplus(const Array& x) {
  detail::check_valid(x, "softplus");
  return logaddexp(x, detail::weak(0, x));
}
Array soft_sign(const Array& x) { return x / (abs(x) + 1); }
Array silu(const Array& x) { return multiply(x, sigmoid(x)); }
Array swish(const Array& x) { return silu(x); }
Array log_sigmoid(const Array& x) { return negative(softplus(negative(x))); }

Array gelu(const Array& x, bool approximate) {
  detail::check_valid(x, "gelu");
  Array v = is_inexact(x.dtype()) ? x : detail::convert_element_type(x, float32, x.weak_type());
  if (approximate) {
    const double sqrt_2_over_pi = std::sqrt(2.0 / M_PI);
    Array cdf = 0.5 * (1.0 + tanh(sqrt_2_over_pi * (v + 0.044715 * power(v, 3))));
    return v * cdf;
  }
  return v * (erf(v / std::sqrt(2.0)) + 1.0) / 2.0;
}

// The inner where keeps expm1 finite on the branch that is not taken, so its zero cotangent
// cannot turn into NaN (the double-where idiom of jax.nn.elu).
Array elu(const Array& x, double alpha) {
  detail::check_valid(x, "elu");
  Array pos = greater(x, 0);
  Array safe = where(pos, 0.0, x);
  return where(pos, x, alpha * expm1(safe));
}
Array celu(const Array& x, double alpha) {
  detail::check_valid(x, "celu");
  return maximum(x, 0.0) + alpha * expm1(minimum(x, 0.0) / alpha);
}
Array selu(const Array& x) {
  constexpr double alpha = 1.6732632423543772848170429916717;
  constexpr double scale = 1.0507009873554804934193349852946;
  return scale * elu(x, alpha);
}
Array leaky_relu(const Array& x, double negative_slope) {
  detail::check_valid(x, "leaky_relu");
  return where(greater_equal(x, 0), x, negative_slope * x);
}
// where(x >= 6, 6, relu(x)) has jax.nn.relu6's derivative: 0 at 0 and at 6.
Array relu6(const Array& x) {
  detail::check_valid(x, "relu6");
  Array r = relu(x);
  return where(greater_equal(x, 6), 6.0, r);
}
Array hard_tanh(const Array& x) {
  detail::check_valid(x, "hard_tanh");
  return where(greater(x, 1), 1, where(less(x, -1), -1, x));
}
Array hard_sigmoid(const Array& x) {
  detail::check_valid(x, "hard_sigmoid");
  return relu6(x + 3.0) / 6.0;
}
Array hard_silu(const Array& x) { return x * hard_sigmoid(x); }
Array hard_swish(const Array& x) { return hard_silu(x); }

Array glu(const Array& x, int axis) {
  detail::check_valid(x, "glu");
  if (x.ndim() == 0)
    throw ValueError("glu: expected an array with at least one axis, got a scalar");
  const int ax = axis < 0 ? axis + x.ndim() : axis;
  if (ax < 0 || ax >= x.ndim())
    throw ValueError("glu: axis " + std::to_string(axis) + " is out of bounds for an array of " +
                     "shape " + shape_str(x.shape()));
  if (x.shape(ax) % 2 != 0)
    throw ValueError("glu: axis " + std::to_string(axis) + " of shape " + shape_str(x.shape()) +
                     " must have an even size");
  const Arrays halves = split(x, 2, ax);
  return halves[0] * sigmoid(halves[1]);
}

Array standardize(const Array& x, const Axes& axis, const std::optional<Array>& mean_,
                  const std::optional<Array>& variance, double epsilon) {
  detail::check_valid(x, "standardize");
  const Array m = mean_ ? *mean_ : mean(x, axis, true);
  const Array v = variance ? *variance : mean(square(x), axis, true) - square(m);
  return (x - m) * rsqrt(v + epsilon);
}

}  // namespace linum
