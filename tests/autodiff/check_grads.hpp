// check_grads: the one numerical gradient checker of the test suites (like jax.test_util).
// In float64, for random directions v (inputs) and u (output):
//   jvp(f)(x; v)  ==  central difference (f(x + eps v) - f(x - eps v)) / 2 eps
//   <vjp(f)(x; u), v>  ==  <u, jvp(f)(x; v)>
#pragma once

#include <doctest/doctest.h>

#include <functional>
#include <random>
#include <sstream>

#include <linum/linum.hpp>

namespace linum::testing {

inline Array random_like(const Array& x, std::mt19937& rng) {
  std::normal_distribution<double> nd;
  std::vector<double> v(static_cast<std::size_t>(x.size()));
  for (auto& e : v) e = nd(rng);
  return astype(array(v, x.shape()), x.dtype());
}

inline double inner(const Array& a, const Array& b) {
  return sum(multiply(astype(a, float64), astype(b, float64))).item<double>();
}

// f maps float64 arrays to one array; `args` must be float64 for tight tolerances.
inline void check_grads(const std::function<Array(const Arrays&)>& f, const Arrays& args,
                        double eps = 1e-6, double tol = 1e-6, int directions = 2,
                        unsigned seed = 0) {
  std::mt19937 rng(seed);
  for (int d = 0; d < directions; ++d) {
    Arrays v;
    for (const auto& a : args) v.push_back(random_like(a, rng));
    auto [y, ty] = jvp(f, std::tuple{args}, std::tuple{v});
    Arrays plus, minus;
    for (std::size_t i = 0; i < args.size(); ++i) {
      plus.push_back(add(args[i], multiply(v[i], eps)));
      minus.push_back(subtract(args[i], multiply(v[i], eps)));
    }
    Array fd = divide(subtract(f(plus), f(minus)), 2 * eps);
    const double scale = 1.0 + sqrt(sum(square(astype(fd, float64)))).item<double>();
    const double jerr = sqrt(sum(square(astype(subtract(ty, fd), float64)))).item<double>();
    INFO("jvp vs finite differences: |jvp - fd| = " << jerr << ", scale " << scale);
    CHECK(jerr <= tol * scale);

    Array u = random_like(y, rng);
    auto [y2, pull] = vjp(f, args);
    Arrays ct = std::get<0>(pull(u));
    double lhs = 0;
    for (std::size_t i = 0; i < args.size(); ++i) lhs += testing::inner(ct[i], v[i]);
    const double rhs = testing::inner(u, ty);
    INFO("<vjp(u), v> = " << lhs << " vs <u, jvp(v)> = " << rhs);
    CHECK(std::abs(lhs - rhs) <= tol * (1.0 + std::abs(rhs)) * 10);
  }
}

// The same for a function of one array.
inline void check_grads(const std::function<Array(const Array&)>& f, const Array& x,
                        double eps = 1e-6, double tol = 1e-6) {
  check_grads([&](const Arrays& a) { return f(a[0]); }, Arrays{x}, eps, tol);
}

}  // namespace linum::testing
