// Array manipulation: flips, rotations, rolls, tiles, repeats, stacks, splits, triangles,
// diagonals, grids, insert and delete. Values against numpy (1.24, run here) or by hand,
// gradients with finite differences, vmap against a loop, and jit.
#include "numerics_testing.hpp"

namespace test_manipulation {

using namespace linum;
using namespace linum::optest;
using linum::testing::check_grads;

TEST_CASE("flip, fliplr, flipud, rot90 and swapaxes move entries as numpy does") {
  const Array m = f64({1, 2, 3, 4}, {2, 2});
  check_array(flip(m), {2, 2}, float64, {4, 3, 2, 1});
  check_array(fliplr(m), {2, 2}, float64, {2, 1, 4, 3});
  check_array(flipud(m), {2, 2}, float64, {3, 4, 1, 2});
  check_array(flip(iota({2, 3}), -1), {2, 3}, float64, {2, 1, 0, 5, 4, 3});
  // numpy: np.rot90([[1, 2], [3, 4]], k) for k = 1, -1, 2; np.rot90(arange(8).reshape(2, 2, 2),
  // 1, (1, 2)) = [1 3 0 2 5 7 4 6].
  check_array(rot90(m), {2, 2}, float64, {2, 4, 1, 3});
  check_array(rot90(m, -1), {2, 2}, float64, {3, 1, 4, 2});
  check_array(rot90(m, 2), {2, 2}, float64, {4, 3, 2, 1});
  check_array(rot90(iota({2, 2, 2}), 1, {1, 2}), {2, 2, 2}, float64, {1, 3, 0, 2, 5, 7, 4, 6});
  check_array(swapaxes(iota({2, 3}), 0, 1), {3, 2}, float64, {0, 3, 1, 4, 2, 5});
  check_array(rev(iota({2, 3}), {1}), {2, 3}, float64, {2, 1, 0, 5, 4, 3});
  check_array(rev(iota({2, 2}), {}), {2, 2}, float64, {0, 1, 2, 3});
  check_grads([](const Array& x) { return flip(x, {0, 2}) * iota({2, 3, 2}); }, data({2, 3, 2}, 1));
  check_vmap([](const Array& x) { return rot90(x); }, axes({2}), data({2, 3, 4}, 2));
  check_jit([](const Array& x) { return fliplr(x); }, data({2, 3}, 3));
  LINUM_CHECK_ERROR(rot90(m, 1, {0, 0}), ValueError, "axes must be different");
  LINUM_CHECK_ERROR(fliplr(f64({1})), ValueError, "at least 2 dimensions");
}

TEST_CASE("roll: static and traced shifts, one or several axes, or the flattened array") {
  check_array(roll(iota({6}), 2), {6}, float64, {4, 5, 0, 1, 2, 3});
  check_array(roll(iota({6}), -8), {6}, float64, {2, 3, 4, 5, 0, 1});
  // numpy: np.roll(arange(6).reshape(2, 3), 1) and with shifts (1, -1) on axes (0, 1).
  check_array(roll(iota({2, 3}), 1), {2, 3}, float64, {5, 0, 1, 2, 3, 4});
  check_array(roll(iota({2, 3}), {1, -1}, {0, 1}), {2, 3}, float64, {4, 5, 3, 1, 2, 0});
  check_array(roll(iota({2, 3}), ints({1, -1}), std::vector<int>{0, 1}), {2, 3}, float64,
              {4, 5, 3, 1, 2, 0});
  check_array(roll(iota({6}), Array(-8)), {6}, float64, {2, 3, 4, 5, 0, 1});
  auto traced = jit([](const Array& x, const Array& s) { return roll(x, s, std::vector<int>{1}); });
  check_array(traced(iota({2, 3}), Array(4)), {2, 3}, float64, {2, 0, 1, 5, 3, 4});
  check_vmap([](const Array& x, const Array& s) { return roll(x, s, std::vector<int>{0}); },
             axes({0, 0}), data({3, 5}, 1), ints({1, -2, 7}));
  check_grads([](const Array& x) { return roll(x, 2, 1) * iota({2, 3}); }, data({2, 3}, 2));
}

TEST_CASE("tile and repeat, with static and traced repeats and total_repeat_length") {
  check_array(tile(f64({1, 2}), {2, 2}), {2, 4}, float64, {1, 2, 1, 2, 1, 2, 1, 2});
  check_array(tile(f64({1, 2}), {3}), {6}, float64, {1, 2, 1, 2, 1, 2});
  check_array(tile(iota({2, 2}), {2}), {2, 4}, float64, {0, 1, 0, 1, 2, 3, 2, 3});
  check_array(repeat(f64({1, 2, 3}), 2), {6}, float64, {1, 1, 2, 2, 3, 3});
  check_array(repeat(iota({2, 2}), 2), {8}, float64, {0, 0, 1, 1, 2, 2, 3, 3});
  check_array(repeat(iota({2, 3}), {1, 0, 2}, 1), {2, 3}, float64, {0, 2, 2, 3, 5, 5});
  check_array(repeat(iota({2, 3}), ints({1, 0, 2}), 1), {2, 3}, float64, {0, 2, 2, 3, 5, 5});
  check_array(repeat(Array(4.0), 3), {3}, float64, {4, 4, 4});
  // JAX's rule for total_repeat_length: cut, or padded with the last entry of the input.
  check_array(repeat(f64({1, 2, 3}), ints({1, 2, 0}), 0, 5), {5}, float64, {1, 2, 2, 3, 3});
  check_array(repeat(f64({1, 2, 3}), ints({1, 2, 0}), 0, 2), {2}, float64, {1, 2});
  auto traced = jit([](const Array& x, const Array& r) { return repeat(x, r, 0, 4); });
  check_array(traced(f64({5, 6}), ints({3, 1})), {4}, float64, {5, 5, 5, 6});
  auto untotalled = jit([](const Array& x, const Array& r) { return repeat(x, r, 0); });
  LINUM_CHECK_ERROR(untotalled(f64({5, 6}), ints({3, 1})), ConcretizationTypeError,
                    "total_repeat_length");
  LINUM_CHECK_ERROR(repeat(f64({1, 2}), {1, 2, 3}, 0), ValueError, "repeats has 3 entries");
  check_grads([](const Array& x) { return repeat(x, {2, 0, 1}, 0) * 2.0; }, data({3, 2}, 3));
  check_grads([](const Array& x) { return tile(x, {2, 1, 2}); }, data({2, 3}, 4));
  check_vmap([](const Array& x) { return repeat(x, 3, 0); }, axes({1}), data({2, 3}, 5));
  check_vmap([](const Array& x, const Array& r) { return repeat(x, r, 0, 6); }, axes({0, 0}),
             data({2, 3}, 6), ints({1, 2, 3, 0, 0, 6}, {2, 3}));
  check_jit([](const Array& x) { return tile(x, {3, 1}); }, data({2, 2}, 7));
}

TEST_CASE("stacking and splitting helpers") {
  const Array a = f64({1, 2}), b = f64({3, 4});
  check_array(hstack({a, f64({3})}), {3}, float64, {1, 2, 3});
  check_array(hstack({iota({2, 1}), iota({2, 2})}), {2, 3}, float64, {0, 0, 1, 1, 2, 3});
  check_array(vstack({a, b}), {2, 2}, float64, {1, 2, 3, 4});
  check_array(dstack({a, b}), {1, 2, 2}, float64, {1, 3, 2, 4});
  check_array(column_stack({a, b}), {2, 2}, float64, {1, 3, 2, 4});
  check_array(atleast_1d(Array(1.0)), {1}, float64, {1});
  check_array(atleast_2d(a), {1, 2}, float64, {1, 2});
  check_array(atleast_3d(iota({2, 2})), {2, 2, 1}, float64, {0, 1, 2, 3});
  check_array(atleast_3d(a), {1, 2, 1}, float64, {1, 2});
  // numpy.array_split(arange(7), 3): sizes 3, 2, 2.
  Arrays parts = array_split(iota({7}), 3);
  REQUIRE(parts.size() == 3);
  check_array(parts[0], {3}, float64, {0, 1, 2});
  check_array(parts[2], {2}, float64, {5, 6});
  CHECK(array_split(iota({2}), 4).back().shape() == Shape{0});
  check_array(hsplit(iota({2, 4}), 2)[1], {2, 2}, float64, {2, 3, 6, 7});
  check_array(vsplit(iota({4, 2}), std::vector<std::int64_t>{1})[1], {3, 2}, float64,
              {2, 3, 4, 5, 6, 7});
  check_array(dsplit(iota({1, 1, 4}), 2)[0], {1, 1, 2}, float64, {0, 1});
  LINUM_CHECK_ERROR(vsplit(iota({4}), 2), ValueError, "2 or more dimensions");
  check_array(append(iota({2, 2}), f64({9})), {5}, float64, {0, 1, 2, 3, 9});
  check_array(append(iota({2, 2}), f64({8, 9}, {2, 1}), 1), {2, 3}, float64, {0, 1, 8, 2, 3, 9});
  check_grads([](const Array& x) { return vstack({x, sin(x)}); }, data({3}, 8));
}

TEST_CASE("tri, tril, triu, diagonal, diag, diagflat, trace and identity") {
  check_array(tri(3, 4, 1), {3, 4}, float32, {1, 1, 0, 0, 1, 1, 1, 0, 1, 1, 1, 1});
  check_array(tri(2, std::nullopt, -1, int32), {2, 2}, int32, {0, 0, 1, 0});
  const Array m = iota({3, 3});
  check_array(tril(m), {3, 3}, float64, {0, 0, 0, 3, 4, 0, 6, 7, 8});
  check_array(triu(m, 1), {3, 3}, float64, {0, 1, 2, 0, 0, 5, 0, 0, 0});
  check_array(tril(iota({2, 2, 3}), -1), {2, 2, 3}, float64, {0, 0, 0, 3, 0, 0, 0, 0, 0, 9, 0, 0});
  check_array(identity(2), {2, 2}, float32, {1, 0, 0, 1});
  const Array r = iota({3, 4});
  check_array(diagonal(r), {3}, float64, {0, 5, 10});
  check_array(diagonal(r, 1), {3}, float64, {1, 6, 11});
  check_array(diagonal(r, -1), {2}, float64, {4, 9});
  check_array(diagonal(r, 5), {0}, float64, {});
  // numpy: np.diagonal(arange(24).reshape(2, 3, 4), 1, 2, 0) = [[12], [16], [20]].
  check_array(diagonal(iota({2, 3, 4}), 1, 2, 0), {3, 1}, float64, {12, 16, 20});
  check_array(diagonal(iota({2, 3, 4}), 0, 1, 2), {2, 3}, float64, {0, 5, 10, 12, 17, 22});
  check_array(diag(f64({1, 2}), 1), {3, 3}, float64, {0, 1, 0, 0, 0, 2, 0, 0, 0});
  check_array(diag(r, -1), {2}, float64, {4, 9});
  check_array(diagflat(f64({1, 2, 3, 4}, {2, 2}), -1), {5, 5}, float64,
              {0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 4, 0});
  check_array(trace(m), {}, float64, {12});
  check_array(trace(m, 1), {}, float64, {6});
  check_array(trace(iota({2, 2, 2}), 0, 0, 2), {2}, float64, {5, 9});
  check_array(trace(array(std::vector<bool>{true, false, false, true}, {2, 2})), {}, int32, {2});
  LINUM_CHECK_ERROR(diag(iota({2, 2, 2})), ValueError, "1d or 2d");
  LINUM_CHECK_ERROR(tril(f64({1})), ValueError, "at least 2D");
  LINUM_CHECK_ERROR(diagonal(r, 0, 1, -1), ValueError, "cannot be the same");
  check_grads([](const Array& x) { return diagonal(x, 1, 0, 2); }, data({3, 2, 4}, 9));
  check_grads([](const Array& x) { return diagflat(x, -2) * 3.0; }, data({3}, 10));
  check_grads([](const Array& x) { return triu(x, -1); }, data({3, 3}, 11));
  check_vmap([](const Array& x) { return trace(x, -1); }, axes({2}), data({3, 3, 2}, 12));
  check_vmap([](const Array& x) { return diag(x); }, axes({0}), data({2, 3}, 13));
  check_jit([](const Array& x) { return diagonal(tril(x), -1); }, data({4, 4}, 14));
}

TEST_CASE("meshgrid and indices") {
  Arrays xy = meshgrid({f64({1, 2, 3}), f64({4, 5})});
  check_array(xy[0], {2, 3}, float64, {1, 2, 3, 1, 2, 3});
  check_array(xy[1], {2, 3}, float64, {4, 4, 4, 5, 5, 5});
  Arrays ij = meshgrid({f64({1, 2, 3}), f64({4, 5})}, MeshIndexing::ij);
  check_array(ij[0], {3, 2}, float64, {1, 1, 2, 2, 3, 3});
  Arrays sparse = meshgrid({f64({1, 2, 3}), f64({4, 5}), f64({6})}, MeshIndexing::xy, true);
  CHECK(sparse[0].shape() == Shape{1, 3, 1});
  CHECK(sparse[1].shape() == Shape{2, 1, 1});
  CHECK(sparse[2].shape() == Shape{1, 1, 1});
  check_array(indices({2, 3}), {2, 2, 3}, int32, {0, 0, 0, 1, 1, 1, 0, 1, 2, 0, 1, 2});
  LINUM_CHECK_ERROR(meshgrid({iota({2, 2})}), ValueError, "must be 1D");
  check_grads(
      [](const Arrays& a) {
        return meshgrid({a[0], a[1]})[1] * meshgrid({a[0], a[1]})[0];
      },
      Arrays{data({3}, 15), data({2}, 16)});
}

TEST_CASE("insert and delete, with static and traced indices") {
  // numpy: np.insert([1, 2, 3], 1, [9, 8]); np.insert([1, 2, 3], [0, 3], [7, 8]);
  // np.insert([[1, 2], [3, 4]], 1, 5, axis=1); ... 1, [7, 8], axis=1 (values along the axis);
  // np.insert(arange(6).reshape(2, 3), slice(0, 3, 2), [9, 9], axis=1).
  check_array(insert(ints({1, 2, 3}), 1, ints({9, 8})), {5}, int32, {1, 9, 8, 2, 3});
  check_array(insert(ints({1, 2, 3}), ints({0, 3}), ints({7, 8})), {5}, int32, {7, 1, 2, 3, 8});
  check_array(insert(ints({1, 2, 3, 4}, {2, 2}), 1, Array(5), 1), {2, 3}, int32,
              {1, 5, 2, 3, 5, 4});
  check_array(insert(ints({1, 2, 3, 4}, {2, 2}), 1, ints({7, 8}), 1), {2, 3}, int32,
              {1, 7, 2, 3, 8, 4});
  check_array(insert(iota({2, 3}, int32), Slice{0, 3, 2}, ints({9, 9}), 1), {2, 5}, int32,
              {9, 0, 1, 9, 2, 9, 3, 4, 9, 5});
  check_array(insert(iota({3}), -1, Array(7.5)), {4}, float64, {0, 1, 7.5, 2});
  auto traced_insert = jit([](const Array& x, const Array& i) { return insert(x, i, Array(0.0)); });
  check_array(traced_insert(f64({1, 2, 3}), Array(2)), {4}, float64, {1, 2, 0, 3});
  // numpy: np.delete([1, 2, 3, 4], [0, 0, 2]) = [2, 4]; np.delete(arange(12).reshape(3, 4),
  // slice(None, None, 2), axis=1) = [[1, 3], [5, 7], [9, 11]].
  check_array(delete_(ints({1, 2, 3, 4}), 1), {3}, int32, {1, 3, 4});
  check_array(delete_(ints({1, 2, 3, 4}), ints({0, 0, 2})), {2}, int32, {2, 4});
  check_array(delete_(iota({3, 4}), Slice{std::nullopt, std::nullopt, 2}, 1), {3, 2}, float64,
              {1, 3, 5, 7, 9, 11});
  check_array(delete_(ints({1, 2, 3}), array(std::vector<bool>{false, true, false})), {2}, int32,
              {1, 3});
  check_array(delete_(ints({1, 2, 3, 4}), ints({3, -4}), std::nullopt, true), {2}, int32, {2, 3});
  auto traced_delete = jit([](const Array& x, const Array& i) { return delete_(x, i, 0, true); });
  check_array(traced_delete(f64({1, 2, 3, 4}), ints({2, 0})), {2}, float64, {2, 4});
  auto static_only = jit([](const Array& x, const Array& i) { return delete_(x, i, 0); });
  LINUM_CHECK_ERROR(static_only(f64({1, 2, 3}), ints({0})), ConcretizationTypeError,
                    "assume_unique_indices");
  LINUM_CHECK_ERROR(delete_(ints({1, 2}), 5), IndexError, "out of bounds");
  check_grads(
      [](const Array& x) {
        return insert(x, ints({1, 1}), f64({0.5, 0.25}), 0);
      },
      data({3}, 17));
  check_grads([](const Array& x) { return delete_(x, ints({1}), 1, true); }, data({2, 3}, 18));
  check_vmap([](const Array& x, const Array& i) { return insert(x, i, Array(-1.0)); }, axes({0, 0}),
             data({3, 4}, 19), ints({0, 2, 4}));
}

TEST_CASE("eval_shape of the new primitives gives the shapes and dtypes of their eager results") {
  // Each primitive's abstract_eval, through ops that bind it: scatter, sort, top_k,
  // searchsorted, the cumulative reductions and pad.
  auto f = [](const Array& x, const Array& i) {
    return Arrays{at(x, i).max(1.0), sort(x, 0), top_k(x, 2).second,
                  searchsorted(sort(ravel(x)), x), cummax(x, 1, true),
                  lax_pad(x, Array(0.0), {{1, -1, 2}, {0, 3, 0}})};
  };
  const Array x = data({3, 4}, 20), i = ints({2, 0});
  const Arrays eager = f(x, i);
  const auto abstract = eval_shape(f, ShapeDtype{{3, 4}, float64}, ShapeDtype{{2}, int32});
  REQUIRE(abstract.size() == eager.size());
  for (std::size_t k = 0; k < eager.size(); ++k) {
    CAPTURE(k);
    CHECK(abstract[k] == ShapeDtype{eager[k].shape(), eager[k].dtype()});
  }
}

}  // namespace test_manipulation
