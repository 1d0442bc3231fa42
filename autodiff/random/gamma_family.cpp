// jax.random.gamma and the distributions JAX builds on it (loggamma, beta, dirichlet, chisquare,
// t, f, generalized_normal, ball). The gamma draw is one kernel call (random_gamma_p, its key
// split once per element); its derivative in `a` is JAX's implicit reparameterization,
// random_gamma_grad, and the rest are JAX's formulas in linum ops.
#include <linum/autodiff/random/random.hpp>

#include <cmath>
#include <limits>
#include <memory>
#include <string>

#include <linum/autodiff/ops.hpp>
#include <linum/autodiff/random/keyed_primitive.hpp>
#include <linum/autodiff/random/sampler_args.hpp>
#include <linum/autodiff/random/sampling.hpp>

namespace linum::random {

namespace {

using detail::concat;
using detail::check_float;
using detail::check_key;
using detail::check_shape;
using detail::key_at;
using detail::KeyData;
using detail::Keys;
using detail::param_as;
using detail::sampler_shape;
using detail::SamplerBase;
using detail::shape_of;

// lax.random_gamma_grad over two arrays of one shape and float dtype. Its own derivative is not
// defined (JAX's is a while_loop), so differentiating it twice is a NotImplementedError.
class RandomGammaGrad final : public Primitive {
 public:
  const char* name() const override { return "random_gamma_grad"; }
  Avals abstract_eval(std::span<const ShapeDtype> in) const override { return {in[1]}; }
  Arrays eval(std::span<const Array> in) const override {
    return {linum::detail::dispatch_float(in[0].dtype(), name(), [&]<class T>() {
      Array out = empty(in[0].shape(), in[0].dtype());
      const T* a = linum::detail::in_ptr<T>(in[0]);
      const T* x = linum::detail::in_ptr<T>(in[1]);
      T* o = linum::detail::out_ptr<T>(out);
      for (std::int64_t i = 0, n = shape_size(in[0].shape()); i < n; ++i)
        o[i] = detail::random_gamma_grad(a[i], x[i]);
      return out;
    })};
  }
  Batched vmap(std::span<const Array> in, std::span<const int> bdims) const override {
    const std::int64_t size = in[bdims[0] >= 0 ? 0 : 1].shape(bdims[0] >= 0 ? bdims[0] : bdims[1]);
    const Array a = linum::detail::move_bdim(in[0], bdims[0], 0, size);
    const Array x = linum::detail::move_bdim(in[1], bdims[1], 0, size);
    return {{bind1(singleton<RandomGammaGrad>(), a, x)}, {0}};
  }
};

// random_gamma_p: operand a (broadcast to `shape`), one gamma (or log-gamma) draw per element.
struct Gamma : SamplerBase {
  static constexpr const char* name = "random_gamma";
  bool log_space;
  int operand_rank;
  Array eval(const detail::GridMap& m, Keys keys, const Array& a, const Shape& core) const {
    return linum::detail::dispatch_float(dtype, name, [&]<class T>() {
      const T* src = linum::detail::in_ptr<T>(a);
      Array out = empty(out_shape(m.grid), dtype);
      T* o = linum::detail::out_ptr<T>(out);
      const std::int64_t per = shape_size(core), n = shape_size(m.grid);
      for (std::int64_t i = 0; i < n; ++i)
        detail::gamma(keys[m.key_index[i]], std::span<const T>(src + m.operand_index[i] * per, per),
                      std::span<T>(o + i * per, per), log_space, partitionable);
      return out;
    });
  }
  // JAX's _gamma_grad: d sample / d a = random_gamma_grad(a, sample); in log space divided by
  // the sample, which is exp(log sample) with 0 read as the smallest normal float.
  Array operand_partial(const Array& a, const Array& out) const {
    const Array ab = broadcast_to(a, out.shape());
    if (!log_space) return random_gamma_grad(ab, out);
    Array x = exp(out);
    const double tiny = out.dtype() == float32 ? std::numeric_limits<float>::min()
                                               : std::numeric_limits<double>::min();
    x = where(equal(x, 0), full(x.shape(), tiny, x.dtype()), x);
    return random_gamma_grad(ab, x) / x;
  }
};

// Coefficients of JAX's chi-square quantile series (_CHI2_QUANTILE_COEF): row k multiplies
// x^k nu^(-k/2) and is a quadratic in 1 / nu; the leading constant is exactly 1, as JAX's.
constexpr double kChi2QuantileCoef[7][3] = {{1.0, -0.2237368, -0.01513904},
                                            {0.4713941, 0.02607083, -0.008986007},
                                            {0.0001348028, 0.01128186, 0.02277679},
                                            {-0.008553069, -0.01153761, -0.01323293},
                                            {0.00312558, 0.005169654, -0.006950356},
                                            {-0.0008426812, 0.00253001, 0.001060438},
                                            {0.00009780499, -0.001450117, 0.001565326}};

// JAX's _gamma_approx (method='approximate'): log Gamma(a + 4) from the chi-square quantile
// series in one normal draw, then Stuart's boosting sum_k log(U_k) / (a + k) for k < 4, with
// log(U_k) = -exponential. Loop-free; its gradient is that of the formula, as JAX's.
Array gamma_approx(const Array& key, const Array& a, const Shape& s, DType dtype, bool log_space) {
  constexpr int kBoosts = 4;
  const Array keys = random::split(key);
  // _loggamma_chisquare at the boosted shape a + 4.
  const Array ab = a + static_cast<double>(kBoosts);
  const Array nu = 2.0 * ab;
  const Array x = normal(key_at(keys, 0), s, dtype);
  const Array u = 1.0 / nu;
  const Array t = x * rsqrt(nu);
  auto row = [&](const double(&c)[3]) { return c[0] + u * (c[1] + u * c[2]); };
  Array poly = row(kChi2QuantileCoef[6]);
  for (int k = 5; k >= 0; --k) poly = poly * t + row(kChi2QuantileCoef[k]);
  const double tiny =
      dtype == float32 ? std::numeric_limits<float>::min() : std::numeric_limits<double>::min();
  poly = maximum(poly, tiny);
  const Array log_base = log(ab) + 3.0 * log(poly);
  const Array log_u = -exponential(key_at(keys, 1), concat({kBoosts}, s), dtype);
  Array total;
  for (int k = 0; k < kBoosts; ++k) {
    const Array term = key_at(log_u, k) / (a + static_cast<double>(k));
    total = k == 0 ? term : total + term;
  }
  const Array log_sample = log_base + total;
  return log_space ? log_sample : exp(log_sample);
}

Array gamma_impl(const Array& key, const Array& a, const std::optional<Shape>& shape, DType dtype,
                 std::string_view method, bool log_space, const char* fn) {
  check_key(key, fn);
  check_float(dtype, "gamma");
  linum::detail::check_valid(a, fn);
  const Shape s = sampler_shape("gamma", shape, {shape_of(a, "gamma")});
  const Array ab = broadcast_to(astype(a, dtype), s);
  if (detail::check_method(method, fn)) return gamma_approx(key, ab, s, dtype, log_space);
  Gamma g{{s, dtype}, log_space, static_cast<int>(s.size())};
  return bind1(std::make_shared<const detail::KeyOperandPrim<Gamma>>(std::move(g)), {key, ab});
}

}  // namespace

Array random_gamma_grad(const Array& a, const Array& x) {
  linum::detail::check_valid(a, "random_gamma_grad");
  linum::detail::check_valid(x, "random_gamma_grad");
  const Shape s = linum::detail::broadcast_shapes(a.shape(), x.shape(), "random_gamma_grad");
  DType d = linum::detail::result_type(a, x).dtype;
  if (!is_floating(d)) d = float32;
  return bind1(singleton<RandomGammaGrad>(),
               {broadcast_to(astype(a, d), s), broadcast_to(astype(x, d), s)});
}

Array gamma(const Array& key, const Array& a, const std::optional<Shape>& shape, DType dtype,
            std::string_view method) {
  return gamma_impl(key, a, shape, dtype, method, false, "gamma");
}

Array loggamma(const Array& key, const Array& a, const std::optional<Shape>& shape, DType dtype,
               std::string_view method) {
  return gamma_impl(key, a, shape, dtype, method, true, "loggamma");
}

Array beta(const Array& key, const Array& a, const Array& b, const std::optional<Shape>& shape,
           DType dtype, std::string_view method) {
  check_key(key, "beta");
  detail::check_method(method, "beta");
  check_float(dtype, "beta");
  const Shape s = sampler_shape("beta", shape, {shape_of(a, "beta"), shape_of(b, "beta")});
  const Array aa = broadcast_to(param_as(a, dtype, "beta"), s);
  const Array bb = broadcast_to(param_as(b, dtype, "beta"), s);
  const Array keys = random::split(key);
  const Array log_gamma_a = loggamma(key_at(keys, 0), aa, s, dtype, method);
  const Array log_gamma_b = loggamma(key_at(keys, 1), bb, s, dtype, method);
  // gamma_a / (gamma_a + gamma_b) without losing precision.
  const Array log_max = maximum(log_gamma_a, log_gamma_b);
  const Array ga = exp(log_gamma_a - log_max), gb = exp(log_gamma_b - log_max);
  return ga / (ga + gb);
}

Array dirichlet(const Array& key, const Array& alpha, const std::optional<Shape>& shape,
                DType dtype) {
  check_key(key, "dirichlet");
  check_float(dtype, "dirichlet");
  linum::detail::check_valid(alpha, "dirichlet");
  if (alpha.ndim() < 1) throw ValueError("dirichlet requires alpha.ndim >= 1, got alpha.ndim == 0");
  const Shape batch =
      sampler_shape("dirichlet", shape, {Shape(alpha.shape().begin(), alpha.shape().end() - 1)});
  // Log space: small alpha would otherwise underflow.
  const Array lg = loggamma(key, astype(alpha, dtype), concat(batch, {alpha.shape(-1)}), dtype);
  return softmax(lg, -1);
}

Array chisquare(const Array& key, const Array& df, const std::optional<Shape>& shape, DType dtype,
                std::string_view method) {
  check_key(key, "chisquare");
  detail::check_method(method, "chisquare");
  check_float(dtype, "chisquare");
  const Shape s = sampler_shape("chisquare", shape, {shape_of(df, "chisquare")});
  const Array half_df = param_as(df, dtype, "chisquare") / 2.0;
  return exp(loggamma(key, half_df, s, dtype, method)) * 2.0;
}

Array t(const Array& key, const Array& df, const std::optional<Shape>& shape, DType dtype) {
  check_key(key, "t");
  check_float(dtype, "t");
  const Shape s = sampler_shape("t", shape, {shape_of(df, "t")});
  const Array half_df = param_as(df, dtype, "t") / 2.0;
  const Array keys = random::split(key);
  const Array n = normal(key_at(keys, 0), s, dtype);
  const Array g = gamma(key_at(keys, 1), half_df, s, dtype);
  return n * sqrt(half_df / g);
}

Array f(const Array& key, const Array& dfnum, const Array& dfden, const std::optional<Shape>& shape,
        DType dtype) {
  check_key(key, "f");
  check_float(dtype, "f");
  const Shape s = sampler_shape("f", shape, {shape_of(dfnum, "f"), shape_of(dfden, "f")});
  const Array num_df = param_as(dfnum, dtype, "f"), den_df = param_as(dfden, dtype, "f");
  const Array keys = random::split(key);
  const Array chi2_dfn = chisquare(key_at(keys, 1), num_df, s, dtype);
  const Array chi2_dfd = chisquare(key_at(keys, 0), den_df, s, dtype);
  return (chi2_dfn / num_df) / (chi2_dfd / den_df);
}

Array generalized_normal(const Array& key, double p, const Shape& shape, DType dtype) {
  check_key(key, "generalized_normal");
  check_shape(shape, "generalized_normal");
  check_float(dtype, "generalized_normal");
  // p is a traced float32 scalar in JAX, so 1 / p rounds in float32 (in float64 for float64).
  const Array inv_p = astype(1.0 / astype(Array(p), dtype), dtype);
  const Array keys = random::split(key);
  const Array g = gamma(key_at(keys, 0), inv_p, shape, dtype);
  const Array r = rademacher(key_at(keys, 1), shape, dtype);
  return r * power(g, inv_p);
}

Array ball(const Array& key, std::int64_t d, double p, const Shape& shape, DType dtype) {
  check_key(key, "ball");
  check_shape(shape, "ball");
  check_float(dtype, "ball");
  const Array keys = random::split(key);
  const Array g = generalized_normal(key_at(keys, 0), p, concat(shape, {d}), dtype);
  const Array e = exponential(key_at(keys, 1), shape, dtype);
  const Array pp = astype(Array(p), dtype);
  const Array inv_p = astype(1.0 / pp, dtype);
  const Array norm = power(sum(power(abs(g), pp), -1) + e, inv_p);
  return g / expand_dims(norm, -1);
}

}  // namespace linum::random
