// flax.linen's activations, pools and PReLU beyond relu/softmax: closed forms, explicit
// loops over windows, the slope gradient by hand, errors.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "../support/testing.hpp"
#include "nn_testing.hpp"

namespace test_activation {

using namespace linum;
using namespace linum::testing;

TEST_CASE("hard_sigmoid / hard_silu are relu6(x + 3) / 6 and x times it, at the kinks too") {
  const Array x = array({-4.0f, -3.0f, -1.0f, 0.0f, 2.0f, 3.0f, 4.0f});
  const std::vector<double> hs{0, 0, 2.0 / 6, 0.5, 5.0 / 6, 1, 1};
  const auto got = values(nn::hard_sigmoid(x)), silu = values(nn::hard_silu(x));
  const auto xs = values(x);
  for (std::size_t i = 0; i < hs.size(); ++i) {
    CHECK(got[i] == doctest::Approx(hs[i]));
    CHECK(silu[i] == doctest::Approx(xs[i] * hs[i]));
  }
  CHECK(allclose(nn::hard_swish(x), nn::hard_silu(x)));
  CHECK(nn::hard_sigmoid(x).dtype() == float32);
  // Slope 1/6 inside (-3, 3), 0 outside.
  const Array g = grad([](const Array& a) { return sum(hard_sigmoid(a)); })(x);
  const std::vector<double> dg{0, 0, 1.0 / 6, 1.0 / 6, 1.0 / 6, 0, 0};
  const auto gv = values(g);
  for (std::size_t i = 0; i < dg.size(); ++i) CHECK(gv[i] == doctest::Approx(dg[i]));
}

TEST_CASE("glu multiplies the first half of the axis by the sigmoid of the second") {
  const Array x = random::normal(random::key(0), {3, 4});
  const auto xv = values(x), yv = values(nn::glu(x));
  REQUIRE(nn::glu(x).shape() == Shape{3, 2});
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 2; ++c) {
      const double a = xv[r * 4 + c], b = xv[r * 4 + c + 2];
      CHECK(yv[r * 2 + c] == doctest::Approx(a / (1 + std::exp(-b))).epsilon(1e-5));
    }
  check_error<ValueError>([&] { nn::glu(x, 0); }, {"glu", "even", "(3, 4)"});
  check_error<ValueError>([&] { nn::glu(x, 2); }, {"glu", "out of bounds"});
}

TEST_CASE("standardize is (x - mean) / sqrt(E[x^2] - mean^2 + eps); given moments are used") {
  const Array x = random::normal(random::key(1), {3, 5}, float64) * 2.0 + 1.0;
  const auto xv = values(x), yv = values(nn::standardize(x));
  for (int r = 0; r < 3; ++r) {
    double m = 0, m2 = 0;
    for (int c = 0; c < 5; ++c) {
      m += xv[r * 5 + c] / 5;
      m2 += xv[r * 5 + c] * xv[r * 5 + c] / 5;
    }
    for (int c = 0; c < 5; ++c)
      CHECK(yv[r * 5 + c] == doctest::Approx((xv[r * 5 + c] - m) / std::sqrt(m2 - m * m + 1e-5)));
  }
  const Array y0 = nn::normalize(x, 0, zeros({1, 5}, float64), ones({1, 5}, float64), 0.0);
  CHECK(allclose(y0, x));
}

TEST_CASE("min_pool and pool equal explicit window loops; pool's init must be the identity") {
  const Array x = random::normal(random::key(2), {1, 4, 6, 2});
  const Array mn = nn::min_pool(x, {2, 3}, {2, 3});
  REQUIRE(mn.shape() == Shape{1, 2, 2, 2});
  const auto xv = values(x), mv = values(mn);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j)
      for (int c = 0; c < 2; ++c) {
        double want = std::numeric_limits<double>::infinity();
        for (int a = 0; a < 2; ++a)
          for (int b = 0; b < 3; ++b)
            want = std::min(want, xv[((i * 2 + a) * 6 + j * 3 + b) * 2 + c]);
        CHECK(mv[(i * 2 + j) * 2 + c] == want);
      }
  CHECK(allclose(nn::pool(x, 0.0, WindowReduce::sum, {2, 2}), nn::avg_pool(x, {2, 2}) * 4.0f));
  CHECK(allclose(nn::pool(x, -std::numeric_limits<double>::infinity(), WindowReduce::max, {2, 2},
                          {1, 2}, "SAME"),
                 nn::max_pool(x, {2, 2}, {1, 2}, "SAME")));
  check_error<ValueError>(
      [&] {
        nn::pool(x, 1.0, WindowReduce::sum, {2, 2});
      },
      {"pool", "identity", "0 for sum"});
  check_error<TypeError>(
      [] {
        nn::min_pool(ones({1, 4, 4, 1}, int32), {2, 2});
      },
      {"min_pool", "int32"});
}

TEST_CASE("PReLU: a scalar negative_slope param (0.01) and its gradient by hand") {
  const Array x = array({-2.0f, -0.5f, 0.0f, 1.5f});
  nn::PReLU p;
  auto [y, v] = p.init_with_output(random::key(0), x);
  CHECK(shape_of(v["params"]["negative_slope"]) == Shape{});
  CHECK(v["params"]["negative_slope"].leaf().item<float>() == doctest::Approx(0.01));
  CHECK(allclose(y, array({-0.02f, -0.005f, 0.0f, 1.5f})));
  const Tree v2{{"params", Tree{{"negative_slope", Tree(array(0.25f))}}}};
  CHECK(allclose(p.apply(v2, x), array({-0.5f, -0.125f, 0.0f, 1.5f})));
  // d/d slope of sum(prelu(x)) = the sum of the negative inputs.
  const Tree g = grad([&](const Tree& params) {
    return sum(p.apply(Tree{{"params", params}}, x));
  })(v2["params"]);
  CHECK(g["negative_slope"].leaf().item<float>() == doctest::Approx(-2.5));
  CHECK(nn::PReLU({.negative_slope_init = 0.3})
            .init(random::key(0), x)["params"]["negative_slope"]
            .leaf()
            .item<float>() == doctest::Approx(0.3));
}

TEST_CASE("the jax.nn functions linen re-exports are the autodiff ops") {
  const Array x = array({-3.0f, -0.5f, 0.5f, 7.0f});
  CHECK(allclose(nn::relu6(x), relu6(x)));
  CHECK(allclose(nn::soft_sign(x), soft_sign(x)));
  CHECK(allclose(nn::log_sigmoid(x), log_sigmoid(x)));
  CHECK(allclose(nn::selu(x), selu(x)));
  CHECK(allclose(nn::hard_tanh(x), hard_tanh(x)));
  CHECK(allclose(nn::celu(x, 0.5), celu(x, 0.5)));
  CHECK(allclose(nn::logsumexp(x), logsumexp(x)));
  CHECK(allclose(nn::one_hot(array<std::int32_t>({1}), 3),
                 array({0.0f, 1.0f, 0.0f}).reshape({1, 3})));
}

}  // namespace test_activation
