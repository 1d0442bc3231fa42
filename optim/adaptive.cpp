// Leaf math of the adaptive scalings in adaptive.hpp, with linum ops in optax's order of
// operations (so that an update can be differentiated, vmapped or jitted like any other code).
#include <linum/optim/adaptive.hpp>

namespace linum::optim::detail {

namespace {

// b1 * m / (1 - b1**(t + 1)) + (1 - b1) * g / (1 - b1**t): the Nesterov look-ahead of the first
// moment (scale_by_adam(nesterov=True) and its relatives).
Array nesterov_momentum(const Array& m, const Array& g, double b1, const Array& count) {
  return b1 * bias_correction(m, b1, safe_increment(count)) +
         (1.0 - b1) * bias_correction(g, b1, count);
}

}  // namespace

std::array<Array, 4> amsgrad_leaf(const AmsgradConfig& c, const Array& count, const Array& g,
                                  const Array& mu, const Array& nu, const Array& nu_max) {
  if (!g.valid()) return {};
  Array m = update_moment(g, mu, c.b1, 1);
  Array v = update_moment_per_elem_norm(g, nu, c.b2, 2);
  Array m_hat = c.bias_correction_mu ? bias_correction(m, c.b1, count) : m;
  Array v_eff = c.bias_correction_nu ? bias_correction(v, c.b2, count) : v;
  Array v_max = maximum(nu_max, v_eff);
  Array u = m_hat / (sqrt(v_max + c.eps_root) + c.eps);
  return {u, cast(m, c.mu_dtype), v, v_max};
}

std::array<Array, 3> adamax_leaf(double b1, double b2, double eps, const Array& count,
                                 const Array& g, const Array& mu, const Array& nu) {
  if (!g.valid()) return {};
  Array m = update_moment(g, mu, b1, 1);
  Array v = maximum(abs(g) + eps, b2 * nu);  // optax.tree.update_infinity_moment
  return {bias_correction(m, b1, count) / v, m, v};
}

std::array<Array, 3> belief_leaf(const BeliefConfig& c, const Array& count, const Array& g,
                                 const Array& mu, const Array& nu) {
  if (!g.valid()) return {};
  Array m = update_moment(g, mu, c.b1, 1);
  Array v = update_moment_per_elem_norm(g - m, nu, c.b2, 2) + c.eps_root;
  Array m_hat = c.nesterov ? nesterov_momentum(m, g, c.b1, count) : bias_correction(m, c.b1, count);
  Array v_hat = bias_correction(v, c.b2, count);
  return {m_hat / (sqrt(v_hat) + c.eps), m, v};
}

std::array<Array, 3> yogi_leaf(double b1, double b2, double eps, double eps_root,
                               const Array& count, const Array& g, const Array& mu,
                               const Array& nu) {
  if (!g.valid()) return {};
  Array m = update_moment(g, mu, b1, 1);
  Array g2 = g * g;
  Array v = nu - (1.0 - b2) * sign(nu - g2) * g2;
  Array u = bias_correction(m, b1, count) / (sqrt(bias_correction(v, b2, count) + eps_root) + eps);
  return {u, m, v};
}

Array radam_ro(double b2, const Array& count, DType dtype) {
  // optax: ro_inf - 2 * t * b2**t / (1 - b2**t), in the dtype of the step scalars.
  const double ro_inf = 2.0 / (1.0 - b2) - 1.0;
  Array t = astype(count, dtype);
  Array b2t = power(full({}, b2, dtype), t);
  return ro_inf - t * 2.0 * b2t / (1.0 - b2t);
}

std::array<Array, 3> radam_leaf(const RadamConfig& c, const Array& count, const Array& ro,
                                const Array& g, const Array& mu, const Array& nu) {
  if (!g.valid()) return {};
  Array m = update_moment(g, mu, c.b1, 1);
  Array v = update_moment_per_elem_norm(g, nu, c.b2, 2);
  Array m_hat = c.nesterov ? nesterov_momentum(m, g, c.b1, count) : bias_correction(m, c.b1, count);
  Array v_hat = bias_correction(v, c.b2, count);
  const double ro_inf = 2.0 / (1.0 - c.b2) - 1.0;
  Array r = sqrt((ro - 4.0) * (ro - 2.0) * ro_inf / (((ro_inf - 4.0) * (ro_inf - 2.0)) * ro));
  Array rectified = astype(r, m_hat.dtype()) * m_hat / (sqrt(v_hat + c.eps_root) + c.eps);
  return {where(ro >= c.threshold, rectified, m_hat), m, v};
}

std::array<Array, 5> adan_leaf(const AdanConfig& c, const Array& first, const Array& t_inc,
                               const Array& g, const Array& m, const Array& v, const Array& n,
                               const Array& g_prev) {
  if (!g.valid()) return {};
  Array diff = where(first, zeros_like(g), g - g_prev);
  Array m2 = update_moment(g, m, c.b1, 1);
  Array v2 = update_moment(diff, v, c.b2, 1);
  Array n2 = update_moment_per_elem_norm(g + (1.0 - c.b2) * diff, n, c.b3, 2);
  Array u = bias_correction(m2, c.b1, t_inc) + (1.0 - c.b2) * bias_correction(v2, c.b2, t_inc);
  u = u / (sqrt(bias_correction(n2, c.b3, t_inc) + c.eps_root) + c.eps);
  return {u, m2, v2, n2, g};
}

std::array<Array, 3> novograd_leaf(const NovogradConfig& c, const Array& first, const Array& g,
                                   const Array& p, const Array& mu, const Array& nu) {
  if (!g.valid()) return {};
  // optax squares jnp.linalg.norm(g) (not the sum of squares directly).
  Array norm = sqrt(sum(g * g));
  Array sq_norm = norm * norm;
  Array v = where(first, astype(sq_norm, nu.dtype()), update_moment(sq_norm, nu, c.b2, 1));
  Array step = g / (sqrt(v + c.eps_root) + c.eps) + c.weight_decay * p;
  Array m = cast(where(first, step, c.b1 * mu + step), c.mu_dtype);
  return {m, m, v};
}

}  // namespace linum::optim::detail
