// grad / value_and_grad / vjp / jvp / jacfwd / jacrev / hessian: API, closed forms, errors,
// deep tapes, thread independence, mutable callables and one run of the function per call.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <thread>
#include <tuple>

#include <linum/linum.hpp>

#include "op_testing.hpp"
#include "support/testing.hpp"

namespace test_transforms {

using linum::Array;
using linum::Arrays;
using linum::optest::check_close;

namespace {

double at(const Array& a, int i) { return a.astype(linum::float64).data<double>()[i]; }

}  // namespace

TEST_CASE("the README API compiles and gives the closed forms") {
  Array x = linum::array({1.0f, 2.0f, 3.0f});
  auto f = [](const Array& x) { return linum::sum(linum::sin(x) * x); };
  Array g = linum::grad(f)(x);  // cos(x)*x + sin(x)
  auto [v, g2] = linum::value_and_grad(f)(x);
  auto [y, vjp_fn] = linum::vjp([](const Array& a) { return linum::tanh(a); }, x);
  auto [y2, t] = linum::jvp(f, std::tuple{x}, std::tuple{linum::ones_like(x)});
  Array d2 = linum::grad(linum::grad([](const Array& s) { return linum::sin(s); }))(linum::array(0.5f));

  double fx = 0;
  for (int i = 0; i < 3; ++i) {
    const double xi = i + 1;
    fx += std::sin(xi) * xi;
    CHECK(at(g, i) == doctest::Approx(std::cos(xi) * xi + std::sin(xi)).epsilon(1e-6));
    CHECK(at(g2, i) == doctest::Approx(at(g, i)));
    CHECK(at(y, i) == doctest::Approx(std::tanh(xi)).epsilon(1e-6));
  }
  CHECK(v.item<double>() == doctest::Approx(fx).epsilon(1e-6));
  CHECK(y2.item<double>() == doctest::Approx(fx).epsilon(1e-6));
  CHECK(t.item<double>() == doctest::Approx(at(g, 0) + at(g, 1) + at(g, 2)).epsilon(1e-6));
  CHECK(d2.item<double>() == doctest::Approx(-std::sin(0.5)).epsilon(1e-6));

  auto [gx] = vjp_fn(linum::array({1.0f, 0.0f, 2.0f}));
  CHECK(at(gx, 0) == doctest::Approx(1 - std::tanh(1.0) * std::tanh(1.0)).epsilon(1e-6));
  CHECK(at(gx, 1) == 0.0);
  CHECK(at(gx, 2) == doctest::Approx(2 * (1 - std::tanh(3.0) * std::tanh(3.0))).epsilon(1e-5));
}

TEST_CASE("argnums selects arguments and returns a tuple; has_aux passes aux through") {
  auto f = [](const Array& a, const Array& b, double scale) { return linum::sum(a * b) * scale; };
  Array a = linum::array({1.0, 2.0}), b = linum::array({3.0, 5.0});
  auto [ga, gb] = linum::grad(f, linum::argnums<0, 1>)(a, b, 2.0);
  CHECK(at(ga, 0) == 6.0);
  CHECK(at(ga, 1) == 10.0);
  CHECK(at(gb, 0) == 2.0);
  CHECK(at(gb, 1) == 4.0);
  Array only_b = linum::grad(f, linum::argnums<1>)(a, b, 1.0);
  CHECK(at(only_b, 1) == 2.0);

  auto with_aux = [](const Array& x) { return std::make_pair(linum::sum(x * x), x * 3.0); };
  auto [g, aux] = linum::grad(with_aux, linum::has_aux)(a);
  CHECK(at(g, 1) == 4.0);
  CHECK(!aux.is_tracer());
  CHECK(at(aux, 1) == 6.0);
  auto [va, g3] = linum::value_and_grad(with_aux, linum::has_aux)(a);
  CHECK(va.first.item<double>() == 5.0);
  CHECK(at(va.second, 0) == 3.0);
  CHECK(at(g3, 0) == 2.0);
}

TEST_CASE("gradients flow through containers of arrays") {
  std::vector<Array> params{linum::array({1.0, -1.0}), linum::array(2.0)};
  auto loss = [](const std::vector<Array>& p) { return linum::sum(p[0] * p[0]) * p[1]; };
  auto g = linum::grad(loss)(params);
  REQUIRE(g.size() == 2);
  CHECK(at(g[0], 0) == 4.0);
  CHECK(at(g[0], 1) == -4.0);
  CHECK(g[1].item<double>() == 2.0);

  std::tuple<Array, Array> tp{linum::array(3.0), linum::array(4.0)};
  auto gt = linum::grad([](const std::tuple<Array, Array>& t) {
    return std::get<0>(t) * std::get<1>(t);
  })(tp);
  CHECK(std::get<0>(gt).item<double>() == 4.0);
  CHECK(std::get<1>(gt).item<double>() == 3.0);
}

TEST_CASE("an input the output does not depend on gets a zero gradient") {
  auto f = [](const Array& a, const Array&) { return linum::sum(a * 2.0); };
  Array b = linum::array({1.0, 2.0});
  auto [ga, gb] = linum::grad(f, linum::argnums<0, 1>)(linum::array({1.0}), b);
  CHECK(at(ga, 0) == 2.0);
  CHECK(gb.shape() == b.shape());
  CHECK(at(gb, 0) == 0.0);
}

TEST_CASE("higher order: grad of grad, jvp of grad, grad of jvp agree with closed forms") {
  auto f = [](const Array& x) { return linum::sum(linum::exp(x) * linum::sin(x)); };
  // f'' = d/dx [e^x (sin + cos)] = 2 e^x cos x
  Array x = linum::array({0.3, -0.7});
  auto fp = [&](const Array& z) { return linum::grad(f)(z); };
  auto [gx, hv] = linum::jvp(fp, std::tuple{x}, std::tuple{linum::ones_like(x)});
  for (int i = 0; i < 2; ++i) {
    const double xi = at(x, i);
    CHECK(at(gx, i) == doctest::Approx(std::exp(xi) * (std::sin(xi) + std::cos(xi))));
    CHECK(at(hv, i) == doctest::Approx(2 * std::exp(xi) * std::cos(xi)));
  }
  auto scalar = [](const Array& s) { return linum::exp(s) * linum::sin(s); };
  Array d3 = linum::grad(linum::grad(linum::grad(scalar)))(linum::array(0.4));
  // f''' = 2 e^x (cos x - sin x)
  CHECK(d3.item<double>() == doctest::Approx(2 * std::exp(0.4) * (std::cos(0.4) - std::sin(0.4))));
  auto dir = [&](const Array& z) {
    return linum::jvp(f, std::tuple{z}, std::tuple{linum::ones_like(z)}).second;
  };
  Array gj = linum::grad(dir)(x);
  CHECK(at(gj, 1) == doctest::Approx(at(hv, 1)));
}

TEST_CASE("jacfwd, jacrev and hessian match closed forms") {
  auto f = [](const Array& x) { return linum::sin(x) * linum::sum(x * x); };
  Array x = linum::array({0.5, -1.0, 2.0});
  Array jr = linum::jacrev(f)(x), jf = linum::jacfwd(f)(x);
  REQUIRE(jr.shape() == linum::Shape{3, 3});
  REQUIRE(jf.shape() == linum::Shape{3, 3});
  double s = 0;
  for (int k = 0; k < 3; ++k) s += at(x, k) * at(x, k);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      const double want = (i == j ? std::cos(at(x, i)) * s : 0.0) + std::sin(at(x, i)) * 2 * at(x, j);
      CHECK(at(jr, i * 3 + j) == doctest::Approx(want));
      CHECK(at(jf, i * 3 + j) == doctest::Approx(want));
    }
  // Hessian of sum(x^3) * x0 ... use a form with cross terms: g(x) = (sum x^2)^2.
  auto g = [](const Array& x) { return linum::square(linum::sum(x * x)); };
  Array h = linum::hessian(g)(x);
  REQUIRE(h.shape() == linum::Shape{3, 3});
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      const double want = 8 * at(x, i) * at(x, j) + (i == j ? 4 * s : 0.0);
      CHECK(at(h, i * 3 + j) == doctest::Approx(want));
    }
}

TEST_CASE("errors are JAX's") {
  Array x = linum::array({1.0f, 2.0f, 3.0f});
  CHECK(linum::testing::message_of([&] { linum::grad([](const Array& v) { return linum::sin(v); })(x); }).find(
            "grad requires a scalar output, got shape (3,)") != std::string::npos);
  CHECK(linum::testing::message_of([&] {
          linum::grad([](const Array& v) { return linum::sum(v); })(linum::array({1, 2}));
        }).find("grad requires real-valued inputs") != std::string::npos);
  CHECK(linum::testing::message_of([&] {
          linum::grad([](const Array& v) { return linum::sum(v); })(linum::array({1, 2}));
        }).find("but got int32") != std::string::npos);
  auto [y, fn] = linum::vjp([](const Array& a) { return linum::tanh(a); }, x);
  const std::string e = linum::testing::message_of([&, &fn = fn] { fn(linum::array({1.0f, 2.0f})); });
  CHECK(e.find("cotangent of shape (2,)") != std::string::npos);
  CHECK(e.find("shape (3,)") != std::string::npos);
  CHECK_THROWS_AS(fn(linum::array({1.0f, 2.0f})), linum::ValueError);
  CHECK(linum::testing::message_of([&] {
          linum::jvp([](const Array& a) { return a; }, std::tuple{x}, std::tuple{linum::array({1.0f})});
        }).find("primal and tangent arguments do not match") != std::string::npos);
}

TEST_CASE("a tracer that escapes its transform is an UnexpectedTracerError") {
  Array leaked;
  linum::grad([&](const Array& v) {
    leaked = v * 2.0;
    return linum::sum(v);
  })(linum::array({1.0}));
  CHECK(leaked.is_tracer());
  CHECK_THROWS_AS(linum::sin(leaked), linum::UnexpectedTracerError);
}

TEST_CASE("grad through a chain of 10^6 ops does not overflow the stack") {
  const int n = 1000000;
  auto f = [n](const Array& x) {
    Array y = x;
    for (int i = 0; i < n; ++i) y = y * 1.0000001;
    return y;
  };
  Array g = linum::grad(f)(linum::array(2.0));
  CHECK(g.item<double>() == doctest::Approx(std::pow(1.0000001, n)).epsilon(1e-9));
}

TEST_CASE("the tape holds its nodes' primitives: ones made per call, more than it remembers") {
  // Each custom_vjp below lives for one iteration, so only the tape keeps its primitive alive,
  // and the next one may be built at the same address; twelve interleaved are more than the
  // tape's cache of recent primitives. Each rule scales by its own factor (twice the true
  // derivative, so that the rule is what grad used): a mix-up of rules changes the gradient.
  auto f = [](const Array& x) {
    Array y = x;
    for (int round = 0; round < 3; ++round)
      for (int k = 1; k <= 12; ++k) {
        const double c = 1.0 + k / 64.0;
        auto scale = linum::custom_vjp(
            [c](const Array& a) { return a * c; },
            [c](const Array& a) { return std::make_pair(a * c, std::tuple<>{}); },
            [c](std::tuple<>, const Array& g) { return std::make_tuple(g * (2.0 * c)); });
        y = linum::sin(scale(y)) + y;
      }
    return y;
  };
  // The same chain by hand in double: y' = cos(c y) * 2c * y' + y'.
  double y = 0.25, dy = 1.0;
  for (int round = 0; round < 3; ++round)
    for (int k = 1; k <= 12; ++k) {
      const double c = 1.0 + k / 64.0;
      dy = std::cos(c * y) * 2.0 * c * dy + dy;
      y = std::sin(c * y) + y;
    }
  Array g = linum::grad(f)(linum::array(0.25));
  CHECK(g.item<double>() == doctest::Approx(dy).epsilon(1e-12));
}

TEST_CASE("two threads differentiate independent functions at the same time") {
  auto work = [](double c, double* out) {
    double acc = 0;
    for (int rep = 0; rep < 200; ++rep) {
      Array g = linum::grad([c](const Array& x) { return linum::sum(linum::sin(x * c)); })(
          linum::array({0.1, 0.2}));
      acc += g.astype(linum::float64).data<double>()[1];
    }
    *out = acc / 200;
  };
  double r1 = 0, r2 = 0;
  std::thread t1(work, 1.0, &r1), t2(work, 3.0, &r2);
  t1.join();
  t2.join();
  CHECK(r1 == doctest::Approx(std::cos(0.2)));
  CHECK(r2 == doctest::Approx(3 * std::cos(0.6)));
}

TEST_CASE("per-example gradients: vmap(grad) equals the loop over examples") {
  Array w = linum::array({0.5, -1.0, 2.0});
  Array xs = linum::array({{1.0, 2.0, 3.0}, {0.0, -1.0, 0.5}, {2.0, 2.0, -2.0}, {0.1, 0.2, 0.3}});
  auto loss = [](const Array& w, const Array& x) { return linum::square(linum::sum(linum::tanh(w * x))); };
  auto per_example = linum::vmap([&](const Array& x) { return linum::grad(loss)(w, x); });
  Array g = per_example(xs);
  REQUIRE(g.shape() == linum::Shape{4, 3});
  for (int i = 0; i < 4; ++i) {
    Array xi = linum::array({at(xs, i * 3), at(xs, i * 3 + 1), at(xs, i * 3 + 2)});
    Array gi = linum::grad(loss)(w, xi);
    for (int j = 0; j < 3; ++j) CHECK(at(g, i * 3 + j) == doctest::Approx(at(gi, j)));
  }
}

TEST_CASE("float32 gradients stay float32 (rules must not promote through C++ scalars)") {
  Array x = linum::array({1.5f, -2.0f});
  Array g = linum::grad([](const Array& v) { return linum::sum(linum::square(v)); })(x);
  CHECK(g.dtype() == linum::float32);
  CHECK(g.data<float>()[0] == 3.0f);
  CHECK(g.data<float>()[1] == -4.0f);
  Array g3 = linum::grad([](const Array& v) { return linum::sum(linum::power(v, 3)); })(x);
  CHECK(g3.dtype() == linum::float32);
  CHECK(g3.data<float>()[1] == doctest::Approx(12.0f));
}

TEST_CASE("vjp with several primals returns their cotangents in argument order") {
  Array a = linum::array({1.0, 2.0}), b = linum::array({3.0, 5.0, 7.0});
  auto f = [](const Array& x, const Array& y) { return linum::sum(x * 2.0) * linum::sum(y * y); };
  auto [out, fn] = linum::vjp(f, a, b);
  auto [ga, gb] = fn(linum::array(1.0));
  REQUIRE(ga.shape() == a.shape());
  REQUIRE(gb.shape() == b.shape());
  CHECK(at(ga, 0) == 2.0 * (9 + 25 + 49));
  CHECK(at(gb, 2) == 2.0 * 3.0 * 2 * 7.0);
}

TEST_CASE("Hessian-vector product of a small MLP equals finite differences of its gradient") {
  // loss(w1) = sum(tanh(x w1) w2)^2 for a 4x3 input, 3x5 hidden weights, 5-vector readout.
  Array x = linum::reshape(linum::linspace(-1.0, 1.0, 12, true, linum::float64), {4, 3});
  Array w2 = linum::linspace(0.5, -0.5, 5, true, linum::float64);
  Array w1 = linum::reshape(linum::sin(linum::arange(0, 15, 1, linum::float64)), {3, 5});
  Array v = linum::reshape(linum::cos(linum::arange(0, 15, 1, linum::float64)), {3, 5});
  auto loss = [&](const Array& w) {
    return linum::square(linum::sum(linum::matmul(linum::tanh(linum::matmul(x, w)), w2)));
  };
  auto g = linum::grad(loss);
  Array hvp = linum::jvp(g, std::tuple{w1}, std::tuple{v}).second;           // forward-over-reverse
  Array hvp2 = linum::grad([&](const Array& w) { return linum::sum(g(w) * v); })(w1);  // reverse-over-reverse
  const double eps = 1e-5;
  Array fd = (g(w1 + v * eps) - g(w1 - v * eps)) / (2 * eps);
  for (int i = 0; i < 15; ++i) {
    CHECK(at(hvp, i) == doctest::Approx(at(fd, i)).epsilon(1e-6));
    CHECK(at(hvp2, i) == doctest::Approx(at(hvp, i)).epsilon(1e-10));
  }
}

namespace {
// A callable with state that changes on every call: what std::invocable<F&> admits.
struct Counting {
  int calls = 0;
  Array operator()(const Array& x) {
    ++calls;
    return linum::sum(x * x * x);
  }
};
}  // namespace

TEST_SUITE("mutable callables and one run per transform call") {
  TEST_CASE("transforms accept mutable callables, also when the transformed function is const") {
    int n = 0;
    auto f = [n](const Array& x) mutable {
      ++n;
      return linum::sum(x * x) * static_cast<double>(n);
    };
    Array x = linum::array({1.0, 2.0});
    const auto g = linum::grad(f);
    check_close(g(x), x * 2.0);  // n = 1
    check_close(g(x), x * 4.0);  // the state lives in the transformed function: n = 2
    check_close(linum::vmap(f)(linum::array(std::vector<double>{1, 2}, {2, 1})),
                linum::array({1.0, 4.0}));
    // vjp and jvp call f itself (its n was never advanced: grad and vmap hold copies).
    auto [y, pull] = linum::vjp(f, x);
    check_close(y, linum::array(5.0));  // n = 1
    auto [y2, t] = linum::jvp(f, std::make_tuple(x), std::make_tuple(x));
    check_close(t, linum::array(20.0));  // n = 2: 2 * <2x, x>
    Array j = linum::jacrev(f)(x);       // a copy of f at n = 2, run once: n = 3
    check_close(j, x * 6.0);
  }

  TEST_CASE(
      "the function body runs once per call of grad, value_and_grad, vjp, jvp, vmap and the "
      "Jacobians") {
    Counting c;
    Array x = linum::array({1.0, 2.0, 3.0});
    auto count = [&](auto&& run) {
      c.calls = 0;
      run();
      return c.calls;
    };
    auto ref = [&c](const Array& a) { return c(a); };
    CHECK(count([&] { linum::grad(ref)(x); }) == 1);
    CHECK(count([&] { linum::value_and_grad(ref)(x); }) == 1);
    CHECK(count([&] { linum::vjp(ref, x); }) == 1);
    CHECK(count([&] { linum::jvp(ref, std::make_tuple(x), std::make_tuple(x)); }) == 1);
    CHECK(count([&] { linum::vmap(ref)(linum::reshape(x, {3, 1})); }) == 1);
    auto vec = [&c](const Array& a) { return a * c(a); };
    CHECK(count([&] { linum::jacrev(vec)(x); }) == 1);
    CHECK(count([&] { linum::jacfwd(vec)(x); }) == 1);
    CHECK(count([&] { linum::hessian(ref)(x); }) == 1);
    Counting own;
    auto g = linum::grad(own);  // a copy: the transformed function owns its state
    g(x);
    g(x);
    CHECK(own.calls == 0);
  }
}

}  // namespace test_transforms
