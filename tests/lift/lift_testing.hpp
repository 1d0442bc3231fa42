// Helpers shared by the lift/ test files: flax.core.nn.dense as a scope function, an exception
// message catcher, and array comparisons used to check lifted transforms against hand computations.
#pragma once

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include <linum/lift/lift.hpp>
#include <linum/linum.hpp>
#include <linum/nn/initializers.hpp>

namespace linum::lift::testing {

// The message of the E that f throws; a test failure when it throws nothing.
template <class E, class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  FAIL("expected an exception");
  return "";
}

// flax.core.nn.dense (= nn.Dense's params) as a scope function.
inline Array dense(Scope& scope, const Array& x, std::int64_t features) {
  namespace init = linum::nn::initializers;
  Array kernel = scope.param("kernel", init::lecun_normal(), Shape{x.shape(-1), features});
  Array bias = scope.param("bias", init::zeros_init(), Shape{features});
  return matmul(x, kernel) + bias;
}

// Same shape and max |a - b| <= tol (relative to 1 + tol), compared in float64.
inline bool close(const Array& a, const Array& b, double tol = 1e-6) {
  if (a.shape() != b.shape()) return false;
  return max(abs(astype(a, float64) - astype(b, float64))).item<double>() <= tol * (1 + tol);
}

// x[i] along axis 0.
inline Array at(const Array& x, std::int64_t i) { return take(x, Array(static_cast<int>(i)), 0); }

inline Array f32(std::vector<float> v, Shape s) { return array(v, s); }

// The key make_rng draws for base key `base` and suffix `s` (Flax's _fold_in_static).
inline Array key_for(const Array& base, RngSuffix s) { return fold_in_static(base, s); }

}  // namespace linum::lift::testing
