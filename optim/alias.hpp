// optax's optimizer aliases as chains of transformations, with optax's argument order and
// defaults: sgd, adam, nadam, adamw, nadamw, rmsprop, adagrad, lamb, lion (adafactor:
// factorized.hpp). learning_rate is a number or a schedule (any callable count -> value). Options
// that change the state layout (momentum or not, a mask or not, centred, bias correction) are
// chosen by overload or template argument, so every optimizer's state has one static type.
#pragma once

#include <optional>
#include <utility>

#include <linum/optim/combine.hpp>
#include <linum/optim/transform.hpp>

namespace linum::optim {

// optax.sgd(lr): (EmptyState, EmptyState) for a constant lr.
template <class LR>
auto sgd(LR learning_rate) {
  return chain(identity(), scale_by_learning_rate(std::move(learning_rate)));
}
// optax.sgd(lr, momentum, nesterov, accumulator_dtype): (TraceState, EmptyState).
template <class LR>
auto sgd(LR learning_rate, double momentum, bool nesterov = false,
         std::optional<DType> accumulator_dtype = std::nullopt) {
  return chain(trace(momentum, nesterov, accumulator_dtype),
               scale_by_learning_rate(std::move(learning_rate)));
}

// optax.adam: (ScaleByAdamState, EmptyState) for a constant lr.
template <class LR>
auto adam(LR learning_rate, double b1 = 0.9, double b2 = 0.999, double eps = 1e-8,
          double eps_root = 0.0, std::optional<DType> mu_dtype = std::nullopt,
          bool nesterov = false) {
  return chain(scale_by_adam(b1, b2, eps, eps_root, mu_dtype, nesterov),
               scale_by_learning_rate(std::move(learning_rate)));
}

// optax.nadam = adam(nesterov=True).
template <class LR>
auto nadam(LR learning_rate, double b1 = 0.9, double b2 = 0.999, double eps = 1e-8,
           double eps_root = 0.0, std::optional<DType> mu_dtype = std::nullopt) {
  return adam(std::move(learning_rate), b1, b2, eps, eps_root, mu_dtype, true);
}

// optax.adamw: scale_by_adam, add_decayed_weights(weight_decay, mask), -lr.
template <class LR, class Mask = NoMask>
auto adamw(LR learning_rate, double b1 = 0.9, double b2 = 0.999, double eps = 1e-8,
           double eps_root = 0.0, std::optional<DType> mu_dtype = std::nullopt,
           double weight_decay = 1e-4, Mask mask = {}, bool nesterov = false) {
  return chain(scale_by_adam(b1, b2, eps, eps_root, mu_dtype, nesterov),
               add_decayed_weights(weight_decay, std::move(mask)),
               scale_by_learning_rate(std::move(learning_rate)));
}

template <class LR, class Mask = NoMask>
auto nadamw(LR learning_rate, double b1 = 0.9, double b2 = 0.999, double eps = 1e-8,
            double eps_root = 0.0, std::optional<DType> mu_dtype = std::nullopt,
            double weight_decay = 1e-4, Mask mask = {}) {
  return adamw(std::move(learning_rate), b1, b2, eps, eps_root, mu_dtype, weight_decay,
               std::move(mask), true);
}

// optax.rmsprop(lr, decay, eps, initial_scale, eps_in_sqrt): scale_by_rms (scale_by_stddev when
// Centered), -lr, identity. rmsprop<Centered, BiasCorrection>(...) selects the variant.
template <bool Centered = false, bool BiasCorrection = false, class LR>
auto rmsprop(LR learning_rate, double decay = 0.9, double eps = 1e-8, double initial_scale = 0.0,
             bool eps_in_sqrt = true) {
  auto lr = scale_by_learning_rate(std::move(learning_rate));
  if constexpr (Centered) {
    return chain(scale_by_stddev<BiasCorrection>(decay, eps, initial_scale, eps_in_sqrt), lr,
                 identity());
  } else {
    return chain(scale_by_rms<BiasCorrection>(decay, eps, initial_scale, eps_in_sqrt), lr,
                 identity());
  }
}
// With momentum: the third member is trace(momentum, nesterov), after the learning rate as in
// optax.
template <bool Centered = false, bool BiasCorrection = false, class LR>
auto rmsprop(LR learning_rate, double decay, double eps, double initial_scale, bool eps_in_sqrt,
             double momentum, bool nesterov = false) {
  auto lr = scale_by_learning_rate(std::move(learning_rate));
  if constexpr (Centered) {
    return chain(scale_by_stddev<BiasCorrection>(decay, eps, initial_scale, eps_in_sqrt), lr,
                 trace(momentum, nesterov));
  } else {
    return chain(scale_by_rms<BiasCorrection>(decay, eps, initial_scale, eps_in_sqrt), lr,
                 trace(momentum, nesterov));
  }
}

// optax.adagrad: scale_by_rss(initial_accumulator_value, eps), -lr.
template <class LR>
auto adagrad(LR learning_rate, double initial_accumulator_value = 0.1, double eps = 1e-7) {
  return chain(scale_by_rss(initial_accumulator_value, eps),
               scale_by_learning_rate(std::move(learning_rate)));
}

// optax.lamb: scale_by_adam, add_decayed_weights(weight_decay, mask), scale_by_trust_ratio, -lr.
template <class LR, class Mask = NoMask>
auto lamb(LR learning_rate, double b1 = 0.9, double b2 = 0.999, double eps = 1e-6,
          double eps_root = 0.0, double weight_decay = 0.0, Mask mask = {}) {
  return chain(scale_by_adam(b1, b2, eps, eps_root),
               add_decayed_weights(weight_decay, std::move(mask)), scale_by_trust_ratio(),
               scale_by_learning_rate(std::move(learning_rate)));
}

// optax.lion: scale_by_lion, add_decayed_weights(weight_decay, mask), -lr.
template <class LR, class Mask = NoMask>
auto lion(LR learning_rate, double b1 = 0.9, double b2 = 0.99,
          std::optional<DType> mu_dtype = std::nullopt, double weight_decay = 1e-3,
          Mask mask = {}) {
  return chain(scale_by_lion(b1, b2, mu_dtype), add_decayed_weights(weight_decay, std::move(mask)),
               scale_by_learning_rate(std::move(learning_rate)));
}

}  // namespace linum::optim
