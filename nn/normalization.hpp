// flax.linen.BatchNorm: batch statistics in the "batch_stats" collection (mean, var), learned
// scale and bias in "params"; axis_name averages the statistics over a named vmap axis.
#pragma once

#include <optional>
#include <string>

#include <linum/nn/initializers.hpp>
#include <linum/nn/module.hpp>

namespace linum::nn {

struct BatchNormConfig {
  std::optional<bool> use_running_average = {};
  int axis = -1;
  double momentum = 0.99;
  double epsilon = 1e-5;
  DType param_dtype = float32;
  bool use_bias = true;
  bool use_scale = true;
  initializers::Initializer bias_init = initializers::zeros_init();
  initializers::Initializer scale_init = initializers::ones_init();
  std::string axis_name = {};  // empty: no cross-example averaging
  std::optional<std::string> name = {};
};

struct BatchNorm : Module<BatchNorm>, BatchNormConfig {
  BatchNorm() = default;
  explicit BatchNorm(BatchNormConfig c) : BatchNormConfig(std::move(c)) {
    if (name) named(*name);
  }
  // use_running_average given here overrides (and must agree with) the field, as merge_param.
  Array call(const Array& x, std::optional<bool> use_running_average = std::nullopt);
};

}  // namespace linum::nn
