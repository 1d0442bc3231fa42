// Out-of-bounds indices follow JAX: take/take_along_axis by mode, dynamic_slice clamps.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include <linum/autodiff/ops.hpp>
#include <linum/autodiff/transforms.hpp>

#include "support.hpp"

namespace test_indexing {

using namespace linum;

namespace {
std::vector<double> values(const Array& a) {
  const Array f = astype(a, float64);
  const double* p = f.data<double>();
  return {p, p + f.size()};
}
const Array kX = array<double>({10, 20, 30, 40});
const Array kIdx = array<int>({3, 0, -1, 7, -9});
}  // namespace

TEST_CASE("take defaults to mode fill: negatives count from the end, the rest read NaN") {
  const auto v = values(take(kX, kIdx));
  CHECK(v[0] == 40);
  CHECK(v[1] == 10);
  CHECK(v[2] == 40);
  CHECK(std::isnan(v[3]));
  CHECK(std::isnan(v[4]));
  CHECK(values(take(kX, kIdx, 0, GatherMode::fill, -1.0)) ==
        std::vector<double>{40, 10, 40, -1, -1});
  // Integer arrays fill with the dtype's minimum, as jnp.take.
  const Array xi = array<int>({1, 2});
  CHECK(take(xi, array<int>({5}), 0).item<int>() == std::numeric_limits<int>::min());
}

TEST_CASE("take modes clip and promise_in_bounds clamp the raw index") {
  CHECK(values(take(kX, kIdx, 0, GatherMode::clip)) == std::vector<double>{40, 10, 10, 40, 10});
  CHECK(values(take(kX, kIdx, 0, GatherMode::promise_in_bounds)) ==
        std::vector<double>{40, 10, 10, 40, 10});
}

TEST_CASE("take_along_axis fills out-of-range entries; the gradient skips them") {
  const Array m = array<double>({{1, 2, 3}, {4, 5, 6}});
  const Array idx = array<int>({{2, 5}, {-1, 0}});
  const auto v = values(take_along_axis(m, idx, 1));
  CHECK(v[0] == 3);
  CHECK(std::isnan(v[1]));
  CHECK(v[2] == 6);
  CHECK(v[3] == 4);
  CHECK(values(take_along_axis(m, idx, 1, GatherMode::clip)) == std::vector<double>{3, 3, 4, 4});
  const Array g = grad(
      [&](const Array& a) { return sum(take_along_axis(a, idx, 1, GatherMode::fill, 0.0)); })(m);
  CHECK(values(g) == std::vector<double>{0, 0, 1, 1, 0, 1});
}

TEST_CASE("take in fill mode under vmap matches the per-example results") {
  const Array xs = array<double>({{1, 2, 3}, {4, 5, 6}});
  const Array got = vmap([](const Array& r) { return take(r, array<int>({-1, 3})); })(xs);
  const auto v = values(got);
  CHECK(v[0] == 3);
  CHECK(std::isnan(v[1]));
  CHECK(v[2] == 6);
  CHECK(std::isnan(v[3]));
}

TEST_CASE("dynamic_slice clamps start indices so that the slice fits") {
  CHECK(values(dynamic_slice(kX, {Array(7)}, {2})) == std::vector<double>{30, 40});
  // Negative starts first count from the end (lax.dynamic_slice's allow_negative_indices).
  CHECK(values(dynamic_slice(kX, {Array(-3)}, {2})) == std::vector<double>{20, 30});
  CHECK(values(dynamic_slice(kX, {Array(-9)}, {2})) == std::vector<double>{10, 20});
}

}  // namespace test_indexing
