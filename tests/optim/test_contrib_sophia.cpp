// optax.contrib's Sophia and Hutchinson's estimator (contrib_sophia.hpp): trajectories of
// tests/optim/reference_optax_contrib_more.py (an independent NumPy implementation of optax
// 0.2.8; run it with /usr/bin/python3 to reprint these values), where the estimator is exact
// (the trajectory problem's Hessian is diagonal, so (H r) * r = diag(H) whatever the signs r),
// the estimator on a non-diagonal Hessian, a user's Hessian estimate, the errors and the states.
#include <cmath>
#include <cstdint>
#include <iostream>
#include <optional>
#include <sstream>
#include <tuple>
#include <type_traits>

#include "trajectory.hpp"

namespace test_contrib_sophia {

namespace optim = linum::optim;
using namespace optim_test;
using linum::Array;

TEST_SUITE("optim contrib sophia: trajectories of the NumPy reference (float64)") {
  TEST_CASE("sophia: sophia(0.1), 3 steps") {
    check_reference_extra(
        optim::sophia(0.1),
        {{0.39999499999999999, -1.399985, 1.89998, 0.89998999999999996, -1.89998,
          0.39999499999999999, 0.14999750000000001, 2.8999700000000002, -0.89998999999999996},
         {0.29999100005000001, -1.29997100015, 1.7999610001999999, 0.79998100009999995,
          -1.7999610001999999, 0.29999100005000001, 0.049996000024999987, 2.7999410003,
          -0.79998100009999995},
         {0.19998800013999951, -1.1999580004399986, 1.699943000589998, 0.69997300028999898,
          -1.699943000589998, 0.19998800013999951, -0.050004499935000266, 2.699913000889997,
          -0.69997300028999898}});
  }

  TEST_CASE("sophia every step: sophia(0.1, 0.9, 0.95, 1e-8, 1e-3, mask, 0.5, 1.0, 1), 4 steps") {
    check_reference_extra(
        optim::sophia(0.1, 0.9, 0.95, 1e-8, 1e-3, optim::NoMask{}, 0.5, 1.0, 1),
        {{0.39995000000000003, -1.39985, 1.8997999999999999, 0.89990000000000003,
          -1.8997999999999999, 0.39995000000000003, 0.14997499999999997, 2.8997000000000002,
          -0.89990000000000003},
         {0.29991000500000004, -1.2997100150000001, 1.79961002, 0.79981001000000007, -1.79961002,
          0.29991000500000004, 0.049960002499999961, 2.7994100300000002, -0.79981001000000007},
         {0.19988001399950001, -1.1995800439985, 1.699430058998, 0.69973002899900005,
          -1.699430058998, 0.19988001399950001, -0.050044993500250032, 2.6991300889970002,
          -0.69973002899900005},
         {0.099860025998100052, -1.0994600859941002, 1.5992601159921003, 0.59966005599610017,
          -1.5992601159921003, 0.099860025998100052, -0.15003998900090001, 2.5988601759881007,
          -0.59966005599610017}});
  }

  TEST_CASE("sophia no clip: sophia(0.05, 0.9, 0.9, 1.0, 0.0, mask, 2.0, nullopt, 2), 4 steps") {
    check_reference_extra(
        optim::sophia(0.05, 0.9, 0.9, 1.0, 0.0, optim::NoMask{}, 2.0, std::nullopt, 2),
        {{0.47499999999999998, -1.4624999999999999, 1.8, 0.94999999999999996, -1.8,
          0.42499999999999999, 0.24374999999999999, 2.7749999999999999, -0.80000000000000004},
         {0.45065789473684209, -1.4254934210526315, 1.6105263157894738, 0.90131578947368418,
          -1.6105263157894738, 0.35592105263157892, 0.23758223684210525, 2.5588815789473682,
          -0.62105263157894741},
         {0.42698339483394832, -1.3889920979801902, 1.4315401048747329, 0.85396678966789663,
          -1.4315401048747329, 0.29263206447853946, 0.23149868299669837, 2.3516938968731789,
          -0.46230335987570403},
         {0.40398505956065511, -1.3530073554901672, 1.2629732601790291, 0.80797011912131023,
          -1.2629732601790291, 0.24206232220925367, 0.22550122591502789, 2.1534654005531917,
          -0.37054432924039249}});
  }
}

TEST_SUITE("optim contrib sophia: Hutchinson's estimator, behaviour and states") {
  TEST_CASE("hutchinson_estimator_diag_hessian: exact for a diagonal Hessian; the key is split") {
    auto tx = optim::hutchinson_estimator_diag_hessian();
    Params p = p0();
    auto s = tx.init(p);
    auto [h, s2] = tx.update(p, s, p, optim::ExtraArgs<Params>{.obj_fn = quad_loss});
    // The Hessian of 0.5 sum(A p**2) is diag(A): the estimate is A, entry for entry.
    check_close(flat(h), flat(curvature()), 0.0, 0.0);
    // The next key is the first of split(PRNGKey(0)) (the default seed).
    Array keys = linum::random::split(linum::random::PRNGKey(0));
    CHECK(values(s2.key) == values(keys[0]));
    // A seed of the user's.
    auto seeded = optim::hutchinson_estimator_diag_hessian(linum::random::PRNGKey(7));
    CHECK(values(seeded.init(p).key) == values(linum::random::PRNGKey(7)));
  }

  TEST_CASE("hutchinson_estimator_diag_hessian: (H r) * r on a non-diagonal Hessian") {
    // f = 0.5 x^T H x, H = [[2, 1], [1, 3]]: (H r) * r = diag(H) + r0 r1 (1, 1) with r = +-1, so
    // each estimate is (3, 4) or (1, 2), and their mean tends to (2, 3).
    auto f = [](const Array& x) {
      Array hx = linum::matmul(linum::array({{2.0, 1.0}, {1.0, 3.0}}), x);
      return 0.5 * linum::sum(x * hx);
    };
    auto tx = optim::hutchinson_estimator_diag_hessian();
    Array x = f64({0.3, -0.7});
    auto s = tx.init(x);
    const int n = 400;
    double mean0 = 0, mean1 = 0;
    for (int i = 0; i < n; ++i) {
      auto [h, next] = tx.update(x, s, x, optim::ExtraArgs<Array>{.obj_fn = f});
      s = next;
      const Vec e = values(h);
      CHECK(std::abs(std::abs(e[0] - 2.0) - 1.0) == 0.0);
      CHECK(e[1] - 3.0 == e[0] - 2.0);
      mean0 += e[0] / n, mean1 += e[1] / n;
    }
    // Standard deviation of each mean: 1 / sqrt(400) = 0.05.
    CHECK(std::abs(mean0 - 2.0) < 0.2);
    CHECK(std::abs(mean1 - 3.0) < 0.2);
  }

  TEST_CASE("scale_by_sophia: a user's Hessian estimate, refreshed every update_interval steps") {
    // hessian_diagonal_fn returns 4 everywhere. Step 1 divides the momentum by max(gamma * 0,
    // eps) (nu is still 0); nu becomes (1 - b2) 4. Step 2 divides the bias-corrected momentum by
    // gamma (1 - b2) 4. No clipping; with clip 1, step 1 is sign(g).
    const double b1 = 0.9, b2 = 0.5, gamma = 0.1, eps = 1e-8;
    auto four =
        optim::stateless([](const Array& g, const Array*) { return linum::full_like(g, 4.0); });
    auto tx = optim::scale_by_sophia(b1, b2, eps, gamma, std::nullopt, 1, four);
    Array p = f64({1.0, -2.0});
    const Vec g1{0.5, -0.25}, g2{1e-3, 2e-3};
    auto [u1, s1] = tx.update(f64(g1), tx.init(p), p);
    check_close(u1, {g1[0] / eps, g1[1] / eps}, 1e-15, 0.0);
    check_close(s1.nu, {(1 - b2) * 4, (1 - b2) * 4}, 1e-15, 0.0);
    auto [u2, s2] = tx.update(f64(g2), s1, p);
    Vec want;
    for (int i = 0; i < 2; ++i) {
      const double m = (1 - b1) * (b1 * g1[i]) + (1 - b1) * g2[i];
      want.push_back(m / (1 - b1 * b1) / (gamma * (1 - b2) * 4));
    }
    check_close(u2, want, 1e-13, 0.0);
    CHECK(s2.count.item<int>() == 2);
    auto clipped = optim::scale_by_sophia(b1, b2, eps, gamma, 1.0, 1, four);
    check_close(clipped.update(f64(g1), clipped.init(p), p).first, {1.0, -1.0}, 0.0, 0.0);
    // update_interval 3: nu refreshed at counts 0 and 3 only.
    auto every3 = optim::scale_by_sophia(b1, b2, eps, gamma, 1.0, 3, four);
    auto s = every3.init(p);
    for (int i = 0; i < 3; ++i) s = every3.update(f64(g1), s, p).second;
    check_close(s.nu, {(1 - b2) * 4, (1 - b2) * 4}, 1e-15, 0.0);
    s = every3.update(f64(g1), s, p).second;
    check_close(s.nu, {(1 - b2 * b2) * 4, (1 - b2 * b2) * 4}, 1e-15, 0.0);
  }

  TEST_CASE("scale_by_sophia: verbose prints the share of unclipped entries every n steps") {
    // Step 1 divides by eps: |u| = |g| / 1e-8, above the threshold 1 but for g = 0.
    auto four =
        optim::stateless([](const Array& g, const Array*) { return linum::full_like(g, 4.0); });
    auto tx = optim::scale_by_sophia(0.9, 0.5, 1e-8, 0.1, 1.0, 1, four, std::nullopt, true, 2);
    Array p = f64({1.0, -2.0, 3.0, 0.5});
    Array g = f64({0.5, 0.0, -1.0, 0.0});
    std::ostringstream out;
    auto* old = std::cout.rdbuf(out.rdbuf());
    auto s = tx.update(g, tx.init(p), p).second;  // count 1: not printed
    const std::string after_one = out.str();
    tx.update(g, s, p);  // count 2: printed
    std::cout.rdbuf(old);
    CHECK(after_one.empty());
    CHECK(out.str() == "Sophia optimizer win rate: 0.5\n");
  }

  TEST_CASE("sophia: errors name what is missing") {
    Params p = p0();
    auto tx = optim::sophia(0.1);
    auto s = tx.init(p);
    CHECK(message_of([&] { tx.update(p, s); }).find("params must be provided") !=
          std::string::npos);
    // The default estimator needs the objective.
    CHECK(message_of([&] { tx.update(p, s, p); }).find("obj_fn must be provided") !=
          std::string::npos);
    CHECK_THROWS_AS(tx.update(p, s, p, optim::ExtraArgs<Params>{Array(1.0)}), linum::ValueError);
    CHECK_THROWS_AS(optim::scale_by_sophia(0.9, 0.99, 1e-8, 0.01, 1.0, 0), linum::ValueError);
  }

  TEST_CASE("state layouts are optax's NamedTuples; mu_dtype") {
    Params p{{"b", f32({1.0})}};
    CHECK(linum::pytree::repr(optim::scale_by_sophia().init(p)) ==
          "SophiaState(count=Array(0, dtype=int32), mu={'b': Array([0.], dtype=float32)}, "
          "nu={'b': Array([0.], dtype=float32)}, hessian_fn_state=HutchinsonState(key=Array([0, "
          "0], dtype=uint32)))");
    using S = std::tuple_element_t<0, decltype(optim::sophia(0.1).init(p))>;
    static_assert(std::is_same_v<S, optim::SophiaState<Params, optim::HutchinsonState<>>>);
    auto tx = optim::scale_by_sophia(0.965, 0.99, 1e-8, 0.01, 1.0, 10,
                                     optim::hutchinson_estimator_diag_hessian(), linum::float32);
    Params q = p0();
    auto [u, s] = tx.update(q, tx.init(q), q, optim::ExtraArgs<Params>{.obj_fn = quad_loss});
    CHECK(s.mu.at("w").dtype() == linum::float32);
    CHECK(u.at("w").dtype() == linum::float64);
  }
}

}  // namespace test_contrib_sophia
