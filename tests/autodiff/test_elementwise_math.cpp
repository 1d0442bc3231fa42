// jnp's trigonometric, hyperbolic, exponent/logarithm, rounding, floating-point, division,
// predicate and integer functions: values at closed-form points (float64) and against libm
// (float32), NaN/inf edge cases and dtypes as jnp's, derivatives with check_grads, vmap against
// a loop, jit against eager (bit for bit, fused chains included), and errors.
#include <cmath>
#include <limits>
#include <numbers>

#include "op_testing.hpp"

namespace test_elementwise_math {

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
constexpr double kPi = std::numbers::pi;

bool same(const Array& a, const Array& b) {
  if (a.shape() != b.shape() || a.dtype() != b.dtype()) return false;
  const auto va = values(a), vb = values(b);
  for (std::size_t i = 0; i < va.size(); ++i)
    if (!(va[i] == vb[i] || (std::isnan(va[i]) && std::isnan(vb[i])))) return false;
  return true;
}

// a has dtype dt and exactly these values (NaN matches NaN; -0.0 equals 0.0).
void check_exact(const Array& a, DType dt, const std::vector<double>& want) {
  INFO("got " << a);
  CHECK(a.dtype() == dt);
  const auto v = values(a);
  REQUIRE(v.size() == want.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    INFO("element " << i);
    CHECK((v[i] == want[i] || (std::isnan(v[i]) && std::isnan(want[i]))));
  }
}

// f on float32 inputs agrees with the float64 reference `ref` to float32 rounding.
template <class F, class R>
void check_f32(F f, R ref, double lo, double hi, double eps = 4e-7, double scale = 1e-30) {
  std::vector<float> v;
  for (int i = 0; i < 41; ++i) v.push_back(static_cast<float>(lo + (hi - lo) * i / 40));
  Array y = f(array(v));
  REQUIRE(y.dtype() == float32);
  const auto got = values(y);
  for (std::size_t i = 0; i < v.size(); ++i) {
    INFO("x = " << v[i]);
    CHECK(got[i] == doctest::Approx(ref(static_cast<double>(v[i]))).epsilon(eps).scale(scale));
  }
}

using Unary = Array (*)(const Array&);
using BinaryFn = Array (*)(const Array&, const Array&);
}  // namespace

// ---- trigonometric and hyperbolic ---------------------------------------------------------------

TEST_CASE("trigonometric and hyperbolic functions at closed-form points (float64)") {
  check_array(tan(array({kPi / 4, -kPi / 3, 0.0})), {3}, float64, {1, -std::sqrt(3.0), 0}, 1e-14);
  check_array(arcsin(array({0.5, -1.0, 2.0})), {3}, float64, {kPi / 6, -kPi / 2, kNan}, 1e-14);
  check_array(arccos(array({0.5, -1.0, -1.5})), {3}, float64, {kPi / 3, kPi, kNan}, 1e-14);
  check_array(arctan(array({1.0, -kInf})), {2}, float64, {kPi / 4, -kPi / 2}, 1e-14);
  // atan2 quadrants and signed zeros, as C's atan2: (y, x) = (1, -1), (-0, -1), (0, 0), (-1, 0).
  check_array(arctan2(array({1.0, -0.0, 0.0, -1.0}), array({-1.0, -1.0, 0.0, 0.0})), {4}, float64,
              {3 * kPi / 4, -kPi, 0, -kPi / 2}, 1e-14);
  // sinh/cosh from (e^x -+ e^-x) / 2 by hand: sinh(1), sinh(0.5) (XLA's expm1 branch), cosh(2).
  const double e = std::numbers::e;
  check_array(sinh(array({1.0, 0.5, -0.5})), {3}, float64,
              {(e - 1 / e) / 2, 0.5210953054937474, -0.5210953054937474}, 1e-14);
  check_array(cosh(array({2.0, 0.0})), {2}, float64, {(e * e + 1 / (e * e)) / 2, 1}, 1e-14);
  // The inverses undo the forward functions; arctanh(1/2) = log(3) / 2.
  check_array(arcsinh(sinh(array({1.3, -0.2}))), {2}, float64, {1.3, -0.2}, 1e-14);
  check_array(arccosh(cosh(array({2.0}))), {1}, float64, {2.0}, 1e-14);
  check_array(arctanh(array({0.5, 1.0, -1.0, 2.0})), {4}, float64,
              {std::log(3.0) / 2, kInf, -kInf, kNan}, 1e-14);
  check_array(arccosh(array({0.5})), {1}, float64, {kNan});
  // Overflow only where the result overflows: cosh(700) is finite in float64, cosh(100) is not in
  // float32.
  CHECK(std::isfinite(cosh(Array(700.0)).item<double>()));
  CHECK(std::isinf(cosh(Array(100.0f)).item<float>()));
  CHECK(sinh(Array(-100.0f)).item<float>() == -std::numeric_limits<float>::infinity());
}

TEST_CASE("float32 trigonometric and hyperbolic functions agree with libm to float32 rounding") {
  check_f32([](const Array& x) { return tan(x); }, [](double v) { return std::tan(v); }, -1.4, 1.4);
  check_f32([](const Array& x) { return arcsin(x); }, [](double v) { return std::asin(v); }, -1, 1);
  check_f32([](const Array& x) { return arccos(x); }, [](double v) { return std::acos(v); }, -1, 1);
  check_f32([](const Array& x) { return arctan(x); }, [](double v) { return std::atan(v); }, -9, 9);
  // XLA's sinh/cosh formulas round a little more than libm: a few float32 ulps.
  check_f32([](const Array& x) { return sinh(x); }, [](double v) { return std::sinh(v); }, -5, 5,
            1e-6);
  check_f32([](const Array& x) { return cosh(x); }, [](double v) { return std::cosh(v); }, -5, 5,
            1e-6);
  check_f32([](const Array& x) { return arcsinh(x); }, [](double v) { return std::asinh(v); }, -9,
            9);
  check_f32([](const Array& x) { return arccosh(x); }, [](double v) { return std::acosh(v); }, 1,
            9);
  check_f32([](const Array& x) { return arctanh(x); }, [](double v) { return std::atanh(v); },
            -0.99, 0.99);
  check_f32([](const Array& x) { return exp2(x); }, [](double v) { return std::exp2(v); }, -20, 20,
            1e-6);
  check_f32([](const Array& x) { return cbrt(x); }, [](double v) { return std::cbrt(v); }, -8, 8);
  // log(x) / log(2) and log(x) * log10(e) err by ulps of log(x): absolute near x = 1.
  check_f32([](const Array& x) { return log2(x); }, [](double v) { return std::log2(v); }, 0.1, 9,
            4e-7, 1);
  check_f32([](const Array& x) { return log10(x); }, [](double v) { return std::log10(v); }, 0.1, 9,
            4e-7, 1);
}

TEST_CASE("jnp's dtype rules: integers compute in float32, aliases are the same functions") {
  check_array(tan(array({0})), {1}, float32, {0});
  check_array(arctan2(array({1}), array({1})), {1}, float32, {kPi / 4});
  check_array(cbrt(array({-27, 8})), {2}, float32, {-3, 2});
  check_array(exp2(array({true, false})), {2}, float32, {2, 1});
  // A float64 operand keeps float64; a C++ scalar keeps the array's float32.
  check_array(arctan2(array({1.0}), array({1.0f})), {1}, float64, {kPi / 4}, 1e-14);
  check_array(hypot(array({3.0f}), 4.0), {1}, float32, {5});
  Array x = data({5}, 3, -0.9, 0.9);
  CHECK(same(asin(x), arcsin(x)));
  CHECK(same(acos(x), arccos(x)));
  CHECK(same(atan(x), arctan(x)));
  CHECK(same(asinh(x), arcsinh(x)));
  CHECK(same(atanh(x), arctanh(x)));
  CHECK(same(acosh(x + 2.0), arccosh(x + 2.0)));
  CHECK(same(atan2(x, x + 2.0), arctan2(x, x + 2.0)));
  CHECK(same(radians(x), deg2rad(x)));
  CHECK(same(degrees(x), rad2deg(x)));
  check_array(deg2rad(array({180.0, -90.0})), {2}, float64, {kPi, -kPi / 2}, 1e-15);
  check_array(rad2deg(array({kPi})), {1}, float64, {180}, 1e-15);
}

// ---- exponents, logarithms, sinc, hypot

TEST_CASE("exp2, log2, log10, logaddexp2, cbrt, reciprocal, float_power at exact points") {
  check_array(exp2(array({3.0, -1.0, -kInf})), {3}, float64, {8, 0.5, 0}, 1e-15);
  check_array(log2(array({8.0, 0.25, 0.0, -1.0})), {4}, float64, {3, -2, -kInf, kNan}, 1e-15);
  check_array(log10(array({1000.0, 0.01})), {2}, float64, {3, -2}, 1e-15);
  // log2(2^a + 2^b): 3, 3 -> 4; 1, 2 -> log2(6); infinities and NaN pass through as jnp's.
  check_array(logaddexp2(array({3.0, 1.0, -kInf, kInf, kNan}), array({3.0, 2.0, -kInf, 1.0, 1.0})),
              {5}, float64, {4, std::log2(6.0), -kInf, kInf, kNan}, 1e-14);
  check_array(logaddexp2(Array(1000.0), Array(1000.0)), {}, float64, {1001}, 1e-15);
  check_array(cbrt(array({-27.0, 0.001})), {2}, float64, {-3, 0.1}, 1e-14);
  check_array(reciprocal(array({4.0, -0.5, 0.0})), {3}, float64, {0.25, -2, kInf});
  check_array(reciprocal(array({2})), {1}, float32, {0.5});
  check_array(float_power(array({2.0, 9.0}), array({-1.0, 0.5})), {2}, float64, {0.5, 3}, 1e-15);
  check_array(float_power(array({2, 3}), 2), {2}, float32, {4, 9});
  check_array(pow(array({2.0}), 10), {1}, float64, {1024});
}

TEST_CASE("sinc at 0 and the integers, hypot without overflow") {
  // sin(pi x) / (pi x): 1 at 0, 2/pi at 1/2, ~0 at the integers (sin(pi) / pi in float64), 0 at
  // inf.
  check_array(sinc(array({0.0, 0.5, -1.5, kInf})), {4}, float64, {1, 2 / kPi, -2 / (3 * kPi), 0},
              1e-15);
  CHECK(std::abs(sinc(Array(1.0)).item<double>()) < 1e-16);
  check_array(hypot(array({3.0, 3e200, 0.0, kInf, kNan}), array({4.0, 4e200, 0.0, kNan, 1.0})), {5},
              float64, {5, 5e200, 0, kInf, kNan}, 1e-15);
}

// ---- rounding and floating-point manipulation

TEST_CASE("trunc, rint, round(decimals), modf") {
  check_array(trunc(array({-1.7, 1.7, -0.2})), {3}, float64, {-1, 1, -0.0});
  CHECK(std::signbit(trunc(Array(-0.2)).item<double>()));
  check_array(trunc(array({-3, 4})), {2}, int32, {-3, 4});
  check_array(rint(array({2.5, -2.5, 3.5})), {3}, float64, {2, -2, 4});
  check_array(rint(array({3, -1})), {2}, float32, {3, -1});
  // round(x * 10^d) / 10^d with halves to even: 1.2345 * 100 = 123.45 -> 1.23; -2.675 * 100 rounds
  // to -267.5 in float64, which goes to the even -268 (numpy agrees); 1250 -> 1200.
  check_array(round(array({1.2345, -2.675}), 2), {2}, float64, {1.23, -2.68}, 1e-15);
  check_array(around(array({1250.0, 1350.0}), -2), {2}, float64, {1200, 1400});
  check_array(round(array({7, 8}), 1), {2}, int32, {7, 8});
  LINUM_CHECK_ERROR(round(array({7}), -1), NotImplementedError,
                    "round: integer rounding with decimals < 0");
  auto [frac, whole] = modf(array({-3.25, 2.5, kInf}));
  check_array(frac, {3}, float64, {-0.25, 0.5, kNan});
  check_array(whole, {3}, float64, {-3, 2, kInf});
}

TEST_CASE("signbit, copysign, nextafter, spacing, heaviside, fmax/fmin, fabs, positive") {
  check_array(signbit(array({-0.0, 0.0, -2.0, kNan, -kNan})), {5}, bool_, {1, 0, 1, 0, 1});
  check_array(signbit(array({-3, 0, 2})), {3}, bool_, {1, 0, 0});
  check_array(signbit(array({true})), {1}, bool_, {0});
  check_array(copysign(array({3.0, -3.0, 2.0}), array({-0.0, 1.0, kNan})), {3}, float64,
              {-3, 3, 2});
  check_array(copysign(array({1}), array({-1})), {1}, float32, {-1});
  // One float32 ulp above 1 is 2^-23; above 0 the smallest subnormal; toward itself, itself.
  check_exact(nextafter(array({1.0f, 0.0f, 2.0f}), array({2.0f, 1.0f, 2.0f})), float32,
              {1 + std::ldexp(1.0, -23), std::numeric_limits<float>::denorm_min(), 2});
  check_array(nextafter(array({1.0}), array({kNan})), {1}, float64, {kNan});
  check_exact(
      spacing(array({1.0, -1.0, 0.0})), float64,
      {std::ldexp(1.0, -52), -std::ldexp(1.0, -52), std::numeric_limits<double>::denorm_min()});
  check_exact(spacing(array({-1.0f})), float32, {-std::ldexp(1.0, -23)});
  check_array(heaviside(array({-1.0, 0.0, 2.0, kNan}), Array(0.5)), {4}, float64,
              {0, 0.5, 1, kNan});
  check_array(fmax(array({1.0, kNan, kNan, -0.5}), array({kNan, 2.0, kNan, 0.5})), {4}, float64,
              {1, 2, kNan, 0.5});
  check_array(fmin(array({1.0, kNan, kNan, -0.5}), array({kNan, 2.0, kNan, 0.5})), {4}, float64,
              {1, 2, kNan, -0.5});
  check_array(fabs(array({-2, 3})), {2}, float32, {2, 3});
  check_array(absolute(array({-2, 3})), {2}, int32, {2, 3});
  check_array(positive(array({-2, 3})), {2}, int32, {-2, 3});
}

TEST_CASE("frexp and ldexp: mantissa in [0.5, 1), exponents added exactly") {
  // 8 = 0.5 * 2^4, 0.3 = 0.6 * 2^-1, -5 = -0.625 * 2^3; 0, inf and NaN keep exponent 0.
  auto [m, e] = frexp(array({8.0, 0.3, -5.0, 0.0, kInf, kNan}));
  check_array(m, {6}, float64, {0.5, 0.6, -0.625, 0, kInf, kNan}, 1e-15);
  check_array(e, {6}, int32, {4, -1, 3, 0, 0, 0});
  auto [m32, e32] = frexp(array({3, 1}));
  check_array(m32, {2}, float32, {0.75, 0.5});
  check_array(e32, {2}, int32, {2, 1});
  check_exact(ldexp(array({0.5, 3.0, 0.0, -kInf, 1.0}), array({4, -2, 5, 3, -1074})), float64,
              {8, 0.75, 0, -kInf, std::numeric_limits<double>::denorm_min()});
  check_array(ldexp(array({1}), array({3})), {1}, float32, {8});
  LINUM_CHECK_ERROR(ldexp(array({1.0}), array({2.0})), ValueError,
                    "ldexp: the exponent must be an integer array, got float64");
}

// ---- division with numpy's sign rules ---------------------------------------------------------

TEST_CASE("floor_divide, remainder, fmod, divmod: numpy's signs (values derived with numpy here)") {
  Array a = array({-7, 7, -7, 7}), b = array({2, -2, -2, 2});
  check_array(floor_divide(a, b), {4}, int32, {-4, -4, 3, 3});
  check_array(remainder(a, b), {4}, int32, {1, -1, -1, 1});
  check_array(mod(a, b), {4}, int32, {1, -1, -1, 1});
  check_array(fmod(a, b), {4}, int32, {-1, 1, -1, 1});
  auto [q, r] = divmod(a, b);
  check_array(q, {4}, int32, {-4, -4, 3, 3});
  check_array(r, {4}, int32, {1, -1, -1, 1});
  Array af = array({-7.5, 7.5, 7.5, -0.0}), bf = array({2.0, -2.0, 0.0, 3.0});
  auto [qf, rf] = divmod(af, bf);
  check_array(qf, {4}, float64, {-4, -4, kInf, -0.0});
  check_array(rf, {4}, float64, {0.5, -0.5, kNan, 0});
  check_array(floor_divide(af, bf), {4}, float64, {-4, -4, kInf, -0.0});
  check_array(remainder(af, bf), {4}, float64, {0.5, -0.5, kNan, 0});
  check_array(fmod(af, bf), {4}, float64, {-1.5, 1.5, kNan, -0.0});
  check_array(floor_divide(array({7u, 2u}), array({2u, 3u})), {2}, uint32, {3, 0});
  check_array(floor_divide(array({true}), array({true})), {1}, int32, {1});
  check_array(true_divide(array({1}), array({4})), {1}, float32, {0.25});
}

TEST_CASE("integer division by zero follows XLA (x / 0 = -1, x % 0 = x) through jnp's formulas") {
  // lax.div(x, 0) = -1 and lax.rem(x, 0) = x, so jnp's floor_divide gives -1 - 1 = -2 where
  // x != 0 (the signs differ, the remainder is nonzero) and -1 at 0 / 0; remainder and fmod
  // read a zero divisor as 1 (0). INT_MIN / -1 = INT_MIN, INT_MIN % -1 = 0.
  const int imin = std::numeric_limits<std::int32_t>::min();
  check_array(floor_divide(array({5, -5, 0}), array({0, 0, 0})), {3}, int32, {-2, -2, -1});
  check_array(remainder(array({5, -5}), array({0, 0})), {2}, int32, {0, 0});
  check_array(fmod(array({5}), array({0})), {1}, int32, {0});
  check_array(floor_divide(array({imin}), array({-1})), {1}, int32, {static_cast<double>(imin)});
  check_array(remainder(array({imin}), array({-1})), {1}, int32, {0});
  check_array(floor_divide(array({5u}), array({0u})), {1}, uint32, {4294967295.0});
}

// ---- predicates

TEST_CASE("isinf, isposinf, isneginf, logical_xor, isclose, allclose, array_equal, array_equiv") {
  Array x = array({1.0, kInf, -kInf, kNan});
  check_array(isinf(x), {4}, bool_, {0, 1, 1, 0});
  check_array(isposinf(x), {4}, bool_, {0, 1, 0, 0});
  check_array(isneginf(x), {4}, bool_, {0, 0, 1, 0});
  check_array(isinf(array({1, 2})), {2}, bool_, {0, 0});
  check_array(logical_xor(array({1.0, 0.0, 2.0}), array({0, 0, 3})), {3}, bool_, {1, 0, 0});
  // |a - b| <= atol + rtol |b|; infinities only equal themselves; NaN only with equal_nan.
  Array a = array({1.0, 1.0, kInf, kInf, kNan, 0.0}),
        b = array({1.0 + 1e-6, 1.1, kInf, -kInf, kNan, 1e-9});
  check_array(isclose(a, b), {6}, bool_, {1, 0, 1, 0, 0, 1});
  check_array(isclose(a, b, 1e-5, 1e-8, true), {6}, bool_, {1, 0, 1, 0, 1, 1});
  check_array(isclose(array({1, 2}), array({1, 3})), {2}, bool_, {1, 0});
  CHECK(allclose(array({1.0, 2.0}), array({1.0, 2.0 + 1e-7})).item<bool>());
  CHECK(!allclose(array({1.0, kNan}), array({1.0, kNan})).item<bool>());
  CHECK(allclose(array({1.0, kNan}), array({1.0, kNan}), 1e-5, 1e-8, true).item<bool>());
  CHECK(array_equal(array({1, 2}), array({1.0, 2.0})).item<bool>());
  CHECK(!array_equal(array({1, 2}), array({{1, 2}})).item<bool>());
  CHECK(!array_equal(array({kNan}), array({kNan})).item<bool>());
  CHECK(array_equal(array({kNan}), array({kNan}), true).item<bool>());
  CHECK(array_equiv(array({{1, 2}, {1, 2}}), array({1, 2})).item<bool>());
  CHECK(!array_equiv(array({1, 2}), array({1, 2, 3})).item<bool>());
}

TEST_CASE("nan_to_num, and real/imag/conj/angle/isreal/iscomplex of real arrays") {
  check_array(nan_to_num(array({kNan, kInf, -kInf, 1.5})), {4}, float64,
              {0, std::numeric_limits<double>::max(), -std::numeric_limits<double>::max(), 1.5});
  check_array(nan_to_num(array({static_cast<float>(kInf)})), {1}, float32,
              {std::numeric_limits<float>::max()});
  check_array(nan_to_num(array({kNan, kInf, -kInf}), 7.0, 8.0, -9.0), {3}, float64, {7, 8, -9});
  check_array(nan_to_num(array({3})), {1}, int32, {3});
  Array x = array({-2.0, 0.0, 3.0});
  CHECK(same(real(x), x));
  CHECK(same(conj(x), x));
  CHECK(same(conjugate(x), x));
  check_array(imag(x), {3}, float64, {0, 0, 0});
  check_array(angle(x), {3}, float64, {kPi, 0, 0}, 1e-15);
  check_array(angle(x, true), {3}, float64, {180, 0, 0}, 1e-15);
  check_array(angle(array({-1})), {1}, float32, {kPi});
  check_array(isreal(x), {3}, bool_, {1, 1, 1});
  check_array(iscomplex(x), {3}, bool_, {0, 0, 0});
}

// ---- integers and bits

TEST_CASE("bitwise ops on int32, uint32 and bool") {
  Array a = array({12, -1, 5}), b = array({10, 3, -6});
  check_array(bitwise_and(a, b), {3}, int32, {8, 3, 0});
  check_array(bitwise_or(a, b), {3}, int32, {14, -1, -1});
  check_array(bitwise_xor(a, b), {3}, int32, {6, -4, -1});
  check_array(bitwise_not(a), {3}, int32, {-13, 0, -6});
  check_array(invert(array({0u})), {1}, uint32, {4294967295.0});
  CHECK(same(bitwise_invert(a), bitwise_not(a)));
  // bool operands are logic, and keep bool.
  Array p = array({true, true, false}), q = array({true, false, false});
  check_array(bitwise_and(p, q), {3}, bool_, {1, 0, 0});
  check_array(bitwise_or(p, q), {3}, bool_, {1, 1, 0});
  check_array(bitwise_xor(p, q), {3}, bool_, {0, 1, 0});
  check_array(bitwise_not(p), {3}, bool_, {0, 0, 1});
  check_array(bitwise_and(array({6u}), 3), {1}, uint32, {2});
  LINUM_CHECK_ERROR(bitwise_and(array({1.0}), array({1})), TypeError,
                    "bitwise_and: expected integer or bool operands, got float64");
  LINUM_CHECK_ERROR(bitwise_not(array({1.0f})), TypeError,
                    "bitwise_not: expected an integer or bool operand, got float32");
}

TEST_CASE("shifts follow lax: out-of-range counts give 0 or the sign fill") {
  const double imin = std::numeric_limits<std::int32_t>::min();
  check_array(left_shift(array({1, 1, 1, 3}), array({31, 32, -1, 2})), {4}, int32,
              {imin, 0, 0, 12});
  check_array(right_shift(array({-8, -8, 8, -8}), array({1, 40, 40, -1})), {4}, int32,
              {-4, -1, 0, -1});
  check_array(right_shift(array({0x80000000u, 0x80000000u}), array({31u, 32u})), {2}, uint32,
              {1, 0});
  check_array(left_shift(array({true}), array({true})), {1}, int32, {2});
  CHECK(same(bitwise_left_shift(array({3}), array({2})), left_shift(array({3}), array({2}))));
  CHECK(same(bitwise_right_shift(array({-9}), array({2})), right_shift(array({-9}), array({2}))));
  LINUM_CHECK_ERROR(left_shift(array({1.0f}), array({1})), TypeError,
                    "left_shift: expected integer operands");
}

TEST_CASE("gcd and lcm of signed integers (values derived with numpy here)") {
  check_array(gcd(array({12, -18, 0, 7}), array({18, 12, 0, 0})), {4}, int32, {6, 6, 0, 7});
  check_array(lcm(array({4, -6, 0}), array({6, 4, 5})), {3}, int32, {12, 12, 0});
  check_array(gcd(array({24u}), array({36u})), {1}, uint32, {12});
  // |INT_MIN| overflows int32; the magnitudes are taken unsigned: gcd(INT_MIN, 6) = 2.
  check_array(gcd(array({std::numeric_limits<std::int32_t>::min()}), array({6})), {1}, int32, {2});
  LINUM_CHECK_ERROR(gcd(array({1.0}), array({2})), ValueError,
                    "gcd: arguments must be integers, got float64");
  LINUM_CHECK_ERROR(lcm(array({true}), array({true})), ValueError,
                    "lcm: arguments must be integers, got bool");
}

// ---- derivatives

TEST_CASE("derivatives match finite differences (check_grads, float64)") {
  struct Case {
    const char* name;
    Unary f;
    double lo, hi;
  };
  const Case cases[] = {
      {"tan", [](const Array& x) { return tan(x); }, -1.2, 1.2},
      {"arcsin", [](const Array& x) { return arcsin(x); }, -0.9, 0.9},
      {"arccos", [](const Array& x) { return arccos(x); }, -0.9, 0.9},
      {"arctan", [](const Array& x) { return arctan(x); }, -3, 3},
      {"sinh", [](const Array& x) { return sinh(x); }, -3, 3},
      {"cosh", [](const Array& x) { return cosh(x); }, -3, 3},
      {"arcsinh", [](const Array& x) { return arcsinh(x); }, -3, 3},
      {"arccosh", [](const Array& x) { return arccosh(x); }, 1.2, 4},
      {"arctanh", [](const Array& x) { return arctanh(x); }, -0.9, 0.9},
      {"exp2", [](const Array& x) { return exp2(x); }, -3, 3},
      {"cbrt", [](const Array& x) { return cbrt(x); }, 0.2, 3},
      {"cbrt<0", [](const Array& x) { return cbrt(x); }, -3, -0.2},
      {"log2", [](const Array& x) { return log2(x); }, 0.2, 3},
      {"log10", [](const Array& x) { return log10(x); }, 0.2, 3},
      {"reciprocal", [](const Array& x) { return reciprocal(x); }, 0.5, 3},
      {"sinc", [](const Array& x) { return sinc(x); }, -2.5, 2.5},
      {"deg2rad", [](const Array& x) { return deg2rad(x); }, -3, 3},
      {"rad2deg", [](const Array& x) { return rad2deg(x); }, -3, 3},
      {"fabs", [](const Array& x) { return fabs(x); }, 0.2, 3},
      {"frexp", [](const Array& x) { return frexp(x).first; }, 0.3, 7},
      {"modf", [](const Array& x) { return modf(x).first; }, 0.1, 0.9},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    check_grads(c.f, data({2, 3}, 11, c.lo, c.hi));
  }
  struct Case2 {
    const char* name;
    BinaryFn f;
    double lo1, hi1, lo2, hi2;
  };
  const Case2 cases2[] = {
      {"arctan2", [](const Array& y, const Array& x) { return arctan2(y, x); }, -2, 2, 0.5, 2},
      {"hypot", [](const Array& a, const Array& b) { return hypot(a, b); }, 0.5, 2, -2, -0.5},
      {"logaddexp2", [](const Array& a, const Array& b) { return logaddexp2(a, b); }, -2, 2, -2, 2},
      {"float_power", [](const Array& a, const Array& b) { return float_power(a, b); }, 0.5, 2, -2,
       2},
      {"fmod", [](const Array& a, const Array& b) { return fmod(a, b); }, 2.1, 2.9, 1.1, 1.4},
      {"remainder", [](const Array& a, const Array& b) { return remainder(a, b); }, -2.9, -2.1, 1.1,
       1.4},
      {"copysign", [](const Array& a, const Array& b) { return copysign(a, b); }, -2, 2, -2, -0.5},
      {"fmax", [](const Array& a, const Array& b) { return fmax(a, b); }, -2, 0, 0.5, 2},
  };
  for (const auto& c : cases2) {
    INFO(c.name);
    check_grads([&](const Arrays& a) { return c.f(a[0], a[1]); },
                Arrays{data({2, 3}, 12, c.lo1, c.hi1), data({3}, 13, c.lo2, c.hi2)});
  }
  check_grads([](const Array& x) { return ldexp(x, array({3, -2, 0})); }, data({2, 3}, 14, -2, 2));
}

TEST_CASE("closed-form derivatives at special points") {
  auto d = [](Unary f, double at) { return grad(f)(Array(at)).item<double>(); };
  auto d2 = [](Unary f, double at) {
    return grad([f](const Array& a) { return grad(f)(a); })(Array(at)).item<double>();
  };
  // tan' = 1 + tan², asin' = 1/sqrt(1 - x²), atanh' = 1 / (1 - x²), cbrt'(8) = 1/12.
  CHECK(d([](const Array& x) { return tan(x); }, kPi / 4) == doctest::Approx(2.0));
  CHECK(d([](const Array& x) { return arcsin(x); }, 0.6) == doctest::Approx(1.25));
  CHECK(d([](const Array& x) { return arctanh(x); }, 0.5) == doctest::Approx(4.0 / 3));
  CHECK(d([](const Array& x) { return cbrt(x); }, 8.0) == doctest::Approx(1.0 / 12));
  CHECK(d([](const Array& x) { return exp2(x); }, 3.0) == doctest::Approx(8 * std::log(2.0)));
  // sinc's Maclaurin rule: sinc'(0) = 0, sinc''(0) = -pi²/3 (sinc = 1 - (pi x)²/6 + ...).
  CHECK(d([](const Array& x) { return sinc(x); }, 0.0) == 0.0);
  CHECK(d2([](const Array& x) { return sinc(x); }, 0.0) == doctest::Approx(-kPi * kPi / 3));
  // hypot at the origin through jnp's composition: the where picks max(|a|, |b|), whose tie
  // rule gives 1/2 to each side, times lax.abs'(0) = 1.
  auto g0 = grad([](const Array& a, const Array& b) { return hypot(a, b); }, argnums<0, 1>)(
      Array(0.0), Array(0.0));
  CHECK(std::get<0>(g0).item<double>() == 0.5);
  CHECK(std::get<1>(g0).item<double>() == 0.5);
  // d/dy fmod(x, y) = -trunc(x / y): fmod(7.5, 2) -> -3.
  auto gf = grad([](const Array& a, const Array& b) { return fmod(a, b); }, argnums<0, 1>)(
      Array(7.5), Array(2.0));
  CHECK(std::get<0>(gf).item<double>() == 1.0);
  CHECK(std::get<1>(gf).item<double>() == -3.0);
  // Rounding, signbit and integer ops have zero derivatives.
  CHECK(d([](const Array& x) { return trunc(x) + rint(x); }, 1.3) == 0.0);
  CHECK(d([](const Array& x) { return astype(signbit(x), float64) + heaviside(x, Array(0.5)); },
          1.3) == 0.0);
}

TEST_CASE("nextafter has no derivative, as lax.nextafter") {
  LINUM_CHECK_ERROR(grad([](const Array& x) { return nextafter(x, Array(2.0)); })(Array(1.0)),
                    NotImplementedError, "nextafter");
}

// ---- vmap and jit -------------------------------------------------------------------------------

TEST_CASE("vmap of the new elementwise ops equals a loop over examples") {
  Array a = data({3, 4, 2}, 21, 0.2, 0.9), b = data({3, 2}, 22, 0.5, 2.0),
        c = data({4, 2}, 23, 0.5, 2.0);
  check_vmap([](const Array& x) { return tan(x) + arcsin(x) + arccos(x) + arctan(x) + arctanh(x); },
             axes({1}, 1), a);
  check_vmap(
      [](const Array& x) {
        return sinh(x) + cosh(x) + arcsinh(x) + arccosh(x + 1.5) + exp2(x) + cbrt(x);
      },
      axes({2}), a);
  check_vmap(
      [](const Array& x) { return sinc(x) + log2(x) + log10(x) + reciprocal(x) + trunc(x * 5.0); },
      axes({0}), a);
  check_vmap(
      [](const Array& x, const Array& y) {
        return arctan2(x, y) + hypot(x, y) + fmod(y, x) + remainder(y, x);
      },
      axes({1, kNone}), a, b);
  check_vmap([](const Array& x,
                const Array& y) { return nextafter(x, y) + logaddexp2(x, y) + copysign(x, -y); },
             axes({0, kNone}), a, c);
  check_vmap([](const Array& x) { return frexp(x).first + astype(frexp(x).second, float64); },
             axes({2}), a);
  Array i = array({{12, -7, 5}, {9, 4, -3}}), j = array({8, 2, 3});
  check_vmap([](const Array& x,
                const Array& y) { return gcd(x, y) + bitwise_xor(x, y) + floor_divide(x, y); },
             axes({0, kNone}), i, j);
  check_vmap([](const Array& x,
                const Array& y) { return left_shift(x, y) + right_shift(x, y) + bitwise_not(x); },
             axes({1, kNone}), i, array({1, 33}));
  // Per-example gradients through the new primitives.
  Array xs = data({5, 3}, 31, 0.3, 0.9);
  auto f = [](const Array& x) { return sum(arcsin(x) * sinh(x) + arctan2(x, 1.0 - x)); };
  Array pe = vmap(grad(f))(xs);
  Arrays rows;
  for (int k = 0; k < 5; ++k) rows.push_back(grad(f)(optest::index_axis(xs, 0, k)));
  check_close(pe, optest::stack0(rows));
}

TEST_CASE("jit replays the new ops bit for bit, fused chains included") {
  auto chain = [](const Array& x, const Array& y) {
    Array z = x;
    for (int k = 0; k < 3; ++k)
      z = arctan(tan(z * 0.5f)) + sinh(z) * 0.1f - cosh(z) * 0.1f + cbrt(z) + exp2(z * 0.25f) +
          fmod(z, y) + arctan2(z, y) + arcsinh(z) - nextafter(z, y);
    return z;
  };
  for (DType dt : {float32, float64}) {
    const Array x = astype(data({1000}, 1, 0.1, 0.9), dt),
                y = astype(data({1000}, 2, 1.0, 2.0), dt);
    auto jc = jit(chain);
    CHECK(same(jc(x, y), chain(x, y)));
    CHECK(same(jc(x, y), chain(x, y)));  // the replay
  }
  auto mixed = [](const Array& x, const Array& i) {
    auto [m, e] = frexp(x);
    return std::make_pair(m + sinc(x) + hypot(x, 2.0) + round(x, 2) + modf(x).first,
                          gcd(i, 6) + left_shift(i, 2) + floor_divide(i, 3) + remainder(i, -4) + e);
  };
  const Array x = data({7}, 3), i = array({12, -7, 5, 0, 9, -3, 8});
  auto jm = jit(mixed);
  auto got = jm(x, i), want = mixed(x, i);
  CHECK(same(got.first, want.first));
  CHECK(same(got.second, want.second));
  // jit of grad equals grad.
  auto loss = [](const Array& v) { return sum(arctanh(v * 0.5) * cosh(v) + hypot(v, 1.0)); };
  CHECK(same(jit(grad(loss))(x), grad(loss)(x)));
}

TEST_CASE("errors name the op and what it got") {
  LINUM_CHECK_ERROR(tan(Array()), ValueError, "tan: got an empty Array handle");
  LINUM_CHECK_ERROR(arctan2(array({1.0, 2.0}), array({1.0, 2.0, 3.0})), ValueError,
                    "arctan2: shapes (2,) and (3,) are incompatible for broadcasting");
  LINUM_CHECK_ERROR(floor_divide(array({1, 2}), array({1, 2, 3})), ValueError,
                    "floor_divide: shapes (2,) and (3,)");
  LINUM_CHECK_ERROR(hypot(Array(), Array(1.0)), ValueError, "hypot: got an empty Array handle");
  LINUM_CHECK_ERROR(isclose(array({1.0, 2.0}), array({1.0, 2.0, 3.0})), ValueError,
                    "isclose: shapes (2,) and (3,)");
}

TEST_CASE("select: the first true condition's choice, else the default") {
  Array x = array({-2.0, 0.5, 3.0, 7.0});
  Array r = select({x < 0.0, x<1.0, x> 5.0}, {negative(x), x * 10.0, Array(5.0)}, Array(-1.0));
  check_array(r, {4}, float64, {2, 5, -1, 5});
  check_array(select({array({1, 0}), array({true, true})}, {array({1, 2}), Array(2.5f)}), {2},
              float32, {1, 2.5});
  check_array(select({array({false, false})}, {array({1, 2})}), {2}, int32, {0, 0});
  // The cotangent reaches the selected choice only.
  auto g = grad([](const Array& v) {
    return sum(select({v < 0.0, v < 1.0}, {square(v), v * 3.0}, v * 0.5));
  })(x);
  check_array(g, {4}, float64, {-4, 3, 0.5, 0.5});
  check_vmap(
      [](const Array& v) {
        return select({v<0.0, v> 0.5}, {v, square(v)}, Array(1.0));
      },
      axes({1}), data({3, 4}, 71));
  LINUM_CHECK_ERROR(select({x > 0.0}, {x, x}), ValueError,
                    "select: condlist must have length equal to choicelist (1 vs 2)");
  LINUM_CHECK_ERROR(select({}, {}), ValueError, "select: condlist must be non-empty");
}

}  // namespace test_elementwise_math
