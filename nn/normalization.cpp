// BatchNorm, LayerNorm, RMSNorm, GroupNorm and InstanceNorm, as flax/linen/normalization.py:
// _compute_stats (fast variance E[x^2] - E[x]^2 clipped at 0, pmean over axis_name) then
// _normalize.
#include <linum/nn/normalization.hpp>

#include <linum/autodiff/collectives.hpp>
#include <linum/autodiff/ops.hpp>
#include <linum/autodiff/ops/kernel_util.hpp>
#include <linum/nn/dtypes.hpp>

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

// The precision fields every norm has: Flax's dtype and force_float32_reductions.
struct StatsDtype {
  std::optional<DType> dtype;
  bool force_float32_reductions;
};

// flax _compute_stats. The statistics are computed in `dtype` (default x's), promoted to float32
// at least when forced, so a bfloat16 input still gets float32 means and variances.
// use_mean=false (RMSNorm) gives mean 0 and var = E[x^2].
Stats compute_stats(const Array& x_in, const std::vector<int>& axes, const std::string& axis_name,
                    bool use_mean, bool fast_variance, const std::optional<Array>& mask,
                    const StatsDtype& sd) {
  if (mask && mask->dtype() != bool_) {
    throw TypeError("normalization: mask must be a bool array, got " +
                    std::string(dtype_name(mask->dtype())));
  }
  DType d = sd.dtype.value_or(x_in.dtype());
  if (sd.force_float32_reductions) d = promote_types(d, float32);
  const Array x = detail::cast(x_in, d);
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
  StatsDtype sd;
};

// flax _normalize: (x - mean) * rsqrt(var + eps) * scale + bias, scale and bias of the shape of
// x's feature_axes, computed in the statistics' dtype promoted with the params'; the result is
// cast to dtype, by default x's promoted with the params'.
Array normalize(ModuleBase& m, const char* who, const Array& x, const Stats& s,
                const std::vector<int>& features, const NormParams& p) {
  Shape feature_shape(static_cast<std::size_t>(x.ndim()), 1);
  Shape reduced_feature_shape;
  for (int a : features) {
    feature_shape[static_cast<std::size_t>(a)] = x.shape(a);
    reduced_feature_shape.push_back(x.shape(a));
  }
  // Without forced float32 reductions Flax casts the params to param_dtype (they may have been
  // loaded in another dtype).
  auto feature_param = [&](const char* name, const initializers::Initializer& init) {
    Array v = reshape(m.param(name, init, reduced_feature_shape, p.param_dtype), feature_shape);
    return p.sd.force_float32_reductions ? v : detail::cast(v, p.param_dtype);
  };
  Array y = x - s.mean;
  Array mul = rsqrt(s.var + p.epsilon);
  std::vector<std::optional<Array>> operands{x};
  if (p.use_scale) {
    Array scale = feature_param("scale", *p.scale_init);
    mul = mul * scale;
    operands.emplace_back(scale);
  }
  y = y * mul;
  if (p.use_bias) {
    Array bias = feature_param("bias", *p.bias_init);
    y = y + bias;
    operands.emplace_back(bias);
  }
  return detail::cast(y, detail::canonicalize_dtype(who, p.sd.dtype, operands));
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

  const StatsDtype sd{dtype, force_float32_reductions};
  // The running statistics are float32, or param_dtype when reductions are not forced to float32.
  const DType stats_dtype = force_float32_reductions ? float32 : param_dtype;
  auto ra_mean = variable("batch_stats", "mean", [&] { return zeros(feature_shape, stats_dtype); });
  auto ra_var = variable("batch_stats", "var", [&] { return ones(feature_shape, stats_dtype); });
  Stats s;
  if (use_ra) {
    auto stored = [&](const Array& v) {
      return reshape(force_float32_reductions ? v : detail::cast(v, param_dtype), bshape);
    };
    s = {stored(ra_mean.value()), stored(ra_var.value())};
  } else {
    // As Flax, the statistics are not synchronised while initializing.
    s = compute_stats(x, reduction, is_initializing() ? std::string() : axis_name, true,
                      use_fast_variance, std::nullopt, sd);
    if (!is_initializing()) {
      ra_mean.value() =
          momentum * ra_mean.value() + (1.0 - momentum) * reshape(s.mean, feature_shape);
      ra_var.value() = momentum * ra_var.value() + (1.0 - momentum) * reshape(s.var, feature_shape);
    }
  }
  return normalize(*this, "BatchNorm", x, s, {ax},
                   {epsilon, use_bias, use_scale, &bias_init, &scale_init, param_dtype, sd});
}

Array LayerNorm::call(const Array& x, const std::optional<Array>& mask) {
  check_input(x, "LayerNorm");
  const StatsDtype sd{dtype, force_float32_reductions};
  Stats s = compute_stats(x, canonical_axes(reduction_axes, x.ndim(), "LayerNorm"), axis_name, true,
                          use_fast_variance, mask, sd);
  return normalize(*this, "LayerNorm", x, s, canonical_axes(feature_axes, x.ndim(), "LayerNorm"),
                   {epsilon, use_bias, use_scale, &bias_init, &scale_init, param_dtype, sd});
}

Array RMSNorm::call(const Array& x, const std::optional<Array>& mask) {
  check_input(x, "RMSNorm");
  const StatsDtype sd{dtype, force_float32_reductions};
  Stats s = compute_stats(x, canonical_axes(reduction_axes, x.ndim(), "RMSNorm"), axis_name, false,
                          true, mask, sd);
  return normalize(*this, "RMSNorm", x, s, canonical_axes(feature_axes, x.ndim(), "RMSNorm"),
                   {epsilon, false, use_scale, nullptr, &scale_init, param_dtype, sd});
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
  const StatsDtype sd{dtype, force_float32_reductions};
  Stats g = compute_stats(reshape(x, gshape), gaxes, axis_name, true, use_fast_variance, gmask, sd);
  // Back to x's shape: each group's statistic repeated over its channels (jnp.repeat).
  Shape rep = g.mean.shape();
  rep.back() = channels / groups;
  Shape bshape = g.mean.shape();
  bshape.pop_back();
  bshape.back() = channels;
  Stats s{reshape(broadcast_to(g.mean, rep), bshape), reshape(broadcast_to(g.var, rep), bshape)};
  return normalize(*this, "GroupNorm", x, s, {nd - 1},
                   {epsilon, use_bias, use_scale, &bias_init, &scale_init, param_dtype, sd});
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
  const StatsDtype sd{dtype, force_float32_reductions};
  Stats s = compute_stats(x, reduction, axis_name, true, use_fast_variance, mask, sd);
  return normalize(*this, "InstanceNorm", x, s, features,
                   {epsilon, use_bias, use_scale, &bias_init, &scale_init, param_dtype, sd});
}

}  // namespace linum::nn
