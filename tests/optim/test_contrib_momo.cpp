// optax.contrib's MoMo and MoMo-Adam (contrib_momo.hpp): trajectories of
// tests/optim/reference_optax_contrib_more.py (an independent NumPy implementation of optax
// 0.2.8; run it with /usr/bin/python3 to reprint these values), the objective values optax's
// docstrings print, the first step in closed form, errors and the states.
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>

#include "trajectory.hpp"

namespace test_contrib_momo {

namespace optim = linum::optim;
using namespace optim_test;
using linum::Array;

TEST_SUITE("optim contrib momo: trajectories of the NumPy reference (float64)") {
  TEST_CASE("momo: momo()") {
    check_reference(optim::momo(),
                    {{0.37329876863253403, -1.3099481529488011, 0.98639014906027223,
                      0.74659753726506806, -0.98639014906027223, 0.11989630589760208,
                      0.21832469215813349, 1.8596889176928062, 0.013609850939727774},
                     {0.36923511923763952, -1.3037734405304369, 0.95472616271202315,
                      0.73847023847527904, -0.95472616271202315, 0.1083392643210988,
                      0.21729557342173944, 1.8235915030948908, 0.043583419666162859},
                     {0.36497450653702274, -1.2972180560073461, 0.92239442352956869,
                      0.72994901307404547, -0.92239442352956869, 0.096871730062465231,
                      0.21620300933455766, 1.7862323556421007, 0.07241337779280238}},
                    true);
  }

  TEST_CASE("momo lr wd adapt: momo(lr(t) = 0.5 / (t + 1), 0.8, 0.1, 0.01, true)") {
    check_reference(optim::momo([](std::int64_t t) { return 0.5 / (t + 1); }, 0.8, 0.1, 0.01, true),
                    {{0.37213946308638274, -1.304477851345992, 0.98706595344728076,
                      0.74427892617276548, -0.98706595344728076, 0.12139351363725764,
                      0.21741297522433201, 1.8567178543446088, 0.007958922174609917},
                     {0.36686907777431427, -1.2945391266996937, 0.95170161609903769,
                      0.73373815554862853, -0.95170161609903769, 0.10944073716624354,
                      0.21575652111661564, 1.8140391902289419, 0.037169845602466889},
                     {0.36040509076098426, -1.2831597363649709, 0.90803005231974687,
                      0.72081018152196852, -0.90803005231974687, 0.095249722649028923,
                      0.2138599560608285, 1.7610066363235422, 0.069743679792096613}},
                    true);
  }

  TEST_CASE("momo_adam: momo_adam(0.1)") {
    check_reference(optim::momo_adam(0.1),
                    {{0.40000000199999997, -1.4000000013333334, 1.9000000002499999,
                      0.90000000099999999, -1.9000000002499999, 0.40000000066666663,
                      0.15000000799999935, 2.9000000002222222, -0.90000000024999993},
                     {0.30118742373064028, -1.3002390643206105, 1.8001664861157012,
                      0.80041222971233816, -1.8001664861157012, 0.30118742096867557,
                      0.054250998986558996, 2.80010270752671, -0.80041222818152014},
                     {0.20487125573945103, -1.2009028735999021, 1.7006233920464653,
                      0.70158627450441502, -1.7006233920464653, 0.20487125150058236,
                      -0.030208307587396857, 2.700381523619773, -0.70158627216683789}},
                    true);
  }

  TEST_CASE("momo_adam wd adapt: momo_adam(0.5, 0.8, 0.99, 1e-6, 0.2, 0.05, true)") {
    check_reference(optim::momo_adam(0.5, 0.8, 0.99, 1e-6, 0.2, 0.05, true),
                    {{-0.01219412195321945, -0.96341530081211924, 1.4512196371950907,
                      0.47561025609706098, -1.4512196371950907, -0.01219478861810841,
                      -0.25609356100760949, 2.4268293794037694, -0.47560988109752977},
                     {-0.17909690379182838, -0.6786199352016552, 1.1500194772609691,
                      0.21583634229220899, -1.1500194772609691, -0.17909757725440417,
                      -0.21613680364338855, 2.0984353753895646, -0.21583577491289491},
                     {-0.20969582279004084, -0.48341474012111579, 0.93573626835615165,
                      0.055368258152166533, -0.93573626835615165, -0.20969621813770942,
                      -0.12274119012117014, 1.8555771843984428, -0.055367597004767122}},
                    true);
  }
}

TEST_SUITE("optim contrib momo: docstrings, behaviour and states") {
  // optax's docstrings assign the update to the params (params, state = solver.update(...)) and
  // print f = sum(x**2) from [1, 2, 3] in float32.
  template <class Tx>
  std::vector<double> docstring_values(const Tx& tx) {
    Array x = f32({1.0, 2.0, 3.0});
    auto f = [](const Array& y) { return linum::sum(y * y); };
    auto s = tx.init(x);
    std::vector<double> out;
    for (int i = 0; i < 5; ++i) {
      auto [value, g] = linum::value_and_grad(f)(x);
      auto [u, next] = tx.update(g, s, x, optim::ExtraArgs<Array>{value});
      s = next;
      x = u;
      out.push_back(f(x).template item<double>());
    }
    return out;
  }

  TEST_CASE("momo and momo_adam: the docstrings' objective values") {
    // momo: 3.5 then 0 (the step size min(1, 14 / 56) = 0.25 puts x at -0.5 x, then at 0).
    check_close(docstring_values(optim::momo()), {3.5, 0.0, 0.0, 0.0, 0.0}, 0.0, 0.0);
    // momo_adam: 0.00029999594, then 0 (float32's rounding of 1 - b2 makes the first value
    // differ from 3e-4 in the sixth digit).
    const std::vector<double> adam = docstring_values(optim::momo_adam());
    check_close(adam, {0.00029999594, 0.0, 0.0, 0.0, 0.0}, 2e-5, 0.0);
  }

  TEST_CASE("momo: the first step in closed form; no step when the momentum is zero") {
    // Step 1: exp_avg = g, barf = f, gamma = <g, p>, so tau = min(lr, max(f - lb, 0) / |g|**2)
    // (the Polyak step) and the update is -tau g (no weight decay).
    Array p = f64({1.0, -2.0});
    Array g = f64({0.5, 1.0});
    auto tx = optim::momo(10.0, 0.9, 0.25);
    auto [u, s] = tx.update(g, tx.init(p), p, optim::ExtraArgs<Array>{Array(2.0)});
    const double tau = (2.0 - 0.25) / 1.25;
    check_close(u, {-tau * 0.5, -tau * 1.0}, 1e-15, 0.0);
    check_close(s.barf, {2.0}, 0.0, 0.0);
    check_close(s.gamma, {-1.5}, 0.0, 0.0);
    // The learning rate caps the step.
    auto capped = optim::momo(0.1, 0.9, 0.25);
    check_close(capped.update(g, capped.init(p), p, optim::ExtraArgs<Array>{Array(2.0)}).first,
                {-0.05, -0.1}, 1e-15, 0.0);
    Array z = f64({0.0, 0.0});
    check_close(tx.update(z, tx.init(p), p, optim::ExtraArgs<Array>{Array(2.0)}).first, {0.0, 0.0},
                0.0, 0.0);
  }

  TEST_CASE("errors and the states' layouts") {
    Array p = f32({1.0});
    auto tx = optim::momo();
    CHECK(message_of([&] {
            tx.update(p, tx.init(p), p);
          }).find("You need to pass the latest loss value to Momo") != std::string::npos);
    CHECK_THROWS_AS(tx.update(p, tx.init(p), p), linum::ValueError);
    CHECK(message_of([&] {
            tx.update(p, tx.init(p));
          }).find("requires the current value of parameters") != std::string::npos);
    auto ta = optim::momo_adam();
    CHECK_THROWS_AS(ta.update(p, ta.init(p), p), linum::ValueError);
    Params q{{"b", f32({1.0})}};
    CHECK(linum::pytree::repr(optim::momo(1.0, 0.9, 0.5).init(q)) ==
          "MomoState(exp_avg={'b': Array([0.], dtype=float32)}, barf=Array(0., dtype=float32), "
          "gamma=Array(0., dtype=float32), lb=Array(0.5, dtype=float32), count=Array(0, "
          "dtype=int32))");
    static_assert(
        std::is_same_v<decltype(optim::momo_adam().init(q)), optim::MomoAdamState<Params>>);
    CHECK(linum::pytree::repr(optim::momo_adam().init(q)).rfind("MomoAdamState(exp_avg=", 0) == 0);
  }
}

}  // namespace test_contrib_momo
