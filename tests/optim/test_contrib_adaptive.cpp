// optax.contrib's Adam variants (contrib_adaptive.hpp): adopt, ademamix and simplified_ademamix
// against trajectories of tests/optim/reference_optax_contrib.py (an independent NumPy
// implementation of optax 0.2.8's contrib optimizers; run it with /usr/bin/python3 to reprint
// these values; it also asserts that it reproduces the objective values adopt's docstring
// prints), adopt's docstring values in float32, its first-step behaviour, and the state layouts.
#include <cstdint>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "trajectory.hpp"

namespace test_contrib_adaptive {

namespace optim = linum::optim;
using namespace optim_test;
using linum::Array;

TEST_SUITE("optim contrib adam variants: trajectories of the NumPy reference (float64)") {
  TEST_CASE("adopt: adopt(0.1)") {
    check_reference(
        optim::adopt(0.1),
        {{0.5, -1.5, 2, 1, -2, 0.5, 0.25, 3, -1},
         {0.48999999999999999, -1.49, 1.99, 0.98999999999999999, -1.99, 0.48999999999999999,
          0.23999999999999999, 2.9900000000000002, -0.98999999999999999},
         {0.47120000000000001, -1.4710666666666667, 1.97105, 0.97109999999999996, -1.97105,
          0.47120000000000001, 0.22139999999999999, 2.9710333333333336, -0.97109999999999996}});
  }

  TEST_CASE("adopt nesterov no clipping: adopt(0.1, 0.8, 0.99, 1e-6, nullopt, true, false)") {
    check_reference(optim::adopt(0.1, 0.8, 0.99, 1e-6, std::nullopt, true, false),
                    {{0.5, -1.5, 2, 1, -2, 0.5, 0.25, 3, -1},
                     {0.46400000000000002, -1.464, 1.964, 0.96399999999999997, -1.964,
                      0.46400000000000002, 0.214, 2.964, -0.96399999999999997},
                     {0.41779200000000005, -1.416064, 1.915848, 0.91649599999999998, -1.915848,
                      0.41779200000000005, 0.17038400000000001, 2.915632, -0.91649599999999998}});
  }

  TEST_CASE("ademamix: ademamix(0.1)") {
    check_reference(optim::ademamix(0.1),
                    {{0.39995000200099995, -1.399950001334, 1.8999500002501251, 0.89995000100049993,
                      -1.8999500002501251, 0.39995000066699998, 0.14995000800399935,
                      2.8999500002223333, -0.89995000025012495},
                     {0.30103902576578734, -1.3000892814645304, 1.8000166250281606,
                      0.80026265977332189, -1.8000166250281606, 0.30103902300167951,
                      0.054108296247683735, 2.7999527856531099, -0.80026265824133014},
                     {0.20458086281358592, -1.2006040181282671, 1.7003241114223429,
                      0.70128861789435859, -1.7003241114223429, 0.2045808585703093,
                      -0.030457832028515652, 2.700081920106828, -0.70128861555435151}});
  }

  TEST_CASE("ademamix schedules: b3(t) = 0.9 + 0.01 t, alpha(t) = t + 1, wd 0.01") {
    check_reference(optim::ademamix(
                        0.1, 0.8, 0.9, [](std::int64_t t) { return 0.9 + 0.01 * t; },
                        [](std::int64_t t) { return t + 1.0; }, 1e-6, 1e-8, std::nullopt, 0.01),
                    {{0.38950022219955116, -1.3885001476442462, 1.888000027534368,
                      0.88900011054988881, -1.888000027534368, 0.38950007357772859,
                      0.13975091519237998, 2.8870000244715994, -0.88900002753436813},
                     {0.25442503334641686, -1.2511579871290002, 1.7500764858257651,
                      0.75236681651089499, -1.7500764858257651, 0.25442468405615187,
                      0.0097218300432692362, 2.7480100201345388, -0.75236662547222466},
                     {0.086677498740208803, -1.0765609449834344, 1.5747271989540761,
                      0.5790282782552183, -1.5747271989540761, 0.086676878036329674,
                      -0.12585431181737675, 2.5714822438744465, -0.57902794109038735}});
  }

  TEST_CASE("simplified_ademamix: simplified_ademamix(0.1)") {
    check_reference(optim::simplified_ademamix(0.1),
                    {{0.40000000199999997, -1.4000000013333334, 1.9000000002499999,
                      0.90000000099999999, -1.9000000002499999, 0.40000000066666674,
                      0.15000000799999935, 2.9000000002222222, -0.90000000024999993},
                     {0.20176891383647724, -1.2009768328220352, 1.7009602004559408,
                      0.7010596996872438, -1.7009602004559408, 0.20176890960544613,
                      -0.043989723600067032, 2.7009590290793017, -0.70105969736936469},
                     {-0.082289043417498348, -0.90431245602922061, 1.4039599557522751,
                      0.40571183410687278, -1.4039599557522751, -0.082289052067715862,
                      -0.25307820095497752, 2.4038039813907157, -0.40571182928753252}});
  }

  TEST_CASE(
      "simplified_ademamix alpha wd: simplified_ademamix(0.05, 0.9, 0.8, 2.0, 1e-6, 0.0, 0.01)") {
    check_reference(optim::simplified_ademamix(0.05, 0.9, 0.8, 2.0, 1e-6, 0.0, 0.01),
                    {{0.34975029999939999, -1.3492501999997333, 1.8490000374999906,
                      0.84950014999985002, -1.8490000374999906, 0.34975009999993334,
                      0.099876199990400066, 2.8485000333333259, -0.84950003749999059},
                     {0.17242900906007019, -1.1582769648395059, 1.6565059678099319,
                      0.66154200561473453, -1.6565059678099319, 0.17242856253007646,
                      -0.043877258705361716, 2.6543049679135713, -0.66154174677221289},
                     {-0.00782071660399275, -0.93370077159101805, 1.4283215602597603,
                      0.44512835710133192, -1.4283215602597603, -0.007821374739961251,
                      -0.10005765491269018, 2.4226133680237609, -0.4451279225584201}});
  }
}

TEST_SUITE("optim contrib adam variants: behaviour and states") {
  TEST_CASE("adopt: the first step only initializes nu; the docstring's values (float32)") {
    // With clipping the bound at count 0 is 0**0.25 = 0: the first update is exactly zero and
    // nu becomes g**2 (b2 is 0 at the first step).
    auto tx = optim::scale_by_adopt();
    Array g = f64({0.5, -2.0, 3.0});
    auto [u, s] = tx.update(g, tx.init(g));
    check_close(u, {0.0, 0.0, 0.0}, 0.0, 0.0);
    check_close(s.nu, {0.25, 4.0, 9.0}, 0.0, 0.0);
    check_close(s.mu, {0.0, 0.0, 0.0}, 0.0, 0.0);
    // Second step: g / sqrt(nu_prev) clipped to +-1**0.25 = 1, times (1 - b1).
    auto [u2, s2] = tx.update(f64({1.0, 1.0, -6.0}), s);
    check_close(u2, {0.1, 0.05, -0.1}, 1e-12, 1e-15);
    CHECK(s2.count.item<int>() == 2);
    CHECK(docstring_run(optim::adopt(0.003)) ==
          std::vector<std::string>{"1.40E+01", "1.40E+01", "1.40E+01", "1.40E+01", "1.40E+01"});
    // A looser custom clip_value_fn leaves the first update at zero too: b1 is 1 at the first
    // step, so mu keeps its initial 0 whatever the clipped gradient is.
    auto loose = optim::scale_by_adopt(0.9, 0.9999, 1e-6, std::nullopt, false, true,
                                       [](const Array&) { return Array(10.0); });
    check_close(loose.update(g, loose.init(g)).first, {0.0, 0.0, 0.0}, 0.0, 0.0);
  }

  TEST_CASE("ademamix with alpha 0 and b3 0 is Adam") {
    // m2 is then g, weighted 0: (m1_hat) / (sqrt(nu_hat) + eps), Adam's update.
    Params p = p0();
    auto a = optim::ademamix(0.1, 0.9, 0.999, 0.0, 0.0);
    auto b = optim::adam(0.1);
    auto sa = a.init(p);
    auto sb = b.init(p);
    for (int t = 0; t < 3; ++t) {
      Params g = linum::grad(quad_loss)(p);
      auto [ua, na] = a.update(g, sa, p);
      auto [ub, nb] = b.update(g, sb, p);
      sa = na, sb = nb;
      check_close(flat(ua), flat(ub), 1e-14, 1e-16);
      p = optim::apply_updates(p, ua);
    }
  }

  TEST_CASE("state layouts are optax's NamedTuples") {
    Params p = p0();
    static_assert(std::is_same_v<std::tuple_element_t<0, decltype(optim::adopt(0.1).init(p))>,
                                 optim::ScaleByAdamState<Params>>);
    CHECK(linum::pytree::repr(optim::scale_by_ademamix().init(Params{{"b", f32({1.0})}})) ==
          "ScaleByAdemamixState(count=Array(0, dtype=int32), count_m2=Array(0, dtype=int32), "
          "m1={'b': Array([0.], dtype=float32)}, m2={'b': Array([0.], dtype=float32)}, "
          "nu={'b': Array([0.], dtype=float32)})");
    CHECK(linum::pytree::repr(
              optim::scale_by_simplified_ademamix().init(Params{{"b", f32({1.0})}})) ==
          "ScaleBySimplifiedAdEMAMixState(t=Array(0, dtype=int32), m={'b': Array([0.], "
          "dtype=float32)}, n={'b': Array([0.], dtype=float32)})");
    // ademamix: (ScaleByAdemamixState, EmptyState, EmptyState); mu_dtype applies to all three
    // moments.
    auto s = std::get<0>(
        optim::ademamix(0.1, 0.9, 0.999, 0.9999, 5.0, 1e-8, 0.0, linum::float32).init(p));
    CHECK(s.nu.at("w").dtype() == linum::float32);
    CHECK(s.m2.at("b").dtype() == linum::float32);
  }
}

}  // namespace test_contrib_adaptive
