// Dense and Conv, as flax/linen/linear.py.
#include <linum/nn/linear.hpp>

#include <sstream>

namespace linum::nn {

initializers::Initializer default_kernel_init() { return initializers::lecun_normal(); }

Array Dense::call(const Array& x) {
  if (features <= 0)
    throw ValueError("Dense: features must be positive, got " + std::to_string(features));
  if (x.ndim() < 1)
    throw ValueError("Dense: expected an input with at least one axis, got a scalar");
  Array kernel = param("kernel", kernel_init, Shape{x.shape(-1), features}, param_dtype);
  Array y = matmul(x, kernel);
  if (use_bias) y = y + param("bias", bias_init, Shape{features}, param_dtype);
  return y;
}

Array Conv::call(const Array& inputs) {
  const auto nd = static_cast<int>(kernel_size.size());
  if (nd == 0) throw ValueError("Conv: kernel_size must name at least one spatial dim");
  if (features <= 0)
    throw ValueError("Conv: features must be positive, got " + std::to_string(features));
  Array x = inputs;
  const bool unbatched = x.ndim() == nd + 1;
  if (unbatched) x = expand_dims(x, 0);
  if (x.ndim() != nd + 2) {
    std::ostringstream os;
    os << "Conv: a kernel_size of " << nd << " spatial dims expects inputs of rank " << nd + 1
       << " or " << nd + 2 << " (N, spatial..., C), got rank " << inputs.ndim();
    throw ValueError(os.str());
  }
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

}  // namespace linum::nn
