// jax.nn.initializers over linum::random. Scale factors are computed in the target dtype exactly
// as JAX computes them (variance rounded to dtype first, then sqrt / divide in dtype), so the
// products with the samples round identically.
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include <linum/nn/initializers.hpp>

#include <algorithm>
#include <cmath>
#include <memory>
#include <sstream>
#include <vector>

#include <linum/autodiff/ops.hpp>
#include <linum/autodiff/ops/kernel_util.hpp>
#include <linum/autodiff/random/draw_format.hpp>
#include <linum/autodiff/random/matrix_samplers.hpp>
#include <linum/autodiff/random/random.hpp>

namespace linum::nn::initializers {

namespace {

// The scale factors of variance_scaling, rounded as JAX rounds them, as a dtype scalar: each jnp
// op rounds to dtype (a 2-byte dtype computes in float32 and rounds per op, as JAX's op-by-op
// initializers do).
Array factor(DType dtype, double variance64, const std::string& distribution) {
  return random::detail::dispatch_draw(dtype, "variance_scaling", [&]<class T, class S>() {
    auto rnd = [](auto v) { return random::detail::in_format<T, S>(static_cast<T>(v)); };
    const T variance = rnd(variance64);  // jnp.array(scale / denominator, dtype)
    T f;
    if (distribution == "truncated_normal")
      f = rnd(rnd(std::sqrt(variance)) / rnd(0.87962566103423978));
    else if (distribution == "normal")
      f = rnd(std::sqrt(variance));
    else
      f = rnd(std::sqrt(rnd(T(3) * variance)));
    return linum::detail::make_scalar(static_cast<double>(f), dtype);
  });
}

int norm_axis(int axis, std::size_t rank, const char* fn) {
  return linum::detail::normalize_axis(axis, static_cast<int>(rank), fn);
}

double axes_size(const Shape& shape, const FanAxes& spec) {
  double size = 1;
  for (int a : spec.axes)
    size *= static_cast<double>(shape[norm_axis(a, shape.size(), "compute_fans")]);
  return size;
}

Array scaled(const Array& x, double s, DType dtype) {
  return multiply(x, linum::detail::make_scalar(s, dtype));
}

}  // namespace

Array Initializer::operator()(const Array& key, const Shape& shape, DType dtype) const {
  if (!fn_) throw ValueError("Initializer: called an empty initializer");
  return fn_(key, shape, dtype);
}

Array zeros(const Array&, const Shape& shape, DType dtype) { return linum::zeros(shape, dtype); }
Array ones(const Array&, const Shape& shape, DType dtype) { return linum::ones(shape, dtype); }
Initializer zeros_init() { return {&zeros, float32, "zeros"}; }
Initializer ones_init() { return {&ones, float32, "ones"}; }

Initializer constant(double value, DType dtype) {
  return {[value](const Array&, const Shape& shape, DType d) { return full(shape, value, d); },
          dtype, "init"};
}

Initializer uniform(double scale, DType dtype) {
  return {[scale](const Array& key, const Shape& shape, DType d) {
            return scaled(random::uniform(key, shape, d), scale, d);
          },
          dtype, "init"};
}

Initializer normal(double stddev, DType dtype) {
  return {[stddev](const Array& key, const Shape& shape, DType d) {
            return scaled(random::normal(key, shape, d), stddev, d);
          },
          dtype, "init"};
}

Initializer truncated_normal(double stddev, DType dtype, double lower, double upper) {
  return {[=](const Array& key, const Shape& shape, DType d) {
            return scaled(random::truncated_normal(key, lower, upper, shape, d), stddev, d);
          },
          dtype, "init"};
}

std::pair<double, double> compute_fans(const Shape& shape, const FanAxes& in_axis,
                                       const FanAxes& out_axis, const FanAxes& batch_axis) {
  if (in_axis.single && in_axis.axes[0] == -2 && shape.size() <= 1)
    throw ValueError("Can't compute input and output sizes of a " + std::to_string(shape.size()) +
                     "-dimensional weights tensor with default in_axis. Must be at least 2D or "
                     "specify in_axis explicitly.");
  const double in_size = axes_size(shape, in_axis), out_size = axes_size(shape, out_axis);
  const double batch_size = axes_size(shape, batch_axis);
  const double receptive = static_cast<double>(shape_size(shape)) / in_size / out_size / batch_size;
  return {in_size * receptive, out_size * receptive};
}

Initializer variance_scaling(double scale, const std::string& mode, const std::string& distribution,
                             FanAxes in_axis, FanAxes out_axis, FanAxes batch_axis, DType dtype) {
  if (mode != "fan_in" && mode != "fan_out" && mode != "fan_avg" && mode != "fan_geo_avg")
    throw ValueError("invalid mode for variance scaling initializer: " + mode);
  if (distribution != "truncated_normal" && distribution != "normal" && distribution != "uniform")
    throw ValueError("invalid distribution for variance scaling initializer: " + distribution);
  return {[=](const Array& key, const Shape& shape, DType d) {
            const auto [fan_in, fan_out] = compute_fans(shape, in_axis, out_axis, batch_axis);
            const double denominator = mode == "fan_in"    ? fan_in
                                       : mode == "fan_out" ? fan_out
                                       : mode == "fan_avg" ? (fan_in + fan_out) / 2
                                                           : std::sqrt(fan_in * fan_out);
            const Array f = factor(d, scale / denominator, distribution);
            if (distribution == "truncated_normal")
              return multiply(random::truncated_normal(key, -2, 2, shape, d), f);
            if (distribution == "normal") return multiply(random::normal(key, shape, d), f);
            return multiply(random::uniform(key, shape, d, -1.0, 1.0), f);
          },
          dtype, "init"};
}

Initializer glorot_uniform(FanAxes in_axis, FanAxes out_axis, FanAxes batch_axis, DType dtype) {
  return variance_scaling(1.0, "fan_avg", "uniform", in_axis, out_axis, batch_axis, dtype);
}
Initializer glorot_normal(FanAxes in_axis, FanAxes out_axis, FanAxes batch_axis, DType dtype) {
  return variance_scaling(1.0, "fan_avg", "truncated_normal", in_axis, out_axis, batch_axis, dtype);
}
Initializer lecun_uniform(FanAxes in_axis, FanAxes out_axis, FanAxes batch_axis, DType dtype) {
  return variance_scaling(1.0, "fan_in", "uniform", in_axis, out_axis, batch_axis, dtype);
}
Initializer lecun_normal(FanAxes in_axis, FanAxes out_axis, FanAxes batch_axis, DType dtype) {
  return variance_scaling(1.0, "fan_in", "truncated_normal", in_axis, out_axis, batch_axis, dtype);
}
Initializer he_uniform(FanAxes in_axis, FanAxes out_axis, FanAxes batch_axis, DType dtype) {
  return variance_scaling(2.0, "fan_in", "uniform", in_axis, out_axis, batch_axis, dtype);
}
Initializer he_normal(FanAxes in_axis, FanAxes out_axis, FanAxes batch_axis, DType dtype) {
  return variance_scaling(2.0, "fan_in", "truncated_normal", in_axis, out_axis, batch_axis, dtype);
}

Initializer orthogonal(double scale, int column_axis, DType dtype) {
  return {[=](const Array& key, const Shape& shape, DType d) {
            if (shape.size() < 2)
              throw ValueError("orthogonal initializer requires at least a 2D shape");
            const int col = norm_axis(column_axis, shape.size(), "orthogonal");
            const std::int64_t n_cols = shape[col];
            const std::int64_t n_rows = n_cols == 0 ? 0 : shape_size(shape) / n_cols;
            // jax.nn.initializers.orthogonal draws exactly jax.random.orthogonal's matrix.
            const Array q = random::orthogonal(key, n_rows, {}, d, n_cols);
            Shape rest = shape;
            rest.erase(rest.begin() + col);
            rest.push_back(n_cols);
            return scaled(moveaxis(reshape(q, rest), -1, col), scale, d);
          },
          dtype, "init"};
}

Initializer delta_orthogonal(double scale, int column_axis, DType dtype) {
  return {[=](const Array& key, const Shape& shape, DType d) {
            const std::size_t rank = shape.size();
            if (rank < 3 || rank > 5)
              throw ValueError("Delta orthogonal initializer requires a 3D, 4D or 5D shape.");
            if (shape[rank - 1] < shape[rank - 2])
              throw ValueError("`fan_in` must be less or equal than `fan_out`. ");
            const Array ortho =
                orthogonal(scale, column_axis, d)(key, Shape{shape[rank - 2], shape[rank - 1]});
            Shape patch(rank, 1);
            patch[rank - 2] = shape[rank - 2];
            patch[rank - 1] = shape[rank - 1];
            std::vector<std::int64_t> start(rank, 0);
            for (std::size_t i = 0; i + 2 < rank; ++i) start[i] = (shape[i] - 1) / 2;
            return dynamic_update_slice(linum::zeros(shape, d), reshape(ortho, patch), start);
          },
          dtype, "init"};
}

}  // namespace linum::nn::initializers

namespace linum::nn {
std::string attr_repr(const initializers::Initializer& init) { return init.name(); }
}  // namespace linum::nn
