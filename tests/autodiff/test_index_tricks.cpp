// jax.numpy's index tricks and shape helpers: values against numpy 1.24 (run here) where JAX
// agrees with it; JAX's own rules from jax/_src/numpy/lax_numpy.py and indexing.py (clamped
// unravel_index, the functional put / put_along_axis / place / fill_diagonal, int32 indices,
// static sizes); gradients of the writes, vmap against a loop, jit, and errors.
#include <linum/autodiff/ops/index_tricks.hpp>
#include <linum/autodiff/ops/reshaping.hpp>

#include "numerics_testing.hpp"

namespace test_index_tricks {

using namespace linum;
using namespace linum::optest;
using linum::testing::check_grads;

namespace {
void check_pair(const std::pair<Array, Array>& ij, const std::vector<double>& i,
                const std::vector<double>& j) {
  const auto n = static_cast<std::int64_t>(i.size());
  check_array(ij.first, {n}, int32, i);
  check_array(ij.second, {n}, int32, j);
}
}  // namespace

TEST_CASE("triu/tril indices (and _from), diag_indices, mask_indices (numpy here)") {
  check_pair(triu_indices(3, 1, 4), {0, 0, 0, 1, 1, 2}, {1, 2, 3, 2, 3, 3});
  check_pair(tril_indices(3, -1, 2), {1, 2, 2}, {0, 0, 1});
  check_pair(triu_indices(2, -1), {0, 0, 1, 1}, {0, 1, 0, 1});
  check_pair(tril_indices(4, 2, 3), {0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3},
             {0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1, 2});
  check_pair(triu_indices(2, 5), {}, {});
  check_pair(triu_indices_from(zeros({3, 4}), 1), {0, 0, 0, 1, 1, 2}, {1, 2, 3, 2, 3, 3});
  check_pair(tril_indices_from(zeros({3, 2}), -1), {1, 2, 2}, {0, 0, 1});
  const Arrays d = diag_indices(3, 3);
  REQUIRE(d.size() == 3);
  for (const Array& a : d) check_array(a, {3}, int32, {0, 1, 2});
  CHECK(diag_indices_from(zeros({2, 2, 2, 2})).size() == 4);
  check_pair(mask_indices(
                 3, [](const Array& a, std::int64_t k) { return triu(a, k); }, 1),
             {0, 0, 1}, {1, 2, 2});
  check_pair(mask_indices(
                 3, [](const Array& a, std::int64_t k) { return tril(a, k); }, -1, 4),
             {1, 2, 2, 0}, {0, 0, 1, 0});  // padded with 0 as nonzero's default
  LINUM_CHECK_ERROR(triu_indices_from(zeros({3})), ValueError,
                    "triu_indices_from: only 2-D inputs are accepted");
  LINUM_CHECK_ERROR(tril_indices(-1), ValueError, "tril_indices: matrix dimensions");
  LINUM_CHECK_ERROR(diag_indices(-2), ValueError, "diag_indices: n argument");
  LINUM_CHECK_ERROR(diag_indices_from(zeros({2, 3})), ValueError, "equal length");
}

TEST_CASE("unravel_index / ravel_multi_index (numpy here; JAX clamps what numpy rejects)") {
  const Arrays u = unravel_index(ints({5, 0, 7, -1}), {2, 4});
  check_array(u[0], {4}, int32, {1, 0, 1, 1});
  check_array(u[1], {4}, int32, {1, 0, 3, 3});
  // JAX: past the end clamps to the last entry, below -size to the first.
  const Arrays c = unravel_index(ints({8, 100, -9}), {2, 4});
  check_array(c[0], {3}, int32, {1, 1, 0});
  check_array(c[1], {3}, int32, {3, 3, 0});
  const Arrays mi{ints({1, 0, 1}), ints({3, 2, 0})};
  check_array(ravel_multi_index(mi, {2, 4}), {3}, int32, {7, 2, 4});
  check_array(ravel_multi_index(mi, {2, 4}, IndexMode::raise, 'F'), {3}, int32, {7, 4, 1});
  const Arrays bad{ints({3, -1}), ints({5, 1})};
  check_array(ravel_multi_index(bad, {2, 4}, IndexMode::clip), {2}, int32, {7, 1});
  check_array(ravel_multi_index(bad, {2, 4}, IndexMode::wrap), {2}, int32, {5, 5});
  // Round trip of every flat index of a (3, 2, 5) array.
  const Array flat = arange(30);
  const Arrays three = unravel_index(flat, {3, 2, 5});
  check_close(ravel_multi_index(three, {3, 2, 5}), flat);
  LINUM_CHECK_ERROR(ravel_multi_index(bad, {2, 4}), ValueError, "invalid entry in coordinates");
  LINUM_CHECK_ERROR(ravel_multi_index({f64({1})}, {2}), TypeError, "only int indices permitted");
  LINUM_CHECK_ERROR(ravel_multi_index(mi, {2}), ValueError, "2 index arrays for 1 dimensions");
  LINUM_CHECK_ERROR(unravel_index(f64({1}), {2}), TypeError, "unravel_index: indices");
  auto raise_mode = jit([](const Array& i) { return ravel_multi_index({i}, {4}); });
  LINUM_CHECK_ERROR(raise_mode(ints({1})), ConcretizationTypeError, "mode=raise");
  auto wrap = [](const Array& i, const Array& j) {
    return ravel_multi_index({i, j}, {3, 4}, IndexMode::wrap) + unravel_index(i, {2, 2})[1];
  };
  check_vmap(wrap, axes({0, 1}), ints({1, 5, -2, 0, 2, 7}, {2, 3}),
             ints({3, 1, -6, 2, 9, 4}, {3, 2}));
  check_jit(wrap, ints({1, 5, -2}), ints({3, 1, 9}));
}

TEST_CASE("ix_ and choose (numpy here)") {
  const Arrays o = ix_({ints({0, 1}), ints({2, 3, 4})});
  check_array(o[0], {2, 1}, int32, {0, 1});
  check_array(o[1], {1, 3}, int32, {2, 3, 4});
  check_array(ix_({zeros({0}, float32)})[0], {0}, int32, {});
  LINUM_CHECK_ERROR(ix_({zeros({2, 2})}), ValueError, "ix_: arguments must be 1-dimensional");
  LINUM_CHECK_ERROR(ix_({array(std::vector<bool>{true})}), NotImplementedError, "ix_: boolean");
  // numpy: np.choose([[0, 1], [2, 1]], [[10, 20], [[30, 40], [50, 60]], 7]).
  const Arrays choices{ints({10, 20}), ints({30, 40, 50, 60}, {2, 2}), Array(7)};
  check_array(choose(ints({0, 1, 2, 1}, {2, 2}), choices), {2, 2}, int32, {10, 40, 7, 60});
  const Arrays two{ints({1, 2, 3}), ints({4, 5, 6})};
  check_array(choose(ints({3, -1, 1}), two, IndexMode::wrap), {3}, int32, {4, 5, 6});
  check_array(choose(ints({3, -1, 1}), two, IndexMode::clip), {3}, int32, {4, 2, 6});
  LINUM_CHECK_ERROR(choose(ints({2}), two), ValueError, "choose: invalid entry in choice array");
  LINUM_CHECK_ERROR(choose(f64({0}), two), ValueError, "choose: `a` array must be integer typed");
  // Differentiable in the choices; vmap and jit in wrap mode.
  check_grads(
      [](const Arrays& c) {
        return choose(ints({1, 0, 1}), {c[0], c[1]});
      },
      Arrays{data({3}, 1), data({3}, 2)});
  auto f = [](const Array& a, const Array& x) {
    return choose(a, {x, x * 2.0, -x}, IndexMode::wrap);
  };
  check_vmap(f, axes({0, 0}), ints({0, 4, 2, 1, -1, 5}, {2, 3}), data({2, 3}, 3));
  check_jit(f, ints({0, 4, 2}), data({3}, 4));
}

TEST_CASE("put, put_along_axis, place, fill_diagonal: the updated copy (numpy here)") {
  const Array a = reshape(arange(6.0f), {2, 3});
  check_array(put(a, ints({0, 4, 5}), f64({10, 20})), {2, 3}, float32, {10, 1, 2, 3, 20, 10});
  check_array(put(a, ints({-1, 9}), f64({10, 20}), IndexMode::clip), {2, 3}, float32,
              {10, 1, 2, 3, 4, 20});
  check_array(put(a, ints({-1, 9}), f64({10, 20}), IndexMode::wrap), {2, 3}, float32,
              {0, 1, 2, 20, 4, 10});
  // JAX's default drops indices past the end (numpy would raise).
  check_array(put(a, ints({9, 1}), f64({10, 20})), {2, 3}, float32, {0, 20, 2, 3, 4, 5});
  check_array(put_along_axis(a, ints({2, 0}, {2, 1}), f64({-1, -2}, {2, 1}), 1), {2, 3}, float32,
              {0, 1, -1, -2, 4, 5});
  check_array(put_along_axis(a, ints({1, 0, 1}, {1, 3}), Array(9), 0), {2, 3}, float32,
              {0, 9, 2, 9, 4, 9});
  check_array(put_along_axis(a, ints({5, 0}), f64({7, 8}), std::nullopt), {2, 3}, float32,
              {8, 1, 2, 3, 4, 7});
  check_array(place(a, a > 1.0f, f64({7, 8})), {2, 3}, float32, {0, 1, 7, 8, 7, 8});
  check_array(fill_diagonal(zeros({3, 4}), f64({1, 2})), {3, 4}, float32,
              {1, 0, 0, 0, 0, 2, 0, 0, 0, 0, 1, 0});
  check_array(fill_diagonal(zeros({2, 2, 2}), Array(5)), {2, 2, 2}, float32,
              {5, 0, 0, 0, 0, 0, 0, 5});
  LINUM_CHECK_ERROR(put(a, ints({0}), Array(1.0), IndexMode::raise), NotImplementedError,
                    "put: the 'raise' mode");
  LINUM_CHECK_ERROR(put_along_axis(a, ints({1}), Array(1.0), 0), ValueError, "same ndim");
  LINUM_CHECK_ERROR(place(a, ones({4}, bool_), Array(1.0)), ValueError, "same size");
  LINUM_CHECK_ERROR(place(a, a > 1.0f, zeros({0})), ValueError, "empty array");
  LINUM_CHECK_ERROR(fill_diagonal(zeros({2, 3, 2}), Array(1.0)), ValueError, "equal length");
  LINUM_CHECK_ERROR(fill_diagonal(zeros({2}), Array(1.0)), ValueError, "at least 2-d");
  // Gradients: the written entries get the values' cotangent, the others the array's.
  check_grads(
      [](const Arrays& x) {
        return put(x[0], ints({1, 3}), x[1]);
      },
      Arrays{data({2, 2}, 5), data({2}, 6)});
  check_grads(
      [](const Arrays& x) {
        return put_along_axis(x[0], ints({1, 0}, {2, 1}), x[1], 1);
      },
      Arrays{data({2, 3}, 7), data({2, 1}, 8)});
  check_grads(
      [](const Arrays& x) {
        return place(x[0], ints({0, 1, 1, 0}, {2, 2}), x[1]);
      },
      Arrays{data({2, 2}, 9), data({3}, 10)});
  check_grads([](const Arrays& x) { return fill_diagonal(x[0], x[1]); },
              Arrays{data({3, 3}, 11), data({3}, 12)});
  // place needs no concrete mask: vmap and jit.
  auto p = [](const Array& x, const Array& m) { return place(x, m, f64({-1, -2})); };
  check_vmap(p, axes({0, 0}), data({2, 4}, 13), ints({1, 0, 1, 1, 0, 0, 0, 1}, {2, 4}));
  check_jit(p, data({4}, 14), ints({0, 1, 1, 1}));
  auto q = [](const Array& x, const Array& i) {
    return put_along_axis(x, i, Array(0.5), 1) + put(x, i, x * 2.0, IndexMode::wrap);
  };
  check_vmap(q, axes({0, 0}), data({2, 2, 3}, 15), ints({2, 0, 1, 1, 0, 2, 2, 2}, {2, 2, 2}));
  check_jit(q, data({2, 3}, 16), ints({2, 0, 1, 1}, {2, 2}));
}

TEST_CASE("broadcast_shapes / broadcast_arrays, rollaxis, unstack, resize (numpy here)") {
  CHECK(broadcast_shapes({{2, 1, 3}, {4, 1}, {}}) == Shape{2, 4, 3});
  CHECK(broadcast_shapes({}).empty());
  LINUM_CHECK_ERROR(broadcast_shapes({{2}, {3}}), ValueError, "broadcast_shapes");
  const Arrays b = broadcast_arrays({ints({1, 2, 3}), reshape(f64({4, 5}), {2, 1})});
  check_array(b[0], {2, 3}, int32, {1, 2, 3, 1, 2, 3});
  check_array(b[1], {2, 3}, float64, {4, 4, 4, 5, 5, 5});
  const Array z = zeros({2, 3, 4, 5});
  CHECK(rollaxis(z, 3, 1).shape() == Shape{2, 5, 3, 4});
  CHECK(rollaxis(z, 1, 4).shape() == Shape{2, 4, 5, 3});
  CHECK(rollaxis(z, 2).shape() == Shape{4, 2, 3, 5});
  CHECK(rollaxis(z, -1, -2).shape() == Shape{2, 3, 5, 4});
  LINUM_CHECK_ERROR(rollaxis(z, 0, 5), ValueError, "rollaxis: start=5");
  const Array m = reshape(arange(6), {2, 3});
  const Arrays cols = unstack(m, 1);
  REQUIRE(cols.size() == 3);
  check_array(cols[2], {2}, int32, {2, 5});
  check_array(unstack(m)[1], {3}, int32, {3, 4, 5});
  check_array(resize(ints({1, 2, 3, 4}, {2, 2}), {3, 3}), {3, 3}, int32,
              {1, 2, 3, 4, 1, 2, 3, 4, 1});
  check_array(resize(zeros({0}, int32), {2}), {2}, int32, {0, 0});
  LINUM_CHECK_ERROR(resize(m, {-1}), ValueError, "resize: all elements of new_shape");
  check_grads([](const Array& x) { return resize(x, {2, 5}); }, data({3}, 17));
  check_grads([](const Array& x) { return unstack(rollaxis(x, 2), 1)[1]; }, data({2, 3, 4}, 18));
}

TEST_CASE("trim_zeros and block (numpy here)") {
  const Array f = ints({0, 0, 1, 2, 0, 3, 0, 0});
  check_array(trim_zeros(f), {4}, int32, {1, 2, 0, 3});
  check_array(trim_zeros(f, "f"), {6}, int32, {1, 2, 0, 3, 0, 0});
  check_array(trim_zeros(f, "B"), {6}, int32, {0, 0, 1, 2, 0, 3});
  check_array(trim_zeros(zeros({3}, int32)), {0}, int32, {});
  // A 2-D array trims each axis by its all-zero rows / columns (JAX's axis=None).
  check_array(trim_zeros(ints({0, 0, 0, 0, 1, 0, 0, 2, 0}, {3, 3})), {2, 1}, int32, {1, 2});
  check_array(trim_zeros(ints({0, 0, 0, 0, 1, 0, 0, 2, 0}, {3, 3}), "fb", 1), {3, 1}, int32,
              {0, 1, 2});
  auto traced = jit([](const Array& x) { return trim_zeros(x); });
  LINUM_CHECK_ERROR(traced(f), ConcretizationTypeError, "trim_zeros");
  // numpy: np.block([[eye(2), zeros((2, 1))], [ones((1, 2)), [[5.]]]]).
  const Array blk =
      block(std::vector<Arrays>{{eye(2), zeros({2, 1})}, {ones({1, 2}), full({1, 1}, 5)}});
  check_array(blk, {3, 3}, float32, {1, 0, 0, 0, 1, 0, 1, 1, 5});
  check_array(block(Arrays{ints({1, 2}), Array(3), ints({4})}), {4}, int32, {1, 2, 3, 4});
  // Depth 2 with 1-D pieces: each row a 1-D concatenation, stacked as rows (numpy here).
  check_array(block(std::vector<Arrays>{{ints({1}), ints({2})}, {ints({3, 4})}}), {2, 2}, int32,
              {1, 2, 3, 4});
  const Array cube = block(std::vector<std::vector<Arrays>>{{{ones({1, 1, 1}), zeros({1, 1, 1})}},
                                                            {{zeros({1, 1, 2})}}});
  CHECK(cube.shape() == Shape{2, 1, 2});
  LINUM_CHECK_ERROR(block(Arrays{}), ValueError, "block: empty lists are not allowed");
  check_grads(
      [](const Arrays& x) {
        return block(std::vector<Arrays>{{x[0], x[1]}, {x[1], x[0]}});
      },
      Arrays{data({2, 2}, 19), data({2, 2}, 20)});
  check_jit([](const Array& x) { return block(Arrays{x, x * 2.0}); }, data({2, 3}, 21));
}

}  // namespace test_index_tricks
