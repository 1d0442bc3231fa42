// ConvLocal and lax.conv_general_dilated_{patches,local}, as flax/linen/linear.py and
// jax/_src/lax/other.py.
#include <linum/nn/conv_local.hpp>

#include <string>

#include <linum/error.hpp>
#include <linum/nn/dtypes.hpp>

namespace linum::nn {

namespace {

std::int64_t product(const std::vector<std::int64_t>& v) {
  std::int64_t n = 1;
  for (auto d : v) n *= d;
  return n;
}

// y[n, p..., o] = sum_k patches[n, p..., k] * rhs[p..., k, o]: a dot_general batched over the
// output positions, the batch axis moved back in front (JAX's dimension numbers for NHWC/HWIO).
Array contract_patches(const Array& patches, const Array& rhs) {
  const int ns = patches.ndim() - 2;
  DotDimensionNumbers dn{
      .lhs_contract = {ns + 1}, .rhs_contract = {ns}, .lhs_batch = {}, .rhs_batch = {}};
  for (int d = 0; d < ns; ++d) {
    dn.lhs_batch.push_back(d + 1);
    dn.rhs_batch.push_back(d);
  }
  return moveaxis(dot_general(patches, rhs, dn), ns, 0);  // (p..., N, O) -> (N, p..., O)
}

}  // namespace

Array conv_general_dilated_patches(const Array& lhs, const std::vector<std::int64_t>& filter_shape,
                                   const ConvOptions& opts) {
  constexpr const char* op = "conv_general_dilated_patches";
  if (lhs.ndim() < 3 || filter_shape.size() != static_cast<std::size_t>(lhs.ndim() - 2)) {
    throw ValueError(std::string(op) +
                     ": expected lhs (N, spatial..., C) with one filter dim per " +
                     "spatial dim, got lhs shape " + shape_str(lhs.shape()) + " and filter_shape " +
                     attr_repr(filter_shape));
  }
  if (opts.feature_group_count != 1) {
    throw ValueError(std::string(op) + ": takes no feature groups (feature_group_count 1), got " +
                     std::to_string(opts.feature_group_count));
  }
  for (auto k : filter_shape)
    if (k < 1)
      throw ValueError(std::string(op) + ": filter_shape entries must be positive, got " +
                       attr_repr(filter_shape));
  const std::int64_t S = product(filter_shape), C = lhs.shape(-1);
  // The one-hot kernel (window..., 1, C * S): output channel c * S + s copies window position s
  // of input channel c (feature group c).
  Array e = expand_dims(eye(S, -1, 0, lhs.dtype()), 1);  // (S, 1, S)
  Shape rhs_shape(filter_shape.begin(), filter_shape.end());
  rhs_shape.push_back(1);
  rhs_shape.push_back(C * S);
  Array rhs = reshape(broadcast_to(e, {S, C, S}), rhs_shape);
  ConvOptions grouped = opts;
  grouped.feature_group_count = C;
  return conv_general_dilated(lhs, rhs, grouped);
}

Array conv_general_dilated_local(const Array& lhs, const Array& rhs,
                                 const std::vector<std::int64_t>& filter_shape,
                                 const ConvOptions& opts) {
  Array patches = conv_general_dilated_patches(lhs, filter_shape, opts);
  Shape expected(patches.shape().begin() + 1, patches.shape().end());
  expected.push_back(rhs.ndim() > 0 ? rhs.shape(-1) : 0);
  if (rhs.shape() != expected) {
    throw ValueError(
        "conv_general_dilated_local: rhs must be (output spatial..., prod(filter_shape) * "
        "in_features, out_features) = " +
        shape_str(expected) + " for lhs shape " + shape_str(lhs.shape()) + ", got rhs shape " +
        shape_str(rhs.shape()));
  }
  return contract_patches(patches, rhs);
}

Array ConvLocal::call(const Array& inputs) {
  auto [x, batch_shape, pad] = detail::conv_input("ConvLocal", inputs, *this);
  if (feature_group_count != 1) {
    throw NotImplementedError(
        "ConvLocal: `lax.conv_general_dilated_local` does not support `feature_group_count != "
        "1`, got `" +
        std::to_string(feature_group_count) + "`.");
  }
  const ConvOptions opts{.window_strides = strides,
                         .padding = pad,
                         .lhs_dilation = input_dilation,
                         .rhs_dilation = kernel_dilation};
  Array patches = conv_general_dilated_patches(x, kernel_size, opts);
  // One kernel per output position: Flax's conv_output_shape[1:-1] + (prod(kernel_size) *
  // in_features, features), the patches' own shape.
  Shape out_spatial(patches.shape().begin() + 1, patches.shape().end() - 1);
  Shape kernel_shape = out_spatial;
  kernel_shape.push_back(patches.shape(-1));
  kernel_shape.push_back(features);
  Array kernel = param("kernel", kernel_init, kernel_shape, param_dtype);
  std::optional<Array> bias;
  if (use_bias) {
    // One bias per output entry: conv_output_shape[1:].
    Shape bias_shape = out_spatial;
    bias_shape.push_back(features);
    bias = param("bias", bias_init, bias_shape, param_dtype);
  }
  // Flax promotes the inputs before extracting patches; the patches are copies of input entries,
  // so promoting them instead gives the same values.
  const DType d = detail::canonicalize_dtype("ConvLocal", dtype, {patches, kernel, bias});
  Array y = contract_patches(detail::cast(patches, d), detail::cast(kernel, d));
  if (bias) y = y + detail::cast(*bias, d);
  return detail::unfold_conv_output(y, batch_shape);
}

}  // namespace linum::nn
