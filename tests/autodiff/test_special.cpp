// jax.scipy.special and jax.scipy.stats.norm: values against closed forms and Python's math
// module (lgamma, erfc, erf; the Bessel values from their power series summed with math.fsum),
// NaN/inf at the poles and domain edges as JAX's, float32 agreement to float rounding,
// derivatives with check_grads and closed forms, vmap, jit, and errors.
#include <cmath>
#include <limits>
#include <numbers>

#include "op_testing.hpp"

namespace test_special {

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
constexpr double kEuler = 0.5772156649015329;

bool same(const Array& a, const Array& b) {
  if (a.shape() != b.shape() || a.dtype() != b.dtype()) return false;
  const auto va = values(a), vb = values(b);
  for (std::size_t i = 0; i < va.size(); ++i)
    if (!(va[i] == vb[i] || (std::isnan(va[i]) && std::isnan(vb[i])))) return false;
  return true;
}

double grad_at(Array (*f)(const Array&), double x) { return grad(f)(Array(x)).item<double>(); }
}  // namespace

// ---- gamma family -----------------------------------------------------------------------------

TEST_CASE("gammaln, gamma, gammasgn, loggamma against math.lgamma / math.gamma") {
  // Python: math.lgamma(v) for v in (0.5, 1, 2.5, 10, -0.5, -2.5, 1e-3, 100).
  check_array(gammaln(array({0.5, 1.0, 2.5, 10.0, -0.5, -2.5, 1e-3, 100.0})), {8}, float64,
              {0.5723649429247004, 0.0, 0.2846828704729196, 12.801827480081467, 1.265512123484645,
               -0.05624371649767457, 6.907178885383854, 359.1342053695754},
              1e-13);
  // Poles: +inf at 0 and the negative integers, +inf at +-inf, NaN stays NaN.
  check_array(gammaln(array({0.0, -3.0, kInf, -kInf, kNan})), {5}, float64,
              {kInf, kInf, kInf, kInf, kNan});
  check_array(gamma(array({0.5, 5.0, -0.5, -1.5})), {4}, float64,
              {std::sqrt(kPi), 24, -2 * std::sqrt(kPi), 4 * std::sqrt(kPi) / 3}, 1e-13);
  check_array(gammasgn(array({2.5, -0.5, -1.5, -2.0, 0.0, -0.0, kNan})), {7}, float64,
              {1, -1, 1, kNan, 1, -1, kNan});
  check_array(loggamma(array({2.5, -0.5})), {2}, float64, {0.2846828704729196, kNan}, 1e-13);
  // Integer inputs compute in float32.
  check_array(gammaln(array({3})), {1}, float32, {std::log(2.0)}, 1e-6);
  check_array(factorial(array({0.0, 4.0, 5.5, -1.0})), {4}, float64, {1, 24, std::tgamma(6.5), 0},
              1e-13);
}

TEST_CASE(
    "float32 gammaln and digamma (XLA's Lanczos) agree with the float64 results to float "
    "rounding") {
  std::vector<float> v;
  for (int i = 0; i < 60; ++i) v.push_back(-4.75f + 0.31f * static_cast<float>(i));
  const auto lg32 = values(gammaln(array(v))), dg32 = values(digamma(array(v)));
  for (std::size_t i = 0; i < v.size(); ++i) {
    INFO("x = " << v[i]);
    const double x = v[i];
    CHECK(lg32[i] == doctest::Approx(std::lgamma(x)).epsilon(2e-6).scale(1));
    CHECK(dg32[i] == doctest::Approx(digamma(Array(x)).item<double>()).epsilon(2e-5).scale(1));
  }
}

TEST_CASE("digamma and polygamma at closed-form points") {
  // psi(1) = -gamma, psi(1/2) = -gamma - 2 log 2, psi(5) = H_4 - gamma, psi(-1/2) = psi(3/2)
  // (the reflection's cot term is 0) = 2 - gamma - 2 log 2; poles give NaN.
  check_array(digamma(array({1.0, 0.5, 5.0, -0.5, 0.0, -2.0})), {6}, float64,
              {-kEuler, -kEuler - 2 * std::log(2.0), 25.0 / 12 - kEuler,
               2 - kEuler - 2 * std::log(2.0), kNan, kNan},
              1e-13);
  // psi'(1) = pi²/6, psi''(1) = -2 zeta(3), psi'(1/2) = pi²/2; polygamma(0, x) = digamma(x).
  const double zeta3 = 1.2020569031595942;
  check_array(polygamma(array({1, 2, 1, 0}), array({1.0, 1.0, 0.5, 5.0})), {4}, float64,
              {kPi * kPi / 6, -2 * zeta3, kPi * kPi / 2, 25.0 / 12 - kEuler}, 1e-10);
  check_array(polygamma(array({-1}), array({1.0})), {1}, float64, {kNan});
  LINUM_CHECK_ERROR(polygamma(array({1.0}), array({1.0})), ValueError,
                    "polygamma: argument n must be of integer type, got float64");
}

TEST_CASE("zeta: Hurwitz zeta at closed forms, its poles and domain") {
  // zeta(2, 1) = pi²/6, zeta(4, 1) = pi⁴/90, zeta(2, 2) = pi²/6 - 1, zeta(2, 1/2) = pi²/2.
  check_array(zeta(array({2.0, 4.0, 2.0, 2.0}), array({1.0, 1.0, 2.0, 0.5})), {4}, float64,
              {kPi * kPi / 6, std::pow(kPi, 4) / 90, kPi * kPi / 6 - 1, kPi * kPi / 2}, 1e-12);
  // x = 1 diverges; x < 1 is outside the domain; integer q <= 0 is a pole (inf for even x).
  check_array(zeta(array({1.0, 0.5, 2.0, 3.0, 2.5}), array({1.0, 1.0, 0.0, -1.0, -0.5})), {5},
              float64, {kInf, kNan, kInf, kNan, kNan});
}

TEST_CASE("betaln and beta, accurate for large arguments (algdiv)") {
  // B(2, 3) = 1/12; B(0.5, 0.5) = pi; B(-0.5, 1.5) = Γ(-0.5)Γ(1.5)/Γ(1) = -pi.
  check_array(beta(array({2.0, 0.5, -0.5}), array({3.0, 0.5, 1.5})), {3}, float64,
              {1.0 / 12, kPi, -kPi}, 1e-13);
  check_array(betaln(array({2.0}), array({3.0})), {1}, float64, {std::log(1.0 / 12)}, 1e-13);
  // lgamma(0.5) + lgamma(1e6) - lgamma(1e6 + 0.5) = log B(0.5, 1e6): the three lgammas cancel
  // to 14 digits; the difference of the two large ones is, by Stirling's series for
  // lgamma(x + 1/2) - lgamma(x), -0.5 log(1e6) + 1/(8e6) + O(1e-18).
  const double want = std::lgamma(0.5) - 0.5 * std::log(1e6) + 1 / 8e6;
  check_array(betaln(array({1e6}), array({0.5})), {1}, float64, {want}, 1e-12);
}

TEST_CASE("gammainc / gammaincc: closed forms, domain edges, float32") {
  // P(1, x) = 1 - e^-x, P(1/2, x) = erf(sqrt x), P(2, x) = 1 - e^-x (1 + x),
  // Q(3, x) = e^-x (1 + x + x²/2): series (x < a + 1) and continued fraction (x >= 1, x > a).
  for (double x : {0.5, 2.0, 7.0}) {
    INFO("x = " << x);
    CHECK(gammainc(Array(1.0), Array(x)).item<double>() ==
          doctest::Approx(1 - std::exp(-x)).epsilon(1e-13));
    CHECK(gammainc(Array(0.5), Array(x)).item<double>() ==
          doctest::Approx(std::erf(std::sqrt(x))).epsilon(1e-13));
    CHECK(gammainc(Array(2.0), Array(x)).item<double>() ==
          doctest::Approx(1 - std::exp(-x) * (1 + x)).epsilon(1e-13));
    CHECK(gammaincc(Array(3.0), Array(x)).item<double>() ==
          doctest::Approx(std::exp(-x) * (1 + x + x * x / 2)).epsilon(1e-13));
    CHECK(gammainc(Array(2.0f), Array(static_cast<float>(x))).item<float>() ==
          doctest::Approx(1 - std::exp(-x) * (1 + x)).epsilon(1e-6));
  }
  check_array(gammainc(array({1.0, 1.0, 1.0, -1.0, 0.0, kInf, 2.0}),
                       array({0.0, kInf, -1.0, 1.0, 0.0, 1.0, kNan})),
              {7}, float64, {0, 1, kNan, kNan, kNan, 0, kNan});
  check_array(gammaincc(array({1.0, 0.0, kInf}), array({0.0, 2.0, 3.0})), {3}, float64, {1, 0, 1});
}

// ---- error function and the normal distribution

TEST_CASE("erfc, erfinv, ndtr, ndtri, log_ndtr against math.erfc") {
  // Python: math.erfc(v) for v in (0.5, 1.5, -1, 3, 10, 27).
  check_array(erfc(array({0.5, 1.5, -1.0, 3.0, 10.0, 27.0, kInf, -kInf})), {8}, float64,
              {0.4795001221869535, 0.033894853524689274, 1.842700792949715, 2.2090496998585438e-05,
               2.088487583762545e-45, 5.23705e-319, 0, 2},
              1e-13);
  // erfinv(0.5), erfinv(-0.9): bisection on Python's math.erf.
  check_array(erfinv(array({0.0, 0.5, -0.9, 1.0, -1.0, 1.5})), {6}, float64,
              {0, 0.4769362762044699, -1.1630871536766743, kInf, -kInf, kNan}, 1e-13);
  check_close(erf(erfinv(array({0.3, -0.7, 0.99}))), array({0.3, -0.7, 0.99}), 1e-14);
  // ndtr(x) = erfc(-x / sqrt 2) / 2, from math.erfc.
  check_array(
      ndtr(array({-3.0, -1.0, 0.0, 0.5, 2.0})), {5}, float64,
      {0.0013498980316300957, 0.15865525393145707, 0.5, 0.6914624612740131, 0.9772498680518208},
      1e-14);
  Array p = array({1e-300, 1e-10, 0.02, 0.3, 0.5, 0.9, 1.0 - 1e-12});
  check_close(ndtr(ndtri(p)), p, 1e-11);
  check_array(ndtri(array({0.0, 1.0, -0.5, 2.0})), {4}, float64, {-kInf, kInf, kNan, kNan});
  // log(ndtr(x)) from math (x = -3, 0.5, -15, 6); below -20 the asymptotic series (-30).
  check_array(log_ndtr(array({-3.0, 0.5, -15.0, -30.0, 6.0})), {5}, float64,
              {-6.607726221510348, -0.36894641528865635, -116.13138484571166, -454.3212439563431,
               -9.865876455243787e-10},
              1e-9);
  CHECK(std::isfinite(log_ndtr(Array(-1e5)).item<double>()));
  check_array(log_ndtr(array({-30.0f, 0.0f, 20.0f})), {3}, float32,
              {-454.3212439563431, std::log(0.5), 0}, 1e-6);
  LINUM_CHECK_ERROR(ndtr(array({1, 2})), TypeError,
                    "ndtr: expected a float32 or float64 array, got int32");
  LINUM_CHECK_ERROR(ndtri(array({1})), TypeError, "ndtri: expected a float32 or float64 array");
  LINUM_CHECK_ERROR(log_ndtr(array({1.0}), 31), ValueError,
                    "log_ndtr: series_order must be in [0, 30], got 31");
}

TEST_CASE("float32 erfc, ndtri, i0e, i1e agree with float64 to float rounding") {
  std::vector<float> v;
  for (int i = 0; i < 50; ++i) v.push_back(-6.0f + 0.25f * static_cast<float>(i));
  Array x32 = array(v), x64 = astype(x32, float64);
  for (auto f : {+[](const Array& a) { return erfc(a); }, +[](const Array& a) { return i0e(a); },
                 +[](const Array& a) { return i1e(a); }, +[](const Array& a) { return ndtr(a); }}) {
    const auto a = values(f(x32)), b = values(f(x64));
    for (std::size_t i = 0; i < v.size(); ++i) {
      INFO("x = " << v[i]);
      CHECK(a[i] == doctest::Approx(b[i]).epsilon(4e-6).scale(1e-30));
    }
  }
  std::vector<float> p;
  for (int i = 1; i < 40; ++i) p.push_back(static_cast<float>(i) / 40);
  check_close(astype(ndtri(array(p)), float64), ndtri(astype(array(p), float64)), 2e-6);
}

// ---- Bessel

TEST_CASE("i0e, i1e, i0, i1 against their power series") {
  // I_nu(x) = sum (x/2)^(2k+nu) / (k! (k+nu)!) summed with math.fsum, times e^-x.
  check_array(i0e(array({0.5, 3.0, 10.0, 30.0, -3.0})), {5}, float64,
              {0.6450352704491501, 0.24300035416182542, 0.12783333716342862, 0.0731459464822373,
               0.24300035416182542},
              1e-13);
  check_array(i1e(array({0.5, 3.0, 10.0, 30.0, -3.0, 0.0})), {6}, float64,
              {0.1564208031848717, 0.19682671329730086, 0.12126268138445555, 0.07191633059864756,
               -0.19682671329730086, 0},
              1e-13);
  check_array(i0(array({0.0, 3.0})), {2}, float64, {1, 0.24300035416182542 * std::exp(3.0)}, 1e-13);
  check_array(i1(array({-3.0})), {1}, float64, {-0.19682671329730086 * std::exp(3.0)}, 1e-13);
}

// ---- information theory and logit

TEST_CASE("xlogy, xlog1py, entr, rel_entr, kl_div, logit: scipy's edge values") {
  check_array(xlogy(array({0.0, 0.0, 2.0, 0.0}), array({0.0, kNan, kPi, -1.0})), {4}, float64,
              {0, kNan, 2 * std::log(kPi), 0});
  check_array(xlog1py(array({0.0, 3.0}), array({-1.0, 1.0})), {2}, float64, {0, 3 * std::log(2.0)});
  check_array(entr(array({0.0, 0.5, -1.0, 1.0})), {4}, float64, {0, 0.5 * std::log(2.0), -kInf, 0});
  // p log(p / q); 0 for p = 0 <= q; inf for p > 0 = q or negative inputs.
  check_array(rel_entr(array({0.5, 0.0, 0.5, -1.0}), array({0.25, 1.0, 0.0, 1.0})), {4}, float64,
              {0.5 * std::log(2.0), 0, kInf, kInf});
  check_array(kl_div(array({0.5}), array({0.25})), {1}, float64, {0.5 * std::log(2.0) - 0.25});
  check_array(logit(array({0.5, 0.75, 0.0, 1.0, 2.0})), {5}, float64,
              {0, std::log(3.0), -kInf, kInf, kNan});
  check_close(sigmoid(logit(array({0.1, 0.9}))), array({0.1, 0.9}), 1e-14);
  check_array(boxcox(array({4.0, 4.0}), array({0.0, 0.5})), {2}, float64, {std::log(4.0), 2},
              1e-15);
  check_array(boxcox1p(array({3.0}), array({0.0})), {1}, float64, {std::log(4.0)}, 1e-15);
  check_array(poch(array({2.0, 3.0}), array({3.0, 0.0})), {2}, float64, {24, 1}, 1e-13);
  // comb(5, 2) = 10; with repetition comb(5 + 2 - 1, 2) = 15; outside the domain 0.
  check_array(comb(array({5.0, 5.0, 2.0}), array({2.0, 2.0, 3.0})), {3}, float64, {10, 10, 0},
              1e-12);
  check_array(comb(array({5.0}), array({2.0}), true), {1}, float64, {15}, 1e-12);
  // log Γ_2(a) = log(pi)/2 + lgamma(a) + lgamma(a - 1/2).
  check_array(multigammaln(array({3.0}), 2), {1}, float64,
              {std::log(kPi) / 2 + std::lgamma(3.0) + std::lgamma(2.5)}, 1e-13);
}

TEST_CASE("logsumexp with weights b and return_sign, as jax.scipy.special.logsumexp") {
  Array a = array({{1.0, 2.0}, {3.0, -kInf}}), b = array({{2.0, -1.0}, {0.0, 1.0}});
  // log|2e - e²| = log(e² - 2e); sign -1. Row 2: b = 0 removes 3, exp(-inf) = 0: log 0.
  auto [out, sign] = logsumexp_with_sign(a, 1, false, b);
  check_array(out, {2}, float64, {std::log(std::exp(2.0) - 2 * std::exp(1.0)), -kInf}, 1e-14);
  check_array(sign, {2}, float64, {-1, 0});
  check_array(logsumexp(a, 1, false, b), {2}, float64, {kNan, -kInf});
  check_array(logsumexp(array({1.0, 2.0}), Axes{}, true, array({0.5, 0.5})), {1}, float64,
              {std::log((std::exp(1.0) + std::exp(2.0)) / 2)}, 1e-14);
  // No weights: the plain logsumexp; an empty reduction gives -inf.
  CHECK(same(logsumexp(a, 0, false, Array()), logsumexp(a, 0)));
  check_array(logsumexp_with_sign(zeros({0, 2}), 0).first, {2}, float32, {-kInf, -kInf});
  // The gradient in a is softmax weighted by b: d/da log(sum b e^a) = b e^a / sum b e^a.
  Array g = grad([](const Array& v) {
    return logsumexp(v, Axes{}, false, array({1.0, 3.0}));
  })(array({0.0, 0.0}));
  check_array(g, {2}, float64, {0.25, 0.75}, 1e-15);
}

TEST_CASE("stats.norm: logpdf, pdf, cdf, logcdf, sf, logsf, ppf, isf") {
  using namespace linum::stats;
  // logpdf(x; m, s) = -((x - m)² / s² + log(2 pi s²)) / 2.
  check_array(norm::logpdf(array({1.0, 3.0}), Array(1.0), Array(2.0)), {2}, float64,
              {-0.5 * std::log(2 * kPi * 4), -0.5 * (1 + std::log(2 * kPi * 4))}, 1e-15);
  check_array(norm::pdf(array({0.0})), {1}, float64, {1 / std::sqrt(2 * kPi)}, 1e-15);
  check_array(norm::cdf(array({0.5})), {1}, float64, {0.6914624612740131}, 1e-14);
  check_array(norm::cdf(array({3.0}), Array(2.0), Array(2.0)), {1}, float64, {0.6914624612740131},
              1e-14);
  check_array(norm::sf(array({-0.5})), {1}, float64, {0.6914624612740131}, 1e-14);
  check_array(norm::logcdf(array({-3.0})), {1}, float64, {-6.607726221510348}, 1e-12);
  check_array(norm::logsf(array({3.0})), {1}, float64, {-6.607726221510348}, 1e-12);
  check_array(norm::ppf(array({0.6914624612740131}), Array(1.0), Array(2.0)), {1}, float64, {2.0},
              1e-12);
  check_array(norm::isf(array({0.6914624612740131})), {1}, float64, {-0.5}, 1e-12);
  // Integer x computes in float32.
  check_array(norm::pdf(array({0})), {1}, float32, {1 / std::sqrt(2 * kPi)});
}

// ---- derivatives

TEST_CASE("special functions: check_grads (float64)") {
  struct Case {
    const char* name;
    Array (*f)(const Array&);
    double lo, hi;
  };
  const Case cases[] = {
      {"gammaln", [](const Array& x) { return gammaln(x); }, 0.3, 6},
      {"gammaln<0", [](const Array& x) { return gammaln(x); }, -0.9, -0.1},
      {"digamma", [](const Array& x) { return digamma(x); }, 0.3, 6},
      {"gamma", [](const Array& x) { return gamma(x); }, 0.3, 3},
      {"erfc", [](const Array& x) { return erfc(x); }, -2, 2},
      {"erfinv", [](const Array& x) { return erfinv(x); }, -0.9, 0.9},
      {"ndtr", [](const Array& x) { return ndtr(x); }, -3, 3},
      {"ndtri", [](const Array& x) { return ndtri(x); }, 0.02, 0.98},
      {"log_ndtr", [](const Array& x) { return log_ndtr(x); }, -4, 4},
      {"log_ndtr tail", [](const Array& x) { return log_ndtr(x); }, -40, -25},
      {"i0e", [](const Array& x) { return i0e(x); }, -9, 9},
      {"i1e", [](const Array& x) { return i1e(x); }, -9, 9},
      {"i0", [](const Array& x) { return i0(x); }, -3, 3},
      {"i1", [](const Array& x) { return i1(x); }, -3, 3},
      {"logit", [](const Array& x) { return logit(x); }, 0.1, 0.9},
      {"entr", [](const Array& x) { return entr(x); }, 0.1, 2},
      {"loggamma", [](const Array& x) { return loggamma(x); }, 0.5, 4},
      {"factorial", [](const Array& x) { return factorial(x); }, 0.5, 4},
      {"norm.logpdf", [](const Array& x) { return stats::norm::logpdf(x, Array(0.5), Array(2.0)); },
       -3, 3},
      {"norm.ppf", [](const Array& x) { return stats::norm::ppf(x, Array(0.5), Array(2.0)); }, 0.1,
       0.9},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    check_grads(c.f, data({2, 3}, 7, c.lo, c.hi), 1e-6, 1e-5);
  }
  struct Case2 {
    const char* name;
    Array (*f)(const Array&, const Array&);
    double lo1, hi1, lo2, hi2;
  };
  const Case2 cases2[] = {
      {"gammainc", [](const Array& a, const Array& x) { return gammainc(a, x); }, 0.5, 3, 0.2, 5},
      {"gammaincc", [](const Array& a, const Array& x) { return gammaincc(a, x); }, 0.5, 3, 0.2, 5},
      {"betaln", [](const Array& a, const Array& b) { return betaln(a, b); }, 0.5, 3, 0.5, 20},
      {"beta", [](const Array& a, const Array& b) { return beta(a, b); }, 0.5, 3, 0.5, 3},
      {"xlogy", [](const Array& a, const Array& b) { return xlogy(a, b); }, -2, 2, 0.5, 3},
      {"xlog1py", [](const Array& a, const Array& b) { return xlog1py(a, b); }, -2, 2, -0.5, 3},
      {"rel_entr", [](const Array& a, const Array& b) { return rel_entr(a, b); }, 0.2, 2, 0.5, 3},
      {"kl_div", [](const Array& a, const Array& b) { return kl_div(a, b); }, 0.2, 2, 0.5, 3},
      {"zeta", [](const Array& a, const Array& b) { return zeta(a, b); }, 1.5, 4, 0.5, 3},
      {"poch", [](const Array& a, const Array& b) { return poch(a, b); }, 0.5, 2, 0.5, 2},
      {"boxcox", [](const Array& a, const Array& b) { return boxcox(a, b); }, 0.5, 3, 0.2, 1},
  };
  for (const auto& c : cases2) {
    INFO(c.name);
    check_grads([&](const Arrays& a) { return c.f(a[0], a[1]); },
                Arrays{data({2, 3}, 8, c.lo1, c.hi1), data({3}, 9, c.lo2, c.hi2)}, 1e-6, 1e-5);
  }
  check_grads(
      [](const Array& x) {
        return polygamma(array({0, 1, 2}), x);
      },
      data({2, 3}, 10, 0.5, 3), 1e-6, 1e-5);
}

TEST_CASE("special derivatives at closed-form points and JAX's rules") {
  // gammaln'(x) = digamma(x): digamma(1) = -gamma; digamma'(1) = pi²/6.
  CHECK(grad_at([](const Array& x) { return gammaln(x); }, 1.0) ==
        doctest::Approx(-kEuler).epsilon(1e-13));
  CHECK(grad_at([](const Array& x) { return digamma(x); }, 1.0) ==
        doctest::Approx(kPi * kPi / 6).epsilon(1e-10));
  // erfinv'(0) = sqrt(pi) / 2; ndtri'(1/2) = sqrt(2 pi); logit'(1/2) = 4.
  CHECK(grad_at([](const Array& x) { return erfinv(x); }, 0.0) ==
        doctest::Approx(std::sqrt(kPi) / 2));
  CHECK(grad_at([](const Array& x) { return ndtri(x); }, 0.5) ==
        doctest::Approx(std::sqrt(2 * kPi)));
  CHECK(grad_at([](const Array& x) { return logit(x); }, 0.5) == doctest::Approx(4.0));
  // xlogy at x = 0: the custom rule gives d/dx = log(y), finite at y > 0 and 0 in y.
  auto g = grad([](const Array& a, const Array& b) { return xlogy(a, b); }, argnums<0, 1>)(
      Array(0.0), Array(2.0));
  CHECK(std::get<0>(g).item<double>() == doctest::Approx(std::log(2.0)));
  CHECK(std::get<1>(g).item<double>() == 0.0);
  // entr at 0 has derivative -inf (-(log x + 1)); i0'(0) = 0 (jnp.i0's rule); i1e'(0) = 1/2.
  CHECK(grad_at([](const Array& x) { return entr(x); }, 0.0) == kInf);
  CHECK(grad_at([](const Array& x) { return i0(x); }, 0.0) == 0.0);
  CHECK(grad_at([](const Array& x) { return i1e(x); }, 0.0) == 0.5);
  // d/dx P(a, x) = x^(a-1) e^-x / Γ(a); d/dq zeta(x, q) = -x zeta(x + 1, q).
  auto gi = grad([](const Array& a, const Array& x) { return gammainc(a, x); }, argnums<0, 1>)(
      Array(2.0), Array(1.5));
  CHECK(std::get<1>(gi).item<double>() == doctest::Approx(1.5 * std::exp(-1.5)).epsilon(1e-12));
  auto gz = grad([](const Array& x, const Array& q) { return zeta(x, q); }, argnums<0, 1>)(
      Array(2.0), Array(1.0));
  CHECK(std::get<1>(gz).item<double>() == doctest::Approx(-2 * 1.2020569031595942).epsilon(1e-8));
  // polygamma's n is integer-typed, so derivatives flow to x only: d/dx psi'(x) = psi''(x).
  auto gp = grad([](const Array& x) { return sum(polygamma(array({1}), x)); })(Array(1.0));
  check_array(gp, {}, float64, {-2 * 1.2020569031595942}, 1e-10);
}

// ---- vmap and jit -------------------------------------------------------------------------------

TEST_CASE("vmap of the special functions equals a loop over examples") {
  Array a = data({3, 4, 2}, 21, 0.2, 0.9), b = data({4, 2}, 22, 0.5, 3.0);
  check_vmap(
      [](const Array& x) { return gammaln(x) + digamma(x) + erfc(x) + erfinv(x) + ndtri(x); },
      axes({1}, 1), a);
  check_vmap(
      [](const Array& x) { return i0e(x) + i1e(x) + logit(x) + entr(x) + log_ndtr(x) + ndtr(x); },
      axes({2}), a);
  check_vmap([](const Array& x,
                const Array& y) { return gammainc(y, x) + gammaincc(y, x) + zeta(y + 1.0, x); },
             axes({0, kNone}), a, b);
  check_vmap(
      [](const Array& x, const Array& y) { return xlogy(x, y) + xlog1py(x, y) + betaln(x, y); },
      axes({2, kNone}), a, data({3, 4}, 26, 0.5, 3.0));
  check_vmap(
      [](const Array& x) {
        return polygamma(array({1, 2}), x + 1.0);
      },
      axes({0}), data({3, 2}, 23, 0.2, 2.0));
  check_vmap([](const Array& x, const Array& w) { return logsumexp(x, Axes{}, false, w); },
             axes({0, kNone}), data({3, 4}, 24), data({4}, 25, 0.1, 1.0));
  // Per-example gradients.
  Array xs = data({4, 3}, 31, 0.3, 0.9);
  auto f = [](const Array& x) { return sum(gammaln(x + 1.0) * erfinv(x) + gammainc(2.0, x)); };
  Array pe = vmap(grad(f))(xs);
  Arrays rows;
  for (int k = 0; k < 4; ++k) rows.push_back(grad(f)(optest::index_axis(xs, 0, k)));
  check_close(pe, optest::stack0(rows));
}

TEST_CASE("jit replays the special functions bit for bit") {
  auto fn = [](const Array& x, const Array& y) {
    return gammaln(x + 1.0f) + digamma(x + 1.0f) + erfc(x) + erfinv(x * 0.5f) + i0e(x) + i1e(x) +
           ndtri(x * 0.5f + 0.5f) + log_ndtr(x) + gammainc(y, x + 1.0f) + zeta(y + 1.0f, x + 1.0f) +
           xlogy(x, y) + polygamma(array({1}), y);
  };
  for (DType dt : {float32, float64}) {
    const Array x = astype(data({257}, 1, -0.9, 0.9), dt), y = astype(data({257}, 2, 0.5, 3.0), dt);
    auto jf = jit(fn);
    CHECK(same(jf(x, y), fn(x, y)));
    CHECK(same(jf(x, y), fn(x, y)));
  }
  auto loss = [](const Array& v) { return sum(gammaln(v + 2.0) * ndtr(v) + i1e(v)); };
  const Array v = data({9}, 3);
  CHECK(same(jit(grad(loss))(v), grad(loss)(v)));
}

}  // namespace test_special
