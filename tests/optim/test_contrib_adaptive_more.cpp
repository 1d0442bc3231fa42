// optax.contrib's MADGRAD and ACProp (contrib_adaptive_more.hpp) against trajectories of
// tests/optim/reference_optax_contrib.py (an independent NumPy implementation of optax 0.2.8's
// contrib optimizers; run it with /usr/bin/python3 to reprint these values), their first steps in
// closed form, the errors and the state layouts.
#include <cmath>
#include <cstdint>
#include <tuple>
#include <type_traits>

#include "trajectory.hpp"

namespace test_contrib_adaptive_more {

namespace optim = linum::optim;
using namespace optim_test;
using linum::Array;

TEST_SUITE("optim contrib madgrad and acprop: trajectories of the NumPy reference (float64)") {
  TEST_CASE("madgrad: madgrad(0.1)") {
    check_reference(optim::madgrad(0.1),
                    {{0.48290018501537629, -1.4804255823861177, 1.9658002823103029,
                      0.97845555588688427, -1.9658002823103029, 0.47533775539091283,
                      0.23922784756675672, 2.9644308579437681, -0.96580028231030302},
                     {0.45404666034503494, -1.4472467283182513, 1.9078809953769342,
                      0.94200318570670438, -1.9078809953769342, 0.43386180225250237,
                      0.22108664233455544, 2.9041256545164567, -0.90809312439099721},
                     {0.41528081300406239, -1.4023304315259741, 1.8295817088046289,
                      0.89280133849565069, -1.8295817088046289, 0.3784629778696747,
                      0.19679588496384348, 2.8224534302707691, -0.83056130973724052}});
  }

  TEST_CASE("madgrad schedule wd: madgrad(lr(t) = 0.05 (t + 1), 0.5, 0.01, 1e-4)") {
    check_reference(optim::madgrad([](std::int64_t t) { return 0.05 * (t + 1); }, 0.5, 0.01, 1e-4),
                    {{0.44591129920478956, -1.4378737965468247, 1.8919667987938456,
                      0.93184172345019989, -1.8919667987938456, 0.42214539725965128,
                      0.21583612820449041, 2.8875779429505744, -0.89205647218829787},
                     {0.34436994231667362, -1.3185390077907972, 1.6853335622517225,
                      0.80208709417614776, -1.6853335622517225, 0.27858685615912532,
                      0.15235558148880246, 2.6713756405557554, -0.68942235964598519},
                     {0.20745469646804138, -1.1479736732855579, 1.3927825117981172,
                      0.62045483221087028, -1.3927825117981172, 0.095960950813001572,
                      0.069510684125905248, 2.3614889442104916, -0.41613727995074812}});
  }

  TEST_CASE("acprop: acprop(0.1)") {
    check_reference(
        optim::acprop(0.1),
        {{0.45000000000000001, -1.425, 1.6000000000000001, 0.90000000000000002, -1.6000000000000001,
          0.34999999999999998, 0.23749999999999999, 2.5499999999999998, -0.59999999999999998},
         {0.36000000000001803, -1.3300000000000085, 1.5200000000000002, 0.81000000000000449,
          -1.5200000000000002, 0.28000000000000158, 0.14250000000030405, 2.4649999999999999,
          -0.54000000000000015},
         {0.2804849352917772, -1.234453833839313, 1.4319412248297421, 0.72054555220322114,
          -1.4319412248297421, 0.21208203017271962, 0.081077464611376687, 2.3720325172927161,
          -0.47168454932710768}});
  }

  TEST_CASE("acprop eps wd: acprop(0.05, 0.8, 0.99, 1e-6, 1e-8, 0.01)") {
    check_reference(optim::acprop(0.05, 0.8, 0.99, 1e-6, 1e-8, 0.01),
                    {{0.47475002499997498, -1.4617500374999626, 1.7990001999998,
                      0.94950004999994997, -1.7990001999998, 0.42475007499992501,
                      0.24362500624999375, 2.7735002249997751, -0.79950019999979993},
                     {0.42703783738663292, -1.4122942695087346, 1.7531257075490216,
                      0.90155036868734351, -1.7531257075490216, 0.38206273021796017,
                      0.19478014139401872, 2.7258884825508574, -0.75912545114277841},
                     {0.37846503300564316, -1.3589195878696436, 1.701415496959974,
                      0.8500520503342085, -1.701415496959974, 0.33651239446585796,
                      0.1511012874210505, 2.6724551023795637, -0.71265240702425425}});
  }
}

TEST_SUITE("optim contrib madgrad and acprop: behaviour and states") {
  TEST_CASE("scale_by_madgrad: the first step's cube-root denominator; needs params") {
    // momentum 0, step 1: lamb = lr + eps, s = lamb g, G = lamb g**2, so the new params are
    // x0 - lamb g / (cbrt(lamb g**2) + eps) and the update is that minus x0.
    const double lr = 0.1, eps = 1e-6, lamb = lr + eps;
    auto tx = optim::scale_by_madgrad(lr, 0.0, eps);
    Array p = f64({1.0, -2.0, 0.5});
    Vec g{0.5, -8.0, 2.0};
    auto [u, s] = tx.update(f64(g), tx.init(p), p);
    Vec want;
    for (double x : g) want.push_back(-lamb * x / (std::cbrt(lamb * x * x) + eps));
    check_close(u, want, 1e-14, 0.0);
    check_close(s.x0, {1.0, -2.0, 0.5}, 0.0, 0.0);
    CHECK(s.count.item<int>() == 1);
    CHECK_THROWS_AS(tx.update(f64(g), s), linum::ValueError);
    CHECK_THROWS_AS(optim::madgrad(0.1).update(p, optim::madgrad(0.1).init(p)), linum::ValueError);
  }

  TEST_CASE("scale_by_acprop: the step's denominator is the previous step's belief") {
    // Step 1 returns g / (1 + eps) = g; step 2 divides by sqrt(s_1 / (1 - b2)) = |g_1| (up to
    // eps_root), whatever g_2 is.
    auto tx = optim::scale_by_acprop();
    Array g1 = f64({2.0, -4.0}), g2 = f64({10.0, 1.0});
    auto [u1, s1] = tx.update(g1, tx.init(g1));
    check_close(u1, {2.0, -4.0}, 1e-15, 0.0);
    auto [u2, s2] = tx.update(g2, s1);
    check_close(u2, {5.0, 0.25}, 1e-12, 0.0);
    check_close(s2.mu, {0.9 * 0.2 + 0.1 * 10.0, -0.9 * 0.4 + 0.1 * 1.0}, 1e-14, 0.0);
  }

  TEST_CASE("state layouts are optax's NamedTuples") {
    Params p{{"b", f32({1.0})}};
    CHECK(linum::pytree::repr(optim::scale_by_madgrad(0.1).init(p)) ==
          "MadgradState(count=Array(0, dtype=int32), grad_sum_sq={'b': Array([0.], "
          "dtype=float32)}, s={'b': Array([0.], dtype=float32)}, x0={'b': Array([1.], "
          "dtype=float32)})");
    static_assert(std::is_same_v<std::tuple_element_t<1, decltype(optim::madgrad(0.1).init(p))>,
                                 optim::MadgradState<Params>>);
    static_assert(std::is_same_v<std::tuple_element_t<0, decltype(optim::acprop(0.1).init(p))>,
                                 optim::ScaleByBeliefState<Params>>);
    // madgrad keeps float32 leaves float32.
    auto tx = optim::madgrad(0.1);
    auto [u, s] = tx.update(p, tx.init(p), p);
    CHECK(u.at("b").dtype() == linum::float32);
    CHECK(std::get<1>(s).grad_sum_sq.at("b").dtype() == linum::float32);
  }
}

}  // namespace test_contrib_adaptive_more
