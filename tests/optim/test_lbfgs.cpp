// optax's L-BFGS and linesearches (lbfgs.hpp, linesearch.hpp) against
// tests/optim/reference_optax.py, an independent NumPy implementation of optax 0.2.8's
// scale_by_lbfgs, zoom linesearch (optax/_src/linesearch.py) and backtracking linesearch:
// iterates, accepted stepsizes and linesearch step counts on Rosenbrock functions (where the
// zoom phase interpolates) and on the quadratic trajectory problem, driven as optax's docstring
// drives lbfgs (value_and_grad_from_state).
#include <cmath>
#include <cstdio>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "trajectory.hpp"

namespace test_lbfgs {

namespace optim = linum::optim;
using namespace optim_test;
using linum::Array;

namespace {

// sum(100 (x[i+1] - x[i]^2)^2 + (1 - x[i])^2).
Array rosenbrock(const Array& x) {
  const std::int64_t n = x.shape()[0];
  Array a = linum::lax_slice(x, {0}, {n - 1}), b = linum::lax_slice(x, {1}, {n});
  Array d = b - a * a, e = 1.0 - a;
  return linum::sum(100.0 * d * d + e * e);
}

struct Step {
  Vec x;
  double stepsize;
  int linesearch_steps;
};

// optax.lbfgs's docstring loop: value and gradient from the state, then update with them.
template <class Tx>
void check_lbfgs(const Tx& opt, Vec x0, const std::vector<Step>& want, double rtol = 1e-10) {
  Array x = f64(x0);
  auto state = opt.init(x);
  auto value_and_grad = optim::value_and_grad_from_state(rosenbrock);
  for (std::size_t t = 0; t < want.size(); ++t) {
    auto [value, grad] = value_and_grad(x, state);
    auto [u, next] = opt.update(grad, state, x,
                                optim::ExtraArgs<Array>{value, grad, rosenbrock});
    state = next;
    x = optim::apply_updates(x, u);
    INFO("step " << t + 1);
    check_close(x, want[t].x, rtol, 1e-12);
    const auto& ls = std::get<2>(state);
    CHECK(ls.learning_rate.template item<double>() == doctest::Approx(want[t].stepsize).epsilon(1e-9));
    CHECK(ls.info.num_linesearch_steps.template item<int>() == want[t].linesearch_steps);
    // The state keeps the value and gradient at the new params.
    CHECK(ls.value.template item<double>() == doctest::Approx(rosenbrock(x).item<double>()).epsilon(1e-12));
  }
}

}  // namespace

TEST_SUITE("optim lbfgs: trajectories of the NumPy reference (float64)") {
  TEST_CASE("lbfgs() on the 3-d Rosenbrock function from [-1.2, 1, 0.8]") {
    check_lbfgs(optim::lbfgs(), {-1.2, 1.0, 0.8},
                {{{-0.83006455740221075, 1.0137267325639254, 0.86863366281962695}, 0.37649865145700323, 2},
      {{-0.91170410142246461, 0.92509837145325124, 0.88833496450974259}, 1, 1},
      {{-0.95732438041045775, 0.92483209869730942, 0.87639969602385015}, 1, 1},
      {{-0.95973748552538063, 0.93028060663936452, 0.87152452014702286}, 1, 1},
      {{-0.95971947792282564, 0.93083211176963199, 0.86986514489168221}, 1, 1},
      {{-0.95939665217520942, 0.93048977047047299, 0.86772999486692159}, 1, 1},
      {{-0.95728304754769389, 0.92719193117336596, 0.85760690489402613}, 1, 1},
      {{-0.95148371902451134, 0.91711728536420578, 0.8334960403156062}, 1, 1}});
  }

  TEST_CASE("lbfgs with memory_size 3 forgets the oldest pairs from step 5 on") {
    check_lbfgs(optim::lbfgs(std::nullopt, 3), {-1.2, 1.0, 0.8},
                {{{-0.83006455740221075, 1.0137267325639254, 0.86863366281962695}, 0.37649865145700323, 2},
      {{-0.91170410142246461, 0.92509837145325124, 0.88833496450974259}, 1, 1},
      {{-0.95732438041045775, 0.92483209869730942, 0.87639969602385015}, 1, 1},
      {{-0.95973748552538063, 0.93028060663936452, 0.87152452014702286}, 1, 1},
      {{-0.95972038207055566, 0.93083880700301669, 0.86987779472822147}, 1, 1},
      {{-0.9594069806630442, 0.93050572447281854, 0.8677824056646537}, 1, 1},
      {{-0.95738479258743303, 0.92722870321440742, 0.85767123459505645}, 1, 1},
      {{-0.95201882139437932, 0.91717847560813137, 0.83350578190638147}, 1, 1}});
  }

  TEST_CASE("lbfgs() on the 2-d Rosenbrock function: zoom interpolation and a grown stepsize") {
    check_lbfgs(optim::lbfgs(), {-1.2, 1.0},
                {{{-0.91631851201865544, 1.1157883624413651}, 0.30640191171101172, 2},
      {{-1.0043138926137758, 1.070548139723944}, 1, 1},
      {{-1.0282820190904409, 1.0574458580359067}, 1, 1},
      {{-1.0244445503736697, 1.0575043118777874}, 1, 1},
      {{-1.0226308429087243, 1.0555663807500766}, 1, 1},
      {{-1.0045548228510481, 1.0296022401414733}, 1, 1},
      {{-0.96233260564023337, 0.95954220479980867}, 1, 1},
      {{-0.60354253769669375, 0.34002406904203408}, 1, 1},
      {{-0.59149012288583125, 0.31975445221182175}, 0.068035580243131458, 3},
      {{-0.56809478577305772, 0.29120040148459819}, 2, 2},
      {{-0.37066389487320345, 0.080663983818682727}, 1, 1},
      {{-0.36230943142172684, 0.11633852547850185}, 1, 1}});
  }

  TEST_CASE("sgd(1) + scale_by_backtracking_linesearch(15) on the quadratic problem") {
    const std::vector<Step> want = {{{0.099999999999999978, -0.89999999999999991, -1.2000000000000002, 0.19999999999999996, 1.2000000000000002, -0.70000000000000018, 0.14999999999999999, -0.60000000000000009, 2.2000000000000002}, 0.80000000000000004, 2},
        {{0.048799999999999975, -0.66959999999999986, 0.028800000000000381, 0.097599999999999951, -0.028800000000000381, 0.37520000000000042, 0.11159999999999998, -0.13919999999999993, -2.305600000000001}, 0.51200000000000012, 4},
        {{0.024813823999999977, -0.50503910399999985, 0.00048844799999999203, 0.049627647999999955, -0.00048844799999999203, -0.17805491200000045, 0.08417318399999997, -0.036570623999999941, 2.2273940480000034}, 0.49152000000000023, 3},
        {{0.013105192858419181, -0.38588543020892141, 2.7490634956799239e-05, 0.026210385716838362, -2.7490634956799239e-05, 0.073995632997171545, 0.064314238368153559, -0.010686345923788764, -1.9766714462961721}, 0.47185920000000031, 3}};
    auto opt = optim::chain(optim::sgd(1.0), optim::scale_by_backtracking_linesearch(15));
    Params p = p0();
    auto state = opt.init(p);
    for (const Step& w : want) {
      auto [value, grad] = linum::value_and_grad(quad_loss)(p);
      auto [u, next] = opt.update(grad, state, p, optim::ExtraArgs<Params>{value, grad, quad_loss});
      state = next;
      p = optim::apply_updates(p, u);
      check_close(flat(p), w.x, 1e-12, 1e-14);
      const auto& ls = std::get<1>(state);
      CHECK(ls.learning_rate.item<double>() == doctest::Approx(w.stepsize).epsilon(1e-12));
      CHECK(ls.info.num_linesearch_steps.item<int>() == w.linesearch_steps);
      CHECK_FALSE(ls.grad.has_value());  // store_grad=false keeps None
    }
  }
}

TEST_SUITE("optim lbfgs: docstring, building blocks and errors") {
  TEST_CASE("lbfgs's docstring: f = sum(x**2) from [1, 2, 3] in float32") {
    // optax prints 7.52E+00 then 7.46E-14 (float32 round-off; the reference's float64 run gives
    // 7.52E+00 then 2.6E-31, and stepsize 1 with one linesearch step both times).
    auto f = [](const Array& y) { return linum::sum(y * y); };
    auto opt = optim::lbfgs();
    Array x = f32({1.0, 2.0, 3.0});
    auto state = opt.init(x);
    auto value_and_grad = optim::value_and_grad_from_state(f);
    std::vector<double> fs;
    for (int i = 0; i < 2; ++i) {
      auto [value, grad] = value_and_grad(x, state);
      auto [u, next] = opt.update(grad, state, x, optim::ExtraArgs<Array>{value, grad, f});
      state = next;
      x = optim::apply_updates(x, u);
      fs.push_back(f(x).item<double>());
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2E", fs[0]);
    CHECK(std::string(buf) == "7.52E+00");
    CHECK(fs[1] < 1e-12);
    CHECK(x.dtype() == linum::float32);
    CHECK(std::get<2>(state).value.dtype() == linum::float32);
  }

  TEST_CASE("scale_by_lbfgs's first step is g * min(1, 1 / |g|); the state layout is optax's") {
    auto opt = optim::lbfgs(0.1, 4, true, std::nullopt);  // no linesearch: -0.1 * direction
    Array x = f64({3.0, -4.0});
    auto s = opt.init(x);
    static_assert(std::is_same_v<std::tuple_element_t<0, decltype(s)>, optim::ScaleByLBFGSState<Array>>);
    static_assert(std::is_same_v<std::tuple_element_t<2, decltype(s)>, optim::EmptyState>);
    CHECK(std::get<0>(s).diff_params_memory.shape() == linum::Shape{4, 2});
    CHECK(std::get<0>(s).weights_memory.shape() == linum::Shape{4});
    Array g = f64({6.0, -8.0});  // |g| = 10
    auto [u, s1] = opt.update(g, s, x);
    check_close(u, {-0.06, 0.08}, 1e-15);
    CHECK(std::get<0>(s1).count.item<int>() == 1);
    // Second step: memory (dw, du) = (x1 - x0, g1 - g0) with weight 1 / <dw, du>, and the
    // initial Hessian scale <dw, du> / |du|^2; for f = |x|^2 (g = 2x) that gives u = -0.1 * x1.
    Array x1 = optim::apply_updates(x, u);
    auto [u2, s2] = opt.update(2.0 * x1, s1, x1);
    check_close(u2, values(-0.1 * x1), 1e-12, 1e-15);
    CHECK(values(std::get<0>(s2).weights_memory)[0] == doctest::Approx(1.0 / values(linum::sum((x1 - x) * (2.0 * x1 - g)))[0]));
  }

  TEST_CASE("linesearches need value, grad and value_fn; scale_by_lbfgs needs params") {
    auto opt = optim::lbfgs();
    Array x = f64({1.0, 2.0});
    auto s = opt.init(x);
    linum::testing::check_error<linum::ValueError>([&] { opt.update(x, s, x); },
                                                   {"scale_by_zoom_linesearch", "value_fn"});
    linum::testing::check_error<linum::ValueError>(
        [&] { optim::scale_by_lbfgs().update(x, optim::scale_by_lbfgs().init(x)); },
        {"scale_by_lbfgs", "params"});
    CHECK_THROWS_AS(optim::scale_by_lbfgs(0), linum::ValueError);
    CHECK_THROWS_AS(optim::scale_by_zoom_linesearch(10, std::nullopt, 0, 2, 1e-4, 0.9, 1e-6, 1e-5,
                                                    "two"),
                    linum::ValueError);
    linum::testing::check_error<linum::ValueError>(
        [] { optim::value_and_grad_from_state(rosenbrock)(Array(1.0), optim::sgd(0.1).init(Array(1.0))); },
        {"Value or gradient not found in the state"});
  }
}

}  // namespace test_lbfgs
