// flax.linen normalization layers: BatchNorm (statistics in "batch_stats"), LayerNorm, RMSNorm,
// GroupNorm and InstanceNorm, with Flax's fields, defaults and parameter names ('scale', 'bias').
// axis_name averages the statistics over a named vmap axis (pmean), as Flax's _compute_stats does.
// Mixed precision as Flax: the statistics are computed in `dtype` (default: x's) promoted to
// float32 at least unless force_float32_reductions is false, so a bfloat16 input with a large mean
// still normalizes accurately; BatchNorm's running statistics are then float32 (param_dtype
// otherwise); the output is cast to `dtype`, by default x's dtype promoted with the params'.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <linum/nn/initializers.hpp>
#include <linum/nn/module.hpp>

namespace linum::nn {

struct BatchNormConfig {
  std::optional<bool> use_running_average = {};
  int axis = -1;
  double momentum = 0.99;
  double epsilon = 1e-5;
  std::optional<DType> dtype = {};  // the result's dtype (default: x's promoted with the params')
  DType param_dtype = float32;
  bool use_bias = true;
  bool use_scale = true;
  initializers::Initializer bias_init = initializers::zeros_init();
  initializers::Initializer scale_init = initializers::ones_init();
  std::string axis_name = {};  // empty: no cross-example averaging
  bool use_fast_variance = true;
  bool force_float32_reductions = true;  // statistics in float32 at least (see the header note)
  std::optional<std::string> name = {};
};

struct BatchNorm : Module<BatchNorm>, BatchNormConfig {
  BatchNorm() = default;
  explicit BatchNorm(BatchNormConfig c) : BatchNormConfig(std::move(c)) {
    if (name) named(*name);
  }
  // use_running_average given here or in the field, exactly once (nn::merge_param).
  Array call(const Array& x, std::optional<bool> use_running_average = std::nullopt);
};

// LayerNorm: statistics over reduction_axes of each example, learned scale/bias of the
// feature_axes' shape.
struct LayerNormConfig {
  double epsilon = 1e-6;
  std::optional<DType> dtype = {};  // the result's dtype (default: x's promoted with the params')
  DType param_dtype = float32;
  bool use_bias = true;
  bool use_scale = true;
  initializers::Initializer bias_init = initializers::zeros_init();
  initializers::Initializer scale_init = initializers::ones_init();
  std::vector<int> reduction_axes = {-1};
  std::vector<int> feature_axes = {-1};
  std::string axis_name = {};
  bool use_fast_variance = true;
  bool force_float32_reductions = true;  // statistics in float32 at least (see the header note)
  std::optional<std::string> name = {};
};

struct LayerNorm : Module<LayerNorm>, LayerNormConfig {
  LayerNorm() = default;
  explicit LayerNorm(LayerNormConfig c) : LayerNormConfig(std::move(c)) {
    if (name) named(*name);
  }
  // mask: optional boolean array broadcastable to x; masked-out entries do not enter the stats.
  Array call(const Array& x, const std::optional<Array>& mask = std::nullopt);
};

// RMSNorm: x / sqrt(mean(x^2) + epsilon) * scale (no mean subtraction, no bias).
struct RMSNormConfig {
  double epsilon = 1e-6;
  std::optional<DType> dtype = {};  // the result's dtype (default: x's promoted with the params')
  DType param_dtype = float32;
  bool use_scale = true;
  initializers::Initializer scale_init = initializers::ones_init();
  std::vector<int> reduction_axes = {-1};
  std::vector<int> feature_axes = {-1};
  std::string axis_name = {};
  bool force_float32_reductions = true;
  std::optional<std::string> name = {};
};

struct RMSNorm : Module<RMSNorm>, RMSNormConfig {
  RMSNorm() = default;
  explicit RMSNorm(RMSNormConfig c) : RMSNormConfig(std::move(c)) {
    if (name) named(*name);
  }
  Array call(const Array& x, const std::optional<Array>& mask = std::nullopt);
};

// GroupNorm: the last (feature) axis split into num_groups groups (or groups of group_size),
// statistics per example and group over reduction_axes (default: every axis but the first).
struct GroupNormConfig {
  std::optional<std::int64_t> num_groups = 32;
  std::optional<std::int64_t> group_size = {};
  double epsilon = 1e-6;
  std::optional<DType> dtype = {};  // the result's dtype (default: x's promoted with the params')
  DType param_dtype = float32;
  bool use_bias = true;
  bool use_scale = true;
  initializers::Initializer bias_init = initializers::zeros_init();
  initializers::Initializer scale_init = initializers::ones_init();
  std::optional<std::vector<int>> reduction_axes = {};
  std::string axis_name = {};
  bool use_fast_variance = true;
  bool force_float32_reductions = true;  // statistics in float32 at least (see the header note)
  std::optional<std::string> name = {};
};

struct GroupNorm : Module<GroupNorm>, GroupNormConfig {
  GroupNorm() = default;
  explicit GroupNorm(GroupNormConfig c) : GroupNormConfig(std::move(c)) {
    if (name) named(*name);
  }
  Array call(const Array& x, const std::optional<Array>& mask = std::nullopt);
};

// InstanceNorm: statistics per example (axis 0 is the batch) and per feature, over every other
// axis; learned scale/bias of the feature_axes' shape. Statistics are computed in dtype (default:
// x's) promoted to float32 at least; the result is dtype, or x's dtype promoted with the params'.
struct InstanceNormConfig {
  double epsilon = 1e-6;
  std::optional<DType> dtype = {};
  DType param_dtype = float32;
  bool use_bias = true;
  bool use_scale = true;
  initializers::Initializer bias_init = initializers::zeros_init();
  initializers::Initializer scale_init = initializers::ones_init();
  std::vector<int> feature_axes = {-1};
  std::string axis_name = {};
  bool use_fast_variance = true;
  bool force_float32_reductions = true;  // statistics in float32 at least (see the header note)
  std::optional<std::string> name = {};
};

struct InstanceNorm : Module<InstanceNorm>, InstanceNormConfig {
  InstanceNorm() = default;
  explicit InstanceNorm(InstanceNormConfig c) : InstanceNormConfig(std::move(c)) {
    if (name) named(*name);
  }
  Array call(const Array& x, const std::optional<Array>& mask = std::nullopt);
};

}  // namespace linum::nn
