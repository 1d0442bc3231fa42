// optim schedules at chosen steps (optax's docstring examples and the closed forms), and their
// argument errors.
#include <cmath>
#include <numbers>

#include "helpers.hpp"

namespace test_schedule {

namespace optim = linum::optim;
using namespace optim_test;
using doctest::Approx;

TEST_SUITE("optim schedules") {
  TEST_CASE("constant, linear and polynomial (optax docstring values)") {
    auto c = optim::constant_schedule(5);
    CHECK(c(0) == 5);
    CHECK(c(100) == 5);

    auto lin = optim::linear_schedule(1.0, 0.01, 100);
    CHECK(lin(0) == 1.0);
    CHECK(lin(50) == Approx(0.505).epsilon(1e-14));
    CHECK(lin(100) == Approx(0.01).epsilon(1e-14));
    CHECK(lin(1000) == Approx(0.01).epsilon(1e-14));

    // optax.polynomial_schedule(1.0, 0.01, power=2, transition_steps=100, transition_begin=5):
    // count:0 1.0000, 5 1.0000, 6 0.9803, 104 0.0101, 105 0.0100, 110 0.0100.
    auto poly = optim::polynomial_schedule(1.0, 0.01, 2.0, 100, 5);
    const std::int64_t counts[] = {0, 5, 6, 104, 105, 110};
    const double printed[] = {1.0, 1.0, 0.9803, 0.0101, 0.0100, 0.0100};
    for (int i = 0; i < 6; ++i) CHECK(poly(counts[i]) == Approx(printed[i]).epsilon(5e-5));
    CHECK(poly(6) == Approx(0.99 * 0.99 * 0.99 + 0.01).epsilon(1e-14));  // (1 - 1/100)**2
    // transition_steps <= 0: the constant init_value.
    CHECK(optim::polynomial_schedule(3.0, 1.0, 2.0, 0)(50) == 3.0);
  }

  TEST_CASE("exponential_decay: continuous, staircase, delayed, bounded") {
    auto e = optim::exponential_decay(1.0, 10, 0.5);
    CHECK(e(0) == 1.0);
    CHECK(e(10) == Approx(0.5).epsilon(1e-14));
    CHECK(e(15) == Approx(std::pow(0.5, 1.5)).epsilon(1e-14));
    CHECK(optim::exponential_decay(1.0, 10, 0.5, 0, true)(15) == Approx(0.5).epsilon(1e-14));
    auto delayed = optim::exponential_decay(2.0, 10, 0.5, 5);
    CHECK(delayed(3) == 2.0);
    CHECK(delayed(25) == Approx(0.5).epsilon(1e-14));
    CHECK(optim::exponential_decay(1.0, 10, 0.5, 0, false, 0.3)(100) ==
          Approx(0.3));  // lower bound
    CHECK(optim::exponential_decay(1.0, 10, 2.0, 0, false, 3.0)(100) ==
          Approx(3.0));                                         // upper bound
    CHECK(optim::exponential_decay(1.0, 10, 0.0)(100) == 1.0);  // decay_rate 0: constant
  }

  TEST_CASE("cosine_decay_schedule") {
    auto c = optim::cosine_decay_schedule(1.0, 100, 0.1);
    CHECK(c(0) == Approx(1.0).epsilon(1e-14));
    CHECK(c(50) == Approx(0.55).epsilon(1e-14));
    CHECK(c(100) == Approx(0.1).epsilon(1e-14));
    CHECK(c(200) == Approx(0.1).epsilon(1e-14));
    const double half = 0.5 * (1 + std::cos(std::numbers::pi / 4));
    CHECK(optim::cosine_decay_schedule(2.0, 100, 0.0, 2.0)(25) ==
          Approx(2.0 * half * half).epsilon(1e-14));
    const std::string msg =
        message_of<linum::ValueError>([] { optim::cosine_decay_schedule(1.0, 0); });
    CHECK(msg == "The cosine_decay_schedule requires positive decay_steps, got decay_steps=0.");
  }

  TEST_CASE("piecewise_constant_schedule (optax docstring values)") {
    auto p = optim::piecewise_constant_schedule(1.0, {{100, 0.1}, {200, 0.01}});
    CHECK(p(50) == 1.0);
    CHECK(p(100) == Approx(0.1));
    CHECK(p(150) == Approx(0.1));
    CHECK(p(250) == Approx(0.001));
    CHECK(optim::piecewise_constant_schedule(2.0)(10) == 2.0);
    CHECK_THROWS_AS(optim::piecewise_constant_schedule(1.0, {{10, -1.0}}), linum::ValueError);
  }

  TEST_CASE("join_schedules counts each schedule from its boundary") {
    auto j = optim::join_schedules(
        {optim::constant_schedule(1.0), optim::linear_schedule(0.0, 10.0, 10)}, {5});
    CHECK(j(4) == 1.0);
    CHECK(j(5) == 0.0);
    CHECK(j(10) == Approx(5.0));
    CHECK(j(20) == Approx(10.0));
    const std::string msg = message_of<linum::ValueError>(
        [] { optim::join_schedules({optim::constant_schedule(1.0)}, {3}); });
    CHECK(msg.find("1 schedules and 1 boundaries") != std::string::npos);
  }

  TEST_CASE("warmup_cosine_decay_schedule and warmup_exponential_decay_schedule") {
    auto w = optim::warmup_cosine_decay_schedule(0.0, 1.0, 10, 110, 0.1);
    CHECK(w(0) == 0.0);
    CHECK(w(5) == Approx(0.5));
    CHECK(w(10) == Approx(1.0));
    CHECK(w(60) == Approx(0.55));  // half-way through the 100 cosine steps, alpha = 0.1
    CHECK(w(110) == Approx(0.1));
    CHECK(w(500) == Approx(0.1));
    auto x = optim::warmup_exponential_decay_schedule(0.0, 1.0, 10, 5, 0.5);
    CHECK(x(5) == Approx(0.5));
    CHECK(x(10) == Approx(1.0));
    CHECK(x(15) == Approx(0.5));
    CHECK(x(20) == Approx(0.25));
  }

  TEST_CASE("a schedule at an optimizer's counter gives a float32 scalar") {
    optim::Schedule s = [](std::int64_t t) { return 0.5 * t; };
    linum::Array v = s(linum::Array(3));
    CHECK(v.dtype() == linum::float32);
    CHECK(v.item<double>() == 1.5);
    CHECK_THROWS_AS(s(linum::zeros({2}, linum::int32)), linum::ValueError);
    CHECK_THROWS_AS(optim::Schedule()(1), linum::ValueError);
  }

  TEST_CASE("piecewise_interpolate_schedule (optax's docstring and tests)") {
    // optax docstring: linear, 1.0, {4: 0.1, 8: 0.01} at steps 0, 2, ..., 10.
    auto d = optim::piecewise_interpolate_schedule("linear", 1.0, {{4, 0.1}, {8, 0.01}});
    const double doc[] = {1.0, 0.55, 0.1, 0.0505, 0.001, 0.001};
    for (int i = 0; i < 6; ++i) CHECK(d(2 * i) == Approx(doc[i]).epsilon(1e-12));
    // optax's _schedule_test.py test_linear_piecewise / test_cos_piecewise expected values.
    auto lin = optim::piecewise_interpolate_schedule("linear", 200.0, {{5, 1.5}, {10, 0.25}});
    const double lin_expected[] = {200, 220, 240, 260, 280, 300, 255, 210, 165, 120, 75, 75, 75};
    for (int i = 0; i < 13; ++i) CHECK(lin(i) == Approx(lin_expected[i]).epsilon(1e-12));
    auto cos =
        optim::piecewise_interpolate_schedule("cosine", 400.0, {{5, 1.2}, {3, 0.6}, {7, 1.0}});
    const double cos_expected[] = {400, 360, 280, 240, 264, 288, 288, 288, 288};
    for (int i = 0; i < 9; ++i) CHECK(cos(i) == Approx(cos_expected[i]).epsilon(1e-12));
    // No boundaries: the constant init_value; a boundary at 0 applies its scale at once.
    CHECK(optim::piecewise_interpolate_schedule("cosine", 17.0)(2) == 17.0);
    auto zero = optim::piecewise_interpolate_schedule("linear", 13.0, {{0, 2.0}, {5, 3.0}});
    CHECK(zero(0) == Approx(26.0));
    CHECK(zero(5) == Approx(78.0));
    CHECK(std::isfinite(zero(3)));
    const std::string msg =
        message_of<linum::ValueError>([] { optim::piecewise_interpolate_schedule("linar", 13.0); });
    CHECK(msg.find("piecewise_interpolate_schedule") != std::string::npos);
    CHECK(msg.find("'linar'") != std::string::npos);
    CHECK_THROWS_AS(optim::piecewise_interpolate_schedule("linear", 13.0, {{5, -3.0}}),
                    linum::ValueError);
  }

  TEST_CASE("linear and cosine onecycle (optax's OneCycleTest values)") {
    auto lin = optim::linear_onecycle_schedule(10, 1000, 0.3, 0.7, 10.0, 100.0);
    const double lin_expected[] = {100, 400, 700, 1000, 775, 550, 325, 100, 67, 34, 1, 1};
    for (int i = 0; i < 12; ++i) CHECK(lin(i) == Approx(lin_expected[i]).epsilon(1e-12));
    auto cos = optim::cosine_onecycle_schedule(5, 1000.0, 0.4, 10.0, 100.0);
    const double cos_expected[] = {100.0, 550.0, 1000.0, 750.25, 250.75, 1.0, 1.0};
    for (int i = 0; i < 7; ++i) CHECK(cos(i) == Approx(cos_expected[i]).epsilon(1e-12));
    // Defaults: peak / 25 at 0, the peak at int(0.3 * T).
    auto def = optim::linear_onecycle_schedule(100, 2.5);
    CHECK(def(0) == Approx(0.1));
    CHECK(def(30) == Approx(2.5));
    CHECK(def(85) == Approx(0.1));
    CHECK(def(100) == Approx(1e-5));
    const std::string c =
        message_of<linum::ValueError>([] { optim::cosine_onecycle_schedule(0, 5.0); });
    CHECK(c.find("cosine_onecycle_schedule") != std::string::npos);
    CHECK(c.find("cosine onecycle") != std::string::npos);
    const std::string l =
        message_of<linum::ValueError>([] { optim::linear_onecycle_schedule(-1, 5.0); });
    CHECK(l.find("linear onecycle") != std::string::npos);
  }

  TEST_CASE("warmup_constant_schedule and sgdr_schedule") {
    auto w = optim::warmup_constant_schedule(0.5, 2.0, 10);
    CHECK(w(0) == 0.5);
    CHECK(w(4) == Approx(0.5 + 1.5 * 0.4));  // linear warmup
    CHECK(w(10) == Approx(2.0));
    CHECK(w(1000) == Approx(2.0));
    // optax's SGDRTest.test_limits: cycles of 2000, 3000, 5000 steps with 500 warmup steps
    // each reach their peak after the warmup: 1.6, 0.8, 0.4 at 500, 2500, 5500.
    std::vector<optim::WarmupCosineDecayArgs> kw;
    const std::int64_t steps[] = {2000, 3000, 5000};
    const double peaks[] = {1.6, 0.8, 0.4};
    for (int i = 0; i < 3; ++i) kw.push_back({0.0, peaks[i], 500, steps[i]});
    auto s = optim::sgdr_schedule(kw);
    CHECK(s(500) == Approx(1.6));
    CHECK(s(2500) == Approx(0.8));
    CHECK(s(5500) == Approx(0.4));
    // Each cycle restarts at its init_value and ends at end_value (0 here).
    CHECK(s(2000) == 0.0);
    CHECK(s(1999) == Approx(1.6 * 0.5 * (1 + std::cos(std::numbers::pi * 1499.0 / 1500.0))));
    CHECK(s(10000) == Approx(0.0));
  }
}

}  // namespace test_schedule
