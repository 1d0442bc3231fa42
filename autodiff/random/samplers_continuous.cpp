// jax.random's parameter-free continuous samplers (and rademacher) over raw buffers: one uniform
// or normal draw transformed elementwise with XLA:CPU's log/log1p, as jax/_src/random/core.py
// writes them.
#include <linum/autodiff/random/fp_contract_off.hpp>

#include <linum/autodiff/random/sampling.hpp>

#include <cmath>
#include <limits>
#include <numbers>
#include <vector>

#include <linum/autodiff/random/xla_math.hpp>

namespace linum::random::detail {

template <class T>
void exponential(KeyData key, std::span<T> out, bool partitionable) {
  uniform(key, out, T(0), T(1), partitionable);
  // 1 - u moves log's domain to (0, 1], as JAX's comment says.
  for (T& v : out) v = -xla_log1p(-v);
}

template <class T>
void laplace(KeyData key, std::span<T> out, bool partitionable) {
  // minval -1 + epsneg is formed in Python's double, then converted to T.
  const double epsneg = std::numeric_limits<T>::epsilon() / 2;
  uniform(key, out, static_cast<T>(-1.0 + epsneg), T(1), partitionable);
  for (T& v : out) {
    const T sign = v > 0 ? T(1) : v < 0 ? T(-1) : T(0);
    v = sign * xla_log1p(-std::abs(v));
  }
}

template <class T>
void logistic(KeyData key, std::span<T> out, bool partitionable) {
  uniform(key, out, std::numeric_limits<T>::min(), T(1), partitionable);
  for (T& v : out) v = xla_log(v) - xla_log1p(-v);
}

template <class T>
void cauchy(KeyData key, std::span<T> out, bool partitionable) {
  uniform(key, out, std::numeric_limits<T>::epsilon(), T(1), partitionable);
  const T pi = std::numbers::pi_v<T>;
  for (T& v : out) v = std::tan(pi * (v - T(0.5)));
}

template <class T>
void maxwell(KeyData key, std::span<T> out, bool partitionable) {
  std::vector<T> z(3 * out.size());
  normal(key, std::span(z), partitionable);
  // jnp.linalg.norm(axis=-1): sqrt of the row's sum of squares, summed left to right.
  for (std::size_t i = 0; i < out.size(); ++i) {
    const T* r = z.data() + 3 * i;
    out[i] = std::sqrt((r[0] * r[0] + r[1] * r[1]) + r[2] * r[2]);
  }
}

template <class T>
void rayleigh(KeyData key, std::span<T> out, bool partitionable) {
  uniform(key, out, T(0), T(1), partitionable);
  for (T& v : out) v = std::sqrt(xla_log(v) * T(-2));
}

void rademacher(KeyData key, std::span<std::int32_t> out, bool partitionable) {
  std::vector<float> u(out.size());
  uniform(key, std::span(u), 0.0f, 1.0f, partitionable);
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = u[i] < 0.5f ? 1 : -1;
}

#define LINUM_RANDOM_INSTANTIATE(T)                          \
  template void exponential<T>(KeyData, std::span<T>, bool); \
  template void laplace<T>(KeyData, std::span<T>, bool);     \
  template void logistic<T>(KeyData, std::span<T>, bool);    \
  template void cauchy<T>(KeyData, std::span<T>, bool);      \
  template void maxwell<T>(KeyData, std::span<T>, bool);     \
  template void rayleigh<T>(KeyData, std::span<T>, bool);
LINUM_RANDOM_INSTANTIATE(float)
LINUM_RANDOM_INSTANTIATE(double)
#undef LINUM_RANDOM_INSTANTIATE

}  // namespace linum::random::detail
