// Helpers of the suites of the numerical vocabulary (scatter, sort, cumulative, pad, manipulation):
// literal arrays, jit-vs-eager and the shared checks of op_testing.hpp.
#pragma once

#include <cstdint>
#include <vector>

#include "op_testing.hpp"

namespace linum::optest {

inline Array ints(const std::vector<std::int32_t>& v, Shape s = {}) {
  if (s.empty()) s = {static_cast<std::int64_t>(v.size())};
  return array(v, s);
}
inline Array f64(const std::vector<double>& v, Shape s = {}) {
  if (s.empty()) s = {static_cast<std::int64_t>(v.size())};
  return array(v, s);
}
inline Array iota(const Shape& s, DType d = float64) {
  return reshape(astype(arange(std::int64_t{0}, shape_size(s), std::int64_t{1}, float64), d), s);
}

// jit(f) replays the same kernels as f run eagerly: equal values, shapes and dtypes.
template <class F, class... A>
void check_jit(F f, const A&... args) {
  const Array eager = f(args...);
  const Array traced = jit(f)(args...);
  INFO("eager " << eager << "\njit " << traced);
  REQUIRE(shape_str(traced.shape()) == shape_str(eager.shape()));
  CHECK(traced.dtype() == eager.dtype());
  const auto a = values(traced), b = values(eager);
  for (std::size_t i = 0; i < a.size(); ++i)
    CHECK((a[i] == b[i] || (a[i] != a[i] && b[i] != b[i])));
}

}  // namespace linum::optest
