// Dense, Conv, ConvTranspose and Einsum, as flax/linen/linear.py.
#include <linum/nn/linear.hpp>

#include <algorithm>
#include <sstream>

namespace linum::nn {

initializers::Initializer default_kernel_init() { return initializers::lecun_normal(); }

std::string attr_repr(DType d) { return std::string(dtype_name(d)); }
std::string attr_repr(const std::optional<DType>& d) {
  return d ? attr_repr(*d) : attr_repr(std::nullopt);
}

namespace {

// flax.linen.dtypes.canonicalize_dtype: the given dtype, else the result_type of the operands
// promoted to float32 at least; either way it must be a floating dtype.
DType canonicalize_dtype(const char* op, const std::optional<DType>& dtype, const Array& x,
                         const Array& kernel, const std::optional<Array>& bias) {
  DType d;
  if (dtype) {
    d = *dtype;
  } else {
    ResultType r = linum::detail::result_type(x, kernel);
    if (bias) r = result_type(r.dtype, r.weak_type, bias->dtype(), bias->weak_type());
    d = is_floating(r.dtype) ? r.dtype : promote_types(float32, r.dtype);
  }
  if (!is_floating(d))
    throw ValueError(std::string(op) + ": Dtype must be inexact (float32 or float64), got " +
                     std::string(dtype_name(d)));
  return d;
}

Array cast(const Array& a, DType d) { return a.dtype() == d ? a : astype(a, d); }

}  // namespace

Array Dense::call(const Array& x) {
  if (features <= 0)
    throw ValueError("Dense: features must be positive, got " + std::to_string(features));
  if (x.ndim() < 1)
    throw ValueError("Dense: expected an input with at least one axis, got a scalar");
  Array kernel = param("kernel", kernel_init, Shape{x.shape(-1), features}, param_dtype);
  std::optional<Array> bias;
  if (use_bias) bias = param("bias", bias_init, Shape{features}, param_dtype);
  // Flax's promote_dtype(inputs, kernel, bias, dtype=self.dtype).
  const DType d = canonicalize_dtype("Dense", dtype, x, kernel, bias);
  Array y = matmul(cast(x, d), cast(kernel, d));
  if (bias) y = y + cast(*bias, d);
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

namespace {

// Flax's conv input handling: an input without the batch dim gets one; the rank must fit.
Array batched_conv_input(const char* op, const Array& inputs, std::size_t kernel_dims,
                         std::int64_t features) {
  const auto nd = static_cast<int>(kernel_dims);
  if (nd == 0)
    throw ValueError(std::string(op) + ": kernel_size must name at least one spatial dim");
  if (features <= 0)
    throw ValueError(std::string(op) + ": features must be positive, got " +
                     std::to_string(features));
  const Array x = inputs.ndim() == nd + 1 ? expand_dims(inputs, 0) : inputs;
  if (x.ndim() != nd + 2) {
    std::ostringstream os;
    os << op << ": a kernel_size of " << nd << " spatial dims expects inputs of rank " << nd + 1
       << " or " << nd + 2 << " (N, spatial..., C), got rank " << inputs.ndim();
    throw ValueError(os.str());
  }
  return x;
}

}  // namespace

Array Conv::call(const Array& inputs) {
  const Array x = batched_conv_input("Conv", inputs, kernel_size.size(), features);
  const bool unbatched = x.ndim() != inputs.ndim();
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
  Array y = conv_general_dilated(x, kernel,
                                 {.window_strides = strides,
                                  .padding = padding,
                                  .lhs_dilation = input_dilation,
                                  .rhs_dilation = kernel_dilation,
                                  .feature_group_count = feature_group_count});
  if (use_bias) y = y + param("bias", bias_init, Shape{features}, param_dtype);
  return unbatched ? squeeze(y, 0) : y;
}

Array ConvTranspose::call(const Array& inputs) {
  const Array x = batched_conv_input("ConvTranspose", inputs, kernel_size.size(), features);
  const bool unbatched = x.ndim() != inputs.ndim();
  Shape kernel_shape(kernel_size.begin(), kernel_size.end());
  kernel_shape.push_back(transpose_kernel ? features : x.shape(-1));
  kernel_shape.push_back(transpose_kernel ? x.shape(-1) : features);
  Array kernel = param("kernel", kernel_init, kernel_shape, param_dtype);
  Array y = conv_transpose(x, kernel, strides, padding, kernel_dilation, transpose_kernel);
  if (unbatched) y = squeeze(y, 0);
  if (use_bias) y = y + param("bias", bias_init, Shape{features}, param_dtype);
  return y;
}

Array Einsum::call(const Array& x, const std::optional<std::string>& call_str) {
  // Flax's merge_param: the equation comes from the constructor or the call, exactly once.
  if (einsum_str && call_str)
    throw ValueError(
        "Einsum: parameter \"einsum_str\" was passed to the constructor and at "
        "call time. Should be passed just once.");
  if (!einsum_str && !call_str)
    throw ValueError(
        "Einsum: parameter \"einsum_str\" must be passed to the constructor or at "
        "call time.");
  std::string eq;
  for (char c : einsum_str ? *einsum_str : *call_str)
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
  if (!use_bias) return einsum(eq, x, kernel);

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
  return einsum(eq, x, kernel) + reshape(bias, broadcast_shape);
}

}  // namespace linum::nn
