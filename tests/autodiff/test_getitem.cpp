// x[i], as JAX's x[i]: the leading axis at a static int (negative from the end, clamped out of
// range) or at an integer Array; values against rows written out by hand, gradients against
// their closed form, and the same results under vmap and jit.
#include <cstdint>
#include <vector>

#include "op_testing.hpp"  // LINUM_CHECK_ERROR

namespace test_getitem {

using linum::Array;
using linum::Shape;

namespace {

bool same(const Array& a, const Array& b) {
  return a.shape() == b.shape() && a.dtype() == b.dtype() &&
         linum::all(linum::equal(a, b)).item<bool>();
}
// x = [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]] (float32); row(i) is written out by hand.
Array grid() { return linum::arange(12).astype(linum::float32).reshape({3, 4}); }
Array row(float a) { return linum::array({a, a + 1, a + 2, a + 3}); }

}  // namespace

TEST_CASE("x[i] with a static int: the leading axis; negative from the end; out of range clamps") {
  const Array x = grid();
  CHECK(same(x[0], row(0)));
  CHECK(same(x[2], row(8)));
  CHECK(same(x[-1], row(8)));
  CHECK(same(x[-3], row(0)));
  // JAX's default (jax_check_static_indices off) clamps: x[5] is x[2], x[-7] is x[0].
  CHECK(same(x[5], row(8)));
  CHECK(same(x[-7], row(0)));
  CHECK(same(x[1][2], Array(6.0f)));
  CHECK(x[1][2].shape() == Shape{});
  const std::size_t i = 1;  // any integer type
  CHECK(same(x[i], row(4)));
  CHECK(same(linum::zeros({2, 3, 5}, linum::int32)[1], linum::zeros({3, 5}, linum::int32)));
}

TEST_CASE("x[i] errors: a 0-d array, an empty axis, a float index (JAX's IndexError, TypeError)") {
  LINUM_CHECK_ERROR(Array(1.0f)[0], linum::IndexError,
                    "too many indices: array is 0-dimensional, but 1 were indexed");
  LINUM_CHECK_ERROR(linum::zeros({0, 3})[0], linum::IndexError,
                    "index is out of bounds for axis 0 with size 0");
  LINUM_CHECK_ERROR(grid()[Array(1.0f)], linum::TypeError, "Array indices must be integers");
  LINUM_CHECK_ERROR(Array()[0], linum::ValueError, "Array::operator[]");
}

TEST_CASE("x[i] with an integer Array: a scalar picks a row, an index array gathers rows") {
  const Array x = grid();
  CHECK(same(x[Array(1)], row(4)));
  CHECK(same(x[Array(-1)], row(8)));
  CHECK(same(x[Array(7)], row(8)));  // gathers clamp, as JAX's x[i] for traced i
  CHECK(same(x[linum::array(std::vector<std::uint32_t>{2u})], row(8).reshape({1, 4})));
  const Array picked = x[linum::array({2, 0, -2})];
  CHECK(same(picked, linum::stack({row(8), row(0), row(4)})));
}

TEST_CASE("grad of x[i]: the cotangent lands in row i (static and Array index)") {
  const Array x = grid();
  // d/dx sum(x[1]^2) = 2 x in row 1, zero elsewhere.
  const Array expected = linum::stack({linum::zeros({4}), row(4) * 2.0f, linum::zeros({4})});
  auto f = [](const Array& a) { return linum::sum(a[1] * a[1]); };
  CHECK(same(linum::grad(f)(x), expected));
  auto g = [](const Array& a) { return linum::sum(a[Array(-2)] * a[Array(-2)]); };
  CHECK(same(linum::grad(g)(x), expected));
  // check_grads in float64, both index kinds.
  linum::testing::check_grads(
      [](const linum::Arrays& a) { return linum::sin(a[0][2]) * a[0][Array(0)]; },
      {grid().astype(linum::float64)});
}

TEST_CASE("x[i] under vmap: per-example rows, and a batched index") {
  const Array x = grid();
  // vmap over x's rows: a[1] of each row is column 1.
  const Array col = linum::vmap([](const Array& a) { return a[1]; })(x);
  CHECK(same(col, linum::array({1.0f, 5.0f, 9.0f})));
  // vmap over the index: x[i] for i in (2, 0, 1) is the rows in that order.
  const Array rows = linum::vmap([&](const Array& i) { return x[i]; })(linum::array({2, 0, 1}));
  CHECK(same(rows, linum::stack({row(8), row(0), row(4)})));
}

TEST_CASE("x[i] under jit: a static index is part of the program, an Array index is traced") {
  const Array x = grid();
  auto last = linum::jit([](const Array& a) { return a[-1]; });
  CHECK(same(last(x), row(8)));
  auto pick = linum::jit([](const Array& a, const Array& i) { return a[i]; });
  CHECK(same(pick(x, Array(0)), row(0)));
  CHECK(same(pick(x, Array(2)), row(8)));  // a replay with another index
  CHECK(pick.trace_count() == 1);
}

}  // namespace test_getitem
