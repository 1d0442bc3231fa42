// flax.linen activations and pooling: jax.nn's functions as function objects, so that
// `nn::relu` can be called (nn::relu(x)) and passed as a layer (Sequential({..., nn::relu})),
// and the PReLU module.
#pragma once

#include <linum/autodiff/ops.hpp>
#include <linum/nn/module.hpp>

namespace linum::nn {

#define LINUM_NN_UNARY(name, expr)                          \
  inline constexpr struct name##_fn {                       \
    Array operator()(const Array& x) const { return expr; } \
  } name {                                                  \
  }

LINUM_NN_UNARY(relu, linum::relu(x));
LINUM_NN_UNARY(sigmoid, linum::sigmoid(x));
LINUM_NN_UNARY(tanh, linum::tanh(x));
LINUM_NN_UNARY(silu, linum::silu(x));
LINUM_NN_UNARY(swish, linum::silu(x));
LINUM_NN_UNARY(softplus, linum::softplus(x));
LINUM_NN_UNARY(relu6, linum::relu6(x));
LINUM_NN_UNARY(soft_sign, linum::soft_sign(x));
LINUM_NN_UNARY(log_sigmoid, linum::log_sigmoid(x));
LINUM_NN_UNARY(selu, linum::selu(x));
LINUM_NN_UNARY(hard_tanh, linum::hard_tanh(x));
LINUM_NN_UNARY(hard_sigmoid, linum::hard_sigmoid(x));
LINUM_NN_UNARY(hard_silu, linum::hard_silu(x));
LINUM_NN_UNARY(hard_swish, linum::hard_silu(x));
#undef LINUM_NN_UNARY

inline constexpr struct log_softmax_fn {
  Array operator()(const Array& x, const Axes& axis = -1) const {
    return linum::log_softmax(x, axis);
  }
} log_softmax{};
inline constexpr struct softmax_fn {
  Array operator()(const Array& x, const Axes& axis = -1) const { return linum::softmax(x, axis); }
} softmax{};
inline constexpr struct gelu_fn {
  Array operator()(const Array& x, bool approximate = true) const {
    return linum::gelu(x, approximate);
  }
} gelu{};
inline constexpr struct elu_fn {
  Array operator()(const Array& x, double alpha = 1.0) const { return linum::elu(x, alpha); }
} elu{};
inline constexpr struct leaky_relu_fn {
  Array operator()(const Array& x, double negative_slope = 0.01) const {
    return linum::leaky_relu(x, negative_slope);
  }
} leaky_relu{};
inline constexpr struct celu_fn {
  Array operator()(const Array& x, double alpha = 1.0) const { return linum::celu(x, alpha); }
} celu{};
inline constexpr struct glu_fn {
  Array operator()(const Array& x, int axis = -1) const { return linum::glu(x, axis); }
} glu{};
inline constexpr struct standardize_fn {
  Array operator()(const Array& x, const Axes& axis = -1,
                   const std::optional<Array>& mean = std::nullopt,
                   const std::optional<Array>& variance = std::nullopt,
                   double epsilon = 1e-5) const {
    return linum::standardize(x, axis, mean, variance, epsilon);
  }
} standardize{}, normalize{};  // jax.nn.normalize is standardize's older name
using linum::logsumexp;
using linum::one_hot;

struct PReLUConfig {
  DType param_dtype = float32;
  double negative_slope_init = 0.01;
  std::optional<std::string> name = {};
};

// flax.linen.PReLU: leaky relu with a learned scalar slope, param `negative_slope` of shape ().
struct PReLU : Module<PReLU>, PReLUConfig {
  PReLU() = default;
  explicit PReLU(PReLUConfig c) : PReLUConfig(std::move(c)) {
    if (name) named(*name);
  }
  Array call(const Array& x);
};

// flax.linen.avg_pool / max_pool / min_pool / pool (window_shape, strides, padding), NHWC.
using linum::avg_pool;
using linum::max_pool;
using linum::min_pool;
using linum::pool;

}  // namespace linum::nn
