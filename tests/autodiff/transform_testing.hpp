// Helpers shared by the transform suites (vmap, control flow, custom rules, composition):
// closeness checks, deterministic data, rows and stacks read straight from buffers.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include <linum/linum.hpp>

#include "support/testing.hpp"

namespace transform_testing {

using linum::Array;
using linum::Arrays;

using linum::testing::values;

inline void check_close(const Array& got, const Array& want, double tol = 1e-9) {
  REQUIRE(got.valid());
  REQUIRE(want.valid());
  INFO("got " << got << "\nwant " << want);
  REQUIRE(got.shape() == want.shape());
  auto g = values(got), w = values(want);
  for (std::size_t i = 0; i < g.size(); ++i)
    CHECK(g[i] == doctest::Approx(w[i]).epsilon(tol).scale(1.0));
}

#define CHECK_ERROR_CONTAINS(expr, text)                              \
  do {                                                                \
    const std::string msg_ = linum::testing::message_of([&] { (void)(expr); }); \
    INFO("message: " << msg_);                                        \
    CHECK(msg_.find(text) != std::string::npos);                      \
  } while (0)

// Deterministic float64 data in [-1, 1] of a shape.
inline Array data(const linum::Shape& s, int seed = 1) {
  std::vector<double> v(static_cast<std::size_t>(linum::shape_size(s)));
  for (std::size_t i = 0; i < v.size(); ++i)
    v[i] = std::sin(0.7 * static_cast<double>(i) + 1.3 * seed) * std::cos(0.31 * static_cast<double>(i) * seed);
  return linum::array(v, s);
}

// x[i] along axis 0, read from the buffer (independent of the ops under test).
inline Array row(const Array& x, std::int64_t i) {
  Array c = linum::astype(x, linum::float64);
  const std::int64_t n = c.size() / c.shape(0);
  std::vector<double> v(c.data<double>() + i * n, c.data<double>() + (i + 1) * n);
  linum::Shape s(c.shape().begin() + 1, c.shape().end());
  return linum::astype(linum::array(v, s), x.dtype());
}

// Stacks equally shaped arrays along a new axis 0, from the buffers.
inline Array stack_rows(const Arrays& xs) {
  std::vector<double> v;
  for (const auto& x : xs) {
    auto e = values(x);
    v.insert(v.end(), e.begin(), e.end());
  }
  linum::Shape s = xs.at(0).shape();
  s.insert(s.begin(), static_cast<std::int64_t>(xs.size()));
  return linum::astype(linum::array(v, s), xs[0].dtype());
}

}  // namespace transform_testing
