// Small helpers shared by the nn layer test suites.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include <linum/linum.hpp>

namespace linum::testing {

inline bool allclose(const Array& a, const Array& b, float tol = 1e-5f) {
  return a.shape() == b.shape() && all(less_equal(abs(a - b), tol + tol * abs(b))).item<bool>();
}
inline Shape shape_of(const Tree& t) { return t.leaf().shape(); }
inline std::vector<std::string> sorted_keys(const Tree& t) {
  auto k = t.as_dict().keys();
  std::sort(k.begin(), k.end());
  return k;
}

}  // namespace linum::testing
