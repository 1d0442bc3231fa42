// jax.numpy's set operations: values against numpy 1.24 (run here; numpy and JAX agree on them
// without a size), JAX's size / fill_value padding read from jax/_src/numpy/setops.py (the
// default fill is the smallest value or result, setdiff1d's is 0), gradients of the values,
// vmap against a loop, jit, and errors.
#include <cmath>
#include <limits>

#include <linum/autodiff/ops/set_ops.hpp>

#include "numerics_testing.hpp"

namespace test_set_ops {

using namespace linum;
using namespace linum::optest;
using linum::testing::check_grads;

namespace {
const double kNan = std::numeric_limits<double>::quiet_NaN();
}  // namespace

TEST_CASE("unique_all / counts / inverse / values: every NaN its own value (numpy here)") {
  // numpy: np.unique([3, 1, nan, 3, -0., 0., nan, 2], return_index, return_inverse,
  // return_counts, equal_nan=False).
  const Array x = f64({3, 1, kNan, 3, -0.0, 0, kNan, 2});
  const UniqueAllResult r = unique_all(x);
  check_array(r.values, {6}, float64, {0, 1, 2, 3, kNan, kNan});
  CHECK(std::signbit(linum::testing::values(r.values)[0]));  // -0.0 came first
  check_array(r.indices, {6}, int32, {4, 1, 7, 0, 2, 6});
  check_array(r.inverse_indices, {8}, int32, {3, 1, 4, 3, 0, 0, 5, 2});
  check_array(r.counts, {6}, int32, {2, 1, 1, 2, 1, 1});
  check_array(unique_values(x), {6}, float64, {0, 1, 2, 3, kNan, kNan});
  check_array(unique(x), {5}, float64, {0, 1, 2, 3, kNan});  // jnp.unique: equal_nan=True
  // numpy: np.unique([[4, 2, 4], [7, 2, 2]], ...): the inverse keeps x's shape, as JAX's.
  const Array m = ints({4, 2, 4, 7, 2, 2}, {2, 3});
  const UniqueInverseResult inv = unique_inverse(m);
  check_array(inv.values, {3}, int32, {2, 4, 7});
  check_array(inv.inverse_indices, {2, 3}, int32, {1, 0, 1, 2, 0, 0});
  const UniqueCountsResult cnt = unique_counts(m);
  check_array(cnt.values, {3}, int32, {2, 4, 7});
  check_array(cnt.counts, {3}, int32, {3, 2, 1});
}

TEST_CASE("unique_*: a static size pads with the smallest value or fill_value, counts with 0") {
  // JAX: the sorted mask's nonzero with size pads with index 0 (the smallest value, and perm[0]
  // as its index); the padding's run lengths are 0.
  const Array x = ints({3, 1, 3, 3});
  const UniqueAllResult r = unique_all(x, 3);
  check_array(r.values, {3}, int32, {1, 3, 1});
  check_array(r.indices, {3}, int32, {1, 0, 1});
  check_array(r.inverse_indices, {4}, int32, {1, 0, 1, 1});
  check_array(r.counts, {3}, int32, {1, 3, 0});
  check_array(unique_values(x, 4, -7), {4}, int32, {1, 3, -7, -7});
  check_array(unique_counts(x, 1).counts, {1}, int32, {1});  // cut to the first value
  check_array(unique_values(zeros({0}, float32), 2, 5), {2}, float32, {5, 5});
  LINUM_CHECK_ERROR(unique_values(zeros({0}), 2), ValueError,
                    "unique_values: for zero-sized input with nonzero size argument");
  LINUM_CHECK_ERROR(unique_counts(zeros({2}, complex64)), TypeError,
                    "unique_counts: complex arrays are not supported");
  auto count_free = jit([](const Array& a) { return unique_values(a); });
  LINUM_CHECK_ERROR(count_free(x), ConcretizationTypeError, "unique_values: the size argument");
}

TEST_CASE("unique_*: values differentiable, vmap against a loop, jit") {
  check_grads([](const Array& a) { return unique_values(a, 4); }, data({4}, 11));
  check_grads([](const Array& a) { return unique_all(a, 3, 0.0).values; }, data({3}, 12));
  auto sized = [](const Array& a) {
    const UniqueAllResult r = unique_all(a, 3, -1);
    return concatenate({r.values, r.indices, r.counts, ravel(r.inverse_indices)}, 0);
  };
  check_vmap(sized, axes({0}), ints({1, 1, 2, 3, 3, 3, 5, 4, 5, 4, 9, 9}, {3, 4}));
  check_jit(sized, ints({5, 5, 1, 5}));
}

TEST_CASE("union1d, intersect1d, setdiff1d, setxor1d (numpy here), with JAX's size padding") {
  // numpy: a = [5, 1, 3, 1, 7], b = [[3, 9], [1, 1]].
  const Array a = ints({5, 1, 3, 1, 7}), b = ints({3, 9, 1, 1}, {2, 2});
  check_array(union1d(a, b), {5}, int32, {1, 3, 5, 7, 9});
  check_array(intersect1d(a, b), {2}, int32, {1, 3});
  check_array(setdiff1d(a, b), {2}, int32, {5, 7});
  check_array(setxor1d(a, b), {3}, int32, {5, 7, 9});
  auto [v, i1, i2] = intersect1d_indices(a, b);  // numpy: return_indices=True
  check_array(v, {2}, int32, {1, 3});
  check_array(i1, {2}, int32, {1, 2});
  check_array(i2, {2}, int32, {2, 0});
  // Sized: default padding is the smallest result (union, intersect, setxor) or 0 (setdiff).
  check_array(union1d(a, b, 7), {7}, int32, {1, 3, 5, 7, 9, 1, 1});
  check_array(union1d(a, b, 7, -1), {7}, int32, {1, 3, 5, 7, 9, -1, -1});
  check_array(intersect1d(a, b, false, 4), {4}, int32, {1, 3, 1, 1});
  check_array(intersect1d(a, b, false, 4, 0), {4}, int32, {1, 3, 0, 0});
  auto [sv, si1, si2] = intersect1d_indices(a, b, false, 3);
  check_array(sv, {3}, int32, {1, 3, 1});
  check_array(si1, {3}, int32, {1, 2, 5});  // padding: ar1.size
  check_array(si2, {3}, int32, {2, 0, 4});  // padding: ar2.size
  check_array(setdiff1d(a, b, false, 4), {4}, int32, {5, 7, 0, 0});
  check_array(setdiff1d(a, b, false, 1, -2), {1}, int32, {5});
  check_array(setxor1d(a, b, false, 5), {5}, int32, {5, 7, 9, 5, 5});
  check_array(setxor1d(a, b, false, 4, 8), {4}, int32, {5, 7, 9, 8});
  // assume_unique: the caller promises no repeats (numpy here).
  const Array u = ints({4, 1, 6}), w = ints({6, 2, 4});
  check_array(intersect1d(u, w, true), {2}, int32, {4, 6});
  check_array(intersect1d(u, w, true, 3, -1), {3}, int32, {4, 6, -1});
  check_array(setdiff1d(u, w, true), {1}, int32, {1});
  check_array(setdiff1d(u, w, true, 2), {2}, int32, {1, 0});
  check_array(setxor1d(u, w, true), {2}, int32, {1, 2});
  check_array(setxor1d(u, w, true, 3), {3}, int32, {1, 2, 1});
  // Promotion: int with float is float; empty inputs.
  check_array(union1d(ints({2, 1}), f64({1.5})), {3}, float64, {1, 1.5, 2});
  check_array(setxor1d(zeros({0}, int32), ints({2, 2})), {1}, int32, {2});
  check_array(intersect1d(zeros({0}, int32), ints({2}), false, 2, 9), {2}, int32, {9, 9});
  check_array(setdiff1d(zeros({0}, int32), ints({2}), false, 2), {2}, int32, {0, 0});
  auto eager_only = jit([](const Array& p, const Array& q) { return setxor1d(p, q); });
  LINUM_CHECK_ERROR(eager_only(a, b), ConcretizationTypeError, "setxor1d: the size argument");
}

TEST_CASE("set operations with a size: vmap against a loop, jit") {
  const Array a = ints({5, 1, 3, 1, 7, 2, 2, 8, 0, 4, 4, 4}, {2, 6});
  const Array b = ints({3, 9, 1, 1, 2, 8, 0, 4}, {2, 4});
  auto ops = [](const Array& p, const Array& q) {
    return concatenate(
        {union1d(p, q, 8), intersect1d(p, q, false, 3, -1), setdiff1d(p, q, false, 4),
         setxor1d(p, q, false, 6), std::get<1>(intersect1d_indices(p, q, false, 3)),
         std::get<2>(intersect1d_indices(p, q, false, 3))},
        0);
  };
  check_vmap(ops, axes({0, 0}), a, b);
  check_jit(ops, ints({5, 1, 3, 1, 7, 2}), ints({3, 9, 1, 1}));
  auto unique_sets = [](const Array& p, const Array& q) {
    return concatenate(
        {intersect1d(p, q, true, 3), setdiff1d(p, q, true, 3), setxor1d(p, q, true, 5)}, 0);
  };
  check_vmap(unique_sets, axes({0, kNone}), ints({4, 1, 6, 2, 3, 9}, {2, 3}), ints({6, 2, 4}));
}

TEST_CASE("isin: every method agrees (numpy here), shape of element, invert, vmap and jit") {
  // numpy: np.isin([[1, 2], [3, 4]], [4, 1, 8]) and invert=True.
  const Array e = ints({1, 2, 3, 4}, {2, 2}), t = ints({4, 1, 8});
  for (IsinMethod m :
       {IsinMethod::auto_, IsinMethod::compare_all, IsinMethod::binary_search, IsinMethod::sort}) {
    check_array(isin(e, t, false, false, m), {2, 2}, bool_, {1, 0, 0, 1});
    check_array(isin(e, t, false, true, m), {2, 2}, bool_, {0, 1, 1, 0});
  }
  // Repeats in element and a promoted float test set.
  check_array(isin(ints({2, 2, 5, 0}), f64({2.0, 0.5}), false, false, IsinMethod::sort), {4}, bool_,
              {1, 1, 0, 0});
  check_array(isin(ints({3, 1}), ints({1, 3}), true, false, IsinMethod::sort), {2}, bool_, {1, 1});
  check_array(isin(ints({3, 1}), zeros({0}, int32), false, true), {2}, bool_, {1, 1});
  for (IsinMethod m : {IsinMethod::compare_all, IsinMethod::binary_search, IsinMethod::sort}) {
    auto f = [m](const Array& x, const Array& y) { return isin(x, y, false, false, m); };
    check_vmap(f, axes({0, 0}), ints({1, 5, 2, 7, 7, 3}, {2, 3}), ints({5, 3, 7, 1}, {2, 2}));
    check_jit(f, ints({1, 5, 2}), ints({5, 3}));
  }
}

TEST_CASE("sort_complex: by real part, then imaginary part (numpy here)") {
  // numpy: np.sort_complex([1+2j, 1-1j, -3+0j, 1+0j]) = [-3, 1-1j, 1, 1+2j].
  const Array z = complex(f64({1, 1, -3, 1}), f64({2, -1, 0, 0}));
  const Array s = sort_complex(z);
  CHECK(s.dtype() == complex128);
  check_array(real(s), {4}, float64, {-3, 1, 1, 1});
  check_array(imag(s), {4}, float64, {0, -1, 0, 2});
  // Real input sorts as real and becomes complex (JAX: complex64 for int32 input).
  const Array r = sort_complex(ints({3, 1, 2}));
  CHECK(r.dtype() == complex64);
  check_array(real(r), {3}, float32, {1, 2, 3});
  check_jit([](const Array& x) { return real(sort_complex(x)); }, f64({2, -1, 0.5}));
  LINUM_CHECK_ERROR(sort_complex(Array(1.0)), ValueError, "sort_complex");
}

}  // namespace test_set_ops
