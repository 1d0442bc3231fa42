// flax.training.dynamic_scale.DynamicScale: dynamic loss scaling for float16 training. float16's
// range ends at 65504 and its normals at 6.1e-5, so small gradients vanish; the loss is multiplied
// by `scale` before differentiation and the gradients divided back in float32. A non-finite
// gradient shrinks the scale (the caller skips that step); `growth_interval` finite steps in a
// row grow it. bfloat16 has float32's range and needs none of this.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <linum/autodiff/array.hpp>
#include <linum/autodiff/collectives.hpp>
#include <linum/autodiff/transforms.hpp>
#include <linum/pytree/static_field.hpp>
#include <linum/pytree/tree_util.hpp>

namespace linum::optim {

template <class V, class G>
struct DynamicScaleResult;

struct DynamicScale {
  // The pytree fields: Flax's defaults are the Python scalars 0 and 65536.0 (weakly typed).
  BOOST_HANA_DEFINE_STRUCT(DynamicScale, (Array, fin_steps), (Array, scale));
  double growth_factor = 2.0;
  double backoff_factor = 0.5;
  std::int64_t growth_interval = 2000;
  // The smallest scale after backing off; Flax's default is float32's smallest normal.
  std::optional<double> minimum_scale = 1.1754943508222875e-38;
  LINUM_PYTREE_STATIC_FIELDS(DynamicScale, growth_factor, backoff_factor, growth_interval,
                             minimum_scale);

  DynamicScale() : fin_steps(Array(0)), scale(Array(65536.0f)) {}

  // jax.value_and_grad of `fun` (a scalar loss of its first argument) with the loss scaled:
  // value_and_grad(fun)(args...) -> DynamicScaleResult. With has_aux, fun returns (loss, aux).
  // With `axis_name` the gradients are averaged over that named axis (pmap, data parallelism)
  // before the finiteness check, so every replica takes the same decision.
  template <class F>
  auto value_and_grad(F fun, std::optional<std::string> axis_name = std::nullopt) const {
    return closure<false>(std::move(fun), std::move(axis_name));
  }
  template <class F>
  auto value_and_grad(F fun, HasAux, std::optional<std::string> axis_name = std::nullopt) const {
    return closure<true>(std::move(fun), std::move(axis_name));
  }

  // A gradient of the scaled loss as float32 divided by the scale.
  Array unscale(const Array& g) const;
  // The next state after gradients `grads` (already unscaled), and whether all are finite.
  std::pair<DynamicScale, Array> update(const std::vector<Array>& grads) const;

 private:
  template <bool Aux, class F>
  auto closure(F fun, std::optional<std::string> axis_name) const {
    return [self = *this, fun = std::move(fun), axis_name](const auto&... args) {
      auto scaled_loss = [&](const auto&... a) {
        if constexpr (Aux) {
          auto [loss, aux] = fun(a...);
          return std::make_pair(Array(self.scale * loss), std::move(aux));
        } else {
          return Array(self.scale * fun(a...));
        }
      };
      auto [value, grad] = [&] {
        if constexpr (Aux)
          return linum::value_and_grad(scaled_loss, has_aux)(args...);
        else
          return linum::value_and_grad(scaled_loss)(args...);
      }();
      if constexpr (Aux)
        value.first = value.first / self.scale;
      else
        value = value / self.scale;
      grad = pytree::tree_map([&](const Array& g) { return self.unscale(g); }, grad);
      if (axis_name) grad = pmean(grad, *axis_name);
      auto [next, finite] = self.update(pytree::tree_leaves<Array>(grad));
      return DynamicScaleResult<decltype(value), decltype(grad)>{
          std::move(next), std::move(finite), std::move(value), std::move(grad)};
    };
  }
};

// Flax's DynamicScaleResult: the next DynamicScale, whether every gradient is finite (a bool
// scalar), fun's value with the loss unscaled ((loss, aux) with has_aux) and the gradients
// (float32, unscaled).
template <class V, class G>
struct DynamicScaleResult {
  DynamicScale dynamic_scale;
  Array finite;
  V value;
  G grad;
};

}  // namespace linum::optim
