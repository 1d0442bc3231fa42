// jnp's tensordot, inner, outer, kron, vdot, matvec, vecmat, vecdot: values derived with numpy
// here, dtypes and broadcasting, derivatives (check_grads), vmap against a loop, jit, errors.
#include "op_testing.hpp"

namespace test_contraction {

using namespace linum;
using optest::axes;
using optest::check_array;
using optest::check_vmap;
using optest::data;
using optest::kNone;
using optest::values;
using testing::check_grads;

namespace {
bool same(const Array& a, const Array& b) {
  return a.shape() == b.shape() && a.dtype() == b.dtype() && values(a) == values(b);
}
}  // namespace

TEST_CASE("tensordot with an int and with a pair of axis sequences") {
  check_array(
      tensordot(reshape(arange(6, float64), {2, 3}), reshape(arange(12, float64), {3, 4}), 1),
      {2, 4}, float64, {20, 23, 26, 29, 56, 68, 80, 92});
  Array a = reshape(arange(24, float64), {2, 3, 4}), b = reshape(arange(12, float64), {4, 3});
  check_array(tensordot(a, b, {1, 2}, {1, 0}), {2}, float64, {440, 1232});
  check_array(tensordot(a, b, {-1}, {0}), {2, 3, 3}, float64, values(matmul(a, b)));
  // axes = 0 is the outer product; the default 2 contracts the last two dims of a.
  check_array(tensordot(array({1, 2}), array({3, 4}), 0), {2, 2}, int32, {3, 4, 6, 8});
  check_array(tensordot(a, reshape(arange(12, float64), {3, 4})), {2}, float64,
              values(tensordot(a, reshape(arange(12, float64), {3, 4}), {1, 2}, {0, 1})));
  check_array(tensordot(array({1.0f, 2.0f}), array({1, 1}), 1), {}, float32, {3});
  LINUM_CHECK_ERROR(tensordot(a, b, 4), TypeError,
                    "tensordot: number of axes (4) exceeds input ranks ((2, 3, 4) and (4, 3))");
  LINUM_CHECK_ERROR(tensordot(a, b, {1}, {0, 1}), TypeError,
                    "tensordot: axes lists must have equal length, got 1 and 2");
  LINUM_CHECK_ERROR(tensordot(a, b, {0}, {0}), ValueError,
                    "tensordot: shape mismatch along contracted axes");
  LINUM_CHECK_ERROR(tensordot(a, b, {5}, {0}), IndexError, "tensordot");
}

TEST_CASE("inner, outer, kron, vdot (numpy here)") {
  Array m = reshape(arange(6, float64), {2, 3});
  check_array(inner(m, m), {2, 2}, float64, {5, 14, 14, 50});
  check_array(inner(Array(2.0), m), {2, 3}, float64, {0, 2, 4, 6, 8, 10});
  check_array(outer(array({1, 2}), array({{1, 2}, {3, 4}})), {2, 4}, int32,
              {1, 2, 3, 4, 2, 4, 6, 8});
  check_array(kron(array({{1, 2}, {3, 4}}), array({{0, 1}, {1, 0}})), {4, 4}, int32,
              {0, 1, 0, 2, 1, 0, 2, 0, 0, 3, 0, 4, 3, 0, 4, 0});
  check_array(kron(array({1, 2}), array({{1}, {10}})), {2, 2}, int32, {1, 2, 10, 20});
  check_array(vdot(reshape(arange(4, float64), {2, 2}), arange(4, float64) + 1.0), {}, float64,
              {20});
  check_array(outer(array({1.0f}), array({2.0})), {1, 1}, float64, {2});
  LINUM_CHECK_ERROR(vdot(array({1.0, 2.0}), array({1.0})), ValueError,
                    "vdot: the operands must have the same number of elements");
}

TEST_CASE("matvec, vecmat, vecdot broadcast their batch dims (numpy here)") {
  Array mat = reshape(arange(12, float64), {2, 2, 3}), v = array({1.0, 2.0, 3.0});
  check_array(matvec(mat, v), {2, 2}, float64, {8, 26, 44, 62});
  check_array(vecmat(array({{1.0, 2.0}, {3.0, 4.0}}), mat), {2, 3}, float64,
              {6, 9, 12, 54, 61, 68});
  check_array(vecdot(reshape(arange(6, float64), {2, 3}), v), {2}, float64, {8, 26});
  Array c = reshape(arange(6, float64), {3, 2});
  check_array(vecdot(c, c, 0), {2}, float64, {20, 35});
  check_array(vecdot(array({1, 2}), array({3, 4})), {}, int32, {11});
  LINUM_CHECK_ERROR(matvec(v, v), ValueError,
                    "matvec: expected shapes (..., n, m) and (..., m), got (3,) and (3,)");
  LINUM_CHECK_ERROR(vecmat(v, mat), ValueError, "vecmat: expected shapes (..., n) and (..., n, m)");
  LINUM_CHECK_ERROR(vecdot(c, v), ValueError,
                    "vecdot: axes must match; got shapes (3, 2) and (3,) with axis=-1");
}

TEST_CASE("contractions: check_grads, vmap and jit") {
  Array a = data({2, 3, 4}, 61), b = data({4, 3}, 62), m = data({3, 3}, 63), v = data({3}, 64);
  check_grads([](const Arrays& x) { return tensordot(x[0], x[1], {1, 2}, {1, 0}); }, Arrays{a, b});
  check_grads([](const Arrays& x) { return inner(x[0], x[1]); }, Arrays{m, data({2, 3}, 65)});
  check_grads([](const Arrays& x) { return outer(x[0], x[1]); }, Arrays{v, m});
  check_grads([](const Arrays& x) { return kron(x[0], x[1]); }, Arrays{m, data({2, 2}, 66)});
  check_grads([](const Arrays& x) { return vdot(x[0], x[1]); }, Arrays{m, data({9}, 67)});
  check_grads([](const Arrays& x) { return matvec(x[0], x[1]); }, Arrays{data({2, 3, 3}, 68), v});
  check_grads([](const Arrays& x) { return vecmat(x[0], x[1]); }, Arrays{v, data({2, 3, 4}, 69)});
  check_grads([](const Arrays& x) { return vecdot(x[0], x[1], 0); }, Arrays{m, data({3, 1}, 70)});
  check_vmap([](const Array& x, const Array& y) { return tensordot(x, y, 1); }, axes({0, kNone}), a,
             b);
  check_vmap([](const Array& x, const Array& y) { return kron(x, y) + ravel(outer(x, y)); },
             axes({0, 1}), data({4, 2}, 71), data({2, 4}, 72));
  check_vmap(
      [](const Array& x, const Array& y) {
        return matvec(x, y) + vecmat(y, x) + vecdot(x, y) + inner(x, y);
      },
      axes({2, kNone}), data({3, 3, 4}, 73), v);
  check_vmap([](const Array& x, const Array& y) { return vdot(x, y); }, axes({1, 0}),
             data({3, 5}, 74), data({5, 3}, 75));
  auto f = [](const Array& x, const Array& y) {
    return kron(tensordot(x, y, 1), vecdot(y, y)) + 1.0;
  };
  auto jf = jit(f);
  CHECK(same(jf(a, b), f(a, b)));
  CHECK(same(jf(a, b), f(a, b)));
}

}  // namespace test_contraction
