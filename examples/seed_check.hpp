// The examples' smoke-test checks: each prints ok/FAILED and main returns 1 if any failed.
#pragma once

#include <iostream>
#include <string>

#include <linum/linum.hpp>

namespace seed_check {
inline int failures = 0;
inline void check(bool ok, const std::string& what) {
  std::cout << (ok ? "  ok: " : "  FAILED: ") << what << "\n";
  if (!ok) ++failures;
}
inline bool allclose(const linum::Array& a, const linum::Array& b, float tol = 1e-5f) {
  return a.shape() == b.shape() && all(less_equal(abs(a - b), tol + tol * abs(b))).item<bool>();
}
}  // namespace seed_check
