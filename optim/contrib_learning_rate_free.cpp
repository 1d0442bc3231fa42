// Leaf and scalar math of the learning-rate-free optimizers in contrib_learning_rate_free.hpp,
// with linum ops in optax's order of operations.
#include <linum/optim/contrib_learning_rate_free.hpp>

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

}  // namespace linum::optim::detail
