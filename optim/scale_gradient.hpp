// optax.scale_gradient: the identity on the forward pass whose gradient is scaled on the backward
// pass (a custom_vjp), e.g. to slow down the learning of part of a model.
#pragma once

#include <optional>
#include <tuple>
#include <utility>

#include <linum/autodiff/custom.hpp>
#include <linum/autodiff/ops/elementwise.hpp>
#include <linum/autodiff/tree_bridge.hpp>

namespace linum::optim {

// optax.scale_gradient(inputs, scale): inputs (any pytree of Arrays) unchanged; the cotangent
// flowing back through it is multiplied by scale. As optax, scale 1 returns inputs as they are
// and scale 0 is stop_gradient (both then also work under jvp, which a custom_vjp refuses).
template <class T>
T scale_gradient(const T& inputs, double scale) {
  if (scale == 1.0) return inputs;
  if (scale == 0.0)
    return linum::detail::tree_apply_skip_empty(inputs,
                                                [](const Array& x) { return stop_gradient(x); });
  auto scaled = custom_vjp([](double, const T& x) { return x; },
                           [](double, const T& x) { return std::make_pair(x, std::nullopt); },
                           [](double s, std::nullopt_t, const T& g) {
                             return std::make_tuple(linum::detail::tree_apply_skip_empty(
                                 g, [s](const Array& gi) { return gi * s; }));
                           },
                           nondiff_argnums<0>);
  return scaled(scale, inputs);
}

}  // namespace linum::optim
