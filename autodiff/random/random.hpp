// linum::random: jax.random over linum::Array. Keys are uint32[2] arrays (JAX's raw PRNGKey
// layout), so they are ordinary pytree leaves; every sampler matches JAX bit for bit in the
// mode chosen by set_threefry_partitionable / ThreefryPartitionableScope (threefry.hpp), and a
// batch of keys under vmap gives a batch of samples from one vectorized kernel call.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>

#include <linum/autodiff/array.hpp>
#include <linum/autodiff/random/threefry.hpp>

namespace linum::random {

// ---- keys ------------------------------------------------------------------------------------

// How a seed becomes a key: JAX's default (jax_enable_x64 off) keeps its low 32 bits, [0, lo];
// with x64 on, a 64-bit seed is split into [hi, lo].
enum class SeedBits { x32, x64 };

// jax.random.PRNGKey(seed): a uint32 array of shape (2,).
Array PRNGKey(std::int64_t seed, SeedBits bits = SeedBits::x32);
// jax.random.key(seed): linum keys are always raw uint32[2] data, so this is PRNGKey.
Array key(std::int64_t seed, SeedBits bits = SeedBits::x32);
// jax.random.key_data / wrap_key_data: identities on raw keys (the latter checks the layout).
Array key_data(const Array& keys);
Array wrap_key_data(const Array& data);

// split(key, num): keys of shape (num, 2), or (*shape, 2) for a shape; keys[i] is the i-th key.
Array split(const Array& key, std::int64_t num = 2);
Array split(const Array& key, const Shape& shape);
// split<N>(key): the N keys of split(key, N) one by one, for auto [k1, k2] = split<2>(key).
template <std::size_t N>
std::array<Array, N> split(const Array& key) {
  static_assert(N > 0, "random::split<N>: N must be positive");
  const Array keys = random::split(key, static_cast<std::int64_t>(N));
  return [&]<std::size_t... I>(std::index_sequence<I...>) {
    return std::array<Array, N>{keys[static_cast<std::int64_t>(I)]...};
  }
  (std::make_index_sequence<N>{});
}
// fold_in(key, data): data is a scalar integer. An Array of another integer dtype is converted
// to uint32 (wrapping, as astype); a C++ integer (JAX: a Python int) outside [0, 2^32) is an
// OverflowError, as jnp.asarray(data, dtype='uint32') is with NumPy >= 2.
Array fold_in(const Array& key, const Array& data);
Array fold_in(const Array& key, std::int64_t data);

// ---- samplers --------------------------------------------------------------------------------
// Each takes one key of shape (2,) (use vmap for batches, as in JAX). Float samplers accept
// float32 and float64; uniform, normal, truncated_normal, bernoulli, gumbel, exponential,
// laplace, logistic, cauchy, maxwell and rayleigh also bfloat16 and float16 (JAX's 2-byte draw,
// the chain computed in float32 and rounded once).

// Uniform bits; linum arrays have 32-bit unsigned integers only, so dtype must be uint32
// (detail::random_bits in threefry.hpp has the 8/16/64-bit streams).
Array bits(const Array& key, const Shape& shape = {}, DType dtype = uint32);
Array uniform(const Array& key, const Shape& shape = {}, DType dtype = float32, double minval = 0.0,
              double maxval = 1.0);
Array normal(const Array& key, const Shape& shape = {}, DType dtype = float32);
// Samples of the standard normal truncated to the open interval (lower, upper).
Array truncated_normal(const Array& key, double lower, double upper, const Shape& shape = {},
                       DType dtype = float32);
// bool samples with P(true) = p, computed in `dtype` (JAX: p's dtype; a Python float is
// float32). mode "high" uses two uniforms for accuracy at tiny p.
Array bernoulli(const Array& key, double p = 0.5, const Shape& shape = {},
                std::string_view mode = "low", DType dtype = float32);
// Integers in [minval, maxval) (int32), with JAX's clipping of bounds outside int32.
Array randint(const Array& key, const Shape& shape, std::int64_t minval, std::int64_t maxval,
              DType dtype = int32);
// Standard Gumbel samples; mode "low" (JAX's default) or "high".
Array gumbel(const Array& key, const Shape& shape = {}, DType dtype = float32,
             std::string_view mode = "low");
// Indices drawn from softmax(logits) along `axis` (Gumbel-max); shape defaults to the logits'
// shape without `axis`. replace=false samples without replacement (Gumbel top-k).
Array categorical(const Array& key, const Array& logits, int axis = -1,
                  const std::optional<Shape>& shape = std::nullopt, bool replace = true,
                  std::string_view mode = "low");
// A random permutation of arange(n), or of x along `axis` (each lane separately when
// independent), as jax.random.permutation.
Array permutation(const Array& key, std::int64_t n);
Array permutation(const Array& key, const Array& x, int axis = 0, bool independent = false);
// Samples from arange(n) or from `a` along `axis`, with or without replacement, uniformly or
// with weights p (1-D, length a.shape[axis]).
Array choice(const Array& key, std::int64_t n, const Shape& shape = {}, bool replace = true,
             const std::optional<Array>& p = std::nullopt);
Array choice(const Array& key, const Array& a, const Shape& shape = {}, bool replace = true,
             const std::optional<Array>& p = std::nullopt, int axis = 0);

// ---- more distributions (distributions.cpp, gamma_family.cpp) ---------------------------------
// Argument order, defaults and dtype rules as jax.random's. A parameter is an Array (a C++
// scalar converts, weakly typed as a Python scalar) converted to `dtype`; a strongly typed
// float64 parameter with a float32 dtype is the ValueError of JAX's safe-cast check. With
// `shape` unset the result has the parameters' broadcast shape; with it, each parameter must
// broadcast to exactly `shape`. Differentiable in the float parameters (gamma and what is built
// on it through JAX's implicit reparameterization gradient); the integer samplers are not.

Array exponential(const Array& key, const Shape& shape = {}, DType dtype = float32);
Array laplace(const Array& key, const Shape& shape = {}, DType dtype = float32);
Array logistic(const Array& key, const Shape& shape = {}, DType dtype = float32);
Array cauchy(const Array& key, const Shape& shape = {}, DType dtype = float32);
// One-sided Maxwell: the norm of three standard normals.
Array maxwell(const Array& key, const Shape& shape = {}, DType dtype = float32);
// -1 or 1 with equal probability.
Array rademacher(const Array& key, const Shape& shape = {}, DType dtype = int32);
// sign * maxwell * scale + loc, of shape `shape` (else the parameters' shape) followed by the
// parameters' broadcast shape, as JAX's.
Array double_sided_maxwell(const Array& key, const Array& loc, const Array& scale,
                           const Shape& shape = {}, DType dtype = float32);
// Inverse CDF: (-log1p(-u))^(1 / concentration) * scale; the result broadcasts shape with the
// parameters.
Array weibull_min(const Array& key, const Array& scale, const Array& concentration,
                  const Shape& shape = {}, DType dtype = float32);
Array pareto(const Array& key, const Array& b, const std::optional<Shape>& shape = std::nullopt,
             DType dtype = float32);
Array rayleigh(const Array& key, const Array& scale,
               const std::optional<Shape>& shape = std::nullopt, DType dtype = float32);
Array wald(const Array& key, const Array& mean, const std::optional<Shape>& shape = std::nullopt,
           DType dtype = float32);
Array triangular(const Array& key, const Array& left, const Array& mode, const Array& right,
                 const std::optional<Shape>& shape = std::nullopt, DType dtype = float32);
// exp(sigma * normal).
Array lognormal(const Array& key, const Array& sigma = Array(1.0f),
                const std::optional<Shape>& shape = std::nullopt, DType dtype = float32);
// Number of Bernoulli(p) trials up to the first success (int32).
Array geometric(const Array& key, const Array& p, const std::optional<Shape>& shape = std::nullopt,
                DType dtype = int32);
// Poisson(lam) counts. method "exact": Knuth below 10, transformed rejection above (lam in
// float32); "approximate": JAX's loop-free inverse-CDF sampler (truncated CDF below 7,
// Peizer-Pratt above).
Array poisson(const Array& key, const Array& lam, const std::optional<Shape>& shape = std::nullopt,
              DType dtype = int32, std::string_view method = "exact");
// Binomial(n, p) counts as floats (inversion for n min(p, 1-p) <= 10, else BTRS); NaN for
// invalid n or p, inf for infinite n.
Array binomial(const Array& key, const Array& n, const Array& p,
               const std::optional<Shape>& shape = std::nullopt, DType dtype = float32);
// Counts of n trials over the outcomes along p's last axis (a binomial per outcome on the
// remaining trials, as JAX's scan); shape is the batch shape followed by the outcome count.
Array multinomial(const Array& key, const Array& n, const Array& p,
                  const std::optional<Shape>& shape = std::nullopt, DType dtype = float32);

// Gamma(a, 1). method "exact": JAX's Marsaglia-Tsang sampler, differentiated in `a` by JAX's
// implicit reparameterization (random_gamma_grad); "approximate": JAX's loop-free chi-square
// quantile series with Stuart's boosting, differentiated through its formula. loggamma samples
// log(Gamma(a, 1)) directly, accurate for small a; beta and chisquare pass `method` to it.
Array gamma(const Array& key, const Array& a, const std::optional<Shape>& shape = std::nullopt,
            DType dtype = float32, std::string_view method = "exact");
Array loggamma(const Array& key, const Array& a, const std::optional<Shape>& shape = std::nullopt,
               DType dtype = float32, std::string_view method = "exact");
// d sample / d a of Gamma(a, 1) samples x (lax.random_gamma_grad); a and x broadcast.
Array random_gamma_grad(const Array& a, const Array& x);
Array beta(const Array& key, const Array& a, const Array& b,
           const std::optional<Shape>& shape = std::nullopt, DType dtype = float32,
           std::string_view method = "exact");
// alpha (..., k): samples of shape shape + (k,) (default alpha.shape), from log-gamma softmax.
Array dirichlet(const Array& key, const Array& alpha,
                const std::optional<Shape>& shape = std::nullopt, DType dtype = float32);
Array chisquare(const Array& key, const Array& df, const std::optional<Shape>& shape = std::nullopt,
                DType dtype = float32, std::string_view method = "exact");
// Student's t with df degrees of freedom.
Array t(const Array& key, const Array& df, const std::optional<Shape>& shape = std::nullopt,
        DType dtype = float32);
// F distribution: (chisquare(dfnum) / dfnum) / (chisquare(dfden) / dfden).
Array f(const Array& key, const Array& dfnum, const Array& dfden,
        const std::optional<Shape>& shape = std::nullopt, DType dtype = float32);
// Density proportional to exp(-|x|^p).
Array generalized_normal(const Array& key, double p, const Shape& shape = {},
                         DType dtype = float32);
// Uniform in the unit Lp ball of dimension d: shape (*shape, d).
Array ball(const Array& key, std::int64_t d, double p = 2, const Shape& shape = {},
           DType dtype = float32);
// jax.random.clone: the key itself (linum has no key-reuse checking).
Array clone(const Array& key);

}  // namespace linum::random
