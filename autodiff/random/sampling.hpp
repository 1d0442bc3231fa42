// jax.random's samplers over raw buffers: one key in, a flat row-major draw out, in either of
// JAX's modes. These are the kernels behind linum::random's primitives (and are usable alone).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include <linum/autodiff/random/threefry.hpp>

namespace linum::random::detail {

// Each float kernel computes in T (float or double) and draws in the format S (draw_format.hpp):
// S = T, or BFloat16 / Float16 with T = float. For a 2-byte S the uniform bits, bounds and
// constants are S's, as jax.random's, and the caller rounds the float results to S once: JAX
// jits these samplers, and XLA:CPU keeps a 2-byte chain in float32 inside one computation.

// uniform(key, shape, dtype, minval, maxval): mantissa bits under exponent 0 give [1, 2), minus
// one gives [0, 1), then max(minval, fma(u, maxval - minval, minval)). T is float or double
// (double draws 64-bit words).
template <class T, class S = T>
void uniform(KeyData key, std::span<T> out, T minval, T maxval, bool partitionable);

// normal: sqrt(2) * erf_inv(uniform(nextafter(-1, 0), 1)).
template <class T, class S = T>
void normal(KeyData key, std::span<T> out, bool partitionable);

// truncated_normal on (lower, upper): sqrt(2) * erf_inv(uniform(erf(lower/sqrt2),
// erf(upper/sqrt2))), clipped to [nextafter(lower, inf), nextafter(upper, -inf)].
template <class T, class S = T>
void truncated_normal(KeyData key, std::span<T> out, T lower, T upper, bool partitionable);

// bernoulli(p): uniform < p ('low'); 'high' compares u2 * 2^-nmant < p - u1 with two uniforms.
template <class T, class S = T>
void bernoulli(KeyData key, std::span<std::uint8_t> out, T p, bool high, bool partitionable);

// gumbel: -log(-log(uniform(tiny, 1))) ('low'); 'high' refines small uniforms with a second
// draw and uses log1p, as JAX's mode="high".
template <class T, class S = T>
void gumbel(KeyData key, std::span<T> out, bool high, bool partitionable);

// randint(minval, maxval) into int32 or uint32: JAX's two-word modulus method over a split
// key, with JAX's clipping of bounds to the dtype (span 1 when maxval <= minval).
template <class I>
void randint(KeyData key, std::span<I> out, std::int64_t minval, std::int64_t maxval,
             bool partitionable);

// The permutation of arange(n) that jax.random.permutation(key, n) returns: ceil(3 ln n /
// ln(2^32 - 1)) rounds of stable sorts by fresh 32-bit keys.
void permutation(KeyData key, std::span<std::int32_t> out, bool partitionable);

// Independent shuffles of every lane along `axis` of an array of `shape` (permutation with
// independent=True): out[i] is the source index along `axis` of the element placed at i.
void shuffle_indices(KeyData key, const std::vector<std::int64_t>& shape, int axis,
                     std::span<std::int32_t> out, bool partitionable);

// choice(key, n, shape, replace, p) with weights p: replace draws r = cumsum(p)[-1] * (1 - u)
// and returns searchsorted(cumsum(p), r); without replacement it takes the top-k of
// gumbel + log(p) (k = out.size()).
template <class T, class S = T>
void weighted_choice(KeyData key, std::span<const T> p, std::span<std::int32_t> out, bool replace,
                     bool partitionable);

// categorical(replace=false): logits + gumbel(key, logits.shape), then the indices of the k
// largest along `axis` (lax.top_k order: descending, ties to the lower index). `out` has the
// logits' shape without `axis`, followed by k.
template <class T, class S = T>
void gumbel_top_k(KeyData key, std::span<const T> logits, const std::vector<std::int64_t>& shape,
                  int axis, std::int64_t k, bool high, std::span<std::int32_t> out,
                  bool partitionable);

// ---- samplers_continuous.cpp: jax.random's parameter-free transforms of one uniform draw ----

// exponential: -log1p(-u).
template <class T, class S = T>
void exponential(KeyData key, std::span<T> out, bool partitionable);
// laplace: sign(u) * log1p(-|u|), u uniform on [-1 + epsneg, 1).
template <class T, class S = T>
void laplace(KeyData key, std::span<T> out, bool partitionable);
// logistic: log(u) - log1p(-u), u uniform on [tiny, 1).
template <class T, class S = T>
void logistic(KeyData key, std::span<T> out, bool partitionable);
// cauchy: tan(pi * (u - 1/2)), u uniform on [eps, 1).
template <class T, class S = T>
void cauchy(KeyData key, std::span<T> out, bool partitionable);
// maxwell: the Euclidean norm of each row of a (n, 3) normal draw.
template <class T, class S = T>
void maxwell(KeyData key, std::span<T> out, bool partitionable);
// rayleigh's unit-scale part: sqrt(log(u) * -2).
template <class T, class S = T>
void rayleigh(KeyData key, std::span<T> out, bool partitionable);
// rademacher: 2 * bernoulli(0.5) - 1, the bernoulli compared in float32.
void rademacher(KeyData key, std::span<std::int32_t> out, bool partitionable);

// ---- samplers_gamma.cpp ----------------------------------------------------------------------

// random_gamma_p: the key is split into alpha.size() keys, one Marsaglia-Tsang draw each (JAX's
// _gamma_one, with its key splits per rejection round); log_space gives log-gamma samples.
template <class T>
void gamma(KeyData key, std::span<const T> alpha, std::span<T> out, bool log_space,
           bool partitionable);
// lax.random_gamma_grad(a, x): d sample / d a of a Gamma(a, 1) sample x at fixed CDF value
// (implicit reparameterization), by JAX's series / continued fraction of the incomplete gamma.
template <class T>
T random_gamma_grad(T a, T x);

// ---- samplers_discrete.cpp: the loops run over the whole draw, as JAX's while_loops do -----

// poisson(lam) into int32: Knuth where lam < 10 (or NaN), Hormann's transformed rejection
// elsewhere, both on the same key; lam is float32 as JAX converts it.
void poisson(KeyData key, std::span<const float> lam, std::span<std::int32_t> out,
             bool partitionable);
// binomial(count, prob): inversion where count * min(p, 1 - p) <= 10, BTRS elsewhere.
template <class T>
void binomial(KeyData key, std::span<const T> count, std::span<const T> prob, std::span<T> out,
              bool partitionable);
// geometric(p) into int32: floor(log(u) / log1p(-p)) + 1, u == 0 read as 1.
template <class T>
void geometric(KeyData key, std::span<const T> p, std::span<std::int32_t> out, bool partitionable);

}  // namespace linum::random::detail
