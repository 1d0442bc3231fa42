// MoMo's step size and leaf update (contrib_momo.hpp), in optax's order of operations.
#include <linum/optim/contrib_momo.hpp>

#include <limits>
#include <string>

namespace linum::optim::detail {

std::array<Array, 2> momo_step_size(const MomoConfig& c, double alpha, const Array& barf,
                                    const Array& gamma, const Array& iprod, const Array& norm,
                                    const Array& lb, const Array& bc1, bool adam) {
  const double k = 1 + alpha * c.weight_decay;
  Array this_lb = lb;
  if (c.adapt_lower_bound) {
    Array cap = k * (barf - gamma) + iprod;
    this_lb = adam ? where(cap < k * bc1 * lb, maximum(cap / (2 * bc1 * k), c.lower_bound), lb)
                   : where(cap < k * lb, maximum(cap / (2 * k), c.lower_bound), lb);
  }
  Array gap = adam ? barf - bc1 * this_lb - gamma : barf - this_lb - gamma;
  Array t1 = maximum(k * gap + iprod, 0.0) / norm;
  // No step when the momentum vanishes (optax compares with float64's epsilon).
  t1 = where(norm <= std::numeric_limits<double>::epsilon(), 0.0, t1);
  Array tau = adam ? minimum(alpha / bc1, t1) : minimum(t1, alpha);
  Array new_lb = lb;
  if (c.adapt_lower_bound) {
    Array est = (barf + iprod - gamma) - 0.5 * tau * norm;
    new_lb = maximum(adam ? est / bc1 : est, c.lower_bound);
  }
  return {tau, new_lb};
}

Array momo_update(double alpha, double weight_decay, const Array& tau, const Array& m,
                  const Array& precond, const Array& p) {
  Array step = tau * m;
  if (precond.valid()) step = step / precond;
  return -(alpha * weight_decay) / (1 + alpha * weight_decay) * p - step;
}

void throw_momo_missing(bool has_params, const char* fn) {
  if (!has_params) throw_no_params(fn);
  throw ValueError(std::string(fn) +
                   ": You need to pass the latest loss value to Momo. Use value_and_grad for "
                   "this: update(grads, state, params, ExtraArgs<Params>{value})");
}

}  // namespace linum::optim::detail
