// optax.contrib.reduce_on_plateau (contrib_reduce_on_plateau.hpp): trajectories of
// tests/optim/reference_optax_contrib_more.py (an independent NumPy implementation of optax
// 0.2.8; run it with /usr/bin/python3 to reprint these values), optax's own test cases (in
// float32 and float64), the errors and the state.
#include <map>
#include <string>
#include <tuple>
#include <utility>

#include "trajectory.hpp"

namespace test_contrib_reduce_on_plateau {

namespace optim = linum::optim;
using namespace optim_test;
using linum::Array;
using linum::testing::check_error;

namespace {
using State = optim::ReduceLROnPlateauState<>;
using Dict = std::map<std::string, Array>;

// optax's tests: patience 5, cooldown 5, factor 0.1, rtol 1e-4, min_scale 0.01.
optim::ReduceOnPlateau optax_tx() {
  return optim::reduce_on_plateau(0.1, 5, 1e-4, 0.0, 5, 1, 0.01);
}

// One update of updates {"params": 1} with the value.
std::pair<Dict, State> run(const State& s, double value, linum::DType dt) {
  Dict g{{"params", linum::ones({}, dt)}};
  return optax_tx().update(g, s, g, optim::ExtraArgs<Dict>{linum::full({}, value, dt)});
}

State state(double scale, double best, int plateau, int cooldown, linum::DType dt) {
  return State{linum::full({}, scale, dt),
               linum::full({}, best, dt),
               linum::full({}, plateau, linum::int32),
               linum::full({}, cooldown, linum::int32),
               linum::zeros({}, linum::int32),
               linum::zeros({}, dt)};
}
}  // namespace

TEST_SUITE("optim contrib reduce_on_plateau") {
  TEST_CASE("chain(sgd(0.1), reduce_on_plateau(0.5, 1, 0.3, 0.0, 1, 1)), 8 steps") {
    // rtol 0.3 makes most steps a plateau: the scale halves, with a cooldown of one value.
    check_reference(
        optim::chain(optim::sgd(0.1), optim::reduce_on_plateau(0.5, 1, 0.3, 0.0, 1, 1)),
        {{0.45000000000000001, -1.425, 1.6000000000000001, 0.90000000000000002, -1.6000000000000001,
          0.34999999999999998, 0.23749999999999999, 2.5499999999999998, -0.59999999999999998},
         {0.40500000000000003, -1.35375, 1.28, 0.81000000000000005, -1.28, 0.245,
          0.22562499999999999, 2.1675, -0.35999999999999999},
         {0.36450000000000005, -1.2860625000000001, 1.024, 0.72900000000000009, -1.024,
          0.17149999999999999, 0.21434375, 1.8423750000000001, -0.216},
         {0.32805000000000006, -1.2217593750000002, 0.81920000000000004, 0.65610000000000013,
          -0.81920000000000004, 0.12004999999999999, 0.2036265625, 1.56601875,
          -0.12959999999999999},
         {0.31164750000000008, -1.1912153906250003, 0.73728000000000005, 0.62329500000000015,
          -0.73728000000000005, 0.10204249999999999, 0.1985358984375, 1.44856734375,
          -0.10367999999999999},
         {0.2960651250000001, -1.1614350058593752, 0.66355200000000003, 0.59213025000000019,
          -0.66355200000000003, 0.086736124999999997, 0.19357250097656251, 1.3399247929687499,
          -0.08294399999999999},
         {0.28866349687500009, -1.1469170682861329, 0.6303744, 0.57732699375000018, -0.6303744,
          0.080230915624999996, 0.19115284471435548, 1.2896776132324217, -0.074649599999999997},
         {0.28144690945312512, -1.1325806049325562, 0.59885568, 0.56289381890625023, -0.59885568,
          0.074213596953125002, 0.18876343415542604, 1.2413147027362059, -0.06718463999999999}},
        true);
  }

  TEST_CASE("chain(sgd(0.2), reduce_on_plateau(0.2, 1, 0.1, 0.01, 0, 2, 0.05)), 10 steps") {
    // Values averaged in pairs; the scale stops at min_scale 0.05.
    check_reference(
        optim::chain(optim::sgd(0.2), optim::reduce_on_plateau(0.2, 1, 0.1, 0.01, 0, 2, 0.05)),
        {{0.40000000000000002, -1.3500000000000001, 1.2, 0.80000000000000004, -1.2,
          0.19999999999999996, 0.22500000000000001, 2.1000000000000001, -0.19999999999999996},
         {0.32000000000000001, -1.2150000000000001, 0.71999999999999997, 0.64000000000000001,
          -0.71999999999999997, 0.079999999999999974, 0.20250000000000001, 1.47,
          -0.03999999999999998},
         {0.25600000000000001, -1.0935000000000001, 0.432, 0.51200000000000001, -0.432,
          0.031999999999999987, 0.18225000000000002, 1.0289999999999999, -0.0079999999999999932},
         {0.20480000000000001, -0.98415000000000008, 0.25919999999999999, 0.40960000000000002,
          -0.25919999999999999, 0.012799999999999992, 0.16402500000000003, 0.72029999999999994,
          -0.0015999999999999981},
         {0.16384000000000001, -0.88573500000000005, 0.15551999999999999, 0.32768000000000003,
          -0.15551999999999999, 0.0051199999999999961, 0.14762250000000002, 0.50420999999999994,
          -0.00031999999999999954},
         {0.13107200000000002, -0.79716150000000008, 0.093311999999999992, 0.26214400000000004,
          -0.093311999999999992, 0.0020479999999999982, 0.13286025000000001, 0.35294699999999996,
          -6.3999999999999875e-05},
         {0.10485760000000002, -0.71744535000000009, 0.055987199999999994, 0.20971520000000005,
          -0.055987199999999994, 0.0008191999999999991, 0.11957422500000001, 0.24706289999999997,
          -1.2799999999999972e-05},
         {0.083886080000000016, -0.64570081500000009, 0.033592319999999995, 0.16777216000000003,
          -0.033592319999999995, 0.00032767999999999957, 0.1076168025, 0.17294402999999997,
          -2.5599999999999941e-06},
         {0.067108864000000018, -0.58113073350000011, 0.020155391999999994, 0.13421772800000004,
          -0.020155391999999994, 0.00013107199999999979, 0.096855122249999995, 0.12106082099999999,
          -5.1199999999999866e-07},
         {0.053687091200000016, -0.52301766015000006, 0.012093235199999997, 0.10737418240000003,
          -0.012093235199999997, 5.24287999999999e-05, 0.087169610024999997, 0.08474257469999999,
          -1.023999999999997e-07}},
        true);
  }

  TEST_CASE("optax: the scale drops once patience runs out, then cools down") {
    for (linum::DType dt : {linum::float32, linum::float64}) {
      Dict p{{"params", linum::ones({}, dt)}};
      State s = optax_tx().init(p);
      CHECK(s.scale.dtype() == dt);
      Dict u;
      for (int i = 0; i < 6; ++i) std::tie(u, s) = run(s, 1.0, dt);
      check_close(s.scale, {f32v(0.1)}, 1e-7, 0.0);
      check_close(s.best_value, {1.0}, 0.0, 0.0);
      CHECK(s.plateau_count.item<int>() == 0);
      CHECK(s.cooldown_count.item<int>() == 5);
      check_close(u.at("params"), {f32v(0.1)}, 1e-7, 0.0);
      s = run(s, 1.0, dt).second;
      check_close(s.scale, {f32v(0.1)}, 1e-7, 0.0);
      CHECK(s.plateau_count.item<int>() == 0);
      CHECK(s.cooldown_count.item<int>() == 4);
    }
  }

  TEST_CASE("optax: a better value resets the plateau count") {
    for (linum::DType dt : {linum::float32, linum::float64}) {
      State s = run(state(0.1, 1.0, 3, 0, dt), 0.1, dt).second;
      CHECK(s.plateau_count.item<int>() == 0);
      check_close(s.scale, {f32v(0.1)}, 1e-7, 0.0);
      check_close(s.best_value, {f32v(0.1)}, 1e-7, 0.0);
    }
  }

  TEST_CASE("optax: no drop and no plateau count during the cooldown") {
    for (linum::DType dt : {linum::float32, linum::float64}) {
      State s = run(state(0.1, 1.0, 0, 3, dt), 2.0, dt).second;
      check_close(s.scale, {f32v(0.1)}, 1e-7, 0.0);
      check_close(s.best_value, {1.0}, 0.0, 0.0);
      CHECK(s.plateau_count.item<int>() == 0);
      CHECK(s.cooldown_count.item<int>() == 2);
    }
  }

  TEST_CASE("optax: the scale stays at min_scale") {
    for (linum::DType dt : {linum::float32, linum::float64}) {
      State s = state(0.01, 1.0, 0, 0, dt);
      Dict u;
      for (int i = 0; i < 6; ++i) std::tie(u, s) = run(s, 0.1, dt);
      check_close(s.scale, {f32v(0.01)}, 1e-7, 0.0);
      check_close(s.best_value, {f32v(0.1)}, 1e-7, 0.0);
      CHECK(s.plateau_count.item<int>() == 0);
      CHECK(s.cooldown_count.item<int>() == 5);
      check_close(u.at("params"), {f32v(0.01)}, 1e-7, 0.0);
    }
  }

  TEST_CASE("jit and vmap: the same states as eager updates") {
    // The plateau logic is selects, not branches: jit traces it once for every value, and vmap
    // runs a batch of values (one state each).
    auto step = [](const Dict& g, const State& s, const Array& v) {
      return optax_tx().update(g, s, g, optim::ExtraArgs<Dict>{v});
    };
    auto jitted = linum::jit(step);
    Dict g{{"params", linum::ones({})}};
    State eager = optax_tx().init(g), traced = eager;
    for (double v : {1.0, 0.5, 0.6, 0.6, 0.6, 0.6, 0.6, 0.4}) {
      INFO("value " << v);
      eager = step(g, eager, linum::full({}, v, linum::float32)).second;
      traced = jitted(g, traced, linum::full({}, v, linum::float32)).second;
      CHECK(linum::pytree::repr(traced) == linum::pytree::repr(eager));
    }
    CHECK(eager.scale.item<float>() == f32v(0.1));
    Array values3 = f32({1.0, 2.0, 3.0});
    auto batched =
        linum::vmap([&](const Array& v) { return step(g, optax_tx().init(g), v).second; })(values3);
    check_close(batched.best_value, {1.0, 2.0, 3.0}, 0.0, 0.0);
    CHECK(batched.count.shape() == linum::Shape{3});
  }

  TEST_CASE("errors and the state's layout") {
    check_error<linum::ValueError>([] { optim::reduce_on_plateau(1.0); },
                                   {"Factor must be in the range (0, 1)", "factor = 1"});
    check_error<linum::ValueError>([] { optim::reduce_on_plateau(0.5, 10, -1e-4); },
                                   {"must be non-negative"});
    check_error<linum::ValueError>([] { optim::reduce_on_plateau(0.5, 10, 0.0, 0.0); },
                                   {"At least one of rtol or atol must be positive"});
    check_error<linum::ValueError>([] { optim::reduce_on_plateau(0.5, 10, 2.0); },
                                   {"rtol must be less than or equal to 1.0"});
    Array x = f32({1.0});
    auto t = optim::reduce_on_plateau();
    check_error<linum::TypeError>([&] { t.update(x, t.init(x), x); },
                                  {"reduce_on_plateau", "value"});
    // scale in the lowest float dtype, best_value and avg_value in the highest.
    std::map<std::string, Array> mixed{{"a", f32({1.0})}, {"b", f64({1.0})}};
    CHECK(linum::pytree::repr(t.init(mixed)) ==
          "ReduceLROnPlateauState(scale=Array(1., dtype=float32), best_value=Array(inf, "
          "dtype=float64), plateau_count=Array(0, dtype=int32), cooldown_count=Array(0, "
          "dtype=int32), count=Array(0, dtype=int32), avg_value=Array(0., dtype=float64))");
  }
}

}  // namespace test_contrib_reduce_on_plateau
