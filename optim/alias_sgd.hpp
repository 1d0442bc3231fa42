// optax's SGD-like optimizers beyond alias.hpp's, with optax's argument order and defaults:
// sign_sgd, signum, noisy_sgd, fromage, lars, rprop, optimistic_gradient_descent and
// polyak_sgd. learning_rate is a number or a schedule (any callable count -> value) where optax
// takes one.
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include <linum/optim/accumulation.hpp>
#include <linum/optim/adding.hpp>
#include <linum/optim/alias.hpp>
#include <linum/optim/combine.hpp>
#include <linum/optim/scaling.hpp>
#include <linum/optim/transform.hpp>

namespace linum::optim {

// optax.sign_sgd: scale_by_sign, -lr.
template <class LR>
auto sign_sgd(LR learning_rate) {
  return chain(scale_by_sign(), scale_by_learning_rate(std::move(learning_rate)));
}

// optax.signum: ema(beta, debias=False, accumulator_dtype), scale_by_sign, -lr.
template <class LR>
auto signum(LR learning_rate, double beta = 0.9,
            std::optional<DType> accumulator_dtype = std::nullopt) {
  return chain(ema(beta, false, accumulator_dtype), scale_by_sign(),
               scale_by_learning_rate(std::move(learning_rate)));
}

// optax.noisy_sgd: add_noise(eta, gamma, key), -lr. key: a random::key or a seed.
template <class LR, class Key = std::int64_t>
auto noisy_sgd(LR learning_rate, double eta = 0.01, double gamma = 0.55, Key key = 0) {
  return chain(add_noise(eta, gamma, key), scale_by_learning_rate(std::move(learning_rate)));
}

// optax.fromage: scale_by_trust_ratio(min_norm), -lr * m, add_decayed_weights(m - 1) with
// m = 1 / sqrt(1 + lr**2) (per step for a schedule).
template <class LR>
auto fromage(LR learning_rate, double min_norm = 1e-6) {
  if constexpr (std::is_arithmetic_v<LR>) {
    const double lr = static_cast<double>(learning_rate);
    const double mult = 1.0 / std::pow(1.0 + lr * lr, 0.5);
    return chain(scale_by_trust_ratio(min_norm), scale_by_learning_rate(lr * mult),
                 add_decayed_weights(mult - 1.0));
  } else {
    Schedule lr(std::move(learning_rate));
    auto mult = [lr](std::int64_t c) {
      const double l = lr(c);
      return 1.0 / std::pow(1.0 + l * l, 0.5);
    };
    return chain(scale_by_trust_ratio(min_norm),
                 scale_by_learning_rate([lr, mult](std::int64_t c) { return mult(c) * lr(c); }),
                 add_decayed_weights([mult](std::int64_t c) { return mult(c) - 1.0; }));
  }
}

// optax.lars: add_decayed_weights(weight_decay, weight_decay_mask),
// masked(scale_by_trust_ratio(trust_coefficient, eps), trust_ratio_mask), -lr,
// trace(momentum, nesterov). The masks default to true (every leaf), as in optax.
template <class LR, class WD = double, class WDMask = bool, class TRMask = bool>
auto lars(LR learning_rate, WD weight_decay = 0.0, WDMask weight_decay_mask = true,
          double trust_coefficient = 0.001, double eps = 0.0, TRMask trust_ratio_mask = true,
          double momentum = 0.9, bool nesterov = false) {
  return chain(add_decayed_weights(std::move(weight_decay), std::move(weight_decay_mask)),
               masked(scale_by_trust_ratio(0.0, trust_coefficient, eps), std::move(trust_ratio_mask)),
               scale_by_learning_rate(std::move(learning_rate)), trace(momentum, nesterov));
}

// optax.rprop: scale_by_rprop(learning_rate, ...), scale(-1). learning_rate is a number.
inline auto rprop(double learning_rate, double eta_minus = 0.5, double eta_plus = 1.2,
                  double min_step_size = 1e-6, double max_step_size = 50.0) {
  return chain(
      scale_by_rprop(learning_rate, eta_minus, eta_plus, min_step_size, max_step_size),
      scale(-1.0));
}

// optax.optimistic_gradient_descent: scale_by_optimistic_gradient(alpha, beta), -lr.
template <class LR>
auto optimistic_gradient_descent(LR learning_rate, double alpha = 1.0, double beta = 1.0) {
  return chain(scale_by_optimistic_gradient(alpha, beta),
               scale_by_learning_rate(std::move(learning_rate)));
}

// optax.polyak_sgd: sgd(scaling), scale_by_polyak(max_learning_rate, f_min, eps, variant).
// update needs the objective's value: update(grads, state, params, ExtraArgs<Params>{value}).
template <class Scaling = double>
auto polyak_sgd(double max_learning_rate = 1.0, Scaling scaling = 1.0, double f_min = 0.0,
                double eps = 0.0, const std::string& variant = "sps") {
  return chain(sgd(std::move(scaling)), scale_by_polyak(f_min, max_learning_rate, eps, variant));
}

}  // namespace linum::optim
