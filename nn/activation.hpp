// flax.linen activations and pooling: jax.nn's functions as function objects, so that
// `nn::relu` can be called (nn::relu(x)) and passed as a layer (Sequential({..., nn::relu})).
#pragma once

#include <linum/autodiff/ops.hpp>

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

// flax.linen.avg_pool / max_pool (window_shape, strides, padding), NHWC.
using linum::avg_pool;
using linum::max_pool;

}  // namespace linum::nn
