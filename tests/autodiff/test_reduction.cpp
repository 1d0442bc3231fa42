// Reductions and the jax.nn functions built on them: values checked by hand (axes, negative axes,
// keepdims, dtypes, NaN), gradients with check_grads and at ties/zeros, vmap against a loop over
// examples with the batch axis not at 0, and error messages.
#include <cmath>
#include <limits>

#include "op_testing.hpp"

namespace test_reduction {

using namespace linum;
using optest::axes;
using optest::check_array;
using optest::check_close;
using optest::check_vmap;
using optest::data;
using optest::kNone;
using optest::values;
using testing::check_grads;

namespace {
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

Array iota(const Shape& s, DType d = float32) {
  return reshape(arange(0, static_cast<double>(shape_size(s)), 1, d), s);
}
}  // namespace

// ---- sum, mean ----------------------------------------------------------------------------------

TEST_CASE("sum and mean over one axis, several axes, negative axes, keepdims") {
  Array x = iota({2, 3, 4});  // x[i, j, k] = 12 i + 4 j + k
  check_array(sum(x, 1), {2, 4}, float32, {12, 15, 18, 21, 48, 51, 54, 57});
  check_array(sum(x, -1), {2, 3}, float32, {6, 22, 38, 54, 70, 86});
  check_array(sum(x, {0, 2}), {3}, float32, {60, 92, 124});
  check_array(sum(x, {2, -3}, true), {1, 3, 1}, float32, {60, 92, 124});
  check_array(sum(x), {}, float32, {276});
  check_array(sum(x, {}, true), {1, 1, 1}, float32, {276});
  check_array(sum(x, std::vector<int>{}), {2, 3, 4}, float32, values(x));  // no axes: identity
  check_array(mean(x, 1), {2, 4}, float32, {4, 5, 6, 7, 16, 17, 18, 19});
  check_array(mean(x, {0, 1}, true), {1, 1, 4}, float32, {10, 11, 12, 13});
}

TEST_CASE("sum and mean dtypes follow jnp: bool sums to int32, int means to float32") {
  check_array(sum(array({true, true, false})), {}, int32, {2});
  check_array(sum(array({{1, 2}, {3, 4}}), 0), {2}, int32, {4, 6});
  check_array(mean(array({1, 2})), {}, float32, {1.5});
  check_array(mean(array({true, false, false, false})), {}, float32, {0.25});
  check_array(mean(array({1.0f, 2.0f})), {}, float32, {1.5});  // float32 stays float32
  check_array(mean(array({1.0, 2.0})), {}, float64, {1.5});
  check_array(sum(zeros({0, 3}), 0), {3}, float32, {0, 0, 0});
}

TEST_CASE("sum fast paths: last axis (SIMD rows), leading axes (bias), size-1 axes in between") {
  std::vector<float> v;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 37; ++j) v.push_back(static_cast<float>(100 * i + j));
  Array rows = array(v, {3, 37});
  check_array(sum(rows, 1), {3}, float32, {666, 4366, 8066});
  check_array(sum(rows, 0), {37}, float32, [] {
    std::vector<double> e;
    for (int j = 0; j < 37; ++j) e.push_back(300 + 3 * j);
    return e;
  }());
  Array b = broadcast_to(array({1.0, 2.0, 3.0}), {5, 7, 3});
  check_array(sum(b, {0, 1}), {3}, float64, {35, 70, 105});
  Array s = iota({6, 1, 4}, float64);
  check_array(sum(s, {0, 1}), {4}, float64, {60, 66, 72, 78});
  check_array(sum(s, {1, 2}), {6}, float64, {6, 22, 38, 54, 70, 86});
  check_array(sum(array({1, 2, 2147483647})), {}, int32, {-2147483646.0});  // int32 wraps, as XLA
}

TEST_CASE("column reductions: narrow rows read as windows, wide rows four at a time, with tails") {
  // x[r, k] = r K + k, so sum over r is K nr (nr - 1) / 2 + nr k and max is the last row.
  for (auto [nr, k] : {std::pair<int, int>{50, 3}, {45, 1}, {7, 70}, {130, 5}}) {
    INFO("nr = " << nr << ", k = " << k);
    Array x = iota({nr, k}, float64);
    std::vector<double> s, m;
    for (int j = 0; j < k; ++j) {
      s.push_back(k * nr * (nr - 1) / 2.0 + nr * j);
      m.push_back((nr - 1.0) * k + j);
    }
    check_array(sum(x, 0), {k}, float64, s);
    check_array(sum(astype(x, int32), 0), {k}, int32, s);
    check_array(max(x, 0), {k}, float64, m);
    const auto vx = values(x);
    check_array(min(x, 0), {k}, float64, std::vector<double>(vx.begin(), vx.begin() + k));
  }
  // An outer kept axis around the panel: (2, 50, 3) summed over axis 1.
  check_array(sum(iota({2, 50, 3}, float64), 1), {2, 3}, float64,
              {3675, 3725, 3775, 11175, 11225, 11275});
  // NaN in the middle of a window still wins; all/any over leading axes.
  Array w = iota({50, 3}, float64);
  w = where(equal(w, 31.0), kNan, w);  // row 10, column 1
  check_array(max(w, 0), {3}, float64, {147, kNan, 149});
  check_array(any(greater(iota({50, 3}), 148.0), 0), {3}, bool_, {0, 0, 1});
  check_array(all(greater(iota({50, 3}), 0.0), 0), {3}, bool_, {0, 1, 1});
}

// ---- max, min, prod, all, any
// ------------------------------------------------------------------------

TEST_CASE("max and min: axes, NaN propagation, ints and bools") {
  Array x = array({{1.0, 5.0, 3.0}, {kNan, 2.0, 0.0}});
  check_array(max(x, 1), {2}, float64, {5, kNan});
  check_array(min(x, 0), {3}, float64, {kNan, 2, 0});
  check_array(max(x), {}, float64, {kNan});
  check_array(max(x, -1, true), {2, 1}, float64, {5, kNan});
  Array i = array({{3, -7}, {2, 9}});
  check_array(max(i, 0), {2}, int32, {3, 9});
  check_array(min(i, -1), {2}, int32, {-7, 2});
  check_array(max(array({false, true})), {}, bool_, {1});
  check_array(min(array({false, true})), {}, bool_, {0});
  // Long rows take the SIMD path; a NaN in a lane or in the tail still wins.
  std::vector<double> v(37);
  for (int k = 0; k < 37; ++k) v[k] = std::sin(k);
  check_array(max(array(v)), {}, float64, {std::sin(33.0)});
  check_array(min(astype(array(v), float32)), {}, float32, {std::sin(11.0)});
  v[20] = kNan;
  check_array(max(array(v)), {}, float64, {kNan});
  v[20] = 0;
  v[36] = kNan;
  check_array(min(astype(array(v), float32)), {}, float32, {kNan});
  check_array(max(zeros({0, 3}), 1), {0}, float32, {});  // only the kept axis is empty
}

TEST_CASE("prod, all, any: values, dtypes, and empty reductions take the identity") {
  Array x = array({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}});
  check_array(prod(x, 1), {2}, float64, {6, 120});
  check_array(prod(x, 0, true), {1, 3}, float64, {4, 10, 18});
  check_array(prod(array({true, true})), {}, int32, {1});
  check_array(prod(array({{2, 3}, {-1, 4}})), {}, int32, {-24});
  check_array(prod(zeros({0})), {}, float32, {1});
  Array m = array({{0.0, 1.0}, {2.0, kNan}});
  check_array(all(m, 1), {2}, bool_, {0, 1});
  check_array(any(m, 0), {2}, bool_, {1, 1});
  check_array(all(array({1, 2, 3})), {}, bool_, {1});
  check_array(any(array({{false, false}, {false, true}}), -1, true), {2, 1}, bool_, {0, 1});
  check_array(all(zeros({0})), {}, bool_, {1});
  check_array(any(zeros({0})), {}, bool_, {0});
}

TEST_CASE("var: ddof, axes, and integer inputs in float32") {
  check_array(var(array({1.0, 2.0, 3.0, 4.0})), {}, float64, {1.25});
  check_array(var(array({1.0, 2.0, 3.0, 4.0}), {}, false, 1), {}, float64, {5.0 / 3});
  check_array(var(array({{1.0, 2.0}, {3.0, 6.0}}), 0), {2}, float64, {1, 4});
  check_array(var(array({{1.0, 2.0}, {3.0, 6.0}}), -1, true), {2, 1}, float64, {0.25, 2.25});
  check_array(var(array({1, 3})), {}, float32, {1});
}

// ---- argmax, argmin
// -------------------------------------------------------------------------------

TEST_CASE("argmax/argmin: int32, first occurrence, first NaN, flattened or along an axis") {
  check_array(argmax(array({3.0, 1.0, 3.0, 2.0})), {}, int32, {0});
  check_array(argmin(array({3.0, 1.0, 3.0, 1.0})), {}, int32, {1});
  check_array(argmax(array({1.0, kNan, 5.0, kNan})), {}, int32, {1});
  check_array(argmin(array({1.0f, 0.0f, static_cast<float>(kNan)})), {}, int32, {2});
  Array x = array({{1, 9, 2}, {8, 0, 8}});
  check_array(argmax(x), {}, int32, {1});
  check_array(argmin(x), {}, int32, {4});
  check_array(argmax(x, 0), {3}, int32, {1, 0, 1});
  check_array(argmax(x, -1), {2}, int32, {1, 0});
  check_array(argmin(x, 0, true), {1, 3}, int32, {0, 1, 0});
  check_array(argmax(x, std::nullopt, true), {1, 1}, int32, {1});
  check_array(argmax(array({false, true, true})), {}, int32, {1});
  // Middle axis with inner > 1: the column-running kernel.
  Array y = array({{{1.0, 7.0}, {5.0, 7.0}, {5.0, kNan}}});  // (1, 3, 2)
  check_array(argmax(y, 1), {1, 2}, int32, {1, 2});
  check_array(argmin(y, 1), {1, 2}, int32, {0, 2});
  // Not differentiable: the index is a constant to grad.
  check_array(
      grad([](const Array& a) { return sum(a * astype(argmax(a), float64)); })(array({1.0, 2.0})),
      {2}, float64, {1, 1});
}

// ---- logsumexp, softmax, log_softmax, one_hot
// ---------------------------------------------------------

TEST_CASE("logsumexp is stable and handles infinities and empty axes") {
  check_array(logsumexp(array({0.0, 0.0})), {}, float64, {std::log(2.0)}, 1e-14);
  check_array(logsumexp(array({1000.0, 1000.0, -kInf})), {}, float64, {1000 + std::log(2.0)},
              1e-14);
  check_array(logsumexp(array({-kInf, -kInf})), {}, float64, {-kInf});
  check_array(logsumexp(array({kInf, 0.0})), {}, float64, {kInf});
  check_array(logsumexp(array({-800.0f, -800.0f})), {}, float32, {-800 + std::log(2.0)});
  Array x = array({{0.0, std::log(2.0)}, {std::log(3.0), 0.0}});
  check_array(logsumexp(x, 1), {2}, float64, {std::log(3.0), std::log(4.0)}, 1e-14);
  check_array(logsumexp(x, 0, true), {1, 2}, float64, {std::log(4.0), std::log(3.0)}, 1e-14);
  check_array(logsumexp(x, {0, 1}), {}, float64, {std::log(7.0)}, 1e-14);
  check_array(logsumexp(array({1, 1})), {}, float32, {1 + std::log(2.0)});
  check_array(logsumexp(zeros({2, 0}), 1), {2}, float32, {-kInf, -kInf});
}

TEST_CASE("softmax and log_softmax: values, stability, axes") {
  const double l2 = std::log(2.0), l3 = std::log(3.0);
  check_array(softmax(array({0.0, l2, l3})), {3}, float64, {1.0 / 6, 2.0 / 6, 3.0 / 6}, 1e-14);
  check_array(softmax(array({1000.0f, 1000.0f})), {2}, float32, {0.5, 0.5});
  check_array(softmax(array({{0.0, 1.0}, {l3, 1.0}}), 0), {2, 2}, float64, {0.25, 0.5, 0.75, 0.5},
              1e-14);
  check_array(softmax(array({{0.0, l3}, {0.0, 0.0}}), {0, 1}), {2, 2}, float64,
              {1.0 / 6, 0.5, 1.0 / 6, 1.0 / 6}, 1e-14);
  check_array(log_softmax(array({0.0, l2, l3})), {3}, float64,
              {-std::log(6.0), l2 - std::log(6.0), -l2}, 1e-14);
  check_array(log_softmax(array({-1000.0, 0.0})), {2}, float64, {-1000, 0}, 1e-14);
  check_array(softmax(array({1, 1})), {2}, float32, {0.5, 0.5});
}

TEST_CASE("one_hot: a new last axis, out-of-range labels give zero rows, dtype") {
  check_array(one_hot(array({0, 2, 3, -1}), 3), {4, 3}, float32,
              {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0});
  check_array(one_hot(array({{1, 0}, {0, 1}}), 2, int32), {2, 2, 2}, int32,
              {0, 1, 1, 0, 1, 0, 0, 1});
  check_array(one_hot(array({1.0}), 3), {1, 3}, float32, {0, 1, 0});
  check_array(one_hot(Array(2), 3, bool_), {3}, bool_, {0, 0, 1});
}

// ---- gradients
// --------------------------------------------------------------------------------------

TEST_CASE("reductions: check_grads in float64 over non-trivial axes") {
  Array x = data({3, 4, 2}, 41);
  check_grads([](const Array& a) { return sum(a, {0, 2}); }, x);
  check_grads([](const Array& a) { return mean(a, -2, true); }, x);
  check_grads([](const Array& a) { return max(a, 1); }, x);
  check_grads([](const Array& a) { return min(a, {0, 2}, true); }, x);
  check_grads([](const Array& a) { return max(a) * min(a); }, x);
  check_grads([](const Array& a) { return prod(a, 1); }, data({3, 4, 2}, 42, 0.5, 1.5));
  check_grads([](const Array& a) { return prod(a, {0, 2}); }, data({3, 4, 2}, 43, -1.5, 1.5));
  check_grads([](const Array& a) { return var(a, {0, 1}); }, x);
  check_grads([](const Array& a) { return var(a, -1, true, 1); }, x);
  check_grads([](const Array& a) { return logsumexp(a, {0, 2}); }, x);
  check_grads([](const Array& a) { return logsumexp(a, -1, true) * 2.0; }, x);
  check_grads([](const Array& a) { return softmax(a, 0); }, x);
  check_grads([](const Array& a) { return softmax(a); }, x);
  check_grads([](const Array& a) { return log_softmax(a, {0, 2}); }, x);
  check_grads([](const Array& a) { return log_softmax(a) * a; }, x);
}

TEST_CASE("max/min share the gradient equally among ties, as JAX's chooser rule") {
  check_array(grad([](const Array& a) { return max(a); })(array({1.0, 3.0, 3.0})), {3}, float64,
              {0, 0.5, 0.5});
  check_array(grad([](const Array& a) { return sum(min(a, 0)); })(
                  array({{1.0, 2.0}, {1.0, 0.0}, {1.0, 5.0}})),
              {3, 2}, float64, {1.0 / 3, 0, 1.0 / 3, 1, 1.0 / 3, 0});
  auto [y, t] = jvp([](const Array& a) { return max(a); }, std::tuple{array({1.0, 3.0, 3.0})},
                    std::tuple{array({1.0, 2.0, 4.0})});
  CHECK(t.item<double>() == doctest::Approx(3.0));
}

TEST_CASE("prod's gradient is the product of the others, zeros included") {
  auto g = grad([](const Array& a) { return prod(a); });
  check_array(g(array({2.0, 3.0, 4.0})), {3}, float64, {12, 8, 6});
  check_array(g(array({2.0, 0.0, 3.0})), {3}, float64, {0, 6, 0});
  check_array(g(array({0.0, 0.0, 3.0})), {3}, float64, {0, 0, 0});
  // Under vmap the inputs are tracers: the zero-aware formula runs per example.
  Array rows = array({{2.0, 0.0, 3.0}, {1.0, 2.0, 3.0}, {0.0, 0.0, 5.0}});
  check_array(vmap(g)(rows), {3, 3}, float64, {0, 6, 0, 6, 3, 2, 0, 0, 0});
  auto [y, t] =
      jvp([](const Array& a) { return prod(a, 0); }, std::tuple{array({{2.0, 0.0}, {0.0, 5.0}})},
          std::tuple{array({{1.0, 1.0}, {1.0, 1.0}})});
  check_array(t, {2}, float64, {2, 5});
  // Second derivative away from zeros: d2/dx dy (x y z) = z.
  auto h = hessian([](const Array& a) { return prod(a); })(array({2.0, 3.0, 4.0}));
  check_array(h, {3, 3}, float64, {0, 4, 3, 4, 0, 2, 3, 2, 0});
}

TEST_CASE("logsumexp's gradient is softmax; second derivatives through the stop_gradient'd max") {
  Array x = data({2, 5}, 44);
  check_close(grad([](const Array& a) { return sum(logsumexp(a, 1)); })(x), softmax(x, 1));
  // Hessian of logsumexp = diag(s) - s s^T with s = softmax: [[3, -3], [-3, 3]] / 16 here.
  Array h = hessian([](const Array& a) { return logsumexp(a); })(array({0.0, std::log(3.0)}));
  check_array(h, {2, 2}, float64, {3.0 / 16, -3.0 / 16, -3.0 / 16, 3.0 / 16}, 1e-12);
}

// ---- vmap
// ---------------------------------------------------------------------------------------------

TEST_CASE("vmap of reductions equals a loop, with the batch axis not at 0") {
  Array x = data({2, 3, 4, 5}, 51);
  check_vmap([](const Array& a) { return sum(a, {0, -1}); }, axes({2}), x);
  check_vmap([](const Array& a) { return mean(a, 1, true); }, axes({3}, 1), x);
  check_vmap([](const Array& a) { return max(a, -1, true) + min(a, 0, true); }, axes({2}), x);
  check_vmap([](const Array& a) { return prod(a, 1); }, axes({1}), x);
  check_vmap([](const Array& a) { return any(a > 1.0, 0); }, axes({1}, 1), x);
  check_vmap([](const Array& a) { return all(a > -1.9); }, axes({3}), x);
  check_vmap([](const Array& a) { return argmax(a, 0); }, axes({1}), x);
  check_vmap([](const Array& a) { return argmin(a); }, axes({2}), x);
  check_vmap([](const Array& a) { return argmax(a, -1, true); }, axes({3}, 2), x);
  check_vmap([](const Array& a) { return var(a, {1, 2}, false, 1); }, axes({0}), x);
  check_vmap([](const Array& a) { return logsumexp(a, {0, 1}); }, axes({1}, 1), x);
  check_vmap([](const Array& a) { return softmax(a, 0); }, axes({2}), x);
  check_vmap([](const Array& a) { return log_softmax(a, {1, 2}); }, axes({3}), x);
  check_vmap([](const Array& l) { return one_hot(l, 4); }, axes({1}),
             array({{0, 3}, {2, 1}, {1, 7}}));
  check_vmap([](const Array& a, const Array& b) { return sum(a * b, 0); }, axes({kNone, 2}),
             data({3, 5}, 52), x);
}

TEST_CASE("per-example gradients of reductions: vmap(grad) equals a loop of grads") {
  Array xs = data({4, 3, 5}, 53);
  auto f = [](const Array& a) { return sum(log_softmax(a, 1) * softmax(a, 0)) + max(a) * var(a); };
  Array pe = vmap(grad(f))(xs);
  Arrays rows;
  for (int i = 0; i < 4; ++i) rows.push_back(grad(f)(optest::index_axis(xs, 0, i)));
  check_close(pe, optest::stack0(rows));
}

// ---- errors
// -------------------------------------------------------------------------------------------

TEST_CASE("reduction errors name the op, the axis and the shape") {
  Array x = zeros({2, 3});
  LINUM_CHECK_ERROR(sum(x, 3), IndexError, "sum: axis 3 is out of bounds for an array of rank 2");
  LINUM_CHECK_ERROR(mean(x, -3), IndexError,
                    "mean: axis -3 is out of bounds for an array of rank 2");
  LINUM_CHECK_ERROR(max(x, {0, -2}), ValueError, "max: repeated axis");
  LINUM_CHECK_ERROR(max(zeros({0, 3}), 0), ValueError,
                    "max: zero-size array to reduction operation max which has no identity (shape "
                    "(0, 3), axes (0,))");
  LINUM_CHECK_ERROR(min(zeros({0})), ValueError, "min: zero-size array");
  LINUM_CHECK_ERROR(argmax(zeros({0})), ValueError,
                    "argmax: attempt to get argmax of an empty sequence");
  LINUM_CHECK_ERROR(argmin(x, 2), IndexError,
                    "argmin: axis 2 is out of bounds for an array of rank 2");
  LINUM_CHECK_ERROR(softmax(x, 5), IndexError, "softmax: axis 5 is out of bounds");
  LINUM_CHECK_ERROR(logsumexp(x, {1, 1}), ValueError, "logsumexp: repeated axis");
  LINUM_CHECK_ERROR(one_hot(array({1}), -1), ValueError,
                    "one_hot: num_classes must be non-negative, got -1");
  LINUM_CHECK_ERROR(var(Array(), 0), ValueError, "var: got an empty Array handle");
}

}  // namespace test_reduction
