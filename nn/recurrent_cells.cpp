// MGUCell and ConvLSTMCell, as flax/linen/recurrent.py.
#include <linum/nn/recurrent_cells.hpp>

#include <linum/autodiff/ops.hpp>

namespace linum::nn {

std::pair<Array, Array> MGUCell::call(const Array& h, const Array& inputs) {
  detail::check_cell(h, inputs, "MGUCell");
  const std::int64_t n = h.shape(-1);
  // Flax's partial(Dense, ...): dense_i has a bias (its init given per gate), dense_h none.
  auto dense = [&](const char* dense_name, bool use_bias, const initializers::Initializer& kernel,
                   const initializers::Initializer& bias, const Array& x) {
    return Dense({.features = n,
                  .use_bias = use_bias,
                  .dtype = dtype,
                  .param_dtype = param_dtype,
                  .kernel_init = kernel,
                  .bias_init = bias,
                  .name = dense_name})(x);
  };
  // Built in Flax's order (the parameter tree's): if, hf, hn, in.
  Array zf = dense("if", true, kernel_init, forget_bias_init, inputs);
  Array f = gate_fn(zf + dense("hf", false, recurrent_kernel_init, activation_bias_init, h));
  // With the reset gate the hidden projection has its own bias, as the projections are not summed.
  Array x = dense("hn", reset_gate, recurrent_kernel_init, activation_bias_init, h);
  if (reset_gate) x = x * f;
  Array nn_ = activation_fn(dense("in", true, kernel_init, activation_bias_init, inputs) + x);
  Array new_h = (1.0 - f) * nn_ + f * h;
  return {new_h, new_h};
}

Array MGUCell::initialize_carry(const Array& rng, const Shape& input_shape) const {
  return carry_init(rng, detail::carry_shape(features, input_shape, "MGUCell"), param_dtype);
}

std::pair<ConvLSTMCell::Carry, Array> ConvLSTMCell::call(const Carry& carry, const Array& inputs) {
  const auto& [c, h] = carry;
  if (kernel_size.empty() || features <= 0) {
    throw ValueError(
        "ConvLSTMCell: expected a kernel_size naming the spatial dims and positive "
        "features, got kernel_size " +
        attr_repr(kernel_size) + " and features " + std::to_string(features));
  }
  auto conv = [&](const char* conv_name, const Array& x) {
    return Conv({.features = 4 * features,
                 .kernel_size = kernel_size,
                 .strides = strides,
                 .padding = padding,
                 .use_bias = use_bias,
                 .dtype = dtype,
                 .param_dtype = param_dtype,
                 .name = conv_name})(x);
  };
  Array zi = conv("ih", inputs);  // input to hidden first, as Flax builds them
  Array zh = conv("hh", h);
  if (zi.shape() != zh.shape()) {
    throw ValueError("ConvLSTMCell: the input convolution 'ih' gives shape " +
                     shape_str(zi.shape()) + " but the hidden one 'hh' gives " +
                     shape_str(zh.shape()) + " (inputs " + shape_str(inputs.shape()) +
                     ", carry h " + shape_str(h.shape()) +
                     "); the carry must have the inputs' batch and spatial shape");
  }
  Arrays gates = split(zi + zh, 4, -1);
  const Array &i = gates[0], &g = gates[1], &o = gates[3];
  // Jozefowicz et al.'s forget bias: + 1 before the sigmoid.
  Array f = linum::sigmoid(gates[2] + 1.0);
  Array new_c = f * c + linum::sigmoid(i) * linum::tanh(g);
  Array new_h = linum::sigmoid(o) * linum::tanh(new_c);
  return {{new_c, new_h}, new_h};
}

ConvLSTMCell::Carry ConvLSTMCell::initialize_carry(const Array& rng,
                                                   const Shape& input_shape) const {
  const auto nf = static_cast<std::size_t>(num_feature_axes());
  if (kernel_size.empty() || input_shape.size() < nf) {
    throw ValueError("ConvLSTMCell.initialize_carry: a kernel_size of " +
                     std::to_string(kernel_size.size()) +
                     " spatial dims expects input_shape (batch..., spatial..., features) of rank " +
                     "at least " + std::to_string(nf) + ", got " + shape_str(input_shape));
  }
  if (features <= 0)
    throw ValueError("ConvLSTMCell: features must be positive, got " + std::to_string(features));
  // (*batch_dims, *signal_dims, features): every axis but the input features kept.
  Shape mem_shape(input_shape.begin(), input_shape.end() - 1);
  mem_shape.push_back(features);
  Array keys = random::split(rng);
  return {carry_init(squeeze(slice(keys, {{0, 1}}), 0), mem_shape, param_dtype),
          carry_init(squeeze(slice(keys, {{1, 2}}), 0), mem_shape, param_dtype)};
}

}  // namespace linum::nn
