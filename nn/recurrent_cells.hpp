// flax.linen.recurrent's MGUCell (the minimal gated unit) and ConvLSTMCell (an LSTM whose input and
// hidden projections are convolutions): Flax's fields, parameter names, gates and
// initialize_carry. Both run under nn::RNN as the cells of recurrent.hpp do.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <linum/nn/initializers.hpp>
#include <linum/nn/linear.hpp>
#include <linum/nn/module.hpp>
#include <linum/nn/recurrent.hpp>

namespace linum::nn {

// MGUCell's fields (it has no bias_init: the forget gate's bias and the activation's have their
// own initializers).
struct MGUCellConfig {
  std::int64_t features = 0;
  Activation gate_fn = [](const Array& x) { return linum::sigmoid(x); };
  Activation activation_fn = [](const Array& x) { return linum::tanh(x); };
  initializers::Initializer kernel_init = default_kernel_init();
  initializers::Initializer recurrent_kernel_init = initializers::orthogonal();
  initializers::Initializer forget_bias_init = initializers::ones_init();
  initializers::Initializer activation_bias_init = initializers::zeros_init();
  std::optional<DType> dtype = std::nullopt;  // the Denses' computation dtype
  DType param_dtype = float32;
  initializers::Initializer carry_init = initializers::zeros_init();
  bool reset_gate = true;
  std::optional<std::string> name = {};
};

// MGU: f = gate(W_if x + b_if + W_hf h); n = act(W_in x + b_in + f (W_hn h + b_hn)) (without
// reset_gate: + W_hn h, no b_hn); h' = (1 - f) n + f h. Denses if, hf, hn, in in that order; the
// input ones have biases (if: forget_bias_init, in: activation_bias_init), hn only with
// reset_gate (activation_bias_init).
struct MGUCell : RNNCellBase<MGUCell>, MGUCellConfig {
  using Carry = Array;
  static constexpr int num_feature_axes = 1;
  explicit MGUCell(std::int64_t features) { this->features = features; }
  explicit MGUCell(MGUCellConfig c) : MGUCellConfig(std::move(c)) {
    if (name) named(*name);
  }
  std::pair<Carry, Array> call(const Carry& carry, const Array& inputs);
  // carry_init(rng) of shape input_shape[:-1] + (features,).
  Carry initialize_carry(const Array& rng, const Shape& input_shape) const;
};

struct ConvLSTMCellConfig {
  std::int64_t features = 0;
  std::vector<std::int64_t> kernel_size = {};
  std::vector<std::int64_t> strides = {};  // Flax's None: 1 per spatial dim
  PaddingLike padding = "SAME";
  bool use_bias = true;
  std::optional<DType> dtype = std::nullopt;  // the Convs' computation dtype
  DType param_dtype = float32;
  initializers::Initializer carry_init = initializers::zeros_init();
  std::optional<std::string> name = {};
};

// Convolutional LSTM over (batch..., spatial..., features) inputs: gates = Conv 'ih'(x) +
// Conv 'hh'(h), each with 4 * features filters, split into i, g, f, o on the last axis;
// c' = sigmoid(f + 1) c + sigmoid(i) tanh(g), h' = sigmoid(o) tanh(c'). The convs use Conv's
// default initializers; the carry (c, h) has the inputs' spatial shape with `features` channels.
struct ConvLSTMCell : RNNCellBase<ConvLSTMCell>, ConvLSTMCellConfig {
  using Carry = std::pair<Array, Array>;  // (c, h)
  explicit ConvLSTMCell(ConvLSTMCellConfig c) : ConvLSTMCellConfig(std::move(c)) {
    if (name) named(*name);
  }
  // The spatial dims and the features: len(kernel_size) + 1.
  int num_feature_axes() const { return static_cast<int>(kernel_size.size()) + 1; }
  std::pair<Carry, Array> call(const Carry& carry, const Array& inputs);
  // c and h from carry_init with the two keys of split(rng), each of shape
  // batch dims + spatial dims + (features,) of input_shape (batch..., spatial..., in_features).
  Carry initialize_carry(const Array& rng, const Shape& input_shape) const;
};

}  // namespace linum::nn
