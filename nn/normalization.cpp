// BatchNorm, LayerNorm, RMSNorm, GroupNorm and InstanceNorm, as flax/linen/normalization.py:
// _compute_stats (fast variance E[x^2] - E[x]^2 clipped at 0, pmean over axis_name) then
// _normalize.
#include <linum/nn/normalization.hpp>

#include <linum/autodiff/collectives.hpp>
#include <linum/autodiff/ops.hpp>
#include <linum/autodiff/ops/kernel_util.hpp>

#include <algorithm>

namespace linum::nn {

namespace {
std::vector<int> canonical_axes(const std::vector<int>& axes, int ndim, const char* who) {
  return linum::detail::normalize_axes(Axes(axes), ndim, who);
}

// Mean over `axes` with keepdims, counting only where mask is true (jnp.mean(where=mask)).
Array masked_mean(const Array& x, const std::vector<int>& axes, const std::optional<Array>& mask) {
  if (!mask) return mean(x, Axes(axes), true);
  Array m = broadcast_to(*mask, x.shape());
  return sum(where(m, x, 0.0), Axes(axes), true) / sum(astype(m, x.dtype()), Axes(axes), true);
}

struct Stats {
  Array mean, var;  // keepdims: 1 on every reduced axis
};

// flax _compute_stats. use_mean=false (RMSNorm) gives mean 0 and var = E[x^2].
Stats compute_stats(const Array& x, const std::vector<int>& axes, const std::string& axis_name,
                    bool use_mean, bool fast_variance, const std::optional<Array>& mask) {
  if (mask && mask->dtype() != bool_) {
    throw TypeError("normalization: mask must be a bool array, got " +
                    std::string(dtype_name(mask->dtype())));
  }
  auto sync = [&](const Array& a) { return axis_name.empty() ? a : pmean(a, axis_name); };
  if (!use_mean) {
    Array mu2 = sync(masked_mean(square(x), axes, mask));
    return {zeros_like(mu2), mu2};
  }
  if (fast_variance) {
    Array mu = sync(masked_mean(x, axes, mask));
    Array mu2 = sync(masked_mean(square(x), axes, mask));
    return {mu, maximum(mu2 - square(mu), 0.0)};
  }
  Array mu = sync(masked_mean(x, axes, mask));
  return {mu, sync(masked_mean(square(x - mu), axes, mask))};
}

struct NormParams {
  double epsilon;
  bool use_bias, use_scale;
  const initializers::Initializer* bias_init;
  const initializers::Initializer* scale_init;
  DType param_dtype;
};

// flax _normalize: (x - mean) * rsqrt(var + eps) * scale + bias, scale and bias of the shape of
// x's feature_axes.
Array normalize(ModuleBase& m, const Array& x, const Stats& s, const std::vector<int>& features,
                const NormParams& p) {
  Shape feature_shape(static_cast<std::size_t>(x.ndim()), 1);
  Shape reduced_feature_shape;
  for (int a : features) {
    feature_shape[static_cast<std::size_t>(a)] = x.shape(a);
    reduced_feature_shape.push_back(x.shape(a));
  }
  Array y = x - s.mean;
  Array mul = rsqrt(s.var + p.epsilon);
  if (p.use_scale)
    mul = mul * reshape(m.param("scale", *p.scale_init, reduced_feature_shape, p.param_dtype),
                        feature_shape);
  y = y * mul;
  if (p.use_bias)
    y = y +
        reshape(m.param("bias", *p.bias_init, reduced_feature_shape, p.param_dtype), feature_shape);
  return y;
}

void check_input(const Array& x, const char* who) {
  linum::detail::check_valid(x, who);
  if (x.ndim() < 1)
    throw ValueError(std::string(who) + ": expected an input with at least one axis, got a scalar");
}
}  // namespace

Array BatchNorm::call(const Array& x, std::optional<bool> use_running_average_arg) {
  const bool use_ra =
      merge_param("use_running_average", use_running_average, use_running_average_arg, "BatchNorm");
  check_input(x, "BatchNorm");
  const int ax = linum::detail::normalize_axis(axis, x.ndim(), "BatchNorm");
  std::vector<int> reduction;
  for (int i = 0; i < x.ndim(); ++i)
    if (i != ax) reduction.push_back(i);
  const Shape feature_shape{x.shape(ax)};
  // Statistics broadcast against x: shape 1 on every reduced axis.
  Shape bshape(static_cast<std::size_t>(x.ndim()), 1);
  bshape[static_cast<std::size_t>(ax)] = x.shape(ax);

  auto ra_mean = variable("batch_stats", "mean", [&] { return zeros(feature_shape, float32); });
  auto ra_var = variable("batch_stats", "var", [&] { return ones(feature_shape, float32); });
  Stats s;
  if (use_ra) {
    s = {reshape(ra_mean.value(), bshape), reshape(ra_var.value(), bshape)};
  } else {
    // As Flax, the statistics are not synchronised while initializing.
    s = compute_stats(x, reduction, is_initializing() ? std::string() : axis_name, true,
                      use_fast_variance, std::nullopt);
    if (!is_initializing()) {
      ra_mean.value() =
          momentum * ra_mean.value() + (1.0 - momentum) * reshape(s.mean, feature_shape);
      ra_var.value() = momentum * ra_var.value() + (1.0 - momentum) * reshape(s.var, feature_shape);
    }
  }
  return normalize(*this, x, s, {ax},
                   {epsilon, use_bias, use_scale, &bias_init, &scale_init, param_dtype});
}

Array LayerNorm::call(const Array& x, const std::optional<Array>& mask) {
  check_input(x, "LayerNorm");
  Stats s = compute_stats(x, canonical_axes(reduction_axes, x.ndim(), "LayerNorm"), axis_name, true,
                          use_fast_variance, mask);
  return normalize(*this, x, s, canonical_axes(feature_axes, x.ndim(), "LayerNorm"),
                   {epsilon, use_bias, use_scale, &bias_init, &scale_init, param_dtype});
}

Array RMSNorm::call(const Array& x, const std::optional<Array>& mask) {
  check_input(x, "RMSNorm");
  Stats s = compute_stats(x, canonical_axes(reduction_axes, x.ndim(), "RMSNorm"), axis_name, false,
                          true, mask);
  return normalize(*this, x, s, canonical_axes(feature_axes, x.ndim(), "RMSNorm"),
                   {epsilon, false, use_scale, nullptr, &scale_init, param_dtype});
}

Array GroupNorm::call(const Array& x, const std::optional<Array>& mask) {
  check_input(x, "GroupNorm");
  const int nd = x.ndim();
  std::vector<int> axes;
  if (reduction_axes) {
    axes = canonical_axes(*reduction_axes, nd, "GroupNorm");
  } else {
    for (int i = 1; i < nd; ++i) axes.push_back(i);
    if (axes.empty()) axes.push_back(0);
  }
  if (axes.back() != nd - 1) {
    throw ValueError(
        "GroupNorm: the reduction axes must include the final dimension as this is assumed to be "
        "the feature axis");
  }
  if (num_groups.has_value() == group_size.has_value()) {
    throw ValueError(
        "GroupNorm: either num_groups or group_size should be specified. If group_size is to be "
        "specified, pass num_groups=std::nullopt to override the default num_groups of 32");
  }
  const std::int64_t channels = x.shape(-1);
  std::int64_t groups = 0;
  if (group_size) {
    if (*group_size <= 0 || channels % *group_size != 0) {
      throw ValueError("GroupNorm: number of channels (" + std::to_string(channels) +
                       ") is not a multiple of the group size (" + std::to_string(*group_size) +
                       ")");
    }
    groups = channels / *group_size;
  } else {
    groups = *num_groups;
  }
  if (groups <= 0 || channels % groups != 0) {
    throw ValueError("GroupNorm: number of groups (" + std::to_string(groups) +
                     ") does not divide the number of channels (" + std::to_string(channels) + ")");
  }
  // Statistics over (reduced axes..., channels within a group) of x viewed as (..., G, C/G).
  Shape gshape = x.shape();
  gshape.back() = groups;
  gshape.push_back(channels / groups);
  std::vector<int> gaxes(axes.begin(), axes.end() - 1);
  gaxes.push_back(nd);
  std::optional<Array> gmask;
  if (mask) gmask = reshape(broadcast_to(*mask, x.shape()), gshape);
  Stats g = compute_stats(reshape(x, gshape), gaxes, axis_name, true, use_fast_variance, gmask);
  // Back to x's shape: each group's statistic repeated over its channels (jnp.repeat).
  Shape rep = g.mean.shape();
  rep.back() = channels / groups;
  Shape bshape = g.mean.shape();
  bshape.pop_back();
  bshape.back() = channels;
  Stats s{reshape(broadcast_to(g.mean, rep), bshape), reshape(broadcast_to(g.var, rep), bshape)};
  return normalize(*this, x, s, {nd - 1},
                   {epsilon, use_bias, use_scale, &bias_init, &scale_init, param_dtype});
}

Array InstanceNorm::call(const Array& x, const std::optional<Array>& mask) {
  check_input(x, "InstanceNorm");
  const std::vector<int> features = canonical_axes(feature_axes, x.ndim(), "InstanceNorm");
  if (std::find(features.begin(), features.end(), 0) != features.end()) {
    throw ValueError(
        "InstanceNorm: the feature axes cannot include the leading dimension (axis 0), as it is "
        "assumed to be the batch axis; got an input of rank " +
        std::to_string(x.ndim()) + " whose feature axes include axis 0");
  }
  std::vector<int> reduction;
  for (int i = 1; i < x.ndim(); ++i)
    if (std::find(features.begin(), features.end(), i) == features.end()) reduction.push_back(i);
  // Flax's _compute_stats: the statistics in dtype (default x's) promoted to float32 at least.
  const DType stats_dtype = promote_types(dtype.value_or(x.dtype()), float32);
  const Array xs = x.dtype() == stats_dtype ? x : astype(x, stats_dtype);
  Stats s = compute_stats(xs, reduction, axis_name, true, use_fast_variance, mask);
  Array y = normalize(*this, x, s, features,
                      {epsilon, use_bias, use_scale, &bias_init, &scale_init, param_dtype});
  std::vector<DType> operands{x.dtype()};
  if (use_scale || use_bias) operands.push_back(param_dtype);
  const DType out = detail::canonicalize_dtype("InstanceNorm", dtype, operands);
  return y.dtype() == out ? y : astype(y, out);
}

namespace detail {
DType canonicalize_dtype(const char* op, const std::optional<DType>& dtype,
                         const std::vector<DType>& operands) {
  DType d;
  if (dtype) {
    d = *dtype;
  } else {
    d = operands.at(0);
    for (DType o : operands) d = promote_types(d, o);
    if (!is_inexact(d)) d = promote_types(float32, d);
  }
  if (!is_inexact(d))
    throw ValueError(std::string(op) + ": dtype must be inexact (a float or complex dtype), got " +
                     std::string(dtype_name(d)));
  return d;
}
}  // namespace detail

}  // namespace linum::nn
