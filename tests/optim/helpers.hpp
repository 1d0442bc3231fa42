// Shared helpers of the optim tests: Array <-> std::vector<double>, closeness checks, and a
// substring check for exception messages.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include <linum/linum.hpp>

#include "support/testing.hpp"

namespace optim_test {

using linum::Array;
using Vec = std::vector<double>;

using linum::testing::values;

inline Array f64(const Vec& v) { return linum::array(v); }
inline Array f32(const Vec& v) { return linum::astype(linum::array(v), linum::float32); }

// |a - b| <= atol + rtol * |b| elementwise, with a message naming the first mismatch.
inline void check_close(const Vec& a, const Vec& b, double rtol = 1e-12, double atol = 1e-12) {
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    INFO("element " << i << ": got " << a[i] << ", expected " << b[i]);
    CHECK(std::abs(a[i] - b[i]) <= atol + rtol * std::abs(b[i]));
  }
}
inline void check_close(const Array& a, const Vec& b, double rtol = 1e-12, double atol = 1e-12) {
  check_close(values(a), b, rtol, atol);
}

// The float32 nearest to x (to state float32 known answers exactly).
inline double f32v(double x) { return static_cast<double>(static_cast<float>(x)); }

using linum::testing::message_of;

}  // namespace optim_test
