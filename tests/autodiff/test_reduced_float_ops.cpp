// Ops on bfloat16 / float16 arrays: each primitive computes in float32 and rounds once (as
// XLA:CPU), so results are within one ulp of the exact value computed here in float64, and equal
// to the float32 op's result rounded; data movement keeps the bits; grad keeps the primal's dtype;
// vmap and jit agree with eager evaluation.
#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

#include <linum/linum.hpp>

#include "support/testing.hpp"

using namespace linum;
using linum::testing::values;

namespace {

const DType kReducedDTypes[] = {bfloat16, float16};

// v rounded to d, and the gap from there to the next value of d away from zero.
std::pair<double, double> rounded_and_ulp(DType d, double v) {
  if (d == bfloat16) {
    const BFloat16 r(v);
    return {
        static_cast<double>(r),
        std::abs(static_cast<double>(BFloat16::from_bits(static_cast<std::uint16_t>(r.bits + 1))) -
                 static_cast<double>(r))};
  }
  const Float16 r(v);
  return {static_cast<double>(r),
          std::abs(static_cast<double>(Float16::from_bits(static_cast<std::uint16_t>(r.bits + 1))) -
                   static_cast<double>(r))};
}

// got (of dtype d) is within `ulps` ulps of the exact values `want`, element by element.
void check_within_ulps(const Array& got, DType d, const std::vector<double>& want, int ulps = 1) {
  CHECK(got.dtype() == d);
  const auto g = values(got);
  REQUIRE(g.size() == want.size());
  for (std::size_t i = 0; i < g.size(); ++i) {
    const auto [r, ulp] = rounded_and_ulp(d, want[i]);
    INFO("element " << i << ": got " << g[i] << ", exact " << want[i]);
    CHECK(std::abs(g[i] - r) <= ulps * ulp);
  }
}

// The 2-byte patterns of a bfloat16 / float16 array.
std::vector<unsigned> bits16(const Array& a) {
  std::vector<unsigned> r;
  for (std::int64_t i = 0; i < a.size(); ++i)
    r.push_back(a.dtype() == bfloat16 ? a.data<BFloat16>()[i].bits : a.data<Float16>()[i].bits);
  return r;
}

// Same dtype, shape and bits.
void check_same_bits(const Array& a, const Array& b) {
  REQUIRE(a.dtype() == b.dtype());
  REQUIRE(a.shape() == b.shape());
  CHECK(bits16(a) == bits16(b));
}

// op on the 2-byte array equals op on its float32 value rounded once to the 2-byte dtype.
void check_rounds_once(const std::function<Array(const Array&)>& op, const Array& x) {
  check_same_bits(op(x), op(x.astype(float32)).astype(x.dtype()));
}

Array as_reduced(const std::vector<float>& v, const Shape& s, DType d) {
  return array(v, s).astype(d);
}

}  // namespace

TEST_CASE("unary and binary elementwise ops round the float32 result once") {
  const std::vector<float> xv = {-2.5f, -0.75f, 0.1f, 0.5f, 1.25f, 3.0f};
  const std::vector<float> yv = {0.5f, 2.0f, -1.5f, 0.3f, 4.0f, -0.2f};
  for (DType d : kReducedDTypes) {
    INFO(dtype_name(d));
    const Array x = as_reduced(xv, {6}, d), y = as_reduced(yv, {6}, d);
    const auto xs = values(x), ys = values(y);  // the rounded inputs, exactly
    auto each = [&](auto f) {
      std::vector<double> r;
      for (std::size_t i = 0; i < xs.size(); ++i) r.push_back(f(xs[i], ys[i]));
      return r;
    };
    check_within_ulps(exp(x), d, each([](double a, double) { return std::exp(a); }));
    check_within_ulps(sin(x), d, each([](double a, double) { return std::sin(a); }));
    check_within_ulps(tanh(x), d, each([](double a, double) { return std::tanh(a); }));
    check_within_ulps(log(abs(x)), d, each([](double a, double) { return std::log(std::abs(a)); }));
    check_within_ulps(sqrt(abs(x)), d,
                      each([](double a, double) { return std::sqrt(std::abs(a)); }));
    check_within_ulps(x + y, d, each([](double a, double b) { return a + b; }));
    check_within_ulps(x * y, d, each([](double a, double b) { return a * b; }));
    check_within_ulps(x / y, d, each([](double a, double b) { return a / b; }));
    check_within_ulps(power(abs(x), y), d,
                      each([](double a, double b) { return std::pow(std::abs(a), b); }));
    check_rounds_once([](const Array& a) { return exp(a); }, x);
    check_rounds_once([&](const Array& a) { return a * y.astype(a.dtype()); }, x);
    // Comparisons and index-valued ops come back as they are.
    CHECK((x > 0.0).dtype() == bool_);
    CHECK(values(x > 0.0) == std::vector<double>{0, 0, 1, 1, 1, 1});
    CHECK(argmax(x).dtype() == int32);
    CHECK(argmax(x).item<int>() == 5);
  }
}

TEST_CASE("reductions, matmul, conv and softmax compute in float32 and round once") {
  std::vector<float> av, bv;
  for (int i = 0; i < 12; ++i) av.push_back(0.37f * static_cast<float>(i) - 1.9f);
  for (int i = 0; i < 8; ++i) bv.push_back(0.61f - 0.23f * static_cast<float>(i));
  for (DType d : kReducedDTypes) {
    INFO(dtype_name(d));
    const Array a = as_reduced(av, {3, 4}, d), b = as_reduced(bv, {4, 2}, d);
    const auto as = values(a), bs = values(b);
    // sum / mean / max over the last axis.
    std::vector<double> s(3, 0.0), m(3, -INFINITY);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 4; ++j) {
        s[i] += as[i * 4 + j];
        m[i] = std::max(m[i], as[i * 4 + j]);
      }
    check_within_ulps(sum(a, {1}), d, s);
    check_within_ulps(mean(a, {1}), d, {s[0] / 4, s[1] / 4, s[2] / 4});
    check_within_ulps(max(a, {1}), d, m);
    check_rounds_once([](const Array& x) { return sum(x); }, a);
    // matmul: an explicit loop in float64.
    std::vector<double> mm(6, 0.0);
    for (int i = 0; i < 3; ++i)
      for (int k = 0; k < 2; ++k)
        for (int j = 0; j < 4; ++j) mm[i * 2 + k] += as[i * 4 + j] * bs[j * 2 + k];
    check_within_ulps(matmul(a, b), d, mm);
    check_rounds_once([&](const Array& x) { return matmul(x, b.astype(x.dtype())); }, a);
    // A 1-D VALID convolution, (N, W, C) x (W, I, O), as a loop.
    const Array x = reshape(a, {1, 6, 2}), w = reshape(b, {2, 2, 2});
    std::vector<double> conv(5 * 2, 0.0);
    for (int i = 0; i < 5; ++i)
      for (int o = 0; o < 2; ++o)
        for (int k = 0; k < 2; ++k)
          for (int c = 0; c < 2; ++c)
            conv[i * 2 + o] += as[(i + k) * 2 + c] * bs[(k * 2 + c) * 2 + o];
    check_within_ulps(conv_general_dilated(x, w), d, conv);
    // softmax along the last axis.
    std::vector<double> sm(12);
    for (int i = 0; i < 3; ++i) {
      double z = 0;
      for (int j = 0; j < 4; ++j) z += std::exp(as[i * 4 + j] - m[i]);
      for (int j = 0; j < 4; ++j) sm[i * 4 + j] = std::exp(as[i * 4 + j] - m[i]) / z;
    }
    // softmax is made of ops, as JAX's: each rounds, so the error adds up over four of them.
    check_within_ulps(softmax(a), d, sm, 4);
  }
}

TEST_CASE("mean and var average in float32 and round once, as jnp upcasts 2-byte floats") {
  std::vector<float> v;
  for (int i = 0; i < 24; ++i) v.push_back(0.113f * static_cast<float>(i * i % 17) - 0.7f);
  for (DType d : kReducedDTypes) {
    INFO(dtype_name(d));
    const Array x = as_reduced(v, {4, 6}, d);
    check_rounds_once([](const Array& a) { return mean(a, {1}); }, x);
    check_rounds_once([](const Array& a) { return var(a, {0}); }, x);
    CHECK(mean(x).dtype() == d);
  }
}

TEST_CASE("nextafter, spacing and nan_to_num use the 2-byte format's own neighbours and limits") {
  // bfloat16: 1 + 2^-7 above 1, 1 - 2^-8 below it, 2^-133 the smallest subnormal.
  const Array one = full({}, 1.0, bfloat16);
  CHECK(nextafter(one, full({}, 2.0, bfloat16)).item<double>() == 1.0 + 0x1p-7);
  CHECK(nextafter(one, full({}, 0.0, bfloat16)).item<double>() == 1.0 - 0x1p-8);
  CHECK(nextafter(full({}, 0.0, bfloat16), full({}, -1.0, bfloat16)).item<double>() == -0x1p-133);
  CHECK(nextafter(full({}, -1.0, bfloat16), full({}, 0.0, bfloat16)).item<double>() ==
        -(1.0 - 0x1p-8));
  CHECK(nextafter(full({}, finfo(bfloat16).max, bfloat16), full({}, INFINITY, bfloat16))
            .item<double>() == INFINITY);
  CHECK(nextafter(one, one).item<double>() == 1.0);
  CHECK(nextafter(one, one).dtype() == bfloat16);
  // float16: 1 + 2^-10 above 1; the largest finite is 65504.
  const Array h = array<float>({1.0f, 65504.0f, 0.0f}).astype(float16);
  CHECK(values(nextafter(h, full({}, INFINITY, float16))) ==
        std::vector<double>{1.0 + 0x1p-10, INFINITY, 0x1p-24});
  CHECK(values(spacing(h)) == std::vector<double>{0x1p-10, INFINITY, 0x1p-24});
  CHECK(values(spacing(one)) == std::vector<double>{0x1p-7});
  // nan_to_num's defaults are finfo(dtype).max / -max, not float32's.
  const Array special = array<float>({INFINITY, -INFINITY, NAN, 2.0f}).astype(bfloat16);
  CHECK(values(nan_to_num(special)) ==
        std::vector<double>{finfo(bfloat16).max, -finfo(bfloat16).max, 0.0, 2.0});
  CHECK(values(nan_to_num(array<float>({INFINITY}).astype(float16))) ==
        std::vector<double>{65504.0});
}

TEST_CASE("data movement keeps bfloat16 / float16 bits (no float32 round trip)") {
  // A signalling-NaN pattern would come back quieted from a float32 round trip.
  const Array b = array(std::vector<BFloat16>{BFloat16::from_bits(0x7f81), BFloat16(1.5f),
                                              BFloat16(-2.0f), BFloat16::from_bits(0x0001)},
                        {2, 2});
  const Array h = array(std::vector<Float16>{Float16::from_bits(0x7c01), Float16(1.5),
                                             Float16(-2.0), Float16::from_bits(0x0001)},
                        {2, 2});
  for (const Array& x : {b, h}) {
    INFO(dtype_name(x.dtype()));
    const auto x0 = bits16(x);
    CHECK(bits16(reshape(x, {4})) == x0);
    CHECK(bits16(transpose(x)) == std::vector<unsigned>{x0[0], x0[2], x0[1], x0[3]});
    CHECK(bits16(x[0]) == std::vector<unsigned>{x0[0], x0[1]});
    CHECK(bits16(concatenate({x, x}, 0)) ==
          std::vector<unsigned>{x0[0], x0[1], x0[2], x0[3], x0[0], x0[1], x0[2], x0[3]});
    CHECK(bits16(broadcast_to(x[0], {2, 2})) == std::vector<unsigned>{x0[0], x0[1], x0[0], x0[1]});
    CHECK(bits16(where(array<bool>({true, false}), x[0], x[1])) ==
          std::vector<unsigned>{x0[0], x0[3]});
    CHECK(bits16(x.astype(x.dtype())) == x0);
    CHECK(bits16(x[array<std::int32_t>({1, 0})]) ==
          std::vector<unsigned>{x0[2], x0[3], x0[0], x0[1]});  // gather
    CHECK(bits16(pad(x[0], {{1, 0}})) == std::vector<unsigned>{0, x0[0], x0[1]});
  }
}

TEST_CASE("grad of a bfloat16 function has bfloat16 cotangents matching the float32 grad") {
  const Array x = as_reduced({0.5f, -1.25f, 2.0f, 0.75f}, {4}, bfloat16);
  const Array w = as_reduced({0.3f, 0.8f, -0.6f, 1.1f}, {4}, bfloat16);
  auto f = [&](const Array& p) { return sum(tanh(x.astype(p.dtype()) * p) * p); };
  const Array g = grad(f)(w);
  CHECK(g.dtype() == bfloat16);
  const auto g32 = values(grad(f)(w.astype(float32)));
  const auto gb = values(g);
  for (std::size_t i = 0; i < gb.size(); ++i)
    CHECK(gb[i] == doctest::Approx(g32[i]).epsilon(4 * 0x1p-7));
  // A bfloat16 parameter used in a float32 computation still gets a bfloat16 cotangent.
  const Array y = array<float>({1, 2, 3, 4});
  const Array gm = grad([&](const Array& p) { return sum(p.astype(float32) * y); })(w);
  CHECK(gm.dtype() == bfloat16);
  CHECK(values(gm) == std::vector<double>{1, 2, 3, 4});
  // float16 too, through a reduction and a matmul.
  const Array wh = as_reduced({0.5f, -0.25f, 1.5f, 2.0f}, {2, 2}, float16);
  const Array gh = grad([](const Array& p) { return mean(matmul(p, p)); })(wh);
  CHECK(gh.dtype() == float16);
  const auto gh32 =
      values(grad([](const Array& p) { return mean(matmul(p, p)); })(wh.astype(float32)));
  const auto ghv = values(gh);
  for (std::size_t i = 0; i < ghv.size(); ++i)
    CHECK(ghv[i] == doctest::Approx(gh32[i]).epsilon(4 * 0x1p-10));
}

TEST_CASE("vmap and jit of a bfloat16 function agree with eager evaluation") {
  std::vector<float> v;
  for (int i = 0; i < 12; ++i) v.push_back(0.21f * static_cast<float>(i) - 1.1f);
  for (DType d : kReducedDTypes) {
    INFO(dtype_name(d));
    const Array xs = as_reduced(v, {3, 4}, d);
    auto f = [](const Array& x) { return sum(exp(x) * 2.0) + max(x); };
    const Array batched = linum::vmap(f)(xs);
    CHECK(batched.dtype() == d);
    for (std::int64_t i = 0; i < 3; ++i) check_same_bits(batched[i], f(xs[i]));
    auto jf = jit([&](const Array& x) { return f(x); });
    check_same_bits(jf(xs[1]), f(xs[1]));
    check_same_bits(jf(xs[2]), f(xs[2]));  // the cached program on a new value
  }
}

TEST_CASE("eval_shape, jit of grad and custom_vjp see bfloat16 as it is") {
  // eval_shape: the widening converts are abstract too; the result keeps the 2-byte dtype.
  const ShapeDtype in{{3, 4}, bfloat16};
  const auto out = linum::eval_shape([](const Array& x) { return sum(exp(x), {1}) * 2.0; }, in);
  CHECK(out == ShapeDtype{{3}, bfloat16});
  // jit of grad equals eager grad, bit for bit, and keeps the cotangent's dtype.
  const Array w = as_reduced({0.25f, -1.5f, 2.0f}, {3}, bfloat16);
  auto loss = [](const Array& p) { return sum(tanh(p) * p); };
  const Array eager = grad(loss)(w);
  const Array jitted = jit([&](const Array& p) { return grad(loss)(p); })(w);
  CHECK(jitted.dtype() == bfloat16);
  check_same_bits(jitted, eager);
  // custom_vjp's functions receive the operands' own dtype (not a float32 copy).
  std::vector<DType> seen;
  auto f = linum::custom_vjp(
      [&](const Array& x) {
        seen.push_back(x.dtype());
        return x * 2.0;
      },
      [&](const Array& x) {
        seen.push_back(x.dtype());
        return std::make_pair(x * 2.0, x);
      },
      [&](const Array& x, const Array& g) {
        seen.push_back(g.dtype());
        return std::make_tuple(g * 3.0 + 0.0 * x);
      });
  const Array g = grad([&](const Array& p) { return sum(f(p)); })(w);
  CHECK(g.dtype() == bfloat16);
  CHECK(values(g) == std::vector<double>{3, 3, 3});
  REQUIRE_FALSE(seen.empty());
  for (DType d : seen) CHECK(d == bfloat16);
}
