// jnp's window functions and log/geometric spacing, composed as jnp composes them (in float32,
// jnp's default float dtype, with the Python-float constants weakly typed).
#include <cmath>
#include <numbers>

#include <linum/autodiff/ops/creation_math.hpp>
#include <linum/autodiff/ops/elementwise_rules.hpp>
#include <linum/autodiff/ops/special.hpp>

namespace linum {

using namespace detail;

namespace {

void check_length(std::int64_t m, const char* op) {
  if (m < 0)
    throw ValueError(std::string(op) + ": M must be non-negative, got " + std::to_string(m));
}

// 2 pi n / (M - 1) as jnp evaluates it: (2 pi) * n, then / (M - 1), in float32.
Array phase(std::int64_t m, double k) {
  return (k * std::numbers::pi) * arange(0, m, 1, float32) / static_cast<double>(m - 1);
}

}  // namespace

Array bartlett(std::int64_t m) {
  check_length(m, "bartlett");
  if (m <= 1) return ones({m}, float32);
  Array n = arange(0, m, 1, float32);
  return 1.0 - abs(2.0 * n + 1.0 - static_cast<double>(m)) / static_cast<double>(m - 1);
}

Array blackman(std::int64_t m) {
  check_length(m, "blackman");
  if (m <= 1) return ones({m}, float32);
  return 0.42 - 0.5 * cos(phase(m, 2)) + 0.08 * cos(phase(m, 4));
}

Array hamming(std::int64_t m) {
  check_length(m, "hamming");
  if (m <= 1) return ones({m}, float32);
  return 0.54 - 0.46 * cos(phase(m, 2));
}

Array hanning(std::int64_t m) {
  check_length(m, "hanning");
  if (m <= 1) return ones({m}, float32);
  return 0.5 * (1.0 - cos(phase(m, 2)));
}

// i0(beta sqrt(1 - ((n - alpha) / alpha)²)) / i0(beta), alpha = (M - 1) / 2.
Array kaiser(std::int64_t m, const Array& beta) {
  check_length(m, "kaiser");
  check_valid(beta, "kaiser");
  if (m <= 1) return ones({m}, float32);
  const double alpha = 0.5 * static_cast<double>(m - 1);
  Array n = arange(0, m, 1, float32);
  return i0(beta * sqrt(1.0 - square((n - alpha) / alpha))) / i0(beta);
}

Array logspace(double start, double stop, std::int64_t num, bool endpoint, double base,
               DType dtype) {
  if (!is_floating(dtype))
    throw TypeError("logspace: dtype must be float32 or float64, got " +
                    std::string(dtype_name(dtype)));
  return power(Array(base), linspace(start, stop, num, endpoint, dtype));
}

// sign(start) * logspace(log10(start / sign), log10(stop / sign)), the logs taken in `dtype`.
Array geomspace(double start, double stop, std::int64_t num, bool endpoint, DType dtype) {
  if (!is_floating(dtype))
    throw TypeError("geomspace: dtype must be float32 or float64, got " +
                    std::string(dtype_name(dtype)));
  const Array s = make_scalar(start, dtype), e = make_scalar(stop, dtype), sgn = sign(s);
  const double lo = log10(s / sgn).item<double>(), hi = log10(e / sgn).item<double>();
  return sgn * logspace(lo, hi, num, endpoint, 10.0, dtype);
}

Array empty_like(const Array& x) {
  check_valid(x, "empty_like");
  return zeros_like(x);
}

}  // namespace linum
