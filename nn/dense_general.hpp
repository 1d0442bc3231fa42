// flax.linen.DenseGeneral: a linear map contracting several input axes (axis) into several output
// features, optionally batched over leading batch_dims; the kernel is initialized as the 2-D
// matrix (prod(batch) * prod(contracted), prod(features)) and reshaped, as Flax does, so that
// fan-in based initializers give Flax's values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <linum/nn/initializers.hpp>
#include <linum/nn/linear.hpp>
#include <linum/nn/module.hpp>

namespace linum::nn {

struct DenseGeneralConfig {
  std::vector<std::int64_t> features = {};
  std::vector<int> axis = {-1};
  std::vector<int> batch_dims = {};
  bool use_bias = true;
  // The computation dtype (see DenseConfig::dtype).
  std::optional<DType> dtype = std::nullopt;
  DType param_dtype = float32;
  initializers::Initializer kernel_init = default_kernel_init();
  initializers::Initializer bias_init = initializers::zeros_init();
  std::optional<std::string> name = {};
};

// kernel batch_shape + contracted_shape + features, bias batch_shape + features.
struct DenseGeneral : Module<DenseGeneral>, DenseGeneralConfig {
  explicit DenseGeneral(DenseGeneralConfig c) : DenseGeneralConfig(std::move(c)) {
    if (name) named(*name);
  }
  Array call(const Array& inputs);
};

}  // namespace linum::nn
