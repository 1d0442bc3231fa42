// optax.contrib's SAM and normalize (contrib_sam.hpp): trajectories of
// tests/optim/reference_optax_contrib_more.py (an independent NumPy implementation of optax
// 0.2.8; run it with /usr/bin/python3 to reprint these values) in transparent and opaque mode,
// optax's convergence test on a parabola (shortened), the state's cycle, errors and layout.
#include <cmath>
#include <optional>
#include <string>
#include <type_traits>

#include "trajectory.hpp"

namespace test_contrib_sam {

namespace optim = linum::optim;
using namespace optim_test;
using linum::Array;

TEST_SUITE("optim contrib sam: trajectories of the NumPy reference (float64)") {
  TEST_CASE("sam: sam(sgd(0.1), chain(normalize(), sgd(0.05))), 4 steps") {
    // Odd steps go up the normalized gradient by 0.05; even ones are sgd(0.1) from the params
    // before it, at the gradient of the ascended point.
    check_reference(optim::sam(optim::sgd(0.1), optim::chain(optim::normalize(), optim::sgd(0.05))),
                    {{0.50293958759009272, -1.5044093813851391, 2.0235167007207417,
                      1.0058791751801854, -2.0235167007207417, 0.50881876277027815,
                      0.25073489689752321, 3.0264562883108344, -1.0235167007207417},
                     {0.44970604124099073, -1.4247795309307429, 1.5952966598558516,
                      0.89941208248198146, -1.5952966598558516, 0.34735437116891654,
                      0.23746325515512384, 2.5460315567533747, -0.59059331971170326},
                     {0.45312927577728784, -1.4302023561205401, 1.6195839681009792,
                      0.90625855155457569, -1.6195839681009792, 0.35528672277645473,
                      0.23836705935342339, 2.5751027577923771, -0.60857608412700315},
                     {0.40439311366326192, -1.3532694131247158, 1.2713798662356557,
                      0.80878622732652383, -1.2713798662356557, 0.24076835433598009,
                      0.22554490218745268, 2.1597661430845179, -0.34716288606090195}});
  }

  TEST_CASE("sam adam no reset: sam(adam(0.1), chain(normalize(), adam(0.02)), 3, false)") {
    check_reference(
        optim::sam(optim::adam(0.1), optim::chain(optim::normalize(), optim::adam(0.02)), 3, false),
        {{0.51999999659816287, -1.5199999977321084, 2.0199999995747704, 1.0199999982990813,
          -2.0199999995747704, 0.51999999886605419, 0.26999998639265832, 3.0199999996220179,
          -1.0199999995747704},
         {0.54001215834922611, -1.5400004118629966, 2.0399986839445634, 1.0400036976265106,
          -2.0399986839445634, 0.54001216285748088, 0.29002318678012207, 3.0399968921756884,
          -1.040003700174025},
         {0.40000000185181012, -1.4000000012987011, 1.9000000002450981, 0.90000000096153498,
          -1.9000000002450981, 0.40000000061727004, 0.15000000689599988, 2.9000000002192983,
          -0.90000000024038374},
         {0.41982767632294554, -1.4199962170105878, 1.9200084695225927, 0.91996612244775278,
          -1.9200084695225927, 0.41982767741721744, 0.16930221655681232, 2.9200189216380275,
          -0.91996612301328384},
         {0.43962153753024819, -1.43999148479297, 1.9400197510726109, 0.9399237125830221,
          -1.9400197510726109, 0.43962154100058193, 0.18847988642325569, 2.940044425371291,
          -0.93992371444220035},
         {0.30105251462893107, -1.300231129045069, 1.8001624530077391, 0.80039069599838664,
          -1.8001624530077391, 0.30105251205803468, 0.05326111139403808, 2.8001010888654676,
          -0.80039069452594047}});
  }

  TEST_CASE("sam opaque: sam(sgd(0.1), chain(normalize(), sgd(0.05)), 3, true, true)") {
    // Every update runs the two ascent steps with grad_fn, then the outer step.
    check_reference_extra(
        optim::sam(optim::sgd(0.1), optim::chain(optim::normalize(), optim::sgd(0.05)), 3, true,
                   true),
        {{0.44941431100882978, -1.424561372672313, 1.5906016944051391, 0.89882862201765956,
          -1.5906016944051391, 0.34469810712631327, 0.23742689544538551, 2.5420816891367695,
          -0.58109426186572744},
         {0.40378855843662953, -1.3527920348237363, 1.2627567434146492, 0.80757711687325906,
          -1.2627567434146492, 0.23652914904762759, 0.22546533913728942, 2.152043643804562,
          -0.33433882643502411},
         {0.36263239716565326, -1.2845029430527617, 1.0004356663825167, 0.72526479433130653,
          -1.0004356663825167, 0.16143340629402211, 0.21408382384212699, 1.8198936945608386,
          -0.19015824432225417}});
  }
}

TEST_SUITE("optim contrib sam: behaviour, errors and states") {
  TEST_CASE("normalize: the updates divided by their global norm") {
    Params g{{"b", f64({3.0, 0.0, 0.0})}, {"w", f64({0.0, 4.0})}};
    auto tx = optim::normalize();
    auto [u, s] = tx.update(g, tx.init(g));
    check_close(flat(u), {0.6, 0.0, 0.0, 0.0, 0.8}, 1e-15, 0.0);
    static_assert(std::is_same_v<decltype(s), optim::NormalizeState>);
  }

  TEST_CASE("optax: sam converges on a parabola, transparent and opaque") {
    // optax's test (sgd outer, normalized sgd or adam adversary, sync_period 2) with larger
    // steps, so that 600 updates suffice.
    const Array target = f32({1.0, -1.0, 1.0});
    auto grad_f = [&](const Array& p) { return 2.0 * (p - target); };
    auto run = [&](const auto& tx, bool opaque) {
      Array p = f32({-1.0, 10.0, 1.0});
      auto s = tx.init(p);
      optim::ExtraArgs<Array> extra{};
      extra.grad_fn = [&](const Array& q, int) { return grad_f(q); };
      for (int i = 0; i < 600; ++i) {
        auto [u, next] = opaque ? tx.update(grad_f(p), s, p, extra) : tx.update(grad_f(p), s, p);
        s = next;
        p = optim::apply_updates(p, u);
      }
      return p;
    };
    for (bool opaque : {false, true}) {
      INFO("opaque " << opaque);
      check_close(
          run(optim::sam(optim::sgd(0.02), optim::chain(optim::normalize(), optim::sgd(1e-3)), 2,
                         true, opaque),
              opaque),
          {1.0, -1.0, 1.0}, 3e-2, 3e-2);
      check_close(
          run(optim::sam(optim::sgd(0.02), optim::chain(optim::normalize(), optim::adam(1e-2)), 2,
                         true, opaque),
              opaque),
          {1.0, -1.0, 1.0}, 3e-2, 3e-2);
    }
  }

  TEST_CASE("the transparent state: steps_since_sync cycles, the cache holds the outer params") {
    auto tx = optim::sam(optim::sgd(0.1), optim::chain(optim::normalize(), optim::sgd(0.5)), 3);
    Array p = f64({3.0, 4.0});
    auto s = tx.init(p);
    check_close(*s.cache, {3.0, 4.0}, 0.0, 0.0);
    // Step 1 (adversarial): p + 0.5 g / |g| with g = p: (3.3, 4.4); the cache stays p.
    auto [u1, s1] = tx.update(p, s, p);
    check_close(u1, {0.3, 0.4}, 1e-15, 0.0);
    CHECK(s1.steps_since_sync.item<int>() == 1);
    Array p1 = optim::apply_updates(p, u1);
    auto [u2, s2] = tx.update(p1, s1, p1);
    Array p2 = optim::apply_updates(p1, u2);
    check_close(p2, {3.6, 4.8}, 1e-15, 0.0);
    CHECK(s2.steps_since_sync.item<int>() == 2);
    // Step 3 (outer): sgd(0.1) from the cache (3, 4) with the gradient at p2.
    auto [u3, s3] = tx.update(p2, s2, p2);
    check_close(optim::apply_updates(p2, u3), {3.0 - 0.36, 4.0 - 0.48}, 1e-14, 0.0);
    CHECK(s3.steps_since_sync.item<int>() == 0);
  }

  TEST_CASE("a boolean leaf of the adversary's state keeps its dtype") {
    auto tx = optim::sam(optim::sgd(0.1), optim::scale_by_optimistic_gradient(), 2, false);
    Array p = f32({1.0, 2.0});
    auto s = tx.init(p);
    for (int i = 0; i < 3; ++i) s = tx.update(p, s, p).second;
    CHECK(s.adv_state.is_initial_step.dtype() == linum::bool_);
  }

  TEST_CASE("opaque mode with batch_axis_name: the adversarial gradients are averaged") {
    // Two workers (a vmap over "i") with data d = 1 and 3, loss 0.5 d q**2: one ascent step of
    // 0.25 along sign(g) takes p = 2 to 2.25, where the gradients d q are pmean-ed to 2 * 2.25;
    // the outer sgd(0.1) step is then -0.45 on both workers.
    auto tx = optim::sam(optim::sgd(0.1), optim::chain(optim::normalize(), optim::sgd(0.25)), 2,
                         true, true, "i");
    Array p = f64({2.0});
    auto s = tx.init(p);
    auto step = [&](const Array& g, const Array& d) {
      optim::ExtraArgs<Array> extra{};
      extra.grad_fn = [d](const Array& q, int) { return d * q; };
      return tx.update(g, s, p, extra).first;
    };
    Array d = f64({1.0, 3.0});
    Array u = linum::vmap(step, {.axis_name = "i"})(d.reshape({2, 1}) * 2.0, d.reshape({2, 1}));
    check_close(u, {-0.45, -0.45}, 1e-14, 0.0);
  }

  TEST_CASE("errors and the state's layout") {
    CHECK_THROWS_AS(optim::sam(optim::sgd(0.1), optim::sgd(0.1), 0), linum::ValueError);
    auto opaque = optim::sam(optim::sgd(0.1), optim::sgd(0.1), 2, true, true);
    Array p = f32({1.0});
    CHECK(message_of([&] {
            opaque.update(p, opaque.init(p), p);
          }).find("grad_fn must be provided when opaque_mode=True") != std::string::npos);
    CHECK(!opaque.init(p).cache.has_value());
    auto tx = optim::sam(optim::sgd(0.1), optim::sgd(0.1));
    CHECK_THROWS_AS(tx.update(p, tx.init(p)), linum::ValueError);
    CHECK(linum::pytree::repr(tx.init(p)) ==
          "SAMState(steps_since_sync=Array(0, dtype=int32), opt_state=(EmptyState(), "
          "EmptyState()), adv_state=(EmptyState(), EmptyState()), cache=Array([1.], "
          "dtype=float32))");
  }
}

}  // namespace test_contrib_sam
