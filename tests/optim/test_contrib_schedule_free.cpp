// optax.contrib's Schedule-Free optimizers (contrib_schedule_free.hpp): trajectories of
// tests/optim/reference_optax_contrib.py, an independent NumPy implementation of optax 0.2.8's
// contrib optimizers (run it with /usr/bin/python3 to reprint these values; it also asserts that
// it reproduces the objective values optax's docstrings print), the docstring values themselves
// in float32, the evaluation params and the state layout.
#include <cstdio>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "trajectory.hpp"

namespace test_contrib_schedule_free {

namespace optim = linum::optim;
using namespace optim_test;
using linum::Array;

namespace {
// Five steps on sum(x**2) from [1, 2, 3] in float32, printing f at schedule_free_eval_params
// after each step ("%.2E"), as the schedule_free docstrings do.
template <class Tx>
std::vector<std::string> eval_docstring_run(const Tx& tx) {
  Array x = f32({1.0, 2.0, 3.0});
  auto state = tx.init(x);
  auto f = [](const Array& y) { return linum::sum(y * y); };
  std::vector<std::string> out;
  for (int i = 0; i < 5; ++i) {
    auto [u, next] = tx.update(linum::grad(f)(x), state, x);
    state = next;
    x = optim::apply_updates(x, u);
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2E",
                  f(optim::schedule_free_eval_params(state, x)).template item<double>());
    out.emplace_back(buf);
  }
  return out;
}
}  // namespace

TEST_SUITE("optim contrib schedule_free: trajectories of the NumPy reference (float64)") {
  TEST_CASE("schedule_free_sgd: schedule_free_sgd(0.1)") {
    check_reference(optim::schedule_free_sgd(0.1),
                    {{0.45000000000000001, -1.4249999999999998, 1.6000000000000001,
                      0.90000000000000002, -1.6000000000000001, 0.34999999999999998,
                      0.23749999999999999, 2.5499999999999998, -0.59999999999999998},
                     {0.42524999999999996, -1.3858124999999999, 1.4239999999999999,
                      0.85049999999999992, -1.4239999999999999, 0.29225000000000001, 0.23096875,
                      2.3396249999999994, -0.46799999999999997},
                     {0.40149000000000001, -1.34740875, 1.2620800000000001, 0.80298000000000003,
                      -1.2620800000000001, 0.24143000000000009, 0.22456812499999998,
                      2.1418725000000003, -0.35711999999999999}});
  }

  TEST_CASE("schedule_free_sgd warmup wd: schedule_free_sgd(0.2, 2, 0.8, 0.05, 1.5)") {
    check_reference(optim::schedule_free_sgd(0.2, 2, 0.8, 0.05, 1.5),
                    {{0.5, -1.5, 2, 1, -2, 0.5, 0.25, 3, -1},
                     {0.45847056274847714, -1.4347394557476068, 1.6756748709881073,
                      0.91694112549695428, -1.6756748709881073, 0.37936687274557651,
                      0.23912324262460113, 2.6321678414865124, -0.67963005548825228},
                     {0.40182723967125589, -1.3422050272706145, 1.2683388679112799,
                      0.80365447934251177, -1.2683388679112799, 0.24088399358811161,
                      0.22370083787843575, 2.1503295204694326, -0.34645013900426075}});
  }

  TEST_CASE("schedule_free_adamw: schedule_free_adamw(0.1)") {
    check_reference(optim::schedule_free_adamw(0.1),
                    {{0.40000000199999997, -1.4000000013333334, 1.9000000002499999,
                      0.90000000099999999, -1.9000000002499999, 0.40000000066666663,
                      0.15000000799999935, 2.9000000002222222, -0.90000000024999993},
                     {0.35140746338126405, -1.3469271828177516, 1.846427177999638,
                      0.84796539047328845, -1.846427177999638, 0.35140746143113177,
                      0.10997692095164267, 2.8459395099499121, -0.84796538933699228},
                     {0.3048183679060229, -1.2944311861949731, 1.7932785499806725,
                      0.79683007726781319, -1.7932785499806725, 0.30481836536937917,
                      0.074602648126461724, 2.792156255602066, -0.79683007574992182}});
  }

  TEST_CASE("schedule_free_adamw warmup wd: schedule_free_adamw(0.1, 2, 0.7, 0.99, 1e-6, 0.02)") {
    check_reference(optim::schedule_free_adamw(0.1, 2, 0.7, 0.99, 1e-6, 0.02),
                    {{0.5, -1.5, 2, 1, -2, 0.5, 0.25, 3, -1},
                     {0.45657008599982796, -1.4557100573332569, 1.955280010749997,
                      0.95614004299995714, -1.955280010749997, 0.45657002866664759,
                      0.20678534399724802, 2.9544200095555535, -0.95614001074999733},
                     {0.39543716062916162, -1.3908302335555107, 1.889460237728037,
                      0.89250470700730222, -1.889460237728037, 0.3954370254718983,
                      0.14993600916255401, 2.8870207908580525, -0.89250462870287794}});
  }

  TEST_CASE("schedule_free around any base optimizer equals the shortcut") {
    // schedule_free(sgd(0.1), 0.1) is what schedule_free_sgd(0.1) builds.
    check_reference(optim::schedule_free(optim::sgd(0.1), 0.1),
                    {{0.45000000000000001, -1.4249999999999998, 1.6000000000000001,
                      0.90000000000000002, -1.6000000000000001, 0.34999999999999998,
                      0.23749999999999999, 2.5499999999999998, -0.59999999999999998},
                     {0.42524999999999996, -1.3858124999999999, 1.4239999999999999,
                      0.85049999999999992, -1.4239999999999999, 0.29225000000000001, 0.23096875,
                      2.3396249999999994, -0.46799999999999997},
                     {0.40149000000000001, -1.34740875, 1.2620800000000001, 0.80298000000000003,
                      -1.2620800000000001, 0.24143000000000009, 0.22456812499999998,
                      2.1418725000000003, -0.35711999999999999}});
  }
}

TEST_SUITE("optim contrib schedule_free: evaluation params, docstrings, state") {
  TEST_CASE("schedule_free_eval_params is the averaged iterate x, not the training params y") {
    // Reference: reference_optax_contrib.py, after 3 steps of schedule_free_sgd(0.1).
    auto tx = optim::schedule_free_sgd(0.1);
    Params p = p0();
    auto s = tx.init(p);
    for (int t = 0; t < 3; ++t) {
      auto [u, next] = tx.update(linum::grad(quad_loss)(p), s, p);
      s = next;
      p = optim::apply_updates(p, u);
    }
    Params x = optim::schedule_free_eval_params(s, p);
    check_close(flat(x), {0.40582499999999999, -1.3544031249999999, 1.2917333333333334,
                          0.81164999999999998, -1.2917333333333334, 0.25077500000000014,
                          0.22573385416666664, 2.1780187500000006, -0.37759999999999994});
    // y = b1 * x + (1 - b1) * z, so x differs from y wherever z does.
    const Vec fx = flat(x), fz = flat(s.z);
    Vec mix(fx.size());
    for (std::size_t i = 0; i < fx.size(); ++i) mix[i] = 0.9 * fx[i] + 0.1 * fz[i];
    check_close(flat(p), mix, 1e-13, 1e-14);
    CHECK(std::abs(flat(x)[0] - flat(p)[0]) > 1e-3);
  }

  TEST_CASE("the objective values printed by optax's docstrings (float32)") {
    using S = std::vector<std::string>;
    CHECK(eval_docstring_run(optim::schedule_free_adamw(1.0)) ==
          S{"5.00E+00", "3.05E+00", "1.73E+00", "8.94E-01", "4.13E-01"});
    // schedule_free_sgd()'s second value is float32 rounding noise (optax prints 1.75E-14, the
    // float64 reference 9.13E-32): only the others are compared.
    S sgd = eval_docstring_run(optim::schedule_free_sgd());
    CHECK(sgd[0] == "1.40E+01");
    CHECK(std::abs(std::stod(sgd[1])) < 1e-12);
    CHECK(S(sgd.begin() + 2, sgd.end()) == S{"9.96E-01", "8.06E-01", "2.41E-01"});
  }

  TEST_CASE("ScheduleFreeState: optax's fields, dtypes and the base optimizer's state") {
    Params p = p0();
    auto s = optim::schedule_free_adamw(0.1).init(p);
    using Base =
        std::tuple<optim::ScaleByRmsWithCountState<Params>, optim::EmptyState, optim::EmptyState>;
    static_assert(std::is_same_v<decltype(s), optim::ScheduleFreeState<Base, Params>>);
    CHECK(s.b1.dtype() == linum::float64);
    CHECK(s.b1.item<double>() == 0.9);
    CHECK(s.step_count.dtype() == linum::int32);
    CHECK(s.step_count.item<int>() == 1);
    CHECK(s.weight_sum.item<double>() == 0.0);
    CHECK(s.max_lr.item<double>() == 0.0);
    check_close(flat(s.z), flat(p), 0.0, 0.0);
    // state_dtype keeps z in another dtype; warmup makes the base sgd's lr a schedule.
    auto s32 = optim::schedule_free_sgd(1.0, 10, 0.9, std::nullopt, 2.0, linum::float32).init(p);
    CHECK(s32.z.at("w").dtype() == linum::float32);
    static_assert(std::is_same_v<std::tuple_element_t<1, decltype(s32.base_optimizer_state)>,
                                 optim::ScaleByScheduleState<>>);
    CHECK(linum::pytree::repr(optim::schedule_free_sgd().init(Params{{"b", f32({1.0})}})) ==
          "ScheduleFreeState(b1=Array(0.9, dtype=float32), weight_sum=Array(0., dtype=float32), "
          "step_count=Array(1, dtype=int32), max_lr=Array(0., dtype=float32), "
          "base_optimizer_state=(EmptyState(), EmptyState()), z={'b': Array([1.], "
          "dtype=float32)})");
  }

  TEST_CASE("schedule_free: b1 must be positive; update needs params") {
    linum::testing::check_error<linum::ValueError>(
        [] { optim::schedule_free_sgd(1.0, std::nullopt, 0.0); },
        {"schedule_free", "b1 must be strictly positive"});
    auto tx = optim::schedule_free_sgd();
    Params p = p0();
    auto s = tx.init(p);
    CHECK_THROWS_AS(tx.update(p, s), linum::ValueError);
  }
}

}  // namespace test_contrib_schedule_free
