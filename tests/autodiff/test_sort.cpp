// Sorting, searching and counting: values against numpy (1.24, run here) where JAX follows it
// and against JAX's documented algorithms where it does not (partition's order, NaN handling),
// gradients through the sorting permutation, vmap against a loop, and jit.
#include <cmath>
#include <limits>

#include "numerics_testing.hpp"

namespace test_sort {

using namespace linum;
using namespace linum::optest;
using linum::testing::check_grads;

namespace {
const double kNan = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();
}  // namespace

TEST_CASE("sort and argsort: stable, NaN last, -0.0 equal to 0.0, descending, axis None") {
  // numpy: np.sort / np.argsort(kind='stable') of [3, -0., kNan, 1, 0, -kInf, 1, kNan, 2].
  const Array a = f64({3, -0.0, kNan, 1, 0, -kInf, 1, kNan, 2});
  check_array(sort(a), {9}, float64, {-kInf, 0, 0, 1, 1, 2, 3, kNan, kNan});
  CHECK(std::signbit(linum::testing::values(sort(a))[1]));  // -0.0 keeps its place and sign
  check_array(argsort(a), {9}, int32, {5, 1, 4, 3, 6, 8, 0, 2, 7});
  // Descending: the sort reversed; argsort keeps ties in input order (numpy: argsort(-x)).
  const Array x = ints({3, 1, 2, 1, 0, 5, 5, -1}, {2, 4});
  check_array(argsort(x, 1, true, true), {2, 4}, int32, {0, 2, 1, 3, 1, 2, 0, 3});
  check_array(sort(x, 1, true, true), {2, 4}, int32, {3, 2, 1, 1, 5, 5, 0, -1});
  check_array(sort(x, 0), {2, 4}, int32, {0, 1, 2, -1, 3, 5, 5, 1});
  check_array(sort(x, std::nullopt), {8}, int32, {-1, 0, 1, 1, 2, 3, 5, 5});
  check_array(argsort(x, std::nullopt), {8}, int32, {7, 4, 1, 3, 2, 0, 5, 6});
  check_array(sort(array(std::vector<bool>{true, false, true})), {3}, bool_, {0, 1, 1});
  LINUM_CHECK_ERROR(sort(Array(1.0)), ValueError, "0-dimensional");
  LINUM_CHECK_ERROR(sort(x, 2), IndexError, "sort");
}

TEST_CASE("lax_sort sorts several operands by num_keys keys; lexsort uses the last key first") {
  const Array k1 = ints({2, 1, 2, 1}), k2 = ints({0, 5, -1, 3}), v = f64({10, 20, 30, 40});
  Arrays one = lax_sort({k1, v});
  check_array(one[0], {4}, int32, {1, 1, 2, 2});
  check_array(one[1], {4}, float64, {20, 40, 10, 30});  // stable among equal keys
  Arrays two = lax_sort({k1, k2, v}, -1, true, 2);
  check_array(two[1], {4}, int32, {3, 5, -1, 0});
  check_array(two[2], {4}, float64, {40, 20, 30, 10});
  auto [sk, sv] = sort_key_val(f64({3, 1, 2}), ints({0, 1, 2}));
  check_array(sk, {3}, float64, {1, 2, 3});
  check_array(sv, {3}, int32, {1, 2, 0});
  // numpy: np.lexsort(([5, 3, 1, 1, 9], [1, 1, 2, 2, 0])) = [4, 1, 0, 2, 3].
  check_array(lexsort({ints({5, 3, 1, 1, 9}), ints({1, 1, 2, 2, 0})}), {5}, int32, {4, 1, 0, 2, 3});
  LINUM_CHECK_ERROR(lax_sort({k1, v}, -1, true, 3), ValueError,
                    "num_keys=3 must be between 1 and 2");
  LINUM_CHECK_ERROR(lax_sort({k1, f64({1, 2})}), ValueError, "same shape");
}

TEST_CASE("top_k: largest first, ties to the lower index, NaN largest; partition via top_k") {
  auto [v, i] = top_k(f64({5, 1, 5, 2, 7, 5}), 3);
  check_array(v, {3}, float64, {7, 5, 5});
  check_array(i, {3}, int32, {4, 0, 2});
  auto [vn, in] = top_k(f64({1, kNan, 3}), 2);
  check_array(vn, {2}, float64, {kNan, 3});
  check_array(in, {2}, int32, {1, 2});
  auto [v0, i0] = top_k(ints({4, 9, 1, 9, 3, 0}, {2, 3}), 2, 0);  // along axis 0
  check_array(v0, {2, 3}, int32, {9, 9, 1, 4, 3, 0});
  check_array(i0, {2, 3}, int32, {1, 0, 0, 0, 1, 1});
  LINUM_CHECK_ERROR(top_k(f64({1, 2}), 3), ValueError, "no larger than size along axis");
  // JAX's partition: the kth+1 smallest (from top_k of -a) then the rest largest first.
  const Array p = ints({5, 1, 4, 1, 9, 2, 7});
  check_array(partition(p, 3), {7}, int32, {1, 1, 2, 4, 9, 7, 5});
  check_array(argpartition(p, 3), {7}, int32, {1, 3, 5, 2, 0, 4, 6});
  check_array(partition(astype(p, uint32), 1), {7}, uint32, {1, 1, 9, 7, 5, 4, 2});
}

TEST_CASE("searchsorted: left and right of equal entries, NaN last, with a sorter") {
  // numpy: np.searchsorted([1, 2, 2, 3, kNan], [2, 0, kNan, 3.5, -0.], side=...).
  const Array a = f64({1, 2, 2, 3, kNan}), q = f64({2, 0, kNan, 3.5, -0.0});
  check_array(searchsorted(a, q), {5}, int32, {1, 0, 4, 4, 0});
  check_array(searchsorted(a, q, SearchSide::right), {5}, int32, {3, 0, 5, 4, 0});
  for (auto m : {SearchMethod::scan_unrolled, SearchMethod::sort, SearchMethod::compare_all})
    check_array(searchsorted(a, q, SearchSide::left, std::nullopt, m), {5}, int32, {1, 0, 4, 4, 0});
  check_array(
      searchsorted(ints({3, 1, 2}), f64({2.5, 0}, {1, 2}), SearchSide::left, ints({1, 2, 0})),
      {1, 2}, int32, {2, 0});
  LINUM_CHECK_ERROR(searchsorted(iota({2, 2}), q), ValueError, "1-dimensional");
}

TEST_CASE("nonzero, where, argwhere, flatnonzero, compress and extract with and without size") {
  // numpy: np.nonzero([[0, 3, 0], [4, 0, 5]]) = ([0, 1, 1], [1, 0, 2]).
  const Array m = ints({0, 3, 0, 4, 0, 5}, {2, 3});
  Arrays nz = nonzero(m);
  check_array(nz[0], {3}, int32, {0, 1, 1});
  check_array(nz[1], {3}, int32, {1, 0, 2});
  Arrays padded = nonzero(m, {.size = 4, .fill_value = {-1}});
  check_array(padded[0], {4}, int32, {0, 1, 1, -1});
  check_array(padded[1], {4}, int32, {1, 0, 2, -1});
  Arrays per_dim = nonzero(m, {.size = 4, .fill_value = {7, 8}});
  check_array(per_dim[1], {4}, int32, {1, 0, 2, 8});
  check_array(nonzero(m, {.size = 4})[0], {4}, int32, {0, 1, 1, 0});  // zeros by default
  check_array(nonzero(m, {.size = 2})[1], {2}, int32, {1, 0});
  check_array(where(greater(m, 3))[1], {2}, int32, {0, 2});
  check_array(argwhere(m), {3, 2}, int32, {0, 1, 1, 0, 1, 2});
  check_array(flatnonzero(m), {3}, int32, {1, 3, 5});
  check_array(argwhere(Array(2.0)), {1, 0}, int32, {});
  LINUM_CHECK_ERROR(nonzero(Array(1)), ValueError, "0d arrays");
  // numpy: np.compress([True, False, True], [[1, 2, 3], [4, 5, 6]], axis=1) = [[1, 3], [4, 6]].
  const Array cond = array(std::vector<bool>{true, false, true});
  const Array b = ints({1, 2, 3, 4, 5, 6}, {2, 3});
  check_array(compress(cond, b, 1), {2, 2}, int32, {1, 3, 4, 6});
  check_array(compress(cond, b, 1, 3, -1), {2, 3}, int32, {1, 3, -1, 4, 6, -1});
  check_array(compress(cond, b), {2}, int32, {1, 3});
  check_array(extract(greater(b, 3), b), {3}, int32, {4, 5, 6});
  LINUM_CHECK_ERROR(compress(array(std::vector<bool>{true, false, false, true}), ints({1, 2})),
                    ValueError, "out of bounds");
  // Without a size, the count must be known: an error under jit and vmap.
  auto count_free = jit([](const Array& x) { return nonzero(x)[0]; });
  LINUM_CHECK_ERROR(count_free(m), ConcretizationTypeError, "size argument");
  auto sized = [](const Array& x) { return nonzero(x, {.size = 3, .fill_value = {-1}})[0]; };
  check_jit(sized, m);
  check_vmap(sized, axes({0}), ints({0, 1, 1, 0, 1, 1, 0, 0, 0}, {3, 3}));
}

TEST_CASE("unique: sorted distinct values, NaNs as one, padded to a static size") {
  // numpy: np.unique([3, 1, nan, 3, -0., 0., nan, 2]) = [-0., 1, 2, 3, nan].
  const Array a = f64({3, 1, kNan, 3, -0.0, 0, kNan, 2});
  check_array(unique(a), {5}, float64, {0, 1, 2, 3, kNan});
  check_array(unique(a, 3), {3}, float64, {0, 1, 2});
  check_array(unique(ints({4, 2, 4}), 4), {4}, int32, {2, 4, 2, 2});  // padded with the minimum
  check_array(unique(ints({4, 2, 4}), 4, -1), {4}, int32, {2, 4, -1, -1});
  check_array(unique(zeros({0}, float64), 2, 5), {2}, float64, {5, 5});
  LINUM_CHECK_ERROR(unique(zeros({0}, float64), 2), ValueError, "fill_value must be specified");
  auto sized = [](const Array& x) { return unique(x, 3, -1); };
  check_jit(sized, ints({5, 5, 1, 5}));
  check_vmap(sized, axes({0}), ints({1, 1, 2, 3, 3, 3}, {2, 3}));
  auto count_free = jit([](const Array& x) { return unique(x); });
  LINUM_CHECK_ERROR(count_free(ints({1, 2})), ConcretizationTypeError, "size argument");
}

TEST_CASE("sort, lax_sort and top_k gradients flow through the permutation") {
  // d/dx sum(w * sort(x)) puts w[j] on the entry that landed at j.
  const Array x = f64({0.3, -1.2, 2.5, 0.7});
  check_array(grad([](const Array& a) {
                return sum(f64({1, 2, 3, 4}) * sort(a));
              })(x),
              {4}, float64, {2, 1, 4, 3});
  check_grads([](const Array& a) { return sin(sort(a, 0)); }, data({4, 3}, 3));
  check_grads([](const Array& a) { return sort(a, std::nullopt, true, true) * 2.0; },
              data({2, 3}, 4));
  check_grads(
      [](const Arrays& a) {
        Arrays s = lax_sort({a[0], a[1]}, 1, true, 1);
        return s[0] * s[1];
      },
      Arrays{data({2, 4}, 5), data({2, 4}, 6)});
  check_grads([](const Array& a) { return top_k(a, 2).first * 3.0; }, data({3, 5}, 7));
  check_grads([](const Array& a) { return top_k(a, 2, 0).first; }, data({4, 3}, 8));
  check_grads([](const Array& a) { return partition(a, 2); }, data({5}, 9));
  // Second order through the permutation's gather and scatter.
  auto g = grad([](const Array& a) { return sum(square(sort(a)) * f64({1, 2, 3, 4})); });
  check_grads([&](const Array& a) { return g(a); }, x);
}

TEST_CASE("sort, argsort, top_k and searchsorted under vmap equal a loop; under jit, eager") {
  const Array x = data({3, 5}, 10);
  check_vmap([](const Array& a) { return sort(a); }, axes({0}), x);
  check_vmap([](const Array& a) { return argsort(a, 0, true, true); }, axes({1}), x);
  check_vmap([](const Array& a) { return top_k(a, 2).second; }, axes({1}), x);
  check_vmap(
      [](const Array& k, const Array& v) {
        return lax_sort({k, v})[1];
      },
      axes({0, kNone}), x, data({5}, 11));
  check_vmap([](const Array& a, const Array& v) { return searchsorted(a, v); }, axes({0, 0}),
             sort(x, 1), data({3, 2}, 12));
  check_vmap([](const Array& a, const Array& v) { return searchsorted(a, v, SearchSide::right); },
             axes({kNone, 0}), sort(data({5}, 13)), data({3, 2, 2}, 14));
  check_vmap([](const Array& a, const Array& v) { return searchsorted(a, v); }, axes({0, kNone}),
             sort(x, 1), data({4}, 15));
  check_vmap(
      [](const Array& a) {
        return grad([](const Array& b) { return sum(square(top_k(b, 2).first)); })(a);
      },
      axes({0}), x);
  check_jit([](const Array& a) { return sort(a, 0); }, x);
  check_jit([](const Array& a) { return argsort(a, std::nullopt, true, true); }, x);
  check_jit([](const Array& a) { return top_k(a, 3).first; }, x);
  check_jit([](const Array& a, const Array& v) { return searchsorted(a, v); }, sort(data({6}, 16)),
            data({3}, 17));
  check_jit([](const Array& a) { return lexsort({a, square(a)}, 0); }, x);
}

}  // namespace test_sort
