// Elementwise ops: values checked by hand (dtypes, broadcasting, NaN/inf), derivatives with
// check_grads and at JAX's kinks, vmap against a loop over examples, and error messages.
#include <cmath>
#include <limits>

#include "op_testing.hpp"
#include "support/buffer_counter.hpp"

namespace test_elementwise {

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

double grad_at(Array (*f)(const Array&), double x) { return grad(f)(Array(x)).item<double>(); }
}  // namespace

// ---- unary math -------------------------------------------------------------------------------

TEST_CASE("log1p, expm1, rsqrt, sigmoid, erf at closed-form points (float64)") {
  Array x = array({0.0, 1.718281828459045, -0.5});
  check_array(log1p(x), {3}, float64, {0.0, 1.0, std::log(0.5)}, 1e-14);
  check_array(expm1(array({0.0, std::log(2.0), -kInf})), {3}, float64, {0.0, 1.0, -1.0}, 1e-14);
  check_array(rsqrt(array({4.0, 0.25, 0.0})), {3}, float64, {0.5, 2.0, kInf}, 1e-14);
  check_array(sigmoid(array({0.0, std::log(3.0), -std::log(3.0), 1000.0, -1000.0})), {5}, float64,
              {0.5, 0.75, 0.25, 1.0, 0.0}, 1e-14);
  check_array(erf(array({0.0, 0.5, 1.0, -2.0})), {4}, float64,
              {0.0, 0.5204998778130465, 0.8427007929497149, -0.9953222650189527}, 1e-14);
  // expm1/log1p keep precision where exp(x) - 1 and log(1 + x) would cancel.
  CHECK(expm1(Array(1e-10)).item<double>() == doctest::Approx(1.00000000005e-10).epsilon(1e-12));
  CHECK(log1p(Array(1e-10)).item<double>() == doctest::Approx(9.9999999995e-11).epsilon(1e-12));
}

TEST_CASE("float32 SIMD kernels agree with scalar libm on every lane and the tail") {
  std::vector<float> v;
  for (int i = 0; i < 37; ++i) v.push_back(-3.0f + 0.17f * static_cast<float>(i));
  Array x = array(v);
  auto check = [&](Array y, auto ref) {
    REQUIRE(y.dtype() == float32);
    const float* p = y.data<float>();
    for (std::size_t i = 0; i < v.size(); ++i) {
      INFO("x = " << v[i]);
      CHECK(p[i] ==
            doctest::Approx(static_cast<float>(ref(static_cast<double>(v[i])))).epsilon(2e-6));
    }
  };
  check(log1p(x + 3.5f),
        [](double a) { return std::log1p(static_cast<double>(static_cast<float>(a + 3.5))); });
  check(expm1(x), [](double a) { return std::expm1(a); });
  check(rsqrt(x + 3.5f),
        [](double a) { return 1 / std::sqrt(static_cast<double>(static_cast<float>(a + 3.5))); });
  check(sigmoid(x), [](double a) { return 1 / (1 + std::exp(-a)); });
  check(erf(x), [](double a) { return std::erf(a); });
  check(abs(x), [](double a) { return std::fabs(a); });
  check(floor(x), [](double a) { return std::floor(a); });
  check(ceil(x), [](double a) { return std::ceil(a); });
  check(round(x), [](double a) { return std::nearbyint(a); });
  check(relu(x), [](double a) { return a > 0 ? a : 0; });
}

TEST_CASE("round is half to even; floor/ceil; sign keeps NaN") {
  check_array(round(array({0.5, 1.5, 2.5, -0.5, -1.5, 2.4, 2.6, -2.6})), {8}, float64,
              {0, 2, 2, -0.0, -2, 2, 3, -3});
  CHECK(std::signbit(round(Array(-0.5)).item<double>()));
  check_array(floor(array({-1.5f, 1.5f, 2.0f})), {3}, float32, {-2, 1, 2});
  check_array(ceil(array({-1.5f, 1.5f, 2.0f})), {3}, float32, {-1, 2, 2});
  check_array(sign(array({-3.0, 0.0, 2.5, kNan})), {4}, float64, {-1, 0, 1, kNan});
}

TEST_CASE("unary dtype rules follow jnp") {
  Array i = array({-2, 0, 3});
  // Transcendentals of integers and bools compute in float32.
  check_array(exp(i), {3}, float32, {std::exp(-2.0), 1.0, std::exp(3.0)});
  check_array(log1p(array({true, false})), {2}, float32, {std::log(2.0), 0.0});
  check_array(sigmoid(array({0})), {1}, float32, {0.5});
  // abs, sign, square keep integers; floor/ceil/round return integers unchanged.
  check_array(abs(i), {3}, int32, {2, 0, 3});
  check_array(sign(i), {3}, int32, {-1, 0, 1});
  check_array(square(i), {3}, int32, {4, 0, 9});
  check_array(floor(i), {3}, int32, {-2, 0, 3});
  check_array(round(i), {3}, int32, {-2, 0, 3});
  // abs of unsigned or bool is the identity; sign and square of bool are int32.
  check_array(abs(array({true, false})), {2}, bool_, {1, 0});
  check_array(abs(array({7u, 0u})), {2}, uint32, {7, 0});
  check_array(sign(array({true, false})), {2}, int32, {1, 0});
  check_array(square(array({true, false})), {2}, int32, {1, 0});
}

TEST_CASE("abs wraps the most negative integer and clears the sign of -0.0, as lax.abs") {
  // Elements past the last SIMD batch take the scalar path: 17 float32 values cover both.
  std::vector<float> z(17, -0.0f);
  Array a = abs(array(z));
  for (int k = 0; k < 17; ++k) CHECK_FALSE(std::signbit(a.data<float>()[k]));
  CHECK_FALSE(std::signbit(abs(array(-0.0)).item<double>()));
  check_array(abs(array(std::vector<std::int32_t>{-2147483647 - 1, -5})), {2}, int32,
              {-2147483648.0, 5});
}

TEST_CASE("int32 +, -, * and negation wrap around, as XLA's integer arithmetic") {
  const Array big = array(std::vector<std::int32_t>{2147483647, -2147483647 - 1, 65536});
  const Array one = array(std::vector<std::int32_t>{1, 1, 65536});
  check_array(add(big, one), {3}, int32, {-2147483648.0, -2147483647.0, 131072});
  check_array(subtract(big, one), {3}, int32, {2147483646, 2147483647, 0});
  check_array(multiply(big, one), {3}, int32, {2147483647, -2147483648.0, 0});
  check_array(negative(big), {3}, int32, {-2147483647, -2147483648.0, -65536});
}

TEST_CASE("isnan and isfinite: bool results for every dtype") {
  Array x =
      array({1.0f, static_cast<float>(kNan), static_cast<float>(kInf), -static_cast<float>(kInf)});
  check_array(isnan(x), {4}, bool_, {0, 1, 0, 0});
  check_array(isfinite(x), {4}, bool_, {1, 0, 0, 0});
  check_array(isnan(array({1, 2})), {2}, bool_, {0, 0});
  check_array(isfinite(array({true})), {1}, bool_, {1});
}

// ---- power --------------------------------------------------------------------------------------

TEST_CASE("power: floats, integer exponents, integers, and promotion") {
  Array x = array({{1.0, 2.0, 4.0}, {0.5, 9.0, 0.0}});
  check_array(power(x, array({2.0, 0.5, -1.0})), {2, 3}, float64,
              {1, std::sqrt(2.0), 0.25, 0.25, 3, kInf});
  check_array(power(x, 3), {2, 3}, float64, {1, 8, 64, 0.125, 729, 0});
  check_array(power(array({-2.0f, 3.0f}), -2), {2}, float32, {0.25, 1.0 / 9});
  check_array(power(array({-2.0f}), 0), {1}, float32, {1});
  // int ** int stays int (scalar exponent and array exponent); negative exponents follow XLA.
  check_array(power(array({-2, 3, 5}), 3), {3}, int32, {-8, 27, 125});
  check_array(power(array({2, 1, -1, -1}), array({-1, -3, -3, -2})), {4}, int32, {0, 1, -1, 1});
  check_array(power(array({2, 3}), array({10, 0})), {2}, int32, {1024, 1});
  // A float exponent promotes an int base to float32, as a weak Python float does.
  check_array(power(array({4, 9}), 0.5), {2}, float32, {2, 3});
  check_array(power(array({true, false}), array({true, true})), {2}, int32, {1, 0});
}

TEST_CASE("power: gradients (float64), broadcasting and integer exponents") {
  Array x = data({2, 3}, 3, 0.5, 2.0), y = data({3}, 4, -1.5, 1.5);
  check_grads([](const Arrays& a) { return power(a[0], a[1]); }, Arrays{x, y});
  check_grads([](const Arrays& a) { return power(a[1], a[0]); }, Arrays{x, y + 2.0});
  Array z = data({4}, 5);
  check_grads([](const Array& a) { return power(a, 3); }, z);
  check_grads([](const Array& a) { return power(a, -2); }, z + 3.0);
  check_grads([](const Array& a) { return square(a); }, z);
  // d/dy x^y at x = 0 reads log(0) as 0 (JAX's rule); d/dx x^2 at 0 is 0.
  auto [gx, gy] = grad([](const Array& a, const Array& b) { return sum(power(a, b)); },
                       argnums<0, 1>)(array({0.0, 2.0}), array({2.0, 3.0}));
  check_array(gx, {2}, float64, {0, 12});
  check_array(gy, {2}, float64, {0, 8 * std::log(2.0)});
  // Second derivative through integer_pow: d2/dx2 x^3 = 6x.
  auto d2 =
      grad([](const Array& a) { return grad([](const Array& b) { return power(b, 3); })(a); });
  CHECK(d2(Array(1.5)).item<double>() == doctest::Approx(9.0));
}

TEST_CASE("power rejects negative integer powers of integer arrays") {
  LINUM_CHECK_ERROR(power(array({2, 3}), -1), TypeError,
                    "integers cannot be raised to negative powers");
  LINUM_CHECK_ERROR(power(array({1.0, 2.0}), array({1.0, 2.0, 3.0})), ValueError,
                    "power: shapes (2,) and (3,) are incompatible for broadcasting");
}

// ---- comparisons and logic ----------------------------------------------------------------------

TEST_CASE("comparisons broadcast, promote, and treat NaN as numpy does") {
  Array a = array({{1.0f, 2.0f, 3.0f}, {4.0f, static_cast<float>(kNan), 0.0f}});
  Array b = array({2, 2, 2});  // int32 promotes to float32
  check_array(less(a, b), {2, 3}, bool_, {1, 0, 0, 0, 0, 1});
  check_array(less_equal(a, b), {2, 3}, bool_, {1, 1, 0, 0, 0, 1});
  check_array(greater(a, b), {2, 3}, bool_, {0, 0, 1, 1, 0, 0});
  check_array(greater_equal(a, b), {2, 3}, bool_, {0, 1, 1, 1, 0, 0});
  check_array(equal(a, b), {2, 3}, bool_, {0, 1, 0, 0, 0, 0});
  check_array(not_equal(a, b), {2, 3}, bool_, {1, 0, 1, 1, 1, 1});
  check_array(not_equal(a, a), {2, 3}, bool_, {0, 0, 0, 0, 1, 0});
  check_array(a > 1.5, {2, 3}, bool_, {0, 1, 1, 1, 0, 0});
  check_array(0 >= array({-1, 0, 1}), {3}, bool_, {1, 1, 0});
  LINUM_CHECK_ERROR(less(array({1, 2}), array({1, 2, 3})), ValueError,
                    "less: shapes (2,) and (3,) are incompatible for broadcasting");
}

TEST_CASE("binary kernels: an operand of size 1 and any rank, small and threaded sizes") {
  // Equal element counts and size-1 operands take flat loops (split over threads when long);
  // each case is checked against an explicit loop, in every operand order.
  for (std::int64_t n : {std::int64_t{5}, std::int64_t{1} << 18}) {
    std::vector<float> xs(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < xs.size(); ++i) xs[i] = 0.25f * static_cast<float>(i % 97) - 3.0f;
    const Array x = array(xs), s = full({1, 1}, 1.5f), x_row = reshape(x, {1, n});
    const auto check = [&](const Array& r, const Shape& shape, auto f) {
      REQUIRE(r.shape() == shape);
      const Array r32 = astype(r, float32);
      const float* got = r32.data<float>();
      for (std::size_t i = 0; i < xs.size(); ++i) REQUIRE(got[i] == f(xs[i]));
    };
    check(subtract(x, s), {1, n}, [](float v) { return v - 1.5f; });
    check(subtract(s, x), {1, n}, [](float v) { return 1.5f - v; });
    check(less(s, x), {1, n}, [](float v) { return float(1.5f < v); });
    check(subtract(x_row, x), {1, n}, [](float) { return 0.0f; });  // same count, other rank
    check(multiply(s, full({1}, 2.0f)) * x, {1, n}, [](float v) { return 3.0f * v; });
  }
}

TEST_CASE("comparisons are not differentiable: no tangent, zero gradient") {
  auto f = [](const Array& x) { return sum(astype(greater(x, 0.5), float64) * x); };
  check_array(grad(f)(array({0.0, 1.0, 2.0})), {3}, float64, {0, 1, 1});
  auto [y, t] = jvp([](const Array& x) { return astype(less(x, 1.0), float64); },
                    std::tuple{array({0.0, 2.0})}, std::tuple{array({1.0, 1.0})});
  check_array(t, {2}, float64, {0, 0});
}

TEST_CASE("logical and/or/not accept any dtype and read nonzero (NaN included) as true") {
  Array p = array({{true}, {false}});
  Array q = array({true, false, true});
  check_array(logical_and(p, q), {2, 3}, bool_, {1, 0, 1, 0, 0, 0});
  check_array(logical_or(p, q), {2, 3}, bool_, {1, 1, 1, 1, 0, 1});
  check_array(logical_not(q), {3}, bool_, {0, 1, 0});
  check_array(logical_and(array({0.0, 2.5, kNan}), array({1, 1, 1})), {3}, bool_, {0, 1, 1});
  check_array(logical_or(array({0, 0}), array({0.0f, -1.0f})), {2}, bool_, {0, 1});
  check_array(logical_not(array({0, 3})), {2}, bool_, {1, 0});
  check_array(!(array({1.0, 2.0}) > 1.5) || array({true, true}), {2}, bool_, {1, 1});
  LINUM_CHECK_ERROR(logical_and(array({true, false}), array({true, true, true})), ValueError,
                    "logical_and: shapes (2,) and (3,) are incompatible");
}

// ---- where, clip, stop_gradient
// ---------------------------------------------------------------------

TEST_CASE("where broadcasts three operands and promotes x with y") {
  Array c = array({{true}, {false}});  // (2, 1)
  Array x = array({1, 2, 3});          // (3,) int32
  Array y = Array(0.5f);               // () float32
  check_array(where(c, x, y), {2, 3}, float32, {1, 2, 3, 0.5, 0.5, 0.5});
  check_array(where(array({1.0, 0.0, kNan}), array({1, 1, 1}), array({0, 0, 0})), {3}, int32,
              {1, 0, 1});
  check_array(where(array({true, false}), 7, array({1.0, 2.0})), {2}, float64, {7, 2});
  // Big strided case: the kernel's odometer with all three broadcasting differently.
  Array cc = greater(reshape(arange(0, 6, 1, float64), {2, 1, 3}), 2.0);  // (2, 1, 3)
  Array xx = reshape(arange(0, 4, 1, float64), {4, 1});                   // (4, 1)
  Array r = where(cc, xx, -1.0);
  REQUIRE(r.shape() == Shape{2, 4, 3});
  auto v = values(r);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 3; ++k) CHECK(v[(i * 4 + j) * 3 + k] == (i * 3 + k > 2 ? j : -1.0));
  LINUM_CHECK_ERROR(
      where(array({true, false}), array({1, 2, 3}), 0), ValueError,
      "where: shapes (2,) (condition), (3,) (x) and () (y) are incompatible for broadcasting");
}

TEST_CASE("where routes cotangents by the condition, with broadcasting") {
  Array c = array({{true, false, true}, {false, false, true}});
  Array x = data({2, 3}, 7), y = data({3}, 8);
  check_grads([c](const Arrays& a) { return where(c, a[0], a[1]) * a[1]; }, Arrays{x, y});
  auto [gx, gy] = grad([c](const Array& a, const Array& b) { return sum(where(c, a, b)); },
                       argnums<0, 1>)(x, y);
  check_array(gx, {2, 3}, float64, {1, 0, 1, 0, 0, 1});
  check_array(gy, {3}, float64, {1, 2, 0});
  // The untaken branch's NaN does not leak into the gradient (double-where idiom).
  Array g = grad([](const Array& a) {
    Array safe = where(a > 0.0, a, 1.0);
    return sum(where(a > 0.0, log(safe), 0.0));
  })(array({-1.0, 2.0}));
  check_array(g, {2}, float64, {0, 0.5});
}

TEST_CASE("clip = minimum(maximum(x, lo), hi), bounds broadcast, empty bound means None") {
  Array x = array({{-2.0, 0.5, 3.0}, {1.0, -0.5, 9.0}});
  check_array(clip(x, -1.0, 2.0), {2, 3}, float64, {-1, 0.5, 2, 1, -0.5, 2});
  check_array(clip(x, array({0.0, 0.0, 5.0}), Array()), {2, 3}, float64, {0, 0.5, 5, 1, 0, 9});
  check_array(clip(x, Array(), array({{0.0}, {1.0}})), {2, 3}, float64, {-2, 0, 0, 1, -0.5, 1});
  check_array(clip(array({-5, 5, 1}), 0, 3), {3}, int32, {0, 3, 1});
  check_grads([](const Array& a) { return clip(a, -1.0, 1.0); }, array({-2.0, -0.3, 0.4, 1.7}));
  // At a bound, maximum/minimum's balanced rule gives 1/2, as jnp.clip's gradient.
  check_array(grad([](const Array& a) { return sum(clip(a, -1.0, 1.0)); })(array({-1.0, 1.0, 0.0})),
              {3}, float64, {0.5, 0.5, 1});
  LINUM_CHECK_ERROR(clip(array({1.0, 2.0}), array({0.0, 0.0, 0.0}), Array()), ValueError,
                    "clip: shapes (2,) and (3,)");
}

TEST_CASE("stop_gradient: identity on values, zero derivative, and still batched by vmap") {
  Array x = array({1.0, -2.0, 3.0});
  check_array(stop_gradient(x), {3}, float64, {1, -2, 3});
  auto f = [](const Array& a) { return sum(a * stop_gradient(a)); };
  check_array(grad(f)(x), {3}, float64, {1, -2, 3});  // d/dx x * c = c
  auto [y, t] = jvp([](const Array& a) { return stop_gradient(a) * 2.0; }, std::tuple{x},
                    std::tuple{ones_like(x)});
  check_array(t, {3}, float64, {0, 0, 0});
  Array xs = data({4, 3}, 9);
  check_vmap([](const Array& a) { return stop_gradient(a) + a; }, axes({1}), xs);
  // Per-example gradients see the stop: vmap(grad) and grad of a vmapped sum agree.
  Array pe = vmap(grad(f))(xs);
  check_close(pe, xs);
  check_close(grad([&](const Array& a) {
                return sum(vmap([](const Array& r) { return r * stop_gradient(r); })(a));
              })(xs),
              xs);
}

// ---- relu and the jax.nn activations ------------------------------------------------------------

TEST_CASE("relu: values (NaN stays NaN, ints stay ints) and relu'(0) = 0 as jax.nn.relu") {
  check_array(relu(array({-1.0, 0.0, 2.0, kNan})), {4}, float64, {0, 0, 2, kNan});
  check_array(relu(array({-3, 4})), {2}, int32, {0, 4});
  check_array(grad([](const Array& a) { return sum(relu(a)); })(array({-1.0, 0.0, 2.0})), {3},
              float64, {0, 0, 1});
  // maximum(x, 0) keeps its balanced tie rule: 1/2 at 0.
  CHECK(grad_at([](const Array& a) { return maximum(a, 0.0); }, 0.0) == 0.5);
  check_grads([](const Array& a) { return relu(a) * a; }, array({-1.5, 0.3, 2.0}));
}

TEST_CASE("relu's VJP is one fused pass equal to the select it replaces") {
  Array x = random::normal(random::key(0), {40, 50}), g = random::normal(random::key(1), {40, 50});
  auto [y, pull] = vjp([](const Array& a) { return relu(a); }, x);
  const long before = testing::buffer_count.load();
  Array ct = std::get<0>(pull(g));
  // One buffer: the cotangent itself, no bool mask beside it.
  CHECK(testing::buffer_count.load() - before == 1);
  CHECK(values(ct) == values(where(greater(x, 0), g, 0)));
  // Under vmap and in forward mode the fused rule gives the same as the select.
  Array batched = vmap(grad([](const Array& a) { return sum(relu(a) * a); }))(x);
  CHECK(values(batched) == values(where(greater(x, 0), 2 * x, 0)));
  auto [out, tan] = jvp([](const Array& a) { return relu(a); }, std::tuple{x}, std::tuple{g});
  CHECK(values(tan) == values(ct));
  // Second order: the derivative of relu' in x is zero, in the cotangent it is the mask again.
  check_grads([](const Arrays& a) { return grad([&](const Array& p) { return sum(relu(p) * a[1]); })(a[0]); },
              Arrays{array({-1.5, 0.3, 2.0}), array({0.7, -1.1, 0.4})});
}

TEST_CASE("mul's VJP computes no cotangent for a constant factor") {
  Array x = random::normal(random::key(2), {40, 50}), c = random::normal(random::key(3), {40, 50});
  Array g = random::normal(random::key(4), {40, 50});
  auto [y, pull] = vjp([&](const Array& a) { return a * c; }, x);
  const long before = testing::buffer_count.load();
  Array ct = std::get<0>(pull(g));
  CHECK(testing::buffer_count.load() - before == 1);  // g * c only, nothing for c
  CHECK(values(ct) == values(g * c));
  auto [gx, gc] = grad([](const Array& a, const Array& b) { return sum(a * b); }, argnums<0, 1>)(x, c);
  CHECK(values(gx) == values(c));
  CHECK(values(gc) == values(x));
}

TEST_CASE("jax.nn activations at closed-form points") {
  Array x = array({-1.0, 0.0, 1.0, 2.0});
  check_array(gelu(x), {4}, float64,
              {-0.15880800939172324, 0, 0.8411919906082768, 1.954597694087775}, 1e-14);
  check_array(gelu(x, false), {4}, float64,
              {-0.15865525393145707, 0, 0.8413447460685429, 1.9544997361036416}, 1e-14);
  check_array(softplus(array({0.0, 3.0, -3.0, 800.0, -800.0})), {5}, float64,
              {std::log(2.0), 3.048587351573742, 0.04858735157374206, 800, 0}, 1e-14);
  check_array(log_sigmoid(array({0.0, -3.0})), {2}, float64, {-std::log(2.0), -3.048587351573742},
              1e-14);
  check_array(silu(array({0.0, 1.0})), {2}, float64, {0, 0.7310585786300049}, 1e-14);
  check_array(swish(array({1.0})), {1}, float64, {0.7310585786300049}, 1e-14);
  check_array(soft_sign(array({3.0, -1.0})), {2}, float64, {0.75, -0.5});
  check_array(elu(array({-1.0, 0.0, 2.0})), {3}, float64, {-0.6321205588285577, 0, 2}, 1e-14);
  check_array(elu(array({-1.0}), 2.0), {1}, float64, {-1.2642411176571153}, 1e-14);
  check_array(celu(array({-1.0, 2.0}), 2.0), {2}, float64, {2 * std::expm1(-0.5), 2}, 1e-14);
  check_array(selu(array({-1.0, 1.0})), {2}, float64, {-1.1113307378125625, 1.0507009873554805},
              1e-14);
  check_array(leaky_relu(array({-2.0, 0.0, 3.0})), {3}, float64, {-0.02, 0, 3});
  check_array(leaky_relu(array({-2.0}), 0.2), {1}, float64, {-0.4});
  check_array(relu6(array({-1.0, 3.0, 7.0, kNan})), {4}, float64, {0, 3, 6, kNan});
  check_array(hard_tanh(array({-3.0, 0.5, 3.0})), {3}, float64, {-1, 0.5, 1});
  check_array(gelu(array({1.0f})), {1}, float32, {0.8411919906082768});
  check_array(softplus(array({0})), {1}, float32, {std::log(2.0)});
}

TEST_CASE("logaddexp is stable at large and infinite inputs") {
  check_array(
      logaddexp(array({0.0, 1000.0, -kInf, kInf, 1.0}), array({0.0, 1000.0, -kInf, kInf, -kInf})),
      {5}, float64, {std::log(2.0), 1000 + std::log(2.0), -kInf, kInf, 1.0}, 1e-14);
  check_array(logaddexp(array({{1.0}, {2.0}}), array({0.0, 1.0})), {2, 2}, float64,
              {std::log(std::exp(1.0) + 1), std::log(2 * std::exp(1.0)),
               std::log(std::exp(2.0) + 1), std::log(std::exp(2.0) + std::exp(1.0))},
              1e-14);
  check_array(logaddexp(array({1, 2}), array({1, 2})), {2}, float32,
              {1 + std::log(2.0), 2 + std::log(2.0)});
}

TEST_CASE("jax.nn activations: gradients, including JAX's values at the kinks") {
  Array x = array({-1.7, -0.4, 0.3, 1.2, 2.5});
  check_grads([](const Array& a) { return gelu(a); }, x);
  check_grads([](const Array& a) { return gelu(a, false); }, x);
  check_grads([](const Array& a) { return softplus(a); }, x);
  check_grads([](const Array& a) { return log_sigmoid(a); }, x);
  check_grads([](const Array& a) { return silu(a); }, x);
  check_grads([](const Array& a) { return soft_sign(a); }, x);
  check_grads([](const Array& a) { return elu(a, 1.5); }, x);
  check_grads([](const Array& a) { return celu(a, 0.7); }, x);
  check_grads([](const Array& a) { return selu(a); }, x);
  check_grads([](const Array& a) { return leaky_relu(a); }, x);
  check_grads([](const Array& a) { return relu6(a * 4.0); }, x);
  check_grads([](const Array& a) { return hard_tanh(a); }, x);
  check_grads([](const Arrays& a) { return logaddexp(a[0], a[1]); },
              Arrays{data({2, 3}, 11), data({3}, 12)});
  // Kinks: softplus'(0) = sigmoid(0); logaddexp splits a tie evenly; relu6' = 0 at 0 and 6;
  // leaky_relu'(0) = 1 (x >= 0 branch); elu'(0) = alpha * exp(0); celu'(0) = 1.
  CHECK(grad_at([](const Array& a) { return softplus(a); }, 0.0) == doctest::Approx(0.5));
  auto [ga, gb] = grad([](const Array& a, const Array& b) { return logaddexp(a, b); },
                       argnums<0, 1>)(Array(2.0), Array(2.0));
  CHECK(ga.item<double>() == doctest::Approx(0.5));
  CHECK(gb.item<double>() == doctest::Approx(0.5));
  check_array(grad([](const Array& a) { return sum(relu6(a)); })(array({0.0, 6.0, 3.0, 7.0})), {4},
              float64, {0, 0, 1, 0});
  CHECK(grad_at([](const Array& a) { return leaky_relu(a); }, 0.0) == 1.0);
  CHECK(grad_at([](const Array& a) { return elu(a, 2.0); }, 0.0) == doctest::Approx(2.0));
  CHECK(grad_at([](const Array& a) { return celu(a); }, 0.0) == doctest::Approx(1.0));
  CHECK(grad_at([](const Array& a) { return hard_tanh(a); }, 0.5) == 1.0);
}

// ---- derivatives of the unary primitives
// ------------------------------------------------------------

TEST_CASE("unary primitives: check_grads in float64 and second derivatives") {
  Array x = data({2, 3}, 13);
  Array pos = data({2, 3}, 14, 0.2, 3.0);
  check_grads([](const Array& a) { return log1p(a); }, pos);
  check_grads([](const Array& a) { return expm1(a); }, x);
  check_grads([](const Array& a) { return rsqrt(a); }, pos);
  check_grads([](const Array& a) { return sigmoid(a); }, x);
  check_grads([](const Array& a) { return erf(a); }, x);
  check_grads([](const Array& a) { return abs(a) * a; }, x);
  // d2/dx2 sigmoid = s (1 - s) (1 - 2 s); d2/dx2 erf = -2x * 2/sqrt(pi) exp(-x^2).
  auto d2 = [](Array (*f)(const Array&), double at) {
    return grad([f](const Array& a) { return grad(f)(a); })(Array(at)).item<double>();
  };
  CHECK(d2([](const Array& a) { return sigmoid(a); }, std::log(3.0)) ==
        doctest::Approx(0.75 * 0.25 * -0.5));
  CHECK(d2([](const Array& a) { return erf(a); }, 0.5) ==
        doctest::Approx(-2 * 0.5 * 2 / std::sqrt(M_PI) * std::exp(-0.25)));
  CHECK(d2([](const Array& a) { return rsqrt(a); }, 4.0) ==
        doctest::Approx(0.75 * std::pow(4.0, -2.5)));
  CHECK(d2([](const Array& a) { return log1p(a); }, 1.0) == doctest::Approx(-0.25));
  CHECK(d2([](const Array& a) { return expm1(a); }, 1.0) == doctest::Approx(std::exp(1.0)));
}

TEST_CASE("abs'(0) = 1 as lax.abs; sign, floor, ceil, round have zero derivative") {
  check_array(grad([](const Array& a) { return sum(abs(a)); })(array({-2.0, 0.0, 3.0})), {3},
              float64, {-1, 1, 1});
  for (auto f :
       {+[](const Array& a) { return sign(a); }, +[](const Array& a) { return floor(a); },
        +[](const Array& a) { return ceil(a); }, +[](const Array& a) { return round(a); }}) {
    check_array(grad([f](const Array& a) { return sum(f(a) * a); })(array({-1.3, 0.6})), {2},
                float64, values(f(array({-1.3, 0.6}))));
    auto [y, t] = jvp(f, std::tuple{array({0.4, 2.7})}, std::tuple{array({1.0, 1.0})});
    check_array(t, {2}, float64, {0, 0});
  }
}

// ---- vmap
// ---------------------------------------------------------------------------------------------

TEST_CASE("vmap of elementwise ops equals a loop over examples") {
  Array a = data({3, 4, 2}, 21), b = data({4, 2}, 22), c = data({2, 5}, 23);
  // unary, batch axis not at 0, result at axis 1
  check_vmap([](const Array& x) { return sigmoid(x) + erf(x) * rsqrt(x * x + 1.0); }, axes({1}, 1),
             a);
  check_vmap([](const Array& x) { return relu(x) + floor(x) + abs(x) + sign(x); }, axes({2}), a);
  // binary with broadcasting and one unbatched operand
  check_vmap([](const Array& x, const Array& y) { return power(abs(x) + 0.5, y); },
             axes({1, kNone}), a, data({2}, 24));
  check_vmap([](const Array& x, const Array& y) { return power(x, 3) - logaddexp(x, y); },
             axes({kNone, 1}), b, c);
  check_vmap([](const Array& x, const Array& y) { return astype(less(x, y), float32); },
             axes({0, 1}), a, data({2, 3}, 29));
  check_vmap([](const Array& x, const Array& y) { return logical_and(x > 0.0, y); }, axes({2, 0}),
             a, array({true, false}));
  check_vmap([](const Array& x) { return isnan(log(x)); }, axes({0}), a);
  // where: batched condition only; batched x only; all three batched at different axes
  check_vmap([](const Array& p, const Array& x, const Array& y) { return where(p, x, y); },
             axes({0, kNone, kNone}), greater(data({3, 2}, 25), 0.0), b, Array(7.0));
  check_vmap([](const Array& p, const Array& x) { return where(p, x, -x); }, axes({kNone, 1}, 1),
             greater(data({4}, 30), 0.0), data({4, 3}, 26));
  check_vmap([](const Array& p, const Array& x, const Array& y) { return where(p, x, y); },
             axes({1, 2, 1}), greater(data({4, 2}, 27), 0.0), a, data({4, 2}, 28));
  check_vmap([](const Array& x) { return clip(x, -0.5, 0.5) + gelu(x) + softplus(x); }, axes({1}),
             a);
}

TEST_CASE("grad of where and pow under vmap (per-example gradients)") {
  Array xs = data({5, 3}, 31, 0.3, 2.0);
  auto f = [](const Array& x) { return sum(where(x > 1.0, power(x, x), sqrt(x))); };
  Array pe = vmap(grad(f))(xs);
  Arrays rows;
  for (int i = 0; i < 5; ++i) rows.push_back(grad(f)(optest::index_axis(xs, 0, i)));
  check_close(pe, optest::stack0(rows));
}

TEST_CASE("elementwise errors name the op and what it got") {
  LINUM_CHECK_ERROR(sigmoid(Array()), ValueError, "sigmoid: got an empty Array handle");
  LINUM_CHECK_ERROR(where(Array(), Array(1.0), Array(2.0)), ValueError,
                    "where: got an empty Array handle");
  LINUM_CHECK_ERROR(logaddexp(array({1.0, 2.0}), array({1.0, 2.0, 3.0})), ValueError,
                    "logaddexp: shapes (2,) and (3,) are incompatible for broadcasting");
  LINUM_CHECK_ERROR(greater_equal(array({{1.0, 2.0}}), array({1.0, 2.0, 3.0})), ValueError,
                    "greater_equal: shapes (1, 2) and (3,)");
}

}  // namespace test_elementwise
