// jax.random's parameter-free continuous samplers (and rademacher) over raw buffers: one uniform
// or normal draw transformed elementwise with XLA:CPU's log/log1p, as jax/_src/random/core.py
// writes them.
#include <linum/autodiff/random/fp_contract_off.hpp>

#include <linum/autodiff/random/sampling.hpp>

#include <cmath>
#include <numbers>
#include <vector>

#include <linum/autodiff/random/draw_format.hpp>
#include <linum/autodiff/random/xla_math.hpp>

namespace linum::random::detail {

template <class T, class S>
void exponential(KeyData key, std::span<T> out, bool partitionable) {
  uniform<T, S>(key, out, T(0), T(1), partitionable);
  // 1 - u moves log's domain to (0, 1], as JAX's comment says.
  for (T& v : out) v = -xla_log1p(-v);
}

template <class T, class S>
void laplace(KeyData key, std::span<T> out, bool partitionable) {
  // minval -1 + epsneg is formed in Python's double, then converted to S.
  const double epsneg = finfo_epsneg<double, S>();
  uniform<T, S>(key, out, in_format<T, S>(-1.0 + epsneg), T(1), partitionable);
  for (T& v : out) {
    const T sign = v > 0 ? T(1) : v < 0 ? T(-1) : T(0);
    v = sign * xla_log1p(-std::abs(v));
  }
}

template <class T, class S>
void logistic(KeyData key, std::span<T> out, bool partitionable) {
  uniform<T, S>(key, out, finfo_tiny<T, S>(), T(1), partitionable);
  for (T& v : out) v = xla_log(v) - xla_log1p(-v);
}

template <class T, class S>
void cauchy(KeyData key, std::span<T> out, bool partitionable) {
  uniform<T, S>(key, out, finfo_eps<T, S>(), T(1), partitionable);
  const T pi = in_format<T, S>(std::numbers::pi);
  for (T& v : out) v = std::tan(pi * (v - T(0.5)));
}

template <class T, class S>
void maxwell(KeyData key, std::span<T> out, bool partitionable) {
  std::vector<T> z(3 * out.size());
  normal<T, S>(key, std::span(z), partitionable);
  // jnp.linalg.norm(axis=-1): sqrt of the row's sum of squares, summed left to right.
  for (std::size_t i = 0; i < out.size(); ++i) {
    const T* r = z.data() + 3 * i;
    out[i] = std::sqrt((r[0] * r[0] + r[1] * r[1]) + r[2] * r[2]);
  }
}

template <class T, class S>
void rayleigh(KeyData key, std::span<T> out, bool partitionable) {
  uniform<T, S>(key, out, T(0), T(1), partitionable);
  for (T& v : out) v = std::sqrt(xla_log(v) * T(-2));
}

void rademacher(KeyData key, std::span<std::int32_t> out, bool partitionable) {
  std::vector<float> u(out.size());
  uniform(key, std::span(u), 0.0f, 1.0f, partitionable);
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = u[i] < 0.5f ? 1 : -1;
}

#define LINUM_RANDOM_INSTANTIATE(T, S)                          \
  template void exponential<T, S>(KeyData, std::span<T>, bool); \
  template void laplace<T, S>(KeyData, std::span<T>, bool);     \
  template void logistic<T, S>(KeyData, std::span<T>, bool);    \
  template void cauchy<T, S>(KeyData, std::span<T>, bool);      \
  template void maxwell<T, S>(KeyData, std::span<T>, bool);     \
  template void rayleigh<T, S>(KeyData, std::span<T>, bool);
LINUM_RANDOM_INSTANTIATE(float, float)
LINUM_RANDOM_INSTANTIATE(double, double)
LINUM_RANDOM_INSTANTIATE(float, BFloat16)
LINUM_RANDOM_INSTANTIATE(float, Float16)
#undef LINUM_RANDOM_INSTANTIATE

}  // namespace linum::random::detail
