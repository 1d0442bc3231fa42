// Helpers for the random suites: comparing samples with values as numpy printed them, ulp
// distances, and JAX's test tolerances.
#pragma once

#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace linum::random::testing {

// Distance in units in the last place between two finite floats of the same sign region.
inline std::int64_t ulp_distance(float a, float b) {
  auto key = [](float x) {
    const auto u = static_cast<std::int64_t>(std::bit_cast<std::uint32_t>(x));
    return u & 0x80000000 ? 0x80000000 - u : u;  // monotone integer order across zero
  };
  return std::llabs(key(a) - key(b));
}

// How numpy prints a float32 array element by default (floatmode 'maxprec', precision 8): the
// shortest round-trip digits when they need at most 8 fractional digits, else the value
// rounded to 8 fractional digits with trailing zeros trimmed.
inline std::string numpy_str(float x) {
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::fixed);
  std::string s(buf, res.ptr);
  const auto dot = s.find('.');
  if (dot == std::string::npos || s.size() - dot - 1 <= 8) return s;
  std::snprintf(buf, sizeof buf, "%.8f", static_cast<double>(x));
  s = buf;
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s;
}

// True when `got` prints exactly as the value JAX printed (compared numerically, so "-0.5" and
// "-0.50" or exponent forms agree).
inline bool prints_as(float got, const char* printed) {
  return std::strtod(numpy_str(got).c_str(), nullptr) == std::strtod(printed, nullptr);
}

// JAX's default float32 test tolerance: |a - e| <= 1e-6 + 1e-6 |e|.
inline bool jax_close(double got, double expected, double tol = 1e-6) {
  return std::abs(got - expected) <= tol + tol * std::abs(expected);
}

}  // namespace linum::random::testing
