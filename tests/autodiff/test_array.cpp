// Array: creation functions, dtype conversion, item/data/truth value errors, printing exactly as
// JAX prints (numpy's array2string), and the xtensor interop header.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <sstream>
#include <string>

#include <xtensor/xbuilder.hpp>
#include <xtensor/xmath.hpp>

#include <linum/autodiff/xtensor.hpp>
#include <linum/linum.hpp>
#include "support/testing.hpp"

namespace test_array {

using linum::Array;
using linum::Shape;

namespace {

void check_array(const Array& a, const Shape& shape, linum::DType dtype,
                 const std::vector<double>& expected) {
  CHECK(a.dtype() == dtype);
  REQUIRE(a.shape() == shape);
  const auto v = linum::testing::values(a);
  REQUIRE(v.size() == expected.size());
  for (std::size_t i = 0; i < v.size(); ++i)
    CHECK(v[i] == doctest::Approx(expected[i]).epsilon(1e-7));
}

#define CHECK_ERROR(expr, E, part)                    \
  do {                                                \
    try {                                             \
      (void)(expr);                                   \
      FAIL("expected " #E " containing: " << (part)); \
    } catch (const E& e_) {                           \
      const std::string msg_ = e_.what();             \
      INFO("message: " << msg_);                      \
      CHECK(msg_.find(part) != std::string::npos);    \
    }                                                 \
  } while (0)

}  // namespace

// ---- creation ------------------------------------------------------------------------------

TEST_CASE("zeros, ones, full and the *_like functions") {
  check_array(linum::zeros({2, 3}), {2, 3}, linum::float32, {0, 0, 0, 0, 0, 0});
  check_array(linum::ones({2}, linum::int32), {2}, linum::int32, {1, 1});
  check_array(linum::full({2}, 2.5), {2}, linum::float32, {2.5, 2.5});
  check_array(linum::full({1}, 2.0, linum::bool_), {1}, linum::bool_, {1});  // any non-zero is True
  check_array(linum::full({}, -3.0, linum::uint32), {}, linum::uint32, {0});  // saturates at 0
  Array x = linum::array({{1, 2, 3}, {4, 5, 6}});
  check_array(linum::zeros_like(x), {2, 3}, linum::int32, {0, 0, 0, 0, 0, 0});
  check_array(linum::ones_like(linum::array({1.0})), {1}, linum::float64, {1});
  check_array(linum::full_like(x, 7), {2, 3}, linum::int32, {7, 7, 7, 7, 7, 7});
  CHECK_ERROR(linum::zeros({2, -1}), linum::ValueError, "negative dimension in shape (2, -1)");
}

TEST_CASE("arange, linspace and eye follow numpy") {
  check_array(linum::arange(5), {5}, linum::int32, {0, 1, 2, 3, 4});
  check_array(linum::arange(1, 2, 0.25, linum::float32), {4}, linum::float32, {1, 1.25, 1.5, 1.75});
  check_array(linum::arange(5, 0, -2), {3}, linum::int32, {5, 3, 1});
  check_array(linum::arange(0, 0), {0}, linum::int32, {});
  check_array(linum::arange(0, 1, 0.25), {4}, linum::float32, {0, 0.25, 0.5, 0.75});  // inferred
  check_array(linum::arange(0.5, 3), {3}, linum::float32, {0.5, 1.5, 2.5});
  check_array(linum::arange(0, 1, 0.25, linum::int32), {4}, linum::int32, {0, 0, 0, 0});  // numpy
  CHECK_ERROR(linum::arange(0, INFINITY), linum::ValueError,
              "arange: start, stop and step must be finite");
  CHECK_ERROR(linum::arange(0, 1, 0), linum::ValueError, "arange: step must not be zero");

  check_array(linum::linspace(0, 1, 5), {5}, linum::float32, {0, 0.25, 0.5, 0.75, 1});
  check_array(linum::linspace(0, 1, 5, false), {5}, linum::float32, {0, 0.2, 0.4, 0.6, 0.8});
  check_array(linum::linspace(2, 3, 1), {1}, linum::float32, {2});
  check_array(linum::linspace(0, 1, 0), {0}, linum::float32, {});
  check_array(linum::linspace(0, 10, 4, true, linum::int32), {4}, linum::int32, {0, 3, 6, 10});
  CHECK_ERROR(linum::linspace(0, 1, -1), linum::ValueError,
              "linspace: num must be non-negative, got -1");

  check_array(linum::eye(3), {3, 3}, linum::float32, {1, 0, 0, 0, 1, 0, 0, 0, 1});
  check_array(linum::eye(2, 3, 1), {2, 3}, linum::float32, {0, 1, 0, 0, 0, 1});
  check_array(linum::eye(3, 2, -1, linum::int32), {3, 2}, linum::int32, {0, 0, 1, 0, 0, 1});
  CHECK_ERROR(linum::eye(-1), linum::ValueError, "eye: N must be non-negative, got -1");
}

TEST_CASE("array from C++ values: dtype follows the element type, nested lists give the shape") {
  check_array(linum::array({1, 2}), {2}, linum::int32, {1, 2});
  check_array(linum::array({1u, 2u}), {2}, linum::uint32, {1, 2});
  check_array(linum::array({1.5}), {1}, linum::float64, {1.5});
  check_array(linum::array({true, false}), {2}, linum::bool_, {1, 0});
  check_array(linum::array({{1.f, 2.f}, {3.f, 4.f}}), {2, 2}, linum::float32, {1, 2, 3, 4});
  check_array(linum::array({{{1, 2}, {3, 4}}, {{5, 6}, {7, 8}}}), {2, 2, 2}, linum::int32,
              {1, 2, 3, 4, 5, 6, 7, 8});
  check_array(linum::array(std::vector<double>{1, 2, 3, 4, 5, 6}, {3, 2}), {3, 2}, linum::float64,
              {1, 2, 3, 4, 5, 6});
  check_array(linum::array(std::vector<bool>{true, true}, {2, 1}), {2, 1}, linum::bool_, {1, 1});
  check_array(Array(2.0f), {}, linum::float32, {2});
  check_array(Array(2.0), {}, linum::float64, {2});
  check_array(Array(2), {}, linum::int32, {2});
  check_array(Array(true), {}, linum::bool_, {1});
  check_array(linum::array(3u), {}, linum::uint32, {3});
  CHECK_ERROR(linum::array({{1.0, 2.0}, {3.0}}), linum::ValueError,
              "ragged nested list (rows of 2 and 1 elements)");
  CHECK_ERROR(linum::array({{{1}, {2}}, {{3}}}), linum::ValueError,
              "ragged nested list (blocks of shape (2, 1) and (1, 1))");
  CHECK_ERROR(linum::array(std::vector<float>{1, 2, 3}, {2, 2}), linum::ValueError,
              "linum::array: 3 values do not fill shape (2, 2)");
}

TEST_CASE("array(a, dtype) copies with XLA's conversions: truncation, saturation, != 0 for bool") {
  Array f = linum::array({1.7f, -1.7f, 0.0f, 0.5f});
  check_array(linum::array(f, linum::int32), {4}, linum::int32, {1, -1, 0, 0});
  check_array(linum::array(f, linum::bool_), {4}, linum::bool_, {1, 1, 0, 1});
  check_array(linum::array(f, linum::float64), {4}, linum::float64, {1.7f, -1.7f, 0, 0.5});
  Array edge = linum::array({std::numeric_limits<double>::quiet_NaN(), 1e10, -1e10, -1.0});
  check_array(linum::array(edge, linum::int32), {4}, linum::int32,
              {0, 2147483647, -2147483648.0, -1});
  check_array(linum::array(edge, linum::uint32), {4}, linum::uint32, {0, 4294967295.0, 0, 0});
  check_array(linum::astype(linum::array({0, 3, -2}), linum::bool_), {3}, linum::bool_, {0, 1, 1});
  // A copy: a new buffer even for the same dtype.
  Array c = linum::array(f, linum::float32);
  CHECK(c.data<float>() != f.data<float>());
  check_array(c, {4}, linum::float32, {1.7f, -1.7f, 0, 0.5f});
  // On a tracer it is a differentiable cast.
  Array g = linum::grad(
      [](const Array& x) { return linum::sum(linum::array(x, linum::float64) * 3.0); })(f);
  check_array(g, {4}, linum::float32, {3, 3, 3, 3});
}

// ---- element access -------------------------------------------------------------------------

TEST_CASE("item converts the single element; data checks the dtype; both reject tracers") {
  CHECK(Array(2.5f).item<float>() == 2.5f);
  CHECK(Array(2.5f).item<int>() == 2);
  CHECK(linum::array({7}).item<double>() == 7.0);
  CHECK(linum::array({{true}}).item<bool>());
  CHECK_ERROR(linum::array({1, 2}).item<int>(), linum::ValueError,
              "Array::item: only arrays of size 1 convert to a scalar, got shape (2,)");
  CHECK_ERROR(linum::zeros({0}).item<float>(), linum::ValueError, "got shape (0,)");
  CHECK(Array(-2.9).item<int>() == -2);  // truncation, as Python's int()
  CHECK_ERROR(Array(NAN).item<int>(), linum::ValueError,
              "value nan does not fit the requested type int32");
  CHECK_ERROR(Array(1e10f).item<std::int32_t>(), linum::ValueError,
              "does not fit the requested type int32");
  CHECK(Array(1e10f).item<std::int64_t>() == 10000000000);
  CHECK_ERROR(linum::array({1.f}).data<double>(), linum::TypeError,
              "Array::data: the array has dtype float32, not float64");
  CHECK_ERROR(Array().data<float>(), linum::ValueError, "Array::data: empty Array handle");
  CHECK_ERROR(Array().shape(), linum::ValueError, "empty Array handle");
  auto inside = [](const Array& x) {
    CHECK_ERROR(x.item<float>(), linum::UnexpectedTracerError,
                "Array::item: the array is a tracer");
    CHECK_ERROR(x.data<float>(), linum::UnexpectedTracerError,
                "Array::data: the array is a tracer");
    return linum::sum(x);
  };
  linum::grad(inside)(linum::array({1.f}));
  CHECK(linum::array({1.f, 2.f}).data<float>()[1] == 2.f);
}

TEST_CASE("truth value: only size-1 arrays convert, as numpy") {
  CHECK(static_cast<bool>(Array(true)));
  CHECK_FALSE(static_cast<bool>(linum::array({0.0})));
  CHECK(static_cast<bool>(linum::array({{3}})));
  CHECK_ERROR(static_cast<bool>(linum::array({1, 2})), linum::ValueError,
              "The truth value of an array with more than one element is ambiguous (shape (2,))");
  CHECK_ERROR(static_cast<bool>(linum::zeros({0})), linum::ValueError,
              "The truth value of an empty array is ambiguous");
  // Under grad the primal decides (a Python-style branch); under vmap there is no single value.
  Array g = linum::grad([](const Array& x) { return x ? x * 2.0f : x; })(Array(1.0f));
  CHECK(g.item<float>() == 2.0f);
  auto batched = [](const Array& x) {
    CHECK_ERROR(static_cast<bool>(x), linum::UnexpectedTracerError, "batched under vmap");
    return x;
  };
  linum::vmap(batched)(linum::array({1.f, 2.f}));
}

// ---- printing -------------------------------------------------------------------------------

TEST_CASE("repr matches JAX for small arrays of every dtype") {
  CHECK(linum::repr(linum::array({1.f, 2.f, 3.f})) == "Array([1., 2., 3.], dtype=float32)");
  CHECK(linum::repr(linum::array({{1.f, 2.f}, {3.f, 4.f}})) ==
        "Array([[1., 2.],\n       [3., 4.]], dtype=float32)");
  CHECK(linum::repr(linum::array({1.f, 2.5f})) == "Array([1. , 2.5], dtype=float32)");
  CHECK(linum::repr(Array(0.5f)) == "Array(0.5, dtype=float32, weak_type=True)");
  CHECK(linum::repr(Array(1.0f)) == "Array(1., dtype=float32, weak_type=True)");
  CHECK(linum::repr(linum::astype(Array(0.5f), linum::float32)) == "Array(0.5, dtype=float32)");
  CHECK(linum::repr(linum::array({1, 2, 3})) == "Array([1, 2, 3], dtype=int32)");
  CHECK(linum::repr(linum::array({-1, 10})) == "Array([-1, 10], dtype=int32)");
  CHECK(linum::repr(linum::array({1u, 2u})) == "Array([1, 2], dtype=uint32)");
  CHECK(linum::repr(Array(3)) == "Array(3, dtype=int32, weak_type=True)");
  CHECK(linum::repr(linum::array({true, false})) == "Array([ True, False], dtype=bool)");
  CHECK(linum::repr(linum::array({true, true})) == "Array([ True,  True], dtype=bool)");
  CHECK(linum::repr(Array(true)) == "Array(True, dtype=bool)");
  CHECK(linum::repr(linum::array({-1.5f, 2.f})) == "Array([-1.5,  2. ], dtype=float32)");
  CHECK(linum::repr(linum::zeros({0})) == "Array([], shape=(0,), dtype=float32)");
  CHECK(linum::repr(linum::zeros({2, 0}, linum::int32)) == "Array([], shape=(2, 0), dtype=int32)");
}

TEST_CASE("repr of floats: shortest digits per dtype, at most 8, scientific for wide ranges") {
  CHECK(linum::repr(linum::array({1e-5f, 1.f})) == "Array([1.e-05, 1.e+00], dtype=float32)");
  CHECK(linum::repr(linum::array({1.5e-5, 1.0})) == "Array([1.5e-05, 1.0e+00], dtype=float64)");
  CHECK(linum::repr(linum::array({1e8f})) == "Array([1.e+08], dtype=float32)");
  CHECK(linum::repr(linum::array({1e-100, 1e-5})) == "Array([1.e-100, 1.e-005], dtype=float64)");
  CHECK(linum::repr(linum::array({0.1, 0.1 + 0.2})) == "Array([0.1, 0.3], dtype=float64)");
  CHECK(linum::repr(linum::array({1.f / 3})) == "Array([0.33333334], dtype=float32)");
  CHECK(linum::repr(linum::array({1.0 / 3})) == "Array([0.33333333], dtype=float64)");
  CHECK(linum::repr(linum::array({0.1f})) == "Array([0.1], dtype=float32)");
  CHECK(linum::repr(linum::array({1.f, NAN, -INFINITY})) ==
        "Array([  1.,  nan, -inf], dtype=float32)");
  CHECK(linum::repr(linum::array({-0.0f, 1.f})) == "Array([-0.,  1.], dtype=float32)");
}

TEST_CASE("repr wraps rows at 75 columns and puts blank lines between 3-D blocks") {
  CHECK(linum::repr(linum::arange(0, 30, 1, linum::float32)) ==
        "Array([ 0.,  1.,  2.,  3.,  4.,  5.,  6.,  7.,  8.,  9., 10., 11., 12.,\n"
        "       13., 14., 15., 16., 17., 18., 19., 20., 21., 22., 23., 24., 25.,\n"
        "       26., 27., 28., 29.], dtype=float32)");
  // JAX's quirk: when the last line is long, the dtype follows after a gap of six spaces.
  CHECK(linum::repr(linum::arange(0, 13, 1, linum::float32)) ==
        "Array([ 0.,  1.,  2.,  3.,  4.,  5.,  6.,  7.,  8.,  9., 10., 11., 12.],      "
        "dtype=float32)");
  CHECK(linum::repr(linum::reshape(linum::arange(8), {2, 2, 2})) ==
        "Array([[[0, 1],\n        [2, 3]],\n\n       [[4, 5],\n        [6, 7]]], dtype=int32)");
}

TEST_CASE("repr elides arrays of more than 1000 elements with edge items") {
  CHECK(linum::repr(linum::arange(2000)) ==
        "Array([   0,    1,    2, ..., 1997, 1998, 1999], dtype=int32)");
  CHECK(linum::repr(linum::arange(1000)).find("...") == std::string::npos);
  CHECK(linum::repr(linum::reshape(linum::arange(2000), {1000, 2})) ==
        "Array([[   0,    1],\n"
        "       [   2,    3],\n"
        "       [   4,    5],\n"
        "       ...,\n"
        "       [1994, 1995],\n"
        "       [1996, 1997],\n"
        "       [1998, 1999]], dtype=int32)");
}

TEST_CASE("repr of a tracer names its abstract value") {
  linum::vmap([](const Array& x) {
    CHECK(linum::repr(x) == "Traced<ShapedArray(float32[3])>");
    return x;
  })(linum::zeros({2, 3}));
  std::ostringstream os;
  os << linum::array({1, 2});
  CHECK(os.str() == "Array([1, 2], dtype=int32)");
}

// ---- xtensor interop --------------------------------------------------------------------------

TEST_CASE("xtensor: to_xarray copies, as_xtensor views without copying, array() converts back") {
  Array a = linum::array({{1.f, 2.f, 3.f}, {4.f, 5.f, 6.f}});
  xt::xarray<float> x = linum::to_xarray<float>(a);
  REQUIRE(x.shape().size() == 2);
  CHECK(x.shape()[0] == 2);
  CHECK(x.shape()[1] == 3);
  CHECK(x(1, 2) == 6.f);
  CHECK(x.data() != a.data<float>());
  xt::xarray<double> xd = linum::to_xarray<double>(linum::array({1, 2}));
  CHECK(xd(1) == 2.0);
  xt::xarray<bool> xb = linum::to_xarray<bool>(linum::array({0.f, 3.f}));
  CHECK_FALSE(xb(0));
  CHECK(xb(1));

  auto v = linum::as_xtensor<float>(a);
  CHECK(&v(0, 0) == a.data<float>());
  CHECK(v(1, 0) == 4.f);
  CHECK(xt::sum(v)() == 21.f);
  CHECK_ERROR(linum::as_xtensor<double>(a), linum::TypeError,
              "the array has dtype float32, not float64");
  // The view shares ownership of the buffer: it outlives the Array it came from.
  auto outlive = [] {
    Array big = linum::full({100}, 1.5);
    return linum::as_xtensor<float>(big);
  }();
  CHECK(outlive(99) == 1.5f);

  Array b = linum::array(xt::xarray<double>{{1.0, 2.0}, {3.0, 4.0}});
  CHECK(b.dtype() == linum::float64);
  CHECK(b.shape() == Shape{2, 2});
  CHECK(b.data<double>()[3] == 4.0);
  Array e = linum::array(xt::arange<int>(4) * 2);
  CHECK(e.dtype() == linum::int32);
  CHECK(linum::testing::values(e) == std::vector<double>{0, 2, 4, 6});
  Array bl = linum::array(xt::xarray<bool>{true, false});
  CHECK(linum::repr(bl) == "Array([ True, False], dtype=bool)");
  CHECK(linum::array(linum::to_xarray<float>(a)).shape() == Shape{2, 3});
}

}  // namespace test_array
