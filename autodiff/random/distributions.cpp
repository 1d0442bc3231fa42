// jax.random's distributions beyond the core samplers: the parameter-free transforms and the
// discrete samplers are kernels (bit for bit as JAX's arithmetic); parameters enter as JAX's
// formulas in linum ops, so they are differentiable, batch under vmap and trace under jit.
#include <linum/autodiff/random/random.hpp>

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <linum/autodiff/ops.hpp>
#include <linum/autodiff/random/keyed_primitive.hpp>
#include <linum/autodiff/random/sampler_args.hpp>
#include <linum/autodiff/random/sampling.hpp>

namespace linum::random {

namespace {

using detail::check_float;
using detail::check_key;
using detail::check_shape;
using detail::concat;
using detail::GridMap;
using detail::key_at;
using detail::KeyData;
using detail::KeyOperandPrim;
using detail::Keys;
using detail::param_as;
using detail::sample;
using detail::sampler_shape;
using detail::SamplerBase;
using detail::shape_of;

// A float sampler whose kernel is detail::KERNEL(key, out, partitionable).
#define LINUM_UNIT_SAMPLER(Struct, KERNEL)                                            \
  struct Struct : SamplerBase {                                                       \
    static constexpr const char* name = "random_" #KERNEL;                            \
    Array eval(const Shape& lead, Keys keys) const {                                  \
      return detail::per_key_float(*this, name, lead, keys,                           \
                                   [&]<class T, class S>(KeyData k, std::span<T> s) { \
                                     detail::KERNEL<T, S>(k, s, partitionable);       \
                                   });                                                \
    }                                                                                 \
  };
LINUM_UNIT_SAMPLER(Exponential, exponential)
LINUM_UNIT_SAMPLER(Laplace, laplace)
LINUM_UNIT_SAMPLER(Logistic, logistic)
LINUM_UNIT_SAMPLER(Cauchy, cauchy)
LINUM_UNIT_SAMPLER(Maxwell, maxwell)
LINUM_UNIT_SAMPLER(RayleighUnit, rayleigh)
#undef LINUM_UNIT_SAMPLER

struct Rademacher : SamplerBase {
  static constexpr const char* name = "random_rademacher";
  Array eval(const Shape& lead, Keys keys) const {
    return detail::per_key<std::int32_t>(
        lead, shape, int32, keys,
        [&](KeyData k, std::span<std::int32_t> s) { detail::rademacher(k, s, partitionable); });
  }
};

// One draw(key, operand core, out block) per grid position of a KeyOperandPrim.
template <class TIn, class TOut, class Draw>
Array per_position(const SamplerBase& s, const GridMap& m, Keys keys, const Array& operand,
                   std::int64_t core_size, DType out_dtype, Draw draw) {
  const TIn* src = linum::detail::in_ptr<TIn>(operand);
  Array out = empty(s.out_shape(m.grid), out_dtype);
  TOut* o = linum::detail::out_ptr<TOut>(out);
  const std::int64_t per = shape_size(s.shape), n = shape_size(m.grid);
  for (std::int64_t i = 0; i < n; ++i)
    draw(keys[m.key_index[i]],
         std::span<const TIn>(src + m.operand_index[i] * core_size, core_size),
         std::span<TOut>(o + i * per, per));
  return out;
}

// geometric: operand p (float, broadcast to `shape`), int32 samples.
struct Geometric : SamplerBase {
  static constexpr const char* name = "random_geometric";
  int operand_rank;
  DType out_dtype() const { return int32; }
  Array eval(const GridMap& m, Keys keys, const Array& p, const Shape& core) const {
    return linum::detail::dispatch_float(dtype, name, [&]<class T>() {
      return per_position<T, std::int32_t>(
          *this, m, keys, p, shape_size(core), int32,
          [&](KeyData k, std::span<const T> pp, std::span<std::int32_t> o) {
            detail::geometric(k, pp, o, partitionable);
          });
    });
  }
};

// poisson: operand lam (float32, broadcast to `shape`), int32 samples.
struct Poisson : SamplerBase {
  static constexpr const char* name = "random_poisson";
  int operand_rank;
  DType out_dtype() const { return int32; }
  Array eval(const GridMap& m, Keys keys, const Array& lam, const Shape& core) const {
    return per_position<float, std::int32_t>(
        *this, m, keys, lam, shape_size(core), int32,
        [&](KeyData k, std::span<const float> l, std::span<std::int32_t> o) {
          detail::poisson(k, l, o, partitionable);
        });
  }
};

// binomial: operand (shape..., 2) holding (count, prob) per position, float samples.
struct Binomial : SamplerBase {
  static constexpr const char* name = "random_binomial";
  int operand_rank;
  Array eval(const GridMap& m, Keys keys, const Array& np, const Shape& core) const {
    return linum::detail::dispatch_float(dtype, name, [&]<class T>() {
      return per_position<T, T>(*this, m, keys, np, shape_size(core), dtype,
                                [&](KeyData k, std::span<const T> cp, std::span<T> o) {
                                  std::vector<T> count(o.size()), prob(o.size());
                                  for (std::size_t i = 0; i < o.size(); ++i) {
                                    count[i] = cp[2 * i];
                                    prob[i] = cp[2 * i + 1];
                                  }
                                  detail::binomial<T>(k, count, prob, o, partitionable);
                                });
    });
  }
};

template <class Sampler>
Array bind_operand(Sampler s, const Array& key, const Array& operand) {
  return bind1(std::make_shared<const KeyOperandPrim<Sampler>>(std::move(s)), {key, operand});
}

// The dtype jnp's promote_dtypes_inexact gives a parameter: its own float dtype, float32 for
// integers, bools and weak scalars (a Python float is float32 in JAX's default mode).
DType inexact_dtype(const Array& p) {
  return is_floating(p.dtype()) && !p.weak_type() ? p.dtype() : float32;
}

}  // namespace

// ---- parameter-free ----------------------------------------------------------------------------

Array exponential(const Array& key, const Shape& shape, DType dtype) {
  check_float(dtype, "exponential");
  return sample(Exponential{{shape, dtype}}, key, "exponential");
}

Array laplace(const Array& key, const Shape& shape, DType dtype) {
  check_float(dtype, "laplace");
  return sample(Laplace{{shape, dtype}}, key, "laplace");
}

Array logistic(const Array& key, const Shape& shape, DType dtype) {
  check_float(dtype, "logistic");
  return sample(Logistic{{shape, dtype}}, key, "logistic");
}

Array cauchy(const Array& key, const Shape& shape, DType dtype) {
  check_float(dtype, "cauchy");
  return sample(Cauchy{{shape, dtype}}, key, "cauchy");
}

Array maxwell(const Array& key, const Shape& shape, DType dtype) {
  check_float(dtype, "maxwell");
  return sample(Maxwell{{shape, dtype}}, key, "maxwell");
}

Array rademacher(const Array& key, const Shape& shape, DType dtype) {
  return astype(sample(Rademacher{{shape, int32}}, key, "rademacher"), dtype);
}

Array clone(const Array& key) {
  check_key(key, "clone");
  return key;
}

// ---- continuous, with parameters ---------------------------------------------------------------

Array double_sided_maxwell(const Array& key, const Array& loc, const Array& scale,
                           const Shape& shape, DType dtype) {
  check_key(key, "double_sided_maxwell");
  if (!is_floating(dtype))
    throw ValueError("dtype argument to `double_sided_maxwell` must be a float dtype, got " +
                     std::string(dtype_name(dtype)));
  const Shape params = sampler_shape(
      "double_sided_maxwell", std::nullopt,
      {shape_of(loc, "double_sided_maxwell"), shape_of(scale, "double_sided_maxwell")});
  // JAX's rule: `shape` defaults to the parameters' shape, and the parameters' shape follows.
  const Shape full = concat(shape.empty() ? params : shape, params);
  const Array keys = random::split(key);
  const Array m = maxwell(key_at(keys, 0), full, dtype);
  const Array sign = rademacher(key_at(keys, 1), full, dtype);
  return sign * m * scale + loc;
}

Array weibull_min(const Array& key, const Array& scale, const Array& concentration,
                  const Shape& shape, DType dtype) {
  check_key(key, "weibull_min");
  if (!is_floating(dtype))
    throw ValueError("dtype argument to `weibull_min` must be a float dtype, got " +
                     std::string(dtype_name(dtype)));
  linum::detail::check_valid(scale, "weibull_min");
  linum::detail::check_valid(concentration, "weibull_min");
  // -log1p(-u) of uniform(key, shape) is exactly exponential(key, shape).
  return power(exponential(key, shape, dtype), 1.0 / concentration) * scale;
}

Array pareto(const Array& key, const Array& b, const std::optional<Shape>& shape, DType dtype) {
  check_key(key, "pareto");
  check_float(dtype, "pareto");
  const Shape s = sampler_shape("pareto", shape, {shape_of(b, "pareto")});
  const Array bb = param_as(b, dtype, "pareto");
  return exp(exponential(key, s, dtype) / bb);
}

Array rayleigh(const Array& key, const Array& scale, const std::optional<Shape>& shape,
               DType dtype) {
  check_key(key, "rayleigh");
  check_float(dtype, "rayleigh");
  const Shape s = sampler_shape("rayleigh", shape, {shape_of(scale, "rayleigh")});
  const Array sc = broadcast_to(param_as(scale, dtype, "rayleigh"), s);
  return sc * sample(RayleighUnit{{s, dtype}}, key, "rayleigh");
}

Array wald(const Array& key, const Array& mean, const std::optional<Shape>& shape, DType dtype) {
  check_key(key, "wald");
  check_float(dtype, "wald");
  const Shape s = sampler_shape("wald", shape, {shape_of(mean, "wald")});
  const Array mu = broadcast_to(param_as(mean, dtype, "wald"), s);
  const Array keys = random::split(key);
  const Array v = normal(key_at(keys, 0), s, dtype);
  const Array z = uniform(key_at(keys, 1), s, dtype);
  const Array y = v * v, y_sq = y * y, mean_sq = mu * mu;
  const Array sqrt_term = sqrt(4.0 * mu * y + mean_sq * y_sq);
  const Array x = mu + mean_sq * y / 2.0 - mu / 2.0 * sqrt_term;
  return where(less_equal(z, mu / (mu + x)), x, mean_sq / x);
}

Array triangular(const Array& key, const Array& left, const Array& mode, const Array& right,
                 const std::optional<Shape>& shape, DType dtype) {
  check_key(key, "triangular");
  check_float(dtype, "triangular");
  const Shape s = sampler_shape(
      "triangular", shape,
      {shape_of(left, "triangular"), shape_of(mode, "triangular"), shape_of(right, "triangular")});
  const Array l = broadcast_to(param_as(left, dtype, "triangular"), s);
  const Array r = broadcast_to(param_as(right, dtype, "triangular"), s);
  const Array m = broadcast_to(param_as(mode, dtype, "triangular"), s);
  const Array fc = (m - l) / (r - l);
  const Array u = uniform(key, s, dtype);
  const Array out1 = l + sqrt(u * (r - l) * (m - l));
  const Array out2 = r - sqrt((1.0 - u) * (r - l) * (r - m));
  return where(less(u, fc), out1, out2);
}

Array lognormal(const Array& key, const Array& sigma, const std::optional<Shape>& shape,
                DType dtype) {
  check_key(key, "lognormal");
  if (!is_floating(dtype))
    throw ValueError("dtype argument to `lognormal` must be a float or complex dtype, got " +
                     std::string(dtype_name(dtype)));
  const Shape s = sampler_shape("lognormal", shape, {shape_of(sigma, "lognormal")});
  return exp(normal(key, s, dtype) * param_as(sigma, dtype, "lognormal"));
}

// ---- discrete ----------------------------------------------------------------------------------

Array geometric(const Array& key, const Array& p, const std::optional<Shape>& shape, DType dtype) {
  check_key(key, "geometric");
  if (!is_integer(dtype))
    throw ValueError("dtype argument to `geometric` must be an int dtype, got " +
                     std::string(dtype_name(dtype)));
  const Shape s = sampler_shape("geometric", shape, {shape_of(p, "geometric")});
  const DType pd = inexact_dtype(p);
  const Array pp = broadcast_to(astype(p, pd), s);
  const auto rank = static_cast<int>(s.size());
  return astype(bind_operand(Geometric{{s, pd}, rank}, key, pp), dtype);
}

namespace {

// Peizer-Pratt's T(y) = (1 - y^2 + 2 y log y) / (1 - y)^2, by its series near y = 1.
Array peizer_pratt_t(const Array& y) {
  const Array d = y - 1.0;
  const Array small = less(abs(d), 0.25);
  Array series = zeros_like(d);
  for (int k = 9; k >= 1; --k) {
    const double coef = 2.0 * (k % 2 ? -1.0 : 1.0) / ((k + 1.0) * (k + 2.0));
    series = d * (coef + series);
  }
  const Array y_safe = where(small, 2.0, y), d_safe = where(small, 1.0, d);
  const Array direct = (1.0 - square(y_safe) + 2.0 * y_safe * log(y_safe)) / square(d_safe);
  return where(small, series, direct);
}

// Peizer-Pratt z(x) with Pr[X <= x] ~ ndtr(z(x)), continuity correction 0.02.
Array peizer_pratt_z(const Array& x, const Array& lam) {
  const Array t = peizer_pratt_t((x + 0.5) / lam);
  return (x - lam + 2.0 / 3.0 + 0.02 / (x + 1.0)) * sqrt((1.0 + t) / lam);
}

// JAX's _poisson_approx: one normal draw z mapped through an approximate inverse CDF, the
// truncated CDF (20 terms) below lam = 7, the Peizer-Pratt approximation above.
Array poisson_approx(const Array& key, const Array& lam, const Shape& s, DType dtype) {
  const DType cd = inexact_dtype(lam) == float64 ? float64 : float32;
  Array l = astype(lam, cd);
  if (linum::detail::broadcast_shapes(l.shape(), s, "poisson") != s)
    throw ValueError("lam shape must be broadcastable to shape argument; got lam.shape " +
                     shape_str(l.shape()) + ", shape " + shape_str(s));
  Shape ls = l.shape();
  ls.insert(ls.begin(), s.size() - ls.size(), 1);
  l = reshape(l, ls);
  const Array z = normal(key, s, cd);
  // Below the split: count the truncated CDF's values under u = ndtr(z).
  const Array u = 0.5 * (1.0 + erf(z / std::sqrt(2.0)));
  Array pmf = exp(-l), cdf = pmf, small = astype(less(cdf, u), cd);
  for (int k = 1; k < 19; ++k) {
    pmf = pmf * (l / static_cast<double>(k));
    cdf = cdf + pmf;
    small = small + astype(less(cdf, u), cd);
  }
  // Above: the smallest integer c with z(c) >= z among the neighbours of the Cornish-Fisher
  // root, shifted by 0.6 to centre the guess's error.
  const Array sl = sqrt(l);
  const Array root = l + sl * z - 2.0 / 3.0 + square(z) / 6.0 + z * (1.0 - square(z)) / (72.0 * sl);
  const Array c = ceil(root + 0.6);
  auto root_ge = [&](const Array& ci) {
    const Array zi = where(less(ci, 0), -std::numeric_limits<double>::infinity(),
                           peizer_pratt_z(maximum(ci, 0.0), l));
    return astype(greater_equal(zi, z), cd);
  };
  const Array large = maximum(c + 1.0 - root_ge(c) - root_ge(c - 1.0), 0.0);
  return astype(where(less(l, 7.0), small, large), dtype);
}

}  // namespace

Array poisson(const Array& key, const Array& lam, const std::optional<Shape>& shape, DType dtype,
              std::string_view method) {
  check_key(key, "poisson");
  const bool approximate = detail::check_method(method, "poisson");
  // JAX bounds the exact sampler's loops by iinfo(dtype).max, so a float dtype fails there.
  if (!approximate && !is_integer(dtype))
    throw ValueError("poisson: Invalid integer data type '" + std::string(dtype_name(dtype)) +
                     "' (the dtype must be an integer dtype)");
  linum::detail::check_valid(lam, "poisson");
  const Shape s = shape ? *shape : lam.shape();
  check_shape(s, "poisson");
  if (approximate) return stop_gradient(poisson_approx(key, lam, s, dtype));
  // jnp.broadcast_to(lam, shape): lam must broadcast to exactly `shape`.
  const Array l = broadcast_to(astype(lam, float32), s);
  const auto rank = static_cast<int>(s.size());
  return astype(bind_operand(Poisson{{s, float32}, rank}, key, l), dtype);
}

Array binomial(const Array& key, const Array& n, const Array& p, const std::optional<Shape>& shape,
               DType dtype) {
  check_key(key, "binomial");
  if (!is_floating(dtype))
    throw ValueError("dtype argument to `binomial` must be a float dtype, got " +
                     std::string(dtype_name(dtype)));
  const Shape s =
      sampler_shape("binomial", shape, {shape_of(n, "binomial"), shape_of(p, "binomial")});
  // JAX computes in p's inexact dtype and converts count to it; the samples take `dtype` last.
  const DType pd = inexact_dtype(p);
  const Array np = stack({broadcast_to(astype(n, pd), s), broadcast_to(astype(p, pd), s)}, -1);
  const auto rank = static_cast<int>(s.size()) + 1;
  return astype(bind_operand(Binomial{{s, pd}, rank}, key, np), dtype);
}

Array multinomial(const Array& key, const Array& n, const Array& p,
                  const std::optional<Shape>& shape, DType dtype) {
  check_key(key, "multinomial");
  linum::detail::check_valid(n, "multinomial");
  linum::detail::check_valid(p, "multinomial");
  if (p.ndim() == 0) throw ValueError("multinomial: p must have at least one dimension");
  // promote_dtypes_inexact(n, p): float64 if either is a float64 array, else float32.
  const DType pd = inexact_dtype(n) == float64 || inexact_dtype(p) == float64 ? float64 : float32;
  const Shape s = shape ? *shape : p.shape();
  check_shape(s, "multinomial");
  if (s.empty()) throw ValueError("multinomial: shape must end with the number of outcomes");
  const Shape batch(s.begin(), s.end() - 1);
  const Array pb = moveaxis(broadcast_to(astype(p, pd), s), -1, 0);
  Array remainder = broadcast_to(astype(n, pd), batch);
  const std::int64_t k = s.back();
  // remaining_probs[i] = sum of p[i:], as JAX's reverse cumsum.
  std::vector<Array> remaining(static_cast<std::size_t>(k));
  for (std::int64_t i = k - 1; i >= 0; --i) {
    const Array pi = key_at(pb, i);
    remaining[i] = i == k - 1 ? pi : remaining[i + 1] + pi;
  }
  const Array keys = random::split(key, k);
  std::vector<Array> counts;
  for (std::int64_t i = 0; i < k; ++i) {
    const Array ratio = key_at(pb, i) / where(equal(remaining[i], 0), 1.0, remaining[i]);
    const Array count =
        binomial(key_at(keys, i), remainder, clip(ratio, 0.0, 1.0), std::nullopt, pd);
    remainder = remainder - count;
    counts.push_back(count);
  }
  return astype(stack(counts, -1), dtype);
}

}  // namespace linum::random
