// flax.linen.Dense and Conv: Flax's fields, defaults (lecun_normal kernels, zero biases) and
// parameter names, so the same seed gives the same parameters as Flax.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <linum/autodiff/ops.hpp>
#include <linum/nn/initializers.hpp>
#include <linum/nn/module.hpp>

namespace linum::nn {

// flax.linen.linear.default_kernel_init.
initializers::Initializer default_kernel_init();

struct DenseConfig {
  std::int64_t features = 0;
  bool use_bias = true;
  DType param_dtype = float32;
  initializers::Initializer kernel_init = default_kernel_init();
  initializers::Initializer bias_init = initializers::zeros_init();
  std::optional<std::string> name = {};
};

// y = x @ kernel + bias over the last axis; kernel (in, features), bias (features,).
struct Dense : Module<Dense>, DenseConfig {
  explicit Dense(std::int64_t features) { this->features = features; }
  explicit Dense(DenseConfig c) : DenseConfig(std::move(c)) {
    if (name) named(*name);
  }
  Array call(const Array& x);
};

struct ConvConfig {
  std::int64_t features = 0;
  std::vector<std::int64_t> kernel_size = {};
  std::vector<std::int64_t> strides = {};  // 1 per spatial dim
  Padding padding = "SAME";
  std::vector<std::int64_t> input_dilation = {};   // 1 per spatial dim
  std::vector<std::int64_t> kernel_dilation = {};  // 1 per spatial dim
  std::int64_t feature_group_count = 1;
  bool use_bias = true;
  DType param_dtype = float32;
  initializers::Initializer kernel_init = default_kernel_init();
  initializers::Initializer bias_init = initializers::zeros_init();
  std::optional<std::string> name = {};
};

// N-d convolution over NHWC inputs (an input without the batch dim is accepted, as in Flax);
// kernel kernel_size + (in / feature_group_count, features), bias (features,).
struct Conv : Module<Conv>, ConvConfig {
  explicit Conv(ConvConfig c) : ConvConfig(std::move(c)) {
    if (name) named(*name);
  }
  Array call(const Array& x);
};

}  // namespace linum::nn
