// optax's adaptive optimizers beyond alias.hpp's, with optax's argument order and defaults:
// adabelief, adadelta, adamax, adamaxw, adan, amsgrad, novograd, radam, yogi, sm3,
// optimistic_adam and optimistic_adam_v2. learning_rate (and weight_decay where optax takes a
// schedule) is a number or a schedule (any callable count -> value).
#pragma once

#include <optional>
#include <utility>

#include <linum/optim/adaptive.hpp>
#include <linum/optim/combine.hpp>
#include <linum/optim/scaling.hpp>
#include <linum/optim/transform.hpp>

namespace linum::optim {

// optax.adabelief: scale_by_belief, -lr.
template <class LR>
auto adabelief(LR learning_rate, double b1 = 0.9, double b2 = 0.999, double eps = 1e-16,
               double eps_root = 1e-16, bool nesterov = false) {
  return chain(scale_by_belief(b1, b2, eps, eps_root, nesterov),
               scale_by_learning_rate(std::move(learning_rate)));
}

// optax.adadelta: add_decayed_weights(weight_decay, mask), scale_by_adadelta, -lr (identity for
// learning_rate std::nullopt, optax's None).
template <class LR = std::nullopt_t, class WD = double, class Mask = NoMask>
auto adadelta(LR learning_rate = std::nullopt, double rho = 0.9, double eps = 1e-6,
              WD weight_decay = 0.0, Mask weight_decay_mask = {}) {
  return chain(add_decayed_weights(std::move(weight_decay), std::move(weight_decay_mask)),
               scale_by_adadelta(rho, eps), scale_by_learning_rate(std::move(learning_rate)));
}

// optax.adamax: scale_by_adamax, -lr.
template <class LR>
auto adamax(LR learning_rate, double b1 = 0.9, double b2 = 0.999, double eps = 1e-8) {
  return chain(scale_by_adamax(b1, b2, eps), scale_by_learning_rate(std::move(learning_rate)));
}

// optax.adamaxw: scale_by_adamax, add_decayed_weights(weight_decay, mask), -lr.
template <class LR, class WD = double, class Mask = NoMask>
auto adamaxw(LR learning_rate, double b1 = 0.9, double b2 = 0.999, double eps = 1e-8,
             WD weight_decay = 1e-4, Mask mask = {}) {
  return chain(scale_by_adamax(b1, b2, eps),
               add_decayed_weights(std::move(weight_decay), std::move(mask)),
               scale_by_learning_rate(std::move(learning_rate)));
}

// optax.adan: scale_by_adan, add_decayed_weights(weight_decay, mask), -lr.
template <class LR, class WD = double, class Mask = NoMask>
auto adan(LR learning_rate, double b1 = 0.98, double b2 = 0.92, double b3 = 0.99,
          double eps = 1e-8, double eps_root = 1e-8, WD weight_decay = 0.0, Mask mask = {}) {
  return chain(scale_by_adan(b1, b2, b3, eps, eps_root),
               add_decayed_weights(std::move(weight_decay), std::move(mask)),
               scale_by_learning_rate(std::move(learning_rate)));
}

// optax.amsgrad: scale_by_amsgrad, -lr.
template <class LR>
auto amsgrad(LR learning_rate, double b1 = 0.9, double b2 = 0.999, double eps = 1e-8,
             double eps_root = 0.0, std::optional<DType> mu_dtype = std::nullopt,
             bool bias_correction_mu = true, bool bias_correction_nu = true) {
  return chain(
      scale_by_amsgrad(b1, b2, eps, eps_root, mu_dtype, bias_correction_mu, bias_correction_nu),
      scale_by_learning_rate(std::move(learning_rate)));
}

// optax.novograd: scale_by_novograd (with the weight decay inside), -lr.
template <class LR>
auto novograd(LR learning_rate, double b1 = 0.9, double b2 = 0.25, double eps = 1e-6,
              double eps_root = 0.0, double weight_decay = 0.0) {
  return chain(scale_by_novograd(b1, b2, eps, eps_root, weight_decay),
               scale_by_learning_rate(std::move(learning_rate)));
}

// optax.radam: scale_by_radam, -lr.
template <class LR>
auto radam(LR learning_rate, double b1 = 0.9, double b2 = 0.999, double eps = 1e-8,
           double eps_root = 0.0, double threshold = 5.0, bool nesterov = false) {
  return chain(scale_by_radam(b1, b2, eps, eps_root, threshold, nesterov),
               scale_by_learning_rate(std::move(learning_rate)));
}

// optax.yogi: scale_by_yogi(b1, b2, eps), -lr.
template <class LR>
auto yogi(LR learning_rate, double b1 = 0.9, double b2 = 0.999, double eps = 1e-3) {
  return chain(scale_by_yogi(b1, b2, eps), scale_by_learning_rate(std::move(learning_rate)));
}

// optax.sm3: scale_by_sm3(momentum), scale(-learning_rate) (a number, as in optax).
inline auto sm3(double learning_rate, double momentum = 0.9) {
  return chain(scale_by_sm3(momentum), scale(-learning_rate));
}

// optax.optimistic_adam (deprecated in optax for optimistic_adam_v2): scale_by_adam,
// scale_by_optimistic_gradient(alpha=learning_rate, beta=optimism, default learning_rate),
// scale_by_learning_rate(1). learning_rate is a number only, as in optax.
inline auto optimistic_adam(double learning_rate, std::optional<double> optimism = std::nullopt,
                            double b1 = 0.9, double b2 = 0.999, double eps = 1e-8,
                            double eps_root = 0.0, std::optional<DType> mu_dtype = std::nullopt,
                            bool nesterov = true) {
  return chain(scale_by_adam(b1, b2, eps, eps_root, mu_dtype, nesterov),
               scale_by_optimistic_gradient(learning_rate, optimism.value_or(learning_rate)),
               scale_by_learning_rate(1.0));
}

// optax.optimistic_adam_v2: scale_by_adam, scale_by_optimistic_gradient(alpha, beta), -lr.
template <class LR>
auto optimistic_adam_v2(LR learning_rate, double alpha = 1.0, double beta = 1.0, double b1 = 0.9,
                        double b2 = 0.999, double eps = 1e-8, double eps_root = 0.0,
                        std::optional<DType> mu_dtype = std::nullopt, bool nesterov = true) {
  return chain(scale_by_adam(b1, b2, eps, eps_root, mu_dtype, nesterov),
               scale_by_optimistic_gradient(alpha, beta),
               scale_by_learning_rate(std::move(learning_rate)));
}

}  // namespace linum::optim
