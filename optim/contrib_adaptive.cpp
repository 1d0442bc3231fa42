// Leaf math of the Adam variants in contrib_adaptive.hpp, with linum ops in optax's order of
// operations.
#include <linum/optim/contrib_adaptive.hpp>

namespace linum::optim::detail {

Array adopt_default_clip_value(const Array& count) {
  // count**0.25 on the int32 count: float32, as JAX promotes an int array to a Python float.
  return power(astype(count, float32), 0.25);
}

std::array<Array, 3> adopt_leaf(const AdoptConfig& c, const Array& first, const Array& clip_value,
                                const Array& g, const Array& mu, const Array& nu) {
  if (!g.valid()) return {};
  const DType dt = is_floating(g.dtype()) ? g.dtype() : float32;
  // b2 = 0 and b1 = 1 at the first step: nu starts at g**2, mu stays 0.
  Array b2 = where(first, zeros({}, dt), full({}, c.b2, dt));
  Array b1 = where(first, ones({}, dt), full({}, c.b1, dt));
  Array v = (1.0 - b2) * (g * g) + b2 * nu;
  Array mu_u = g / maximum(sqrt(nu), c.eps);  // the previous step's nu
  if (clip_value.valid()) {
    Array cv = astype(clip_value, dt);
    mu_u = clip(mu_u, -cv, cv);
  }
  Array m = (1.0 - b1) * mu_u + b1 * mu;
  Array u = c.nesterov ? (1.0 - b1) * mu_u + b1 * m : m;
  return {u, cast(m, c.mu_dtype), v};
}

std::array<Array, 4> ademamix_leaf(const AdemamixConfig& c, const Array& count_inc, const Array& g,
                                   const Array& m1, const Array& m2, const Array& nu) {
  if (!g.valid()) return {};
  Array a = update_moment(g, m1, c.b1, 1);
  Array b = update_moment(g, m2, c.b3, 1);
  Array v = update_moment_per_elem_norm(g, nu, c.b2, 2);
  Array u = (bias_correction(a, c.b1, count_inc) + c.alpha * b) /
            (sqrt(bias_correction(v, c.b2, count_inc) + c.eps_root) + c.eps);
  return {u, a, b, v};
}

std::array<Array, 3> simplified_ademamix_leaf(const AdemamixConfig& c, const Array& t_inc,
                                              const Array& g, const Array& m, const Array& n) {
  if (!g.valid()) return {};
  Array m2 = g + c.b1 * m;
  Array g2 = g * g;
  Array n2 = g2 + c.b2 * (n - g2);  // optax's lerp(b2, g**2, n)
  Array u = (m2 + c.alpha * g) / (sqrt(bias_correction(n2, c.b2, t_inc) + c.eps_root) + c.eps);
  return {u, m2, n2};
}

}  // namespace linum::optim::detail
