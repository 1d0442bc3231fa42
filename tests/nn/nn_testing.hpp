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
// A dict's keys in its order (a scan's output has them sorted, as jax's pytree flattening).
inline std::vector<std::string> keys(const Tree& t) { return t.as_dict().keys(); }
// x[:, t] of a (B, T, ...) array.
inline Array at_time(const Array& x, std::int64_t t) {
  return squeeze(slice(x, {{}, {t, t + 1}}), 1);
}
inline std::vector<std::string> sorted_keys(const Tree& t) {
  auto k = t.as_dict().keys();
  std::sort(k.begin(), k.end());
  return k;
}

}  // namespace linum::testing
