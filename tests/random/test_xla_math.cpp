// The XLA-exact special functions: accuracy against libm (they are approximations, so the check
// is a bound in ulp), edge cases, and inverse relations.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <limits>

#include <linum/autodiff/random/xla_math.hpp>

#include "test_util.hpp"

namespace test_xla_math {

namespace lr = linum::random;
using lr::testing::ulp_distance;

TEST_SUITE("random.xla_math") {
  TEST_CASE("float32 log is within 1 ulp of the correctly rounded log, with IEEE edge cases") {
    std::int64_t worst = 0;
    for (std::uint32_t b = 0x00800000u; b < 0x7f800000u; b += 4099) {
      const float x = std::bit_cast<float>(b);
      worst = std::max(worst, ulp_distance(lr::detail::xla_log(x),
                                           static_cast<float>(std::log(static_cast<double>(x)))));
    }
    CHECK(worst <= 1);
    CHECK(lr::detail::xla_log(1.0f) == 0.0f);
    CHECK(lr::detail::xla_log(0.0f) == -std::numeric_limits<float>::infinity());
    CHECK(std::isnan(lr::detail::xla_log(-1.0f)));
    CHECK(lr::detail::xla_log(std::numeric_limits<float>::infinity()) ==
          std::numeric_limits<float>::infinity());
  }

  TEST_CASE("log1p is accurate on both sides of the sqrt(2) - 1 switch") {
    std::int64_t worst = 0;
    for (float x = -0.99f; x < 4.0f; x += 0.000731f) {
      const float exact = static_cast<float>(std::log1p(static_cast<double>(x)));
      worst = std::max(worst, ulp_distance(lr::detail::xla_log1p(x), exact));
    }
    CHECK(worst <= 2);
    CHECK(lr::detail::xla_log1p(0.0f) == 0.0f);
    CHECK(lr::detail::xla_log1p(1e-30f) == 1e-30f);  // tiny x: log1p(x) = x, not 0
    CHECK(lr::detail::xla_log1p(-1.0f) == -std::numeric_limits<float>::infinity());
    // XLA applies Cephes' rational also on (-0.4142, -0.2929), outside its design interval,
    // where float64 errors reach ~2.6e-14 relative; elsewhere log1p is good to 2 ulp.
    for (double x = -0.9; x < 4.0; x += 0.00173) {
      const double bound = (x > -0.4143 && x < -0.2928) ? 3e-14 : 4.5e-16;
      CHECK(std::abs(lr::detail::xla_log1p(x) - std::log1p(x)) <= bound * std::abs(std::log1p(x)));
    }
  }

  TEST_CASE("float32 erf_inv inverts erf to float32 precision, +-1 give +-inf") {
    // |erf(x) - y| over the slope of erf is the error in x. Beyond |y| ~ 0.99 the float32 y*y
    // of chlo's w = -log1p(-y*y) limits accuracy (as in JAX), hence the looser tail bound.
    double worst = 0, worst_tail = 0;
    for (float y = -0.9999f; y < 0.9999f; y += 0.0001731f) {
      const double x = lr::detail::erf_inv(y);
      const double slope = 2 / std::sqrt(M_PI) * std::exp(-x * x);
      if (x == 0) continue;
      const double err = std::abs(std::erf(x) - y) / slope / std::abs(x);
      (std::abs(y) < 0.99f ? worst : worst_tail) =
          std::max(std::abs(y) < 0.99f ? worst : worst_tail, err);
    }
    CHECK(worst < 5e-7);
    CHECK(worst_tail < 2e-5);
    CHECK(lr::detail::erf_inv(1.0f) == std::numeric_limits<float>::infinity());
    CHECK(lr::detail::erf_inv(-1.0f) == -std::numeric_limits<float>::infinity());
    CHECK(lr::detail::erf_inv(0.0f) == 0.0f);
    CHECK(lr::detail::erf_inv(-0.5f) == -lr::detail::erf_inv(0.5f));
  }

  TEST_CASE("float64 erf_inv inverts erf to double precision in all three branches") {
    double worst = 0;
    // w = -log(1 - y^2) crosses 6.25 near |y| = 0.9978 and 16 near |y| = 1 - 1.1e-7.
    for (double y : {-0.9, -0.5, -1e-3, 1e-8, 0.25, 0.75, 0.99, 0.998, 0.9999, 0.9999999,
                     0.99999999, 1 - 1e-12, -(1 - 1e-14)}) {
      const double x = lr::detail::erf_inv(y);
      const double slope = 2 / std::sqrt(M_PI) * std::exp(-x * x);
      worst = std::max(worst, std::abs(std::erf(x) - y) / slope / std::abs(x));
    }
    CHECK(worst < 1e-14);
    CHECK(lr::detail::erf_inv(1.0) == std::numeric_limits<double>::infinity());
  }

  TEST_CASE("erf approximations agree with libm") {
    for (float x = -5.0f; x < 5.0f; x += 0.01237f)
      CHECK(std::abs(lr::detail::erf(x) - std::erf(static_cast<double>(x))) < 3e-7);
    for (double x = -7.0; x < 9.0; x += 0.0123)
      CHECK(std::abs(lr::detail::erf(x) - std::erf(x)) < 4.5e-16);
    CHECK(lr::detail::erf(10.0f) == 1.0f);
    CHECK(lr::detail::erf(-30.0) == -1.0);
  }

  TEST_CASE("the truncation constants of truncated_normal(-2, 2)") {
    // erf(+-2/sqrt2) in float32: -0.954499722 (bits 0xbf745a7b), used by every lecun_normal.
    const float a = lr::detail::erf(-2.0f / static_cast<float>(std::sqrt(2.0)));
    CHECK(std::bit_cast<std::uint32_t>(a) == std::bit_cast<std::uint32_t>(-0.954499722f));
    CHECK(std::abs(lr::detail::erf(2.0 / std::sqrt(2.0)) - std::erf(std::sqrt(2.0))) < 1e-16);
  }
}

}  // namespace test_xla_math
