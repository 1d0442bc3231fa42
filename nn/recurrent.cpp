// The RNN cells, flip_sequences and the last-carry selection, as flax/linen/recurrent.py.
#include <linum/nn/recurrent.hpp>

#include <linum/autodiff/control_flow.hpp>
#include <linum/autodiff/ops.hpp>
#include <linum/nn/dtypes.hpp>

namespace linum::nn {

namespace detail {
void check_cell(const Array& h, const Array& x, const char* who) {
  if (x.ndim() < 1) throw ValueError(std::string(who) + ": expected inputs with a feature axis");
  if (h.ndim() < 1 || h.shape(-1) <= 0) {
    throw ValueError(std::string(who) + ": expected a carry with a feature axis, got " +
                     linum::detail::aval_str(h));
  }
}
Shape carry_shape(std::int64_t features, const Shape& input_shape, const char* who) {
  if (input_shape.empty())
    throw ValueError(std::string(who) + ".initialize_carry: input_shape must have a feature axis");
  if (features <= 0)
    throw ValueError(std::string(who) + ": features must be positive, got " +
                     std::to_string(features));
  Shape s(input_shape.begin(), input_shape.end() - 1);
  s.push_back(features);
  return s;
}
}  // namespace detail

namespace {
// Dense(features=hidden, kernel_init, use_bias, name) as Flax's partial(Dense, ...) in the cells.
Array dense(const RNNCellConfig& c, std::int64_t features, bool use_bias,
            const initializers::Initializer& kernel_init, const char* name, const Array& x) {
  return Dense({.features = features,
                .use_bias = use_bias,
                .dtype = c.dtype,
                .param_dtype = c.param_dtype,
                .kernel_init = kernel_init,
                .bias_init = c.bias_init,
                .name = name})(x);
}
}  // namespace

std::pair<LSTMCell::Carry, Array> LSTMCell::call(const Carry& carry, const Array& inputs) {
  const auto& [c, h] = carry;
  detail::check_cell(h, inputs, "LSTMCell");
  const std::int64_t n = h.shape(-1);
  // The input Dense before the hidden one, as Flax builds them (C++ leaves the operands of + in
  // any order): the order of the parameter tree and of tabulate's rows.
  auto gate = [&](const char* in, const char* hid) {
    Array zi = dense(*this, n, false, kernel_init, in, inputs);
    return zi + dense(*this, n, true, recurrent_kernel_init, hid, h);
  };
  Array i = gate_fn(gate("ii", "hi"));
  Array f = gate_fn(gate("if", "hf"));
  Array g = activation_fn(gate("ig", "hg"));
  Array o = gate_fn(gate("io", "ho"));
  Array new_c = f * c + i * g;
  Array new_h = o * activation_fn(new_c);
  return {{new_c, new_h}, new_h};
}

LSTMCell::Carry LSTMCell::initialize_carry(const Array& rng, const Shape& input_shape) const {
  const Shape s = detail::carry_shape(features, input_shape, "LSTMCell");
  Array keys = random::split(rng);
  return {carry_init(squeeze(slice(keys, {{0, 1}}), 0), s, param_dtype),
          carry_init(squeeze(slice(keys, {{1, 2}}), 0), s, param_dtype)};
}

std::pair<Array, std::optional<Array>> DenseParams::call(const Array& inputs) {
  Array k = param("kernel", kernel_init, Shape{inputs.shape(-1), features}, param_dtype);
  std::optional<Array> b;
  if (use_bias) b = param("bias", bias_init, Shape{features}, param_dtype);
  return {k, b};
}

std::pair<OptimizedLSTMCell::Carry, Array> OptimizedLSTMCell::call(const Carry& carry,
                                                                   const Array& inputs) {
  const auto& [c, h] = carry;
  detail::check_cell(h, inputs, "OptimizedLSTMCell");
  const std::int64_t n = h.shape(-1);
  Arrays ki, kh, bh;
  for (const char* g : {"i", "f", "g", "o"}) {
    ki.push_back(
        DenseParams(n, false, param_dtype, kernel_init, bias_init, std::string("i") + g)(inputs)
            .first);
    auto [k, b] = DenseParams(n, true, param_dtype, recurrent_kernel_init, bias_init,
                              std::string("h") + g)(h);
    kh.push_back(k);
    bh.push_back(*b);
  }
  // Flax's _concat_dense: promote_dtype(x, kernel, bias, dtype=self.dtype) on the concatenations.
  auto concat_dense = [&](const Array& x, const Arrays& k, const std::optional<Array>& bias) {
    const Array kernel = concatenate(k, -1);
    const DType d = detail::canonicalize_dtype("OptimizedLSTMCell", dtype, {x, kernel, bias});
    Array y = matmul(detail::cast(x, d), detail::cast(kernel, d));
    return bias ? y + detail::cast(*bias, d) : y;
  };
  Array zh = concat_dense(h, kh, concatenate(bh, -1));
  Array zi = concat_dense(inputs, ki, std::nullopt);
  Arrays z = split(zi + zh, 4, -1);
  Array i = gate_fn(z[0]), f = gate_fn(z[1]), g = activation_fn(z[2]), o = gate_fn(z[3]);
  Array new_c = f * c + i * g;
  Array new_h = o * activation_fn(new_c);
  return {{new_c, new_h}, new_h};
}

OptimizedLSTMCell::Carry OptimizedLSTMCell::initialize_carry(const Array& rng,
                                                             const Shape& input_shape) const {
  const Shape s = detail::carry_shape(features, input_shape, "OptimizedLSTMCell");
  Array keys = random::split(rng);
  return {carry_init(squeeze(slice(keys, {{0, 1}}), 0), s, param_dtype),
          carry_init(squeeze(slice(keys, {{1, 2}}), 0), s, param_dtype)};
}

std::pair<Array, Array> GRUCell::call(const Array& h, const Array& inputs) {
  detail::check_cell(h, inputs, "GRUCell");
  const std::int64_t n = h.shape(-1);
  // Each input Dense before its hidden one, in Flax's order (see LSTMCell::call).
  auto gate = [&](const char* in, const char* hid) {
    Array zi = dense(*this, n, true, kernel_init, in, inputs);
    return gate_fn(zi + dense(*this, n, false, recurrent_kernel_init, hid, h));
  };
  Array r = gate("ir", "hr");
  Array z = gate("iz", "hz");
  // hn has a bias: r multiplies the whole hidden projection (the transformations are not summed).
  Array zn = dense(*this, n, true, kernel_init, "in", inputs);
  Array nn_ = activation_fn(zn + r * dense(*this, n, true, recurrent_kernel_init, "hn", h));
  Array new_h = (1.0 - z) * nn_ + z * h;
  return {new_h, new_h};
}

Array GRUCell::initialize_carry(const Array& rng, const Shape& input_shape) const {
  return carry_init(rng, detail::carry_shape(features, input_shape, "GRUCell"), param_dtype);
}

std::pair<Array, Array> SimpleCell::call(const Array& h, const Array& inputs) {
  detail::check_cell(h, inputs, "SimpleCell");
  const std::int64_t n = h.shape(-1);
  // The bias is the input Dense's (Flax: dense_i has use_bias=True, dense_h none); i before h.
  Array y = dense(*this, n, true, kernel_init, "i", inputs);
  y = y + dense(*this, n, false, recurrent_kernel_init, "h", h);
  if (residual) y = y + h;
  y = activation_fn(y);
  return {y, y};
}

Array SimpleCell::initialize_carry(const Array& rng, const Shape& input_shape) const {
  return carry_init(rng, detail::carry_shape(features, input_shape, "SimpleCell"), param_dtype);
}

Array flip_sequences(const Array& inputs, const std::optional<Array>& seq_lengths,
                     int num_batch_dims, bool time_major) {
  const int time_axis = time_major ? 0 : num_batch_dims;
  if (time_axis >= inputs.ndim()) {
    throw ValueError("flip_sequences: inputs of shape " + linum::detail::aval_str(inputs) +
                     " have no time axis " + std::to_string(time_axis));
  }
  const std::int64_t T = inputs.shape(time_axis);
  // Index (T - 1 - t + len) mod T reverses the first len steps and keeps the rest after them.
  Shape ishape(static_cast<std::size_t>(inputs.ndim()), 1);
  ishape[static_cast<std::size_t>(time_axis)] = T;
  Array rev = reshape(arange(T - 1, -1, -1, int32), ishape);
  if (!seq_lengths) return take_along_axis(inputs, broadcast_to(rev, inputs.shape()), time_axis);
  if (!is_integer(seq_lengths->dtype()) || seq_lengths->ndim() != num_batch_dims) {
    throw ValueError("flip_sequences: seq_lengths must be integers of the batch shape (" +
                     std::to_string(num_batch_dims) + " dims), got " +
                     linum::detail::aval_str(*seq_lengths));
  }
  Array len = astype(expand_dims(*seq_lengths, time_axis), int32);
  for (int d = len.ndim(); d < inputs.ndim(); ++d) len = expand_dims(len, d);
  Array v = rev + len;  // in [0, 2T), as len <= T
  Array idx = where(v >= T, v - T, v);
  return take_along_axis(inputs, broadcast_to(idx, inputs.shape()), time_axis);
}

namespace detail {

Array select_last(const Array& stacked, const Array& seq_lengths) {
  if (stacked.ndim() < 2 || seq_lengths.ndim() != 1 || seq_lengths.shape(0) != stacked.shape(1)) {
    throw ValueError("RNN: seq_lengths must be a vector over one batch dim, got " +
                     linum::detail::aval_str(seq_lengths) + " for carries " +
                     linum::detail::aval_str(stacked));
  }
  Shape ishape(static_cast<std::size_t>(stacked.ndim()), 1);
  ishape[1] = stacked.shape(1);
  Shape gshape = stacked.shape();
  gshape[0] = 1;
  Array idx = reshape(astype(seq_lengths, int32) - 1, ishape);
  return squeeze(take_along_axis(stacked, broadcast_to(idx, gshape), 0), 0);
}

void check_rnn_input(const Array& inputs, int time_axis, int num_feature_axes) {
  if (time_axis < 0 || inputs.ndim() < num_feature_axes + 1) {
    throw ValueError("RNN: inputs need a time axis and " + std::to_string(num_feature_axes) +
                     " feature axis/axes, got shape " + linum::detail::aval_str(inputs));
  }
}

void check_seq_lengths(const Array& seq_lengths) {
  if (!is_integer(seq_lengths.dtype())) {
    throw TypeError(
        "RNN: seq_lengths must be an integer array (the number of valid steps of each "
        "sequence), got " +
        linum::detail::aval_str(seq_lengths));
  }
}

}  // namespace detail

}  // namespace linum::nn
