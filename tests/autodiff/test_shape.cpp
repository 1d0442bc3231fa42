// Shape and indexing ops: values checked by hand, gradients with check_grads, vmap against a loop
// over examples, and the error messages of bad input.
#include <cmath>
#include <functional>
#include <string>
#include <utility>

#include "op_testing.hpp"  // LINUM_CHECK_ERROR

namespace test_shape {

using linum::Array;
using linum::Arrays;
using linum::Shape;
using linum::Slice;
using linum::testing::check_grads;
using std::nullopt;

namespace {

void check_array(const Array& a, const Shape& shape, const std::vector<double>& expected) {
  REQUIRE(a.shape() == shape);
  const auto v = linum::testing::values(a);
  REQUIRE(v.size() == expected.size());
  for (std::size_t i = 0; i < v.size(); ++i)  // NaN (take's fill) matches NaN
    CHECK((std::isnan(expected[i]) ? std::isnan(v[i])
                                   : v[i] == doctest::Approx(expected[i]).epsilon(1e-12)));
}

void check_close(const Array& a, const Array& b) {
  REQUIRE(linum::shape_str(a.shape()) == linum::shape_str(b.shape()));
  CHECK(a.dtype() == b.dtype());
  const auto va = linum::testing::values(a), vb = linum::testing::values(b);
  for (std::size_t i = 0; i < va.size(); ++i)
    CHECK((std::isnan(vb[i]) ? std::isnan(va[i]) : va[i] == doctest::Approx(vb[i]).epsilon(1e-10)));
}

Array iota(const Shape& s, linum::DType d = linum::float64) {
  return linum::reshape(linum::arange(0, static_cast<double>(linum::shape_size(s)), 1, d), s);
}

Array randn(const Shape& s, unsigned seed) {
  std::mt19937 rng(seed);
  return linum::testing::random_like(linum::zeros(s, linum::float64), rng);
}

Array ints(std::vector<std::int32_t> v, Shape s = {}) {
  if (s.empty()) s = {static_cast<std::int64_t>(v.size())};
  return linum::array(v, s);
}

// x[i] along `axis`, built with a static slice (checked by hand below).
Array index_axis(const Array& x, int axis, std::int64_t i) {
  std::vector<Slice> s(static_cast<std::size_t>(axis) + 1);
  s[axis] = Slice{i, i + 1, 1};
  return linum::squeeze(linum::slice(x, s), axis);
}

constexpr int kNone = linum::VmapOptions::kNone;

// vmap(f, in_axes)(args...) equals stacking f over a loop of examples (out_axes 0).
template <class F, class... A>
void check_vmap(F f, const std::vector<int>& axes, const A&... args) {
  linum::VmapOptions opts;
  opts.in_axes = axes;
  Array batched = linum::vmap(f, opts)(args...);
  Arrays xs{args...};
  std::int64_t n = 0;
  for (std::size_t i = 0; i < xs.size(); ++i)
    if (axes[i] != kNone) n = xs[i].shape(axes[i]);
  Arrays outs;
  for (std::int64_t b = 0; b < n; ++b) {
    Arrays ai;
    for (std::size_t i = 0; i < xs.size(); ++i)
      ai.push_back(axes[i] == kNone ? xs[i] : index_axis(xs[i], axes[i], b));
    outs.push_back([&]<std::size_t... K>(std::index_sequence<K...>) {
      return f(ai[K]...);
    }(std::index_sequence_for<A...>{}));
  }
  check_close(batched, linum::stack(outs, 0));
}

template <class F, class... A>
void check_vmap(F f, const A&... args) {
  check_vmap(f, std::vector<int>(sizeof...(A), 0), args...);
}

std::vector<int> in_axes(std::vector<int> axes) { return axes; }

}  // namespace

// ---- reshape, squeeze, expand_dims, transpose ------------------------------------------------

TEST_CASE("reshape infers -1 and rejects sizes that do not match") {
  Array x = iota({2, 3});
  check_array(linum::reshape(x, {3, -1}), {3, 2}, {0, 1, 2, 3, 4, 5});
  LINUM_CHECK_ERROR(linum::reshape(x, {4, 2}), linum::ValueError,
                    "reshape: cannot reshape array of shape (2, 3) (size 6) into shape (4, 2)");
  LINUM_CHECK_ERROR(linum::reshape(x, {-1, -1}), linum::ValueError,
                    "can only specify one unknown dimension");
  LINUM_CHECK_ERROR(linum::reshape(x, {-1, 4}), linum::ValueError, "into shape (-1, 4)");
}

TEST_CASE("squeeze removes size-1 axes, all or the given ones") {
  Array x = iota({1, 3, 1});
  check_array(linum::squeeze(x), {3}, {0, 1, 2});
  check_array(linum::squeeze(x, 0), {3, 1}, {0, 1, 2});
  check_array(linum::squeeze(x, -1), {1, 3}, {0, 1, 2});
  check_array(linum::squeeze(x, {0, 2}), {3}, {0, 1, 2});
  LINUM_CHECK_ERROR(
      linum::squeeze(x, 1), linum::ValueError,
      "squeeze: cannot select an axis to squeeze out which has size not equal to one, got "
      "shape=(1, 3, 1) and dimensions=(1,)");
  LINUM_CHECK_ERROR(linum::squeeze(x, 3), linum::IndexError,
                    "squeeze: axis 3 is out of bounds for an array of rank 3");
  check_grads([](const Array& a) { return linum::squeeze(linum::sin(a), 0); }, randn({1, 3, 1}, 1));
  check_vmap([](const Array& a) { return linum::squeeze(a, 1); }, randn({3, 4, 1}, 2));
}

TEST_CASE("reshape, expand_dims and transpose under vmap") {
  check_vmap(
      [](const Array& a) {
        return linum::reshape(a, {3, -1});
      },
      in_axes({1}), randn({2, 4, 3}, 4));
  check_vmap([](const Array& a) { return linum::expand_dims(a, -1); }, in_axes({1}),
             randn({2, 4, 3}, 5));
  check_vmap([](const Array& a) { return linum::transpose(a); }, in_axes({2}), randn({2, 3, 4}, 6));
}

TEST_CASE("expand_dims, moveaxis and transpose move values where numpy does") {
  Array x = iota({2, 3});
  check_array(linum::expand_dims(x, -1), {2, 3, 1}, {0, 1, 2, 3, 4, 5});
  check_array(linum::moveaxis(iota({2, 1, 3}), 0, -1), {1, 3, 2}, {0, 3, 1, 4, 2, 5});
  check_array(linum::transpose(x), {3, 2}, {0, 3, 1, 4, 2, 5});
  LINUM_CHECK_ERROR(linum::expand_dims(x, 3), linum::IndexError,
                    "expand_dims: axis 3 is out of bounds");
  LINUM_CHECK_ERROR(linum::moveaxis(x, 2, 0), linum::IndexError,
                    "moveaxis: axis 2 is out of bounds");
  LINUM_CHECK_ERROR(linum::transpose(x, {0, 0}), linum::ValueError, "transpose: repeated axis");
  check_vmap([](const Array& a) { return linum::moveaxis(a, 0, 2); }, in_axes({1}),
             randn({2, 3, 4, 5}, 3));
}

TEST_CASE("transposing the last two axes (tiled) equals the element loop, tile edges included") {
  for (const Shape& s :
       {Shape{17, 33}, Shape{16, 16}, Shape{1, 40}, Shape{3, 5, 40}, Shape{2, 1, 31, 18}}) {
    for (linum::DType d : {linum::float32, linum::float64, linum::int32, linum::complex64}) {
      const Array x = linum::astype(iota(s), d);
      std::vector<int> perm(s.size());
      for (std::size_t i = 0; i < s.size(); ++i) perm[i] = static_cast<int>(i);
      std::swap(perm[s.size() - 1], perm[s.size() - 2]);
      const Array y = linum::transpose(x, perm);
      const std::int64_t r = s[s.size() - 2], c = s[s.size() - 1], batch = x.size() / (r * c);
      std::vector<double> want;
      for (std::int64_t b = 0; b < batch; ++b)
        for (std::int64_t j = 0; j < c; ++j)
          for (std::int64_t i = 0; i < r; ++i) want.push_back(double(b * r * c + i * c + j));
      Shape ys = s;
      std::swap(ys[s.size() - 1], ys[s.size() - 2]);
      INFO(linum::shape_str(s) << " " << linum::dtype_name(d));
      CHECK(y.dtype() == d);
      check_array(d == linum::complex64 ? linum::real(y) : y, ys, want);
    }
  }
}

// ---- concatenate, stack, split -----------------------------------------------------------------

TEST_CASE("concatenate joins along a non-zero axis and promotes dtypes") {
  Array a = linum::array({{1.0, 2.0}, {3.0, 4.0}});
  Array b = linum::array({{5.0}, {6.0}});
  Array c = linum::array({{7.0, 8.0, 9.0}, {10.0, 11.0, 12.0}});
  check_array(linum::concatenate({a, b, c}, 1), {2, 6}, {1, 2, 5, 7, 8, 9, 3, 4, 6, 10, 11, 12});
  check_array(linum::concatenate({a, b, c}, -1), {2, 6}, {1, 2, 5, 7, 8, 9, 3, 4, 6, 10, 11, 12});
  Array r = linum::concatenate({ints({1, 2}), linum::array({0.5f})});
  CHECK(r.dtype() == linum::float32);
  check_array(r, {3}, {1, 2, 0.5});
  Array bl = linum::concatenate({linum::array({true}), linum::array({false, true})});
  CHECK(bl.dtype() == linum::bool_);
  check_array(bl, {3}, {1, 0, 1});
  check_array(linum::concatenate({linum::zeros({0, 2}, linum::float64), a}, 0), {2, 2},
              {1, 2, 3, 4});
}

TEST_CASE("concatenate rejects mismatched shapes, ranks and axes") {
  LINUM_CHECK_ERROR(
      linum::concatenate({iota({2, 3}), iota({3, 3})}, 1), linum::ValueError,
      "concatenate: arrays must have the same shape except along axis 1, got shapes (2, "
      "3), (3, 3)");
  LINUM_CHECK_ERROR(
      linum::concatenate({iota({2}), iota({2, 2})}), linum::ValueError,
      "concatenate: all input arrays must have the same number of dimensions, got shapes "
      "(2,), (2, 2)");
  LINUM_CHECK_ERROR(linum::concatenate({Array(1.0), Array(2.0)}), linum::ValueError,
                    "zero-dimensional arrays cannot be concatenated");
  LINUM_CHECK_ERROR(linum::concatenate({}), linum::ValueError, "need at least one array");
  LINUM_CHECK_ERROR(linum::concatenate({iota({2, 2}), iota({2, 2})}, 2), linum::IndexError,
                    "concatenate: axis 2 is out of bounds for an array of rank 2");
}

TEST_CASE("concatenate: gradients of three arrays along axis 1, and vmap") {
  check_grads(
      [](const Arrays& x) {
        return linum::sin(linum::concatenate({x[0], x[1], x[2]}, 1));
      },
      Arrays{randn({2, 2}, 1), randn({2, 1}, 2), randn({2, 3}, 3)});
  // One operand without tangent/cotangent (a constant) in the middle.
  Array k = randn({2, 1}, 4);
  check_grads(
      [&](const Arrays& x) {
        return linum::concatenate({x[0], k, x[1]}, 1) * 2.0;
      },
      Arrays{randn({2, 2}, 5), randn({2, 3}, 6)});
  auto f = [](const Array& a, const Array& b) { return linum::concatenate({a, b, a}, 0); };
  check_vmap(f, in_axes({1, kNone}), randn({2, 4, 3}, 7), randn({1, 3}, 8));
  check_vmap(f, in_axes({0, 2}), randn({4, 2, 3}, 9), randn({1, 3, 4}, 10));
}

TEST_CASE("stack adds a new axis; split cuts sections or at indices") {
  Array a = linum::array({1.0, 2.0}), b = linum::array({3.0, 4.0});
  check_array(linum::stack({a, b}), {2, 2}, {1, 2, 3, 4});
  check_array(linum::stack({a, b}, 1), {2, 2}, {1, 3, 2, 4});
  check_array(linum::stack({a, b}, -1), {2, 2}, {1, 3, 2, 4});
  LINUM_CHECK_ERROR(linum::stack({a, iota({3})}), linum::ValueError,
                    "stack: all input arrays must have the same shape, got shapes (2,), (3,)");
  LINUM_CHECK_ERROR(linum::stack({a, b}, 2), linum::IndexError, "stack: axis 2 is out of bounds");

  Arrays p = linum::split(iota({6}), 3);
  REQUIRE(p.size() == 3);
  check_array(p[0], {2}, {0, 1});
  check_array(p[2], {2}, {4, 5});
  Arrays q = linum::split(iota({2, 6}), std::vector<std::int64_t>{1, 4}, 1);
  REQUIRE(q.size() == 3);
  check_array(q[0], {2, 1}, {0, 6});
  check_array(q[1], {2, 3}, {1, 2, 3, 7, 8, 9});
  check_array(q[2], {2, 2}, {4, 5, 10, 11});
  Arrays r =
      linum::split(iota({5}), std::vector<std::int64_t>{2, 10});  // numpy clamps like slicing
  check_array(r[1], {3}, {2, 3, 4});
  check_array(r[2], {0}, {});
  LINUM_CHECK_ERROR(linum::split(iota({5}), 2), linum::ValueError,
                    "split: array split does not result in an equal division");
  LINUM_CHECK_ERROR(linum::split(iota({4}), 0), linum::ValueError,
                    "number sections must be larger than 0");

  check_grads(
      [](const Array& x) {
        return linum::stack({linum::sin(x), x * x}, 1);
      },
      randn({3, 2}, 11));
  check_grads(
      [](const Array& x) {
        Arrays s = linum::split(x, 3, 1);
        return s[0] * s[1] + linum::sin(s[2]);
      },
      randn({2, 6}, 12));
  // Overlapping pieces (decreasing indices), and pieces whose cotangent is zero.
  Arrays o = linum::split(iota({5}), std::vector<std::int64_t>{3, 1});
  REQUIRE(o.size() == 3);
  check_array(o[0], {3}, {0, 1, 2});
  check_array(o[1], {0}, {});
  check_array(o[2], {4}, {1, 2, 3, 4});
  check_grads(
      [](const Array& x) {
        Arrays s = linum::split(x, std::vector<std::int64_t>{3, 1});
        return linum::concatenate({linum::sin(s[0]), s[2] * s[2]});
      },
      randn({5}, 16));
  check_grads([](const Array& x) { return linum::split(x, 3)[1] * 2.0; }, randn({6}, 17));
  Array gs = linum::grad([](const Array& x) { return linum::sum(linum::split(x, 2, 1)[1]); })(
      iota({2, 4}));
  check_array(gs, {2, 4}, {0, 0, 1, 1, 0, 0, 1, 1});
  // Second order: the gradient of a concatenate is a split, and vice versa.
  auto gc = linum::grad([](const Array& x) {
    return linum::sum(linum::sin(linum::concatenate({x, x * x}, 0)));
  });
  check_grads([&](const Array& x) { return gc(x); }, randn({3}, 18));
  auto gsp = linum::grad([](const Array& x) {
    Arrays s = linum::split(x, std::vector<std::int64_t>{1}, 0);
    return linum::sum(linum::sin(s[0]) * linum::sum(s[1] * s[1]));
  });
  check_grads([&](const Array& x) { return gsp(x); }, randn({4}, 19));
  check_vmap(
      [](const Array& x, const Array& y) {
        return linum::stack({x, y}, 1);
      },
      in_axes({0, kNone}), randn({3, 2, 2}, 13), randn({2, 2}, 14));
  check_vmap([](const Array& x) { return linum::split(x, std::vector<std::int64_t>{1}, 1)[1]; },
             in_axes({2}), randn({2, 3, 4}, 15));
}

// ---- static slices ---------------------------------------------------------------------------

TEST_CASE("slice follows Python's start:stop:step, negative steps and clamping included") {
  Array x = iota({10});
  check_array(linum::slice(x, {{2, 8, 2}}), {3}, {2, 4, 6});
  check_array(linum::slice(x, {{nullopt, nullopt, -1}}), {10}, {9, 8, 7, 6, 5, 4, 3, 2, 1, 0});
  check_array(linum::slice(x, {{-3, nullopt}}), {3}, {7, 8, 9});
  check_array(linum::slice(x, {{8, 2, -2}}), {3}, {8, 6, 4});
  check_array(linum::slice(x, {{nullopt, nullopt, -3}}), {4}, {9, 6, 3, 0});
  check_array(linum::slice(x, {{100, nullopt}}), {0}, {});
  check_array(linum::slice(x, {{-100, 3}}), {3}, {0, 1, 2});
  check_array(linum::slice(x, {{5, 2}}), {0}, {});
  check_array(linum::slice(x, {{nullopt, -100, -1}}), {10}, {9, 8, 7, 6, 5, 4, 3, 2, 1, 0});
  check_array(linum::slice(x, {{100, 6, -1}}), {3}, {9, 8, 7});

  Array m = iota({3, 4});
  check_array(linum::slice(m, {{nullopt, nullopt, -1}, {1, nullopt, 2}}), {3, 2},
              {9, 11, 5, 7, 1, 3});
  check_array(linum::slice(m, {{1, 2}}), {1, 4}, {4, 5, 6, 7});  // trailing axes taken whole
  Array mi = iota({3, 4}, linum::int32);
  Array s = linum::slice(mi, {{}, {3, 0, -2}});
  CHECK(s.dtype() == linum::int32);
  check_array(s, {3, 2}, {3, 1, 7, 5, 11, 9});

  LINUM_CHECK_ERROR(linum::slice(x, {{0, 5, 0}}), linum::ValueError, "slice step cannot be zero");
  LINUM_CHECK_ERROR(linum::slice(m, {{}, {}, {}}), linum::IndexError,
                    "too many indices for array: array is 2-dimensional, but 3 were indexed");
}

TEST_CASE("slice: gradients with strides and negative steps, second order, and vmap") {
  auto f = [](const Array& x) {
    return linum::sin(linum::slice(x, {{nullopt, nullopt, -1}, {3, 0, -2}})) *
           linum::slice(x, {{0, 3}, {0, 4, 2}});
  };
  check_grads(f, randn({3, 5}, 21));
  // The gradient itself goes through the transpose (pad) primitive: check its rules too.
  auto g = linum::grad([](const Array& x) {
    return linum::sum(linum::sin(linum::slice(x, {{4, 0, -3}})));
  });
  check_grads([&](const Array& x) { return g(x); }, randn({6}, 22));
  Array gx = linum::grad([](const Array& x) {
    return linum::sum(linum::slice(x, {{1, nullopt, 2}}));
  })(iota({5}));
  check_array(gx, {5}, {0, 1, 0, 1, 0});
  check_vmap(
      [](const Array& x) {
        return linum::slice(x, {{nullopt, nullopt, -2}});
      },
      in_axes({1}), randn({5, 3}, 23));
  check_vmap(g, randn({3, 6}, 24));
}

TEST_CASE("lax_slice takes start, limit and positive strides, and checks them") {
  Array m = iota({3, 4});
  check_array(linum::lax_slice(m, {0, 1}, {3, 4}, {2, 2}), {2, 2}, {1, 3, 9, 11});
  check_array(linum::lax_slice(m, {1, 0}, {2, 3}), {1, 3}, {4, 5, 6});
  LINUM_CHECK_ERROR(
      linum::lax_slice(m, {-1, 0}, {2, 3}), linum::ValueError,
      "lax_slice: start_indices must be greater than or equal to zero, got start_indices (-1, 0)");
  LINUM_CHECK_ERROR(
      linum::lax_slice(m, {0, 0}, {4, 3}), linum::ValueError,
      "limit_indices must be less than or equal to operand shape, got limit_indices (4, 3) for "
      "operand shape (3, 4)");
  LINUM_CHECK_ERROR(linum::lax_slice(m, {2, 0}, {1, 3}), linum::ValueError,
                    "limit_indices must be greater than or equal to start_indices");
  LINUM_CHECK_ERROR(linum::lax_slice(m, {0, 0}, {1, 3}, {1, 0}), linum::ValueError,
                    "strides must be positive, got (1, 0)");
  LINUM_CHECK_ERROR(
      linum::lax_slice(m, {0}, {1}), linum::ValueError,
      "start_indices must have length equal to the number of dimensions of the operand");
  check_grads(
      [](const Array& x) {
        return linum::lax_slice(x, {1, 0}, {3, 4}, {1, 3}) * 3.0;
      },
      randn({3, 4}, 25));
  check_vmap([](const Array& x) { return linum::lax_slice(x, {1}, {4}, {2}); }, randn({2, 5}, 26));
}

// ---- dynamic_slice / dynamic_update_slice ----------------------------------------------------

TEST_CASE("dynamic_slice clamps start indices so that the slice fits, as JAX") {
  Array x = iota({10});
  check_array(linum::dynamic_slice(x, {3}, {4}), {4}, {3, 4, 5, 6});
  check_array(linum::dynamic_slice(x, {8}, {4}), {4}, {6, 7, 8, 9});    // clamped to 6
  check_array(linum::dynamic_slice(x, {-2}, {4}), {4}, {6, 7, 8, 9});   // -2 -> 8 -> 6
  check_array(linum::dynamic_slice(x, {-20}, {4}), {4}, {0, 1, 2, 3});  // clamped to 0
  Array m = iota({3, 4});
  check_array(linum::dynamic_slice(m, {1, 2}, {2, 2}), {2, 2}, {6, 7, 10, 11});
  check_array(linum::dynamic_slice(m, Arrays{Array(2), Array(std::int32_t{5})}, {2, 3}), {2, 3},
              {5, 6, 7, 9, 10, 11});
  check_array(linum::dynamic_slice(m, {0, 0}, {0, 4}), {0, 4}, {});
  Array b = linum::dynamic_slice(linum::array({true, false, true}), {1}, {2});
  CHECK(b.dtype() == linum::bool_);
  check_array(b, {2}, {0, 1});

  LINUM_CHECK_ERROR(linum::dynamic_slice(x, Arrays{Array(1.0f)}, {2}), linum::TypeError,
                    "dynamic_slice: start_indices must be integers, got dtype float32");
  LINUM_CHECK_ERROR(linum::dynamic_slice(x, Arrays{ints({1, 2})}, {2}), linum::TypeError,
                    "dynamic_slice: start_indices must be scalars, got an index of shape (2,)");
  LINUM_CHECK_ERROR(
      linum::dynamic_slice(m, {1}, {2}), linum::ValueError,
      "dynamic_slice: start_indices must have length equal to the number of dimensions of the "
      "operand, got 1 indices for operand shape (3, 4)");
  LINUM_CHECK_ERROR(linum::dynamic_slice(m, {0, 0}, {4, 1}), linum::ValueError,
                    "slice_sizes (4, 1) for operand shape (3, 4)");
  LINUM_CHECK_ERROR(linum::dynamic_slice(m, {0, 0}, {1}), linum::ValueError,
                    "slice_sizes must have the same length as start_indices");
}

TEST_CASE("dynamic_slice: gradients, and vmap with batched start indices is one gather") {
  check_grads(
      [](const Array& x) {
        return linum::sin(linum::dynamic_slice(x, {1, 5}, {2, 2}));
      },
      randn({3, 4}, 31));
  Array gx = linum::grad(
      [](const Array& x) { return linum::sum(linum::dynamic_slice(x, {7}, {3})); })(iota({8}));
  check_array(gx, {8}, {0, 0, 0, 0, 0, 1, 1, 1});  // start clamped to 5

  auto f = [](const Array& x, const Array& s) { return linum::dynamic_slice(x, Arrays{s}, {3}); };
  Array xs = randn({4, 7}, 32);
  Array ss = ints({0, 5, -1, 2});
  check_vmap(f, xs, ss);                                            // both batched
  check_vmap(f, in_axes({kNone, 0}), randn({7}, 33), ss);           // only the starts
  check_vmap(f, in_axes({1, kNone}), randn({7, 4}, 34), Array(3));  // only the operand
  // Two axes, one start batched and one not.
  auto f2 = [](const Array& x, const Array& s) {
    return linum::dynamic_slice(x, Arrays{s, Array(1)}, {2, 2});
  };
  check_vmap(f2, randn({3, 4, 5}, 35), ints({2, 0, 1}));
  // Per-example gradients: vmap of grad batches the scatter-add transpose.
  auto per_example = [](const Array& x, const Array& s) {
    return linum::grad([&](const Array& y) {
      return linum::sum(linum::square(linum::dynamic_slice(y, Arrays{s}, {2})));
    })(x);
  };
  check_vmap(per_example, xs, ss);
  check_vmap(per_example, in_axes({kNone, 0}), randn({7}, 36), ss);
}

TEST_CASE("dynamic_update_slice overwrites a clamped window") {
  Array z = linum::zeros({5}, linum::float64);
  Array u = linum::array({1.0, 2.0});
  check_array(linum::dynamic_update_slice(z, u, {1}), {5}, {0, 1, 2, 0, 0});
  check_array(linum::dynamic_update_slice(z, u, {4}), {5}, {0, 0, 0, 1, 2});
  check_array(linum::dynamic_update_slice(z, u, {-1}), {5}, {0, 0, 0, 1, 2});
  Array m = linum::zeros({3, 3}, linum::int32);
  check_array(
      linum::dynamic_update_slice(m, linum::ones({2, 1}, linum::int32), Arrays{Array(1), Array(2)}),
      {3, 3}, {0, 0, 0, 0, 0, 1, 0, 0, 1});
  LINUM_CHECK_ERROR(
      linum::dynamic_update_slice(z, linum::array({1.0f}), {0}), linum::TypeError,
      "dynamic_update_slice: update dtype float32 does not match operand dtype float64");
  LINUM_CHECK_ERROR(linum::dynamic_update_slice(z, linum::zeros({6}, linum::float64), {0}),
                    linum::ValueError,
                    "update shape (6,) must have the operand's rank and fit in operand shape (5,)");
  LINUM_CHECK_ERROR(
      linum::dynamic_update_slice(z, u, {0, 1}), linum::ValueError,
      "dynamic_update_slice: start_indices must have length equal to the number of dimensions");
}

TEST_CASE("dynamic_update_slice: gradients w.r.t. operand and update, and vmap") {
  check_grads(
      [](const Arrays& a) {
        return linum::sin(linum::dynamic_update_slice(a[0], a[1], {1, 3})) * a[0];
      },
      Arrays{randn({3, 5}, 41), randn({2, 2}, 42)});
  // Cotangents: the operand's is zero under the window, the update's is the window.
  Array x0 = iota({5}), v0 = linum::array({10.0, 20.0}),
        ct = linum::array({1.0, 2.0, 3.0, 4.0, 5.0});
  auto [y, pull_x] =
      linum::vjp([&](const Array& x) { return linum::dynamic_update_slice(x, v0, {2}); }, x0);
  auto [y2, pull_v] =
      linum::vjp([&](const Array& v) { return linum::dynamic_update_slice(x0, v, {2}); }, v0);
  check_array(y, {5}, {0, 1, 10, 20, 4});
  check_array(std::get<0>(pull_x(ct)), {5}, {1, 2, 0, 0, 5});
  check_array(std::get<0>(pull_v(ct)), {2}, {3, 4});
  // Second order through the scatter's own rules.
  auto g = linum::grad([](const Array& x) {
    return linum::sum(linum::square(
        linum::dynamic_update_slice(x, linum::sin(linum::lax_slice(x, {0}, {2})), {3})));
  });
  check_grads([&](const Array& x) { return g(x); }, randn({6}, 43));

  auto f = [](const Array& x, const Array& v, const Array& s) {
    return linum::dynamic_update_slice(x, v, Arrays{s, Array(0)});
  };
  Array xs = randn({3, 4, 2}, 44), vs = randn({3, 2, 2}, 45), ss = ints({3, 0, 1});
  check_vmap(f, xs, vs, ss);
  check_vmap(f, in_axes({kNone, 0, 0}), randn({4, 2}, 46), vs, ss);
  check_vmap(f, in_axes({0, kNone, 0}), xs, randn({2, 2}, 47), ss);
  check_vmap(f, in_axes({0, 0, kNone}), xs, vs, Array(1));
}

// ---- take / take_along_axis ------------------------------------------------------------------

TEST_CASE("take gathers along an axis or the flattened array; out-of-range indices per mode") {
  Array x = linum::array({10.0, 20.0, 30.0, 40.0});
  const double nan = std::numeric_limits<double>::quiet_NaN();
  check_array(linum::take(x, ints({3, 0, -1, 7, -9})), {5}, {40, 10, 40, nan, nan});
  check_array(linum::take(x, ints({3, 0, -1, 7, -9}), 0, linum::GatherMode::clip), {5},
              {40, 10, 10, 40, 10});
  Array m = iota({2, 3});
  check_array(linum::take(m, ints({5, 0})), {2}, {5, 0});  // axis=None: flattened
  check_array(linum::take(m, ints({2, 0, 1, 1}, {2, 2}), 1), {2, 2, 2}, {2, 0, 1, 1, 5, 3, 4, 4});
  check_array(linum::take(m, ints({1}), 0), {1, 3}, {3, 4, 5});
  check_array(linum::take(m, Array(2), -1), {2}, {2, 5});
  Array t3 = linum::take(iota({2, 3, 2}), ints({2, 0}), 1);
  check_array(t3, {2, 2, 2}, {4, 5, 0, 1, 10, 11, 6, 7});
  CHECK(linum::take(iota({3}, linum::int32), ints({1})).dtype() == linum::int32);

  LINUM_CHECK_ERROR(linum::take(x, linum::array({1.0f})), linum::TypeError,
                    "take: indices must be integers, got dtype float32");
  LINUM_CHECK_ERROR(linum::take(x, linum::array({true})), linum::TypeError, "got dtype bool");
  LINUM_CHECK_ERROR(linum::take(m, ints({0}), 2), linum::IndexError,
                    "take: axis 2 is out of bounds for an array of rank 2");
  LINUM_CHECK_ERROR(linum::take(linum::zeros({0}), ints({0})), linum::IndexError,
                    "take: cannot take from axis 0 of size 0");
}

TEST_CASE("take: repeated indices accumulate in the gradient; vmap of every batching case") {
  Array g = linum::grad([](const Array& x) {
    return linum::sum(linum::take(x, ints({0, 0, 2, 0})));
  })(linum::array({1.0, 2.0, 3.0}));
  check_array(g, {3}, {3, 0, 1});
  check_grads(
      [](const Array& x) {
        return linum::sin(linum::take(x, ints({0, 2, 0, 0, 1}, {5}), 0));
      },
      randn({3, 2}, 51));
  check_grads(
      [](const Array& x) {
        return linum::take(x, ints({1, 1, 0, 2}, {2, 2}), 1) * 2.0;
      },
      randn({2, 3}, 52));
  // Second order through scatter-add's rules.
  auto gr = linum::grad([](const Array& x) {
    return linum::sum(linum::square(linum::take(x, ints({1, 1, 3}))));
  });
  check_grads([&](const Array& x) { return linum::sin(gr(x)); }, randn({4}, 53));

  auto f = [](const Array& x, const Array& i) { return linum::take(x, i, 1); };
  Array xs = randn({3, 2, 4}, 54),
        is = linum::array(std::vector<std::int32_t>{0, 3, 3, 1, 2, 9}, Shape{3, 2});
  check_vmap(f, xs, is);
  check_vmap(f, in_axes({0, kNone}), xs, ints({3, 1, 1}));
  check_vmap(f, in_axes({kNone, 0}), randn({2, 4}, 55), is);
  check_vmap(f, in_axes({2, 1}), randn({2, 4, 3}, 56), linum::transpose(is));
  check_vmap([](const Array& x, const Array& i) { return linum::take(x, i); }, xs, is);
}

TEST_CASE("take_along_axis picks one element per position, broadcasting the other axes") {
  Array x = linum::array({{10.0, 30.0, 20.0}, {60.0, 40.0, 50.0}});
  check_array(linum::take_along_axis(x, ints({0, 2, 1, 1, 2, 0}, {2, 3}), 1), {2, 3},
              {10, 20, 30, 40, 50, 60});
  check_array(linum::take_along_axis(x, ints({1, 0, 1}, {1, 3}), 0), {1, 3}, {60, 30, 50});
  check_array(linum::take_along_axis(x, ints({2, -1}, {2, 1}), -1), {2, 1}, {20, 50});
  // Broadcasting: x (1, 3) against indices (2, 2) along axis 1.
  check_array(
      linum::take_along_axis(linum::array({{1.0, 2.0, 3.0}}), ints({0, 2, 1, 1}, {2, 2}), 1),
      {2, 2}, {1, 3, 2, 2});
  LINUM_CHECK_ERROR(linum::take_along_axis(x, ints({0}), 1), linum::ValueError,
                    "take_along_axis: indices and arr must have the same number of dimensions, got "
                    "shapes (1,) and (2, 3)");
  LINUM_CHECK_ERROR(linum::take_along_axis(x, linum::array({{0.0}}), 1), linum::TypeError,
                    "take_along_axis: indices must be integers, got dtype float64");
  LINUM_CHECK_ERROR(linum::take_along_axis(x, ints({0, 0, 0}, {3, 1}), 1), linum::ValueError,
                    "do not broadcast");
  LINUM_CHECK_ERROR(linum::take_along_axis(x, ints({0, 0}, {2, 1}), 2), linum::IndexError,
                    "axis 2 is out of bounds");
}

TEST_CASE("take_along_axis: gradients accumulate over repeats; vmap") {
  Array idx = ints({0, 0, 2, 1, 1, 1}, {2, 3});
  check_grads(
      [&](const Array& x) {
        return linum::take_along_axis(x, idx, 1) * linum::take_along_axis(x, idx, 1);
      },
      randn({2, 3}, 61));
  Array g = linum::grad(
      [&](const Array& x) { return linum::sum(linum::take_along_axis(x, idx, 1)); })(iota({2, 3}));
  check_array(g, {2, 3}, {2, 0, 1, 0, 3, 0});
  auto f = [](const Array& x, const Array& i) { return linum::take_along_axis(x, i, 0); };
  Array xs = randn({4, 3, 2}, 62);
  Array is = linum::array(std::vector<std::int32_t>{0, 2, 1, 1, 2, 0, 0, 0, 1, 2, 2, 1, 1, 0, 2, 2},
                          Shape{4, 2, 2});
  check_vmap(f, in_axes({0, 0}), xs, linum::lax_slice(is, {0, 0, 0}, {4, 2, 2}));
  check_vmap(f, in_axes({0, kNone}), xs, ints({2, 0, 1, 1}, {2, 2}));
  check_vmap(f, in_axes({kNone, 0}), randn({3, 2}, 63), is);
}

TEST_CASE("broadcast_to and transpose: gradients and vmap") {
  check_grads(
      [](const Array& x) {
        return linum::broadcast_to(x, {2, 3, 4}) * 1.5;
      },
      randn({3, 1}, 71));
  check_grads([](const Array& x) { return linum::transpose(x, {2, 0, 1}); }, randn({2, 3, 4}, 72));
  check_vmap([](const Array& x) { return linum::broadcast_to(x, {2, 3}); }, randn({4, 3}, 73));
  LINUM_CHECK_ERROR(linum::broadcast_to(iota({3}), {4}), linum::ValueError,
                    "broadcast_to: cannot broadcast an array of shape (3,) to shape (4,)");
}

}  // namespace test_shape
