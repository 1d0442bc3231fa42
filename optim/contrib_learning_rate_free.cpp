// Leaf and scalar math of the learning-rate-free optimizers in contrib_learning_rate_free.hpp,
// with linum ops in optax's order of operations.
#include <linum/optim/contrib_learning_rate_free.hpp>

#include <cmath>
#include <string>
#include <vector>

namespace linum::optim::detail {

Array dadapt_dlr(const DAdaptConfig& c, const Array& estim_lr, double sched,
                 const Array& count_inc) {
  const DType dt = estim_lr.dtype();
  Array bc = sqrt(bias_correction_denominator(c.b2, count_inc, dt)) /
             bias_correction_denominator(c.b1, count_inc, dt);
  return astype(estim_lr * sched * bc, dt);
}

Array dadapt_adamw_weighted(const DAdaptConfig& c, const Array& gs, const Array& eas) {
  if (!gs.valid()) return {};
  return gs / (sqrt(eas) + c.eps);
}

std::array<Array, 3> dadapt_adamw_moments(const DAdaptConfig& c, const Array& dlr, const Array& g,
                                          const Array& ea, const Array& eas, const Array& gs) {
  if (!g.valid()) return {};
  const double sb2 = std::sqrt(c.b2);
  Array d = astype(dlr, g.dtype());
  return {c.b1 * ea + (1.0 - c.b1) * d * g, c.b2 * eas + (1.0 - c.b2) * g * g,
          sb2 * gs + (1.0 - sb2) * d * g};
}

Array dadapt_adamw_update(const DAdaptConfig& c, const Array& dlr, const Array& ea,
                          const Array& eas, const Array& p) {
  if (!ea.valid()) return {};
  Array d = astype(dlr, p.dtype());
  return -c.weight_decay * d * p - ea / (sqrt(eas) + c.eps);
}

std::array<Array, 3> prodigy_moments(const DAdaptConfig& c, const Array& estim_lr, const Array& dlr,
                                     const Array& g, const Array& ea, const Array& eas,
                                     const Array& gs) {
  if (!g.valid()) return {};
  Array d = estim_lr * g;  // the gradient scaled by the current estimate
  // safeguard_warmup leaves the schedule out of grad_sum, so a warmup from 0 cannot stall D.
  Array w = c.safeguard_warmup ? estim_lr : dlr;
  return {c.b1 * ea + (1.0 - c.b1) * d, c.b2 * eas + (1.0 - c.b2) * d * d,
          c.beta3 * gs + w * d / c.estim_lr0};
}

Array prodigy_update(const DAdaptConfig& c, const Array& dlr, const Array& estim_lr,
                     const Array& ea, const Array& eas, const Array& p) {
  if (!ea.valid()) return {};
  return -c.weight_decay * dlr * p - dlr * ea / (sqrt(eas) + estim_lr * c.eps);
}

std::array<Array, 5> cocob_leaf(double alpha, const Array& g, const Array& p, const Array& p0,
                                const Array& cumulative, const Array& scale,
                                const Array& subgradients, const Array& reward) {
  if (!g.valid()) return {};
  Array l = maximum(scale, abs(g));
  Array gsum = subgradients + abs(g);
  Array r = maximum(reward - g * (p - p0), 0.0);
  Array cg = cumulative - g;
  Array u = -p + (p0 + cg / (l * maximum(gsum + l, alpha * l)) * (l + r));
  return {u, cg, l, gsum, r};
}

void check_dog_init_step(const std::string& type) {
  if (type != "distance" && type != "learning_rate" && type != "heuristic")
    throw ValueError("scale_by_dog: Invalid init_step specification: init_step_type='" + type +
                     "' (expected \"distance\", \"learning_rate\" or \"heuristic\")");
}

std::array<Array, 4> mechanic_scalars(const MechanicConfig& c, const Array& h, const Array& r,
                                      const Array& m, const Array& v, const Array& s) {
  const DType dt = s.dtype();
  std::vector<double> b(static_cast<std::size_t>(c.num_betas));
  for (int i = 0; i < c.num_betas; ++i) b[static_cast<std::size_t>(i)] = 1.0 - std::pow(0.1, i + 1);
  Array betas = astype(array(b), dt);
  Array hh = astype(h, dt);
  Array clipped_h = clip(ones_like(m) * hh, -m, m);  // lax.clamp(-m, h, m)
  Array m2 = maximum(betas * m, abs(hh) + c.eps);
  Array v2 = (betas * betas) * v + hh * hh;
  Array r2 = betas * r + clipped_h * s;
  Array wealth = (c.s_init / c.num_betas) * m2 + maximum(r2, 0.0);
  return {r2, m2, v2, wealth / (sqrt(v2) + c.eps)};
}

void check_mechanize(const MechanicConfig& c) {
  if (c.num_betas < 1)
    throw ValueError("mechanize: num_betas must be at least 1, got " + std::to_string(c.num_betas));
}

}  // namespace linum::optim::detail
