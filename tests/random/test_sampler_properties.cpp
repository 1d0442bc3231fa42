// Properties of the jax.random samplers of random.hpp's "more distributions": moments against
// closed forms, vmap over keys and parameters (one kernel call for the whole batch), jit, the
// gamma gradient against an independent implicit derivative, and JAX's argument errors.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include <linum/linum.hpp>

namespace test_sampler_properties {

namespace lr = linum::random;
using linum::Array;
using linum::Shape;

namespace {

std::vector<double> doubles(const Array& x) {
  const Array f = linum::astype(x, linum::float64);
  const double* p = f.data<double>();
  return std::vector<double>(p, p + linum::shape_size(f.shape()));
}

bool same(const Array& a, const Array& b) {
  return a.shape() == b.shape() && a.dtype() == b.dtype() &&
         linum::all(linum::equal(a, b)).item<bool>();
}

Array row(const Array& a, int i) { return linum::take(a, Array(i), 0); }

struct Moments {
  double mean, var;
};
Moments moments(const Array& x) {
  const auto v = doubles(x);
  double m = 0, s = 0;
  for (double e : v) m += e;
  m /= static_cast<double>(v.size());
  for (double e : v) s += (e - m) * (e - m);
  return {m, s / static_cast<double>(v.size() - 1)};
}

// Mean within 6 standard errors of the closed form, variance within `var_rtol` of it.
void check_moments(const char* what, const Array& x, double mean, double var,
                   double var_rtol = 0.05) {
  const Moments got = moments(x);
  const double n = static_cast<double>(linum::shape_size(x.shape()));
  INFO(what << ": mean " << got.mean << " (expected " << mean << "), variance " << got.var
            << " (expected " << var << ")");
  CHECK(std::abs(got.mean - mean) <= 6 * std::sqrt(var / n));
  CHECK(std::abs(got.var - var) <= var_rtol * var);
}

}  // namespace

TEST_SUITE("random.samplers.statistics") {
  TEST_CASE("parameter-free samplers: moments of their closed forms") {
    const std::int64_t n = 200000;
    check_moments("exponential", lr::exponential(lr::key(1), {n}), 1.0, 1.0);
    check_moments("laplace", lr::laplace(lr::key(2), {n}), 0.0, 2.0);
    check_moments("logistic", lr::logistic(lr::key(3), {n}), 0.0, M_PI * M_PI / 3);
    // Maxwell: mean 2 sqrt(2 / pi), variance 3 - 8 / pi.
    check_moments("maxwell", lr::maxwell(lr::key(4), {n}), 2 * std::sqrt(2 / M_PI), 3 - 8 / M_PI);
    check_moments("rademacher", lr::rademacher(lr::key(5), {n}), 0.0, 1.0, 0.001);
    // Cauchy has no moments: its quartiles are -1 and 1.
    const auto c = doubles(lr::cauchy(lr::key(6), {n}));
    double inside = 0;
    for (double v : c) inside += std::abs(v) < 1;
    CHECK(std::abs(inside / n - 0.5) < 0.005);
    const auto r = doubles(lr::rademacher(lr::key(5), {1000}));
    for (double v : r) CHECK((v == 1 || v == -1));
  }

  TEST_CASE("continuous samplers with parameters") {
    const std::int64_t n = 100000;
    check_moments("double_sided_maxwell(1, 2)", lr::double_sided_maxwell(lr::key(7), 1.0, 2.0, {n}),
                  1.0, 4 * 3.0);
    // Weibull(scale 2, c 1.5): mean 2 G(5/3), variance 4 (G(7/3) - G(5/3)^2).
    const double g53 = std::tgamma(5.0 / 3), g73 = std::tgamma(7.0 / 3);
    check_moments("weibull_min", lr::weibull_min(lr::key(8), 2.0, 1.5, {n}), 2 * g53,
                  4 * (g73 - g53 * g53));
    check_moments("pareto(5)", lr::pareto(lr::key(9), 5.0, Shape{n}), 1.25, 5.0 / (16.0 * 3.0),
                  0.1);
    check_moments("rayleigh(2)", lr::rayleigh(lr::key(10), 2.0, Shape{n}), 2 * std::sqrt(M_PI / 2),
                  (4 - M_PI) / 2 * 4);
    check_moments("wald(1.5)", lr::wald(lr::key(11), 1.5, Shape{n}), 1.5, 1.5 * 1.5 * 1.5, 0.1);
    // Triangular(-1, 0.5, 2): mean (a + b + c) / 3, variance (a^2+b^2+c^2-ab-ac-bc) / 18.
    check_moments("triangular", lr::triangular(lr::key(12), -1.0, 0.5, 2.0, Shape{n}), 0.5,
                  6.75 / 18);
    check_moments("lognormal(0.5)", lr::lognormal(lr::key(13), 0.5, Shape{n}), std::exp(0.125),
                  (std::exp(0.25) - 1) * std::exp(0.25));
    check_moments("t(5)", lr::t(lr::key(14), 5.0, Shape{n}), 0.0, 5.0 / 3, 0.1);
    check_moments("chisquare(4)", lr::chisquare(lr::key(15), 4.0, Shape{n}), 4.0, 8.0);
    // F(4, 10): mean 10 / 8, variance 2 * 100 * 12 / (4 * 64 * 6).
    check_moments("f(4, 10)", lr::f(lr::key(16), 4.0, 10.0, Shape{n}), 1.25, 1.5625, 0.15);
    // exp(-|x|^2) is a normal with variance 1/2; exp(-|x|) a Laplace with variance 2.
    check_moments("generalized_normal(2)", lr::generalized_normal(lr::key(17), 2.0, {n}), 0.0, 0.5);
    check_moments("generalized_normal(1)", lr::generalized_normal(lr::key(18), 1.0, {n}), 0.0, 2.0);
  }

  TEST_CASE("gamma, loggamma, beta and dirichlet") {
    const std::int64_t n = 100000;
    check_moments("gamma(0.5)", lr::gamma(lr::key(20), 0.5, Shape{n}), 0.5, 0.5);
    check_moments("gamma(3)", lr::gamma(lr::key(21), 3.0, Shape{n}), 3.0, 3.0);
    check_moments("exp(loggamma(0.5))", linum::exp(lr::loggamma(lr::key(22), 0.5, Shape{n})), 0.5,
                  0.5);
    check_moments("gamma(0.5), float64", lr::gamma(lr::key(23), 0.5, Shape{n}, linum::float64), 0.5,
                  0.5);
    // loggamma keeps tiny samples that gamma rounds to 0: E[log X] = digamma(a).
    const Moments lg = moments(lr::loggamma(lr::key(24), 0.01, Shape{n}));
    CHECK(std::abs(lg.mean - -100.5608272) < 6 * std::sqrt(lg.var / n));  // digamma(0.01)
    check_moments("beta(2, 3)", lr::beta(lr::key(25), 2.0, 3.0, Shape{n}), 0.4, 0.04);
    const Array d = lr::dirichlet(lr::key(26), linum::array({1.0f, 2.0f, 3.0f}), Shape{n});
    CHECK(d.shape() == Shape{n, 3});
    const auto sums = doubles(linum::sum(d, -1));
    for (std::size_t i = 0; i < sums.size(); i += 997) CHECK(std::abs(sums[i] - 1) < 1e-5);
    const std::vector<double> means = {1.0 / 6, 2.0 / 6, 3.0 / 6};
    for (int j = 0; j < 3; ++j) {
      const Array col = linum::take(d, Array(j), 1);
      // Dirichlet marginal: Beta(alpha_j, sum - alpha_j).
      const double a = j + 1.0, b = 6.0 - a;
      check_moments("dirichlet marginal", col, means[j], a * b / (36.0 * 7.0));
    }
  }

  TEST_CASE("discrete samplers: poisson, binomial, geometric, multinomial") {
    const std::int64_t n = 40000;
    check_moments("poisson(3.5)", lr::poisson(lr::key(30), 3.5, Shape{n}), 3.5, 3.5);
    check_moments("poisson(40)", lr::poisson(lr::key(31), 40.0, Shape{n}), 40.0, 40.0);
    CHECK(lr::poisson(lr::key(31), 40.0, Shape{3}).dtype() == linum::int32);
    check_moments("binomial(20, 0.3)", lr::binomial(lr::key(32), 20, 0.3, Shape{n}), 6.0, 4.2);
    check_moments("binomial(200, 0.4)", lr::binomial(lr::key(33), 200, 0.4, Shape{n}), 80.0, 48.0);
    check_moments("binomial(200, 0.8)", lr::binomial(lr::key(34), 200, 0.8, Shape{n}), 160.0, 32.0);
    check_moments("geometric(0.3)", lr::geometric(lr::key(35), 0.3, Shape{n}), 1 / 0.3, 0.7 / 0.09);
    // Degenerate and invalid parameters, as JAX: 0 for lam == 0 or p == 0, n for p == 1, NaN
    // for a negative count or p.
    CHECK(doubles(lr::poisson(lr::key(36), 0.0, Shape{4})) == std::vector<double>(4, 0.0));
    CHECK(doubles(lr::binomial(lr::key(36), 10, 0.0, Shape{3})) == std::vector<double>(3, 0.0));
    CHECK(doubles(lr::binomial(lr::key(36), 10, 1.0, Shape{3})) == std::vector<double>(3, 10.0));
    for (double v : doubles(lr::binomial(lr::key(36), -1, 0.5, Shape{2}))) CHECK(std::isnan(v));
    for (double v : doubles(lr::binomial(lr::key(36), 5, -0.5, Shape{2}))) CHECK(std::isnan(v));
    const Array m =
        lr::multinomial(lr::key(37), 10.0, linum::array({0.2f, 0.3f, 0.5f}), Shape{n, 3});
    CHECK(m.shape() == Shape{n, 3});
    const auto totals = doubles(linum::sum(m, -1));
    for (std::size_t i = 0; i < totals.size(); i += 101) CHECK(totals[i] == 10.0);
    check_moments("multinomial outcome 2", linum::take(m, Array(2), 1), 5.0, 2.5);
  }

  TEST_CASE("method='approximate': gamma, loggamma, beta, chisquare and poisson") {
    const std::int64_t n = 100000;
    const auto approx = [](auto fn) { return fn("approximate"); };
    check_moments("gamma(0.5), approximate", approx([&](const char* m) {
                    return lr::gamma(lr::key(70), 0.5, Shape{n}, linum::float32, m);
                  }),
                  0.5, 0.5);
    check_moments("gamma(30), approximate", approx([&](const char* m) {
                    return lr::gamma(lr::key(71), 30.0, Shape{n}, linum::float32, m);
                  }),
                  30.0, 30.0);
    check_moments("beta(2, 3), approximate",
                  lr::beta(lr::key(72), 2.0, 3.0, Shape{n}, linum::float32, "approximate"), 0.4,
                  0.04);
    check_moments("chisquare(4), approximate",
                  lr::chisquare(lr::key(73), 4.0, Shape{n}, linum::float32, "approximate"), 4.0,
                  8.0);
    const Array small = lr::poisson(lr::key(74), 3.5, Shape{n}, linum::int32, "approximate");
    CHECK(small.dtype() == linum::int32);
    check_moments("poisson(3.5), approximate", small, 3.5, 3.5);
    check_moments("poisson(40), approximate",
                  lr::poisson(lr::key(75), 40.0, Shape{n}, linum::int32, "approximate"), 40.0,
                  40.0);
    // Differentiable through its formula: d E[x] / da = 1 for gamma.
    const Array key = lr::key(76);
    const float g =
        linum::grad([&](const Array& a) {
          return linum::mean(lr::gamma(key, a, Shape{20000}, linum::float32, "approximate"));
        })(Array(2.0f))
            .item<float>();
    CHECK(std::abs(g - 1.0f) < 0.03f);
  }

  TEST_CASE("ball: inside the unit ball, radius distributed as U^(1/d)") {
    const Array b = lr::ball(lr::key(40), 3, 2.0, {50000});
    CHECK(b.shape() == Shape{50000, 3});
    const auto r = doubles(linum::sqrt(linum::sum(linum::square(b), -1)));
    double below_half = 0, mean = 0;
    for (double v : r) {
      CHECK(v < 1);
      below_half += v < 0.5;
      mean += v;
    }
    CHECK(std::abs(below_half / 50000 - 0.125) < 0.006);  // P(r < 1/2) = (1/2)^3
    CHECK(std::abs(mean / 50000 - 0.75) < 0.005);         // E[r] = d / (d + 1)
    const Array b1 = lr::ball(lr::key(41), 4, 1.0, {1000});
    for (double v : doubles(linum::sum(linum::abs(b1), -1))) CHECK(v < 1);
  }
}

TEST_SUITE("random.samplers.transforms") {
  // Each sampler under vmap over a batch of keys: row i is the sampler at key i.
  const std::vector<std::pair<const char*, std::function<Array(const Array&)>>> kSamplers = {
      {"exponential", [](const Array& k) { return lr::exponential(k, {3}); }},
      {"laplace", [](const Array& k) { return lr::laplace(k, {3}); }},
      {"logistic", [](const Array& k) { return lr::logistic(k, {3}); }},
      {"cauchy", [](const Array& k) { return lr::cauchy(k, {3}); }},
      {"maxwell", [](const Array& k) { return lr::maxwell(k, {3}); }},
      {"rademacher", [](const Array& k) { return lr::rademacher(k, {3}); }},
      {"double_sided_maxwell",
       [](const Array& k) { return lr::double_sided_maxwell(k, 1.0, 2.0, {3}); }},
      {"weibull_min", [](const Array& k) { return lr::weibull_min(k, 2.0, 1.5, {3}); }},
      {"pareto", [](const Array& k) { return lr::pareto(k, 3.0, Shape{3}); }},
      {"rayleigh", [](const Array& k) { return lr::rayleigh(k, 2.0, Shape{3}); }},
      {"wald", [](const Array& k) { return lr::wald(k, 1.5, Shape{3}); }},
      {"triangular", [](const Array& k) { return lr::triangular(k, -1.0, 0.5, 2.0, Shape{3}); }},
      {"lognormal", [](const Array& k) { return lr::lognormal(k, 0.5, Shape{3}); }},
      {"geometric", [](const Array& k) { return lr::geometric(k, 0.3, Shape{3}); }},
      {"poisson",
       [](const Array& k) {
         return lr::poisson(k, linum::array({2.0f, 30.0f, 7.0f}));
       }},
      {"binomial",
       [](const Array& k) {
         return lr::binomial(k, linum::array({5.0f, 300.0f, 40.0f}), 0.3);
       }},
      {"multinomial",
       [](const Array& k) {
         return lr::multinomial(k, 7.0, linum::array({0.5f, 0.5f}));
       }},
      {"gamma",
       [](const Array& k) {
         return lr::gamma(k, linum::array({0.2f, 1.5f, 9.0f}));
       }},
      {"loggamma",
       [](const Array& k) {
         return lr::loggamma(k, linum::array({0.2f, 9.0f}));
       }},
      {"beta", [](const Array& k) { return lr::beta(k, 0.5, 2.0, Shape{3}); }},
      {"dirichlet",
       [](const Array& k) {
         return lr::dirichlet(k, linum::array({0.5f, 2.0f}));
       }},
      {"chisquare", [](const Array& k) { return lr::chisquare(k, 3.0, Shape{3}); }},
      {"t", [](const Array& k) { return lr::t(k, 3.0, Shape{3}); }},
      {"f", [](const Array& k) { return lr::f(k, 3.0, 5.0, Shape{3}); }},
      {"generalized_normal", [](const Array& k) { return lr::generalized_normal(k, 1.5, {3}); }},
      {"ball", [](const Array& k) { return lr::ball(k, 2, 2.0, {3}); }},
  };

  TEST_CASE("vmap over keys gives each key's samples; jit replays them bit for bit") {
    const Array keys = lr::split(lr::key(50), 4);
    for (const auto& [label, fn] : kSamplers) {
      const std::string name = label;
      CAPTURE(name);
      const Array batched = linum::vmap(fn)(keys);
      for (int i = 0; i < 4; ++i) CHECK(same(row(batched, i), fn(row(keys, i))));
      auto jf = linum::jit(fn);
      CHECK(same(jf(lr::key(51)), fn(lr::key(51))));
      CHECK(same(jf(lr::key(52)), fn(lr::key(52))));
      CHECK(jf.trace_count() == 1);
    }
  }

  TEST_CASE("a batch of keys is one kernel call: the traced program does not grow with it") {
    for (const auto& [label, fn] : kSamplers) {
      const std::string name = label;
      CAPTURE(name);
      auto small = linum::jit(linum::vmap(fn)), large = linum::jit(linum::vmap(fn));
      small(lr::split(lr::key(53), 2));
      large(lr::split(lr::key(53), 16));
      CHECK(small.program_size() == large.program_size());
    }
  }

  TEST_CASE("vmap over gamma's a, with a shared key or a key per row") {
    const Array a = linum::array({{0.3f, 2.0f}, {5.0f, 0.9f}, {1.0f, 12.0f}});
    auto g = [](const Array& k, const Array& alpha) { return lr::gamma(k, alpha); };
    linum::VmapOptions only_a;
    only_a.in_axes = {linum::VmapOptions::kNone, 0};
    const Array shared = linum::vmap(g, only_a)(lr::key(54), a);
    const Array keys = lr::split(lr::key(55), 3);
    const Array both = linum::vmap(g)(keys, a);
    for (int i = 0; i < 3; ++i) {
      CHECK(same(row(shared, i), g(lr::key(54), row(a, i))));
      CHECK(same(row(both, i), g(row(keys, i), row(a, i))));
    }
  }
}

TEST_SUITE("random.samplers.gamma_grad") {
  TEST_CASE("random_gamma_grad against the implicit derivative -dP/da / dP/dx") {
    // From reference_samplers.py: P(a, x) by its series in float64, dP/da by a central
    // difference; dx/da at fixed P(a, x) = -(dP/da) / density.
    const std::vector<std::array<double, 3>> cases = {
        {0.3, 0.05, 0.4947109870162916},      {0.8, 0.7, 1.1348663536239725},
        {1.0, 1.0, 1.173563027140164},        {2.5, 1.2, 0.7224369105614806},
        {2.5, 6.0, 1.602986649039694},        {7.0, 4.0, 0.7638865669193999},
        {7.0, 12.0, 1.3246077174954396},      {40.0, 35.0, 0.9386210201535963},
        {0.05, 1e-06, 0.0002663535831399377},
    };
    for (const auto& [a, x, expected] : cases) {
      CAPTURE(a);
      CAPTURE(x);
      const double f64 = doubles(lr::random_gamma_grad(Array(a), Array(x)))[0];
      CHECK(std::abs(f64 - expected) <= 1e-6 * std::abs(expected));
      const double f32 = doubles(
          lr::random_gamma_grad(Array(static_cast<float>(a)), Array(static_cast<float>(x))))[0];
      CHECK(std::abs(f32 - expected) <= 2e-5 * std::abs(expected));
    }
  }

  TEST_CASE("grad of a gamma sample in a is random_gamma_grad(a, sample), as JAX's JVP") {
    const Array key = lr::key(60);
    const Array a = linum::array({0.3f, 1.0f, 2.5f, 7.0f});
    const Array sample = lr::gamma(key, a);
    const Array g =
        linum::grad([&](const Array& alpha) { return linum::sum(lr::gamma(key, alpha)); })(a);
    CHECK(same(g, lr::random_gamma_grad(a, sample)));
    // loggamma: d log(x) / da = random_gamma_grad(a, x) / x.
    const Array lg =
        linum::grad([&](const Array& alpha) { return linum::sum(lr::loggamma(key, alpha)); })(a);
    const auto lgv = doubles(lg), gv = doubles(g), xv = doubles(sample);
    const auto xl = doubles(linum::exp(lr::loggamma(key, a)));
    const auto ga = doubles(lr::random_gamma_grad(a, linum::exp(lr::loggamma(key, a))));
    for (int i = 0; i < 4; ++i) CHECK(std::abs(lgv[i] - ga[i] / xl[i]) <= 1e-6 * std::abs(lgv[i]));
    // A broadcast scalar a collects the gradient of every sample.
    const Array scalar = linum::grad([&](const Array& alpha) {
      return linum::sum(lr::gamma(key, alpha, Shape{5}));
    })(Array(2.0f));
    const auto five =
        doubles(lr::random_gamma_grad(linum::full({5}, 2.0), lr::gamma(key, 2.0f, Shape{5})));
    double total = 0;
    for (double v : five) total += v;
    CHECK(std::abs(scalar.item<float>() - total) <= 1e-5 * std::abs(total));
  }

  TEST_CASE("gradients flow through beta, chisquare, t and dirichlet, also under vmap and jit") {
    const Array key = lr::key(61);
    auto chi = [&](const Array& df) { return linum::sum(lr::chisquare(key, df, Shape{4})); };
    // chisquare(df) = 2 exp(loggamma(df / 2)): d/d df = exp(lg) * d lg/da.
    const Array half = Array(1.5f);
    const auto lgx = doubles(linum::exp(lr::loggamma(key, half, Shape{4})));
    const auto gg = doubles(lr::random_gamma_grad(linum::full({4}, 1.5),
                                                  linum::exp(lr::loggamma(key, half, Shape{4}))));
    double expected = 0;
    for (int i = 0; i < 4; ++i) expected += 2 * lgx[i] * (gg[i] / lgx[i]) * 0.5;
    CHECK(std::abs(linum::grad(chi)(Array(3.0f)).item<float>() - expected) <= 1e-4 * expected);
    auto b = [&](const Array& a) { return linum::sum(lr::beta(key, a, 2.0, Shape{3})); };
    const float gb = linum::grad(b)(Array(0.7f)).item<float>();
    CHECK(std::isfinite(gb));
    CHECK(gb != 0);
    auto tt = [&](const Array& df) { return linum::sum(linum::square(lr::t(key, df, Shape{8}))); };
    CHECK(std::isfinite(linum::grad(tt)(Array(4.0f)).item<float>()));
    auto dir = [&](const Array& alpha) {
      return linum::sum(linum::square(lr::dirichlet(key, alpha, Shape{3})));
    };
    const Array gd = linum::grad(dir)(linum::array({0.5f, 2.0f, 1.0f}));
    for (double v : doubles(gd)) CHECK(std::isfinite(v));
    const Array alphas = linum::array({{0.5f, 2.0f}, {3.0f, 1.0f}});
    auto ga = [&](const Array& a) { return linum::sum(lr::gamma(key, a)); };
    const Array per_row = linum::vmap(linum::grad(ga))(alphas);
    for (int i = 0; i < 2; ++i) CHECK(same(row(per_row, i), linum::grad(ga)(row(alphas, i))));
    CHECK(same(linum::jit(linum::grad(ga))(row(alphas, 0)), linum::grad(ga)(row(alphas, 0))));
  }
}

TEST_SUITE("random.samplers.errors") {
  TEST_CASE("argument errors carry JAX's messages") {
    const Array k = lr::key(0);
    CHECK_THROWS_WITH_AS(lr::gamma(k, 1.0, Shape{2}, linum::int32),
                         "dtype argument to `gamma` must be a float dtype, got int32",
                         linum::ValueError);
    CHECK_THROWS_WITH_AS(lr::exponential(k, {2}, linum::int32),
                         "dtype argument to `exponential` must be a float dtype, got int32",
                         linum::ValueError);
    CHECK_THROWS_WITH_AS(lr::gamma(k, 1.0, Shape{2}, linum::float32, "fast"),
                         "method argument to `gamma` must be one of {'exact', 'approximate'}, "
                         "got 'fast'",
                         linum::ValueError);
    CHECK_THROWS_AS(lr::poisson(k, 1.0, Shape{2}, linum::float32), linum::ValueError);
    CHECK_THROWS_WITH_AS(
        lr::poisson(k, linum::array({1.0f, 2.0f}), Shape{1}, linum::int32, "approximate"),
        "lam shape must be broadcastable to shape argument; got lam.shape (2,), "
        "shape (1,)",
        linum::ValueError);
    CHECK_THROWS_WITH_AS(lr::gamma(k, linum::array({1.0f, 2.0f, 3.0f}), Shape{2, 2}),
                         "gamma: shapes (2, 2) and (3,) are incompatible for broadcasting",
                         linum::ValueError);
    CHECK_THROWS_WITH_AS(lr::pareto(k, linum::array({1.0f, 2.0f}), Shape{1}),
                         "pareto parameter shapes must be broadcast-compatible with shape "
                         "argument, and the result of broadcasting the shapes must equal the "
                         "shape argument, but got result (2,) for shape argument (1,).",
                         linum::ValueError);
    CHECK_THROWS_WITH_AS(lr::beta(k, linum::array({1.0, 2.0}), 1.0),
                         "In arguments to beta, cannot safely cast argument of type float64 to "
                         "float32",
                         linum::ValueError);
    CHECK_THROWS_WITH_AS(lr::dirichlet(k, Array(1.0f)),
                         "dirichlet requires alpha.ndim >= 1, got alpha.ndim == 0",
                         linum::ValueError);
    CHECK_THROWS_WITH_AS(lr::geometric(k, 0.5, Shape{2}, linum::float32),
                         "dtype argument to `geometric` must be an int dtype, got float32",
                         linum::ValueError);
    CHECK_THROWS_WITH_AS(lr::t(lr::split(k, 2), 3.0),
                         "t accepts a single key, but was given a key array of shape (2, 2) != (). "
                         "Use jax.vmap for batching.",
                         linum::ValueError);
    CHECK_THROWS_AS(
        linum::grad([](const Array& a) {
          return linum::sum(lr::random_gamma_grad(a, linum::full({2}, 1.0, linum::float32)));
        })(linum::full({2}, 2.0, linum::float32)),
        linum::NotImplementedError);
  }
}

}  // namespace test_sampler_properties
