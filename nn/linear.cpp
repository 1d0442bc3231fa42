// Dense, Conv, ConvTranspose and Einsum, as flax/linen/linear.py.
#include <linum/nn/linear.hpp>

#include <algorithm>
#include <sstream>

#include <linum/nn/dtypes.hpp>

namespace linum::nn {

initializers::Initializer default_kernel_init() { return initializers::lecun_normal(); }

std::string attr_repr(DType d) { return std::string(dtype_name(d)); }
std::string attr_repr(const std::optional<DType>& d) {
  return d ? attr_repr(*d) : attr_repr(std::nullopt);
}

Array Dense::call(const Array& x) {
  if (features <= 0)
    throw ValueError("Dense: features must be positive, got " + std::to_string(features));
  if (x.ndim() < 1)
    throw ValueError("Dense: expected an input with at least one axis, got a scalar");
  Array kernel = param("kernel", kernel_init, Shape{x.shape(-1), features}, param_dtype);
  std::optional<Array> bias;
  if (use_bias) bias = param("bias", bias_init, Shape{features}, param_dtype);
  // Flax's promote_dtype(inputs, kernel, bias, dtype=self.dtype).
  const DType d = detail::canonicalize_dtype("Dense", dtype, {x, kernel, bias});
  Array y = matmul(detail::cast(x, d), detail::cast(kernel, d));
  if (bias) y = y + detail::cast(*bias, d);
  return y;
}

Attributes Dense::attributes() const {
  // linum has one matmul precision and one dot (no custom dot_general) and always promotes with
  // Flax's promote_dtype, so those fields are the constants Flax's defaults print.
  return {{"features", nn::attr_repr(features)},
          {"use_bias", nn::attr_repr(use_bias)},
          {"dtype", nn::attr_repr(dtype)},
          {"param_dtype", nn::attr_repr(param_dtype)},
          {"precision", "None"},
          {"kernel_init", nn::attr_repr(kernel_init)},
          {"bias_init", nn::attr_repr(bias_init)},
          {"promote_dtype", "promote_dtype"},
          {"dot_general", "None"},
          {"dot_general_cls", "None"}};
}

Padding canonicalize_padding(const PaddingLike& padding, std::size_t rank) {
  using Pairs = std::vector<std::pair<std::int64_t, std::int64_t>>;
  if (padding.every_dim) return Pairs(rank, {*padding.every_dim, *padding.every_dim});
  auto invalid = [&](const std::string& given) {
    return ValueError("Invalid padding format: " + given +
                      ", should be str, int, or a sequence of len " + std::to_string(rank) +
                      " where each element is an int or pair of ints.");
  };
  if (padding.ints) {
    if (padding.ints->size() != rank) throw invalid(attr_repr(*padding.ints));
    Pairs pads;
    for (std::int64_t p : *padding.ints) pads.emplace_back(p, p);
    return pads;
  }
  if (padding.mode.empty() && padding.pads.size() != rank) {
    std::string given = "(";
    for (std::size_t i = 0; i < padding.pads.size(); ++i)
      given += (i ? ", (" : "(") + std::to_string(padding.pads[i].first) + ", " +
               std::to_string(padding.pads[i].second) + ")";
    throw invalid(given + (padding.pads.size() == 1 ? ",)" : ")"));
  }
  return padding;
}

namespace {

// Flax's conv input handling: the batch dims before the spatial ones and the features, folded
// into one (an input without any gets one); the rank must allow the kernel's spatial dims.
struct FoldedInput {
  Array x;            // (batch, spatial..., features)
  Shape batch_shape;  // the input's batch dims, restored on the output
};
FoldedInput fold_conv_input(const char* op, const Array& inputs, std::size_t kernel_dims,
                            std::int64_t features) {
  const auto nd = static_cast<int>(kernel_dims);
  if (nd == 0)
    throw ValueError(std::string(op) + ": kernel_size must name at least one spatial dim");
  if (features <= 0)
    throw ValueError(std::string(op) + ": features must be positive, got " +
                     std::to_string(features));
  if (inputs.ndim() < nd + 1) {
    std::ostringstream os;
    os << op << ": a kernel_size of " << nd << " spatial dims expects inputs of rank at least "
       << nd + 1 << " (batch..., spatial..., features), got rank " << inputs.ndim();
    throw ValueError(os.str());
  }
  const auto nb = static_cast<std::size_t>(inputs.ndim() - nd - 1);
  const Shape& shape = inputs.shape();
  Shape batch_shape(shape.begin(), shape.begin() + static_cast<std::ptrdiff_t>(nb));
  if (nb == 1) return {inputs, batch_shape};
  std::int64_t n = 1;
  for (auto d : batch_shape) n *= d;
  Shape flat{n};
  flat.insert(flat.end(), shape.begin() + static_cast<std::ptrdiff_t>(nb), shape.end());
  return {reshape(inputs, flat), batch_shape};
}

// jnp.pad of one axis in mode 'wrap' (periodic) or 'reflect' (mirrored without repeating the
// edge), as a gather: output j reads input ((j - lo) mod n), folded back for reflect. These
// indices equal jnp.pad's iterated slices for any pad width.
Array pad_axis(const char* op, const Array& x, int axis, std::int64_t lo, std::int64_t hi,
               bool reflect) {
  const std::int64_t n = x.shape(axis);
  if (n == 0)
    throw ValueError(std::string(op) +
                     ": can't pad an empty spatial dim periodically or by "
                     "reflection");
  const std::int64_t period = reflect ? 2 * (n - 1) : n;
  std::vector<std::int32_t> idx;
  for (std::int64_t j = 0; j < n + lo + hi; ++j) {
    if (period == 0) {  // reflect of a length-1 axis repeats it
      idx.push_back(0);
      continue;
    }
    std::int64_t i = ((j - lo) % period + period) % period;
    if (i >= n) i = period - i;
    idx.push_back(static_cast<std::int32_t>(i));
  }
  return take(x, array(idx), axis, GatherMode::promise_in_bounds);
}

// Zeros before (lo) and after (hi) along `axis`.
Array zero_pad_axis(const Array& x, int axis, std::int64_t lo, std::int64_t hi) {
  if (lo == 0 && hi == 0) return x;
  Shape s = x.shape();
  Arrays parts;
  s[static_cast<std::size_t>(axis)] = lo;
  if (lo > 0) parts.push_back(zeros(s, x.dtype()));
  parts.push_back(x);
  s[static_cast<std::size_t>(axis)] = hi;
  if (hi > 0) parts.push_back(zeros(s, x.dtype()));
  return concatenate(parts, axis);
}

std::vector<std::int64_t> ones_if_empty(const std::vector<std::int64_t>& v, std::size_t n) {
  return v.empty() ? std::vector<std::int64_t>(n, 1) : v;
}

}  // namespace

namespace detail {

Array unfold_conv_output(const Array& y, const Shape& batch_shape) {
  if (batch_shape.size() == 1) return y;
  Shape out = batch_shape;
  out.insert(out.end(), y.shape().begin() + 1, y.shape().end());
  return reshape(y, out);
}

ConvInput conv_input(const char* op, const Array& inputs, const ConvConfig& c) {
  auto [x, batch_shape] = fold_conv_input(op, inputs, c.kernel_size.size(), c.features);
  const std::size_t nk = c.kernel_size.size();
  Padding pad = canonicalize_padding(c.padding, nk);
  if (pad.mode == "CIRCULAR" || pad.mode == "REFLECT") {
    // Flax pads the input by wrap/reflect so that a VALID conv keeps the size: (k_dilated - 1) / 2
    // before, k_dilated / 2 after.
    const auto kd = ones_if_empty(c.kernel_dilation, nk);
    if (kd.size() != nk)
      throw ValueError(std::string(op) + ": kernel_dilation must have one entry per spatial dim (" +
                       std::to_string(nk) + "), got " + attr_repr(c.kernel_dilation));
    for (std::size_t i = 0; i < nk; ++i) {
      const std::int64_t k = (c.kernel_size[i] - 1) * kd[i] + 1;
      x = pad_axis(op, x, static_cast<int>(i) + 1, (k - 1) / 2, k / 2, pad.mode == "REFLECT");
    }
    pad = "VALID";
  } else if (pad.mode == "CAUSAL") {
    if (nk != 1) throw ValueError("Causal padding is only implemented for 1D convolutions.");
    const auto kd = ones_if_empty(c.kernel_dilation, 1);
    x = zero_pad_axis(x, 1, kd.at(0) * (c.kernel_size[0] - 1), 0);
    pad = "VALID";
  }
  return {x, batch_shape, pad};
}

}  // namespace detail

Array Conv::call(const Array& inputs) {
  auto [x, batch_shape, pad] = detail::conv_input("Conv", inputs, *this);
  const std::int64_t in_features = x.shape(-1);
  if (feature_group_count < 1 || in_features % feature_group_count != 0) {
    throw ValueError("Conv: the input features (" + std::to_string(in_features) +
                     ") must be divisible by feature_group_count (" +
                     std::to_string(feature_group_count) + ")");
  }
  Shape kernel_shape(kernel_size.begin(), kernel_size.end());
  kernel_shape.push_back(in_features / feature_group_count);
  kernel_shape.push_back(features);
  Array kernel = param("kernel", kernel_init, kernel_shape, param_dtype);
  std::optional<Array> bias;
  if (use_bias) bias = param("bias", bias_init, Shape{features}, param_dtype);
  const DType d = detail::canonicalize_dtype("Conv", dtype, {x, kernel, bias});
  Array y = conv_general_dilated(detail::cast(x, d), detail::cast(kernel, d),
                                 {.window_strides = strides,
                                  .padding = pad,
                                  .lhs_dilation = input_dilation,
                                  .rhs_dilation = kernel_dilation,
                                  .feature_group_count = feature_group_count});
  if (bias) y = y + detail::cast(*bias, d);
  return detail::unfold_conv_output(y, batch_shape);
}

Array ConvTranspose::call(const Array& inputs) {
  auto [x, batch_shape] = fold_conv_input("ConvTranspose", inputs, kernel_size.size(), features);
  const std::size_t nk = kernel_size.size();
  Shape kernel_shape(kernel_size.begin(), kernel_size.end());
  kernel_shape.push_back(transpose_kernel ? features : x.shape(-1));
  kernel_shape.push_back(transpose_kernel ? x.shape(-1) : features);
  Array kernel = param("kernel", kernel_init, kernel_shape, param_dtype);
  Padding pad = canonicalize_padding(padding, nk);
  const bool circular = pad.mode == "CIRCULAR";
  if (circular) pad = "VALID";
  std::optional<Array> bias;
  if (use_bias) bias = param("bias", bias_init, Shape{features}, param_dtype);
  const DType d = detail::canonicalize_dtype("ConvTranspose", dtype, {x, kernel, bias});
  Array y = conv_transpose(detail::cast(x, d), detail::cast(kernel, d), strides, pad,
                           kernel_dilation, transpose_kernel);
  if (circular) {
    // Flax's periodic wrap: the output period along each spatial dim is input size * stride; y
    // is zero-padded to an odd number of periods (the extra pixel on the left, or on the right
    // with transpose_kernel, so that it mirrors Conv) and the periods are summed.
    const auto st = ones_if_empty(strides, nk);
    for (std::size_t i = 0; i < nk; ++i) {
      const int axis = static_cast<int>(i) + 1;
      const std::int64_t period = x.shape(axis) * st.at(i), y_dim = y.shape(axis);
      const std::int64_t diff = ((-(y_dim - period)) % (2 * period) + 2 * period) % (2 * period);
      y = transpose_kernel ? zero_pad_axis(y, axis, diff / 2, (diff + 1) / 2)
                           : zero_pad_axis(y, axis, (diff + 1) / 2, diff / 2);
      Shape s = y.shape();
      s[static_cast<std::size_t>(axis)] = -1;
      s.insert(s.begin() + axis + 1, period);
      y = sum(reshape(y, s), {axis});
    }
  }
  if (bias) y = y + detail::cast(*bias, d);
  return detail::unfold_conv_output(y, batch_shape);
}

Array Einsum::call(const Array& x, const std::optional<std::string>& call_str) {
  const std::string eq_given = merge_param("einsum_str", einsum_str, call_str, "Einsum");
  std::string eq;
  for (char c : eq_given)
    if (c != ' ') eq += c;
  const auto arrow = eq.find("->");
  if (arrow == std::string::npos)
    throw ValueError("Einsum: `einsum_str` equation must be explicit and include \"->\", got '" +
                     eq + "'");
  const auto commas = std::count(eq.begin(), eq.end(), ',');
  if (commas != 1)
    throw ValueError(
        "Einsum: `einsum_str` equation must have exactly two operands and "
        "therefore, exactly one comma character, instead of " +
        std::to_string(commas));
  Array kernel = param("kernel", kernel_init, Shape(shape.begin(), shape.end()), param_dtype);
  if (!use_bias) {
    const DType d = detail::canonicalize_dtype("Einsum", dtype, {x, kernel});
    return einsum(eq, detail::cast(x, d), detail::cast(kernel, d));
  }

  // The bias covers the output axes named by the kernel's term (Flax's _get_bias_shape); the
  // output's `...` dims, and letters only the input has, broadcast.
  const auto comma = eq.find(',');
  const std::string rhs = eq.substr(comma + 1, arrow - comma - 1), out = eq.substr(arrow + 2);
  if (rhs.find("...") != std::string::npos)
    throw ValueError("Einsum: linum's bias inference needs a kernel term without '...', got '" +
                     eq + "'");
  auto letters = [](const std::string& t) {
    return std::count_if(t.begin(), t.end(), [](char c) { return c != '.'; });
  };
  if (static_cast<std::size_t>(letters(rhs)) != shape.size())
    throw ValueError("Einsum: the kernel term '" + rhs + "' names " + std::to_string(letters(rhs)) +
                     " axes but the kernel shape " + shape_str(Shape(shape.begin(), shape.end())) +
                     " has " + std::to_string(shape.size()));
  const std::string lhs = eq.substr(0, comma);
  const auto ellipsis_dims = static_cast<std::size_t>(
      std::max<std::int64_t>(0, x.ndim() - static_cast<std::int64_t>(letters(lhs))));
  Shape bias_shape, broadcast_shape;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out[i] == '.') {
      broadcast_shape.insert(broadcast_shape.end(), ellipsis_dims, 1);
      i += 2;
      continue;
    }
    const auto k = rhs.find(out[i]);
    broadcast_shape.push_back(k == std::string::npos ? 1 : shape[k]);
    if (k != std::string::npos) bias_shape.push_back(shape[k]);
  }
  Array bias = param("bias", bias_init, bias_shape, param_dtype);
  const DType d = detail::canonicalize_dtype("Einsum", dtype, {x, kernel, bias});
  return einsum(eq, detail::cast(x, d), detail::cast(kernel, d)) +
         reshape(detail::cast(bias, d), broadcast_shape);
}

}  // namespace linum::nn
