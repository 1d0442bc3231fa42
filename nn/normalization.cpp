// BatchNorm, as flax/linen/normalization.py (fast variance: E[x^2] - E[x]^2, clipped at 0).
#include <linum/nn/normalization.hpp>

#include <linum/autodiff/collectives.hpp>
#include <linum/autodiff/ops.hpp>

namespace linum::nn {

namespace {
// flax.linen.module.merge_param: exactly one of the field and the call argument is given.
bool merge_param(const char* name, std::optional<bool> field, std::optional<bool> arg) {
  if (field && arg) {
    throw ValueError(std::string("BatchNorm: parameter \"") + name +
                     "\" was passed both to the constructor and to the call; pass it only once");
  }
  if (!field && !arg) {
    throw ValueError(std::string("BatchNorm: parameter \"") + name +
                     "\" must be passed to the constructor or to the call");
  }
  return field ? *field : *arg;
}
}  // namespace

Array BatchNorm::call(const Array& x, std::optional<bool> use_running_average_arg) {
  const bool use_ra =
      merge_param("use_running_average", use_running_average, use_running_average_arg);
  if (x.ndim() < 1) throw ValueError("BatchNorm: expected an input with at least one axis");
  const int ax = axis < 0 ? axis + x.ndim() : axis;
  if (ax < 0 || ax >= x.ndim()) {
    throw ValueError("BatchNorm: axis " + std::to_string(axis) +
                     " out of range for an input of rank " + std::to_string(x.ndim()));
  }
  Axes reduction;
  reduction.all = false;
  for (int i = 0; i < x.ndim(); ++i)
    if (i != ax) reduction.axes.push_back(i);
  const Shape feature_shape{x.shape(ax)};
  // Statistics broadcast against x: shape 1 on every reduced axis.
  Shape bshape(static_cast<std::size_t>(x.ndim()), 1);
  bshape[static_cast<std::size_t>(ax)] = x.shape(ax);

  auto ra_mean = variable("batch_stats", "mean", [&] { return zeros(feature_shape, float32); });
  auto ra_var = variable("batch_stats", "var", [&] { return ones(feature_shape, float32); });
  Array mean, var;
  if (use_ra) {
    mean = ra_mean.value();
    var = ra_var.value();
  } else {
    mean = linum::mean(x, reduction);
    Array mean2 = linum::mean(square(x), reduction);
    if (!axis_name.empty() && !is_initializing()) {
      mean = pmean(mean, axis_name);
      mean2 = pmean(mean2, axis_name);
    }
    var = maximum(mean2 - square(mean), 0.0);
    if (!is_initializing()) {
      ra_mean.value() = momentum * ra_mean.value() + (1.0 - momentum) * mean;
      ra_var.value() = momentum * ra_var.value() + (1.0 - momentum) * var;
    }
  }
  Array y = x - reshape(mean, bshape);
  Array mul = rsqrt(var + epsilon);
  if (use_scale) mul = mul * param("scale", scale_init, feature_shape, param_dtype);
  y = y * reshape(mul, bshape);
  if (use_bias) y = y + reshape(param("bias", bias_init, feature_shape, param_dtype), bshape);
  return y;
}

}  // namespace linum::nn
