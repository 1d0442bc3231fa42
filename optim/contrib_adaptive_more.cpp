// Leaf math of MADGRAD and ACProp (contrib_adaptive_more.hpp), with linum ops in optax's order of
// operations.
#include <linum/optim/contrib_adaptive_more.hpp>

namespace linum::optim::detail {

std::array<Array, 3> madgrad_leaf(double lr, double momentum, double eps, const Array& count,
                                  const Array& g, const Array& p, const Array& grad_sum_sq,
                                  const Array& s, const Array& x0) {
  if (!g.valid()) return {};
  const DType dt = is_floating(g.dtype()) ? g.dtype() : float32;
  // lr + eps keeps the step positive at a zero learning rate, as the PyTorch original does.
  Array lamb = (lr + eps) * sqrt(astype(count, dt) + 1.0);
  Array gss = grad_sum_sq + astype(lamb * (g * g), g.dtype());
  Array s2 = s + astype(lamb * g, g.dtype());
  Array z = x0 - s2 / (cbrt(gss) + eps);
  Array x_new = (1.0 - momentum) * z + momentum * p;
  return {x_new - p, gss, s2};
}

std::array<Array, 3> acprop_leaf(double b1, double b2, double eps, double eps_root,
                                 const Array& count, const Array& initial, const Array& g,
                                 const Array& mu, const Array& nu) {
  if (!g.valid()) return {};
  Array m = update_moment(g, mu, b1, 1);
  Array v = update_moment_per_elem_norm(g - mu, nu, b2, 2) + eps_root;
  // The denominator is the previous step's: nu before this update, debiased with the count it
  // has seen (1 at the first step, where it is replaced by 1).
  Array t = where(initial, safe_increment(count), count);
  Array nu_hat = where(initial, ones({}, nu.dtype()), bias_correction(nu, b2, t));
  return {g / (sqrt(nu_hat) + eps), m, v};
}

}  // namespace linum::optim::detail
