// Shared by the distributed suites: closeness of two arrays (same shape, |a - b| <= atol +
// rtol |b| elementwise) and the flattened leaves of a tree as doubles.
#pragma once

#include <cmath>
#include <vector>

#include "support/testing.hpp"

namespace linum::testing {

inline bool close(const Array& a, const Array& b, double rtol = 1e-5, double atol = 1e-6) {
  if (a.shape() != b.shape()) return false;
  const std::vector<double> x = values(a), y = values(b);
  for (std::size_t i = 0; i < x.size(); ++i)
    if (!(std::abs(x[i] - y[i]) <= atol + rtol * std::abs(y[i]))) return false;
  return true;
}

}  // namespace linum::testing
