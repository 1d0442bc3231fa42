// DenseGeneral, as flax/linen/linear.py (dot_general over `axis`, batched over `batch_dims`).
#include <linum/nn/dense_general.hpp>

#include <algorithm>
#include <numeric>

#include <linum/autodiff/control_flow.hpp>
#include <linum/autodiff/ops.hpp>
#include <linum/autodiff/ops/kernel_util.hpp>
#include <linum/nn/dtypes.hpp>

namespace linum::nn {

namespace {
std::int64_t prod(Shape::const_iterator b, Shape::const_iterator e) {
  return std::accumulate(b, e, std::int64_t{1}, std::multiplies<>());
}
// An initializer called on the flat 2-D (or 1-D) shape Flax uses, then reshaped.
initializers::Initializer flat_init(const initializers::Initializer& init, std::size_t nbatch,
                                    std::size_t nfeat, bool bias) {
  return initializers::Initializer(
      [init, nbatch, nfeat, bias](const Array& key, const Shape& shape, DType dtype) {
        const std::int64_t b = prod(shape.begin(), shape.begin() + nbatch);
        const std::int64_t f = prod(shape.end() - nfeat, shape.end());
        Shape flat =
            bias ? Shape{b * f} : Shape{b * prod(shape.begin() + nbatch, shape.end() - nfeat), f};
        return reshape(init(key, flat, dtype), shape);
      });
}
}  // namespace

Array DenseGeneral::call(const Array& inputs) {
  if (features.empty() ||
      std::any_of(features.begin(), features.end(), [](auto f) { return f <= 0; }))
    throw ValueError("DenseGeneral: features must be a non-empty tuple of positive sizes");
  const int nd = inputs.ndim();
  // Sorted and checked for repeats; the contraction itself keeps the order given, as Flax.
  const std::vector<int> ax = linum::detail::normalize_axes(Axes(axis), nd, "DenseGeneral");
  const std::vector<int> bd = linum::detail::normalize_axes(Axes(batch_dims), nd, "DenseGeneral");
  for (std::size_t i = 0; i < bd.size(); ++i) {
    if (bd[i] != static_cast<int>(i)) {
      throw ValueError(
          "DenseGeneral: batch_dims must be consecutive leading dimensions starting "
          "from 0, got shape " +
          linum::detail::aval_str(inputs));
    }
  }
  for (int a : ax) {
    if (std::find(bd.begin(), bd.end(), a) != bd.end())
      throw ValueError("DenseGeneral: an axis cannot also be a batch dim: " + std::to_string(a));
  }
  std::vector<int> axis_order;
  for (int a : axis) axis_order.push_back(linum::detail::normalize_axis(a, nd, "DenseGeneral"));
  Shape batch_shape, kernel_shape, expanded_batch(static_cast<std::size_t>(nd), 1);
  for (int b : bd) {
    batch_shape.push_back(inputs.shape(b));
    expanded_batch[static_cast<std::size_t>(b)] = inputs.shape(b);
  }
  kernel_shape = batch_shape;
  for (int a : axis_order) kernel_shape.push_back(inputs.shape(a));
  for (auto f : features) kernel_shape.push_back(f);
  const std::size_t nb = bd.size(), nf = features.size();
  Array kernel = param("kernel", flat_init(kernel_init, nb, nf, false), kernel_shape, param_dtype);
  DotDimensionNumbers dims;
  dims.lhs_contract = axis_order;
  for (std::size_t i = 0; i < axis_order.size(); ++i)
    dims.rhs_contract.push_back(static_cast<int>(nb + i));
  dims.lhs_batch = bd;
  for (std::size_t i = 0; i < nb; ++i) dims.rhs_batch.push_back(static_cast<int>(i));
  std::optional<Array> bias;
  if (use_bias) {
    Shape bias_shape = batch_shape;
    for (auto f : features) bias_shape.push_back(f);
    bias = param("bias", flat_init(bias_init, nb, nf, true), bias_shape, param_dtype);
  }
  const DType d = detail::canonicalize_dtype("DenseGeneral", dtype, {inputs, kernel, bias});
  Array y = dot_general(detail::cast(inputs, d), detail::cast(kernel, d), dims);
  if (bias) {
    // Bias broadcast over the non-batch, non-contracted dims: shape expanded_batch (without the
    // contracted axes) + features.
    Shape bshape;
    for (int i = 0; i < nd; ++i)
      if (std::find(axis_order.begin(), axis_order.end(), i) == axis_order.end())
        bshape.push_back(expanded_batch[static_cast<std::size_t>(i)]);
    for (auto f : features) bshape.push_back(f);
    y = y + reshape(detail::cast(*bias, d), bshape);
  }
  return y;
}

}  // namespace linum::nn
