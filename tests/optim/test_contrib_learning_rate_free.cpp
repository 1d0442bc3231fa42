// optax.contrib's learning-rate-free optimizers (contrib_learning_rate_free.hpp): dadapt_adamw,
// prodigy, dog, dowg, cocob and mechanize against trajectories of
// tests/optim/reference_optax_contrib.py (an independent NumPy implementation of optax 0.2.8's
// contrib optimizers; run it with /usr/bin/python3 to reprint these values and the estim_lr values
// below; it also asserts that it reproduces the objective values dowg's docstring prints), dowg's
// docstring values in float32, one distinctive behaviour per optimizer, the errors and the state
// layouts.
#include <cmath>
#include <cstdint>
#include <tuple>
#include <type_traits>

#include "trajectory.hpp"

namespace test_contrib_learning_rate_free {

namespace optim = linum::optim;
using namespace optim_test;
using linum::Array;

TEST_SUITE("optim contrib learning-rate-free: trajectories of the NumPy reference (float64)") {
  TEST_CASE("dadapt_adamw: dadapt_adamw()") {
    check_reference(optim::dadapt_adamw(),
                    {{0.49999900000063247, -1.4999990000004217, 1.9999990000000791,
                      0.99999900000031627, -1.9999990000000791, 0.4999990000002108,
                      0.24999900000252981, 2.9999990000000705, -0.99999900000007902},
                     {0.49999783712999057, -1.4999978371296803, 1.9999978371290652,
                      0.99999783712946966, -1.9999978371290652, 0.49999783712922213,
                      0.24999783713333765, 2.9999978371290585, -0.99999783712903734},
                     {0.49999540758074545, -1.4999954075784996, 1.9999954075771988,
                      0.99999540757855099, -1.9999954075771988, 0.49999540757938532,
                      0.24999540758921485, 2.999995407576975, -0.99999540757778582}});
  }

  TEST_CASE(
      "dadapt_adamw schedule wd: dadapt_adamw(lr(t) = 1 / (t + 1), {0.8, 0.99}, 1e-6, 1e-3, 0.1)") {
    check_reference(optim::dadapt_adamw([](std::int64_t t) { return 1.0 / (t + 1); }, {0.8, 0.99},
                                        1e-6, 1e-3, 0.1),
                    {{0.49897501999960003, -1.4989250133331555, 1.9989000024999937,
                      0.99895000999990002, -1.9989000024999937, 0.4989750066666222,
                      0.24898757999360052, 2.9988500022222171, -0.99895000249999377},
                     {0.49812007221867655, -1.4980506654301373, 1.9980158767075584,
                      0.9980854070457521, -1.9980158767075584, 0.49812005088550443,
                      0.24813727304805677, 2.9979463090133467, -0.99808539504983074},
                     {0.49736530153006253, -1.4972795044171525, 1.9972364301410228,
                      0.99732249639233173, -1.9972364301410228, 0.49736527440638201,
                      0.24738633510826935, 2.997150271549327, -0.9973224811442889}});
  }

  TEST_CASE("prodigy: prodigy()") {
    check_reference(optim::prodigy(),
                    {{0.49999900000063247, -1.4999990000004217, 1.9999990000000791,
                      0.99999900000031627, -1.9999990000000791, 0.4999990000002108,
                      0.24999900000252981, 2.9999990000000705, -0.99999900000007902},
                     {0.49999800000113193, -1.4999980000007374, 1.999998000000148,
                      0.99999800000056605, -1.999998000000148, 0.49999800000041206,
                      0.24999800000442338, 2.999998000000129, -0.99999800000016104},
                     {0.49999700000163616, -1.4999970000010272, 1.9999970000002285,
                      0.99999700000081815, -1.9999970000002285, 0.49999700000067271,
                      0.24999700000616248, 2.9999970000001928, -0.99999700000027614}});
  }

  TEST_CASE(
      "prodigy beta3 coef wd safeguard: prodigy(lr(t) = 0.5 (t + 1), {0.8, 0.99}, 0.9, 1e-6, 1e-3, "
      "2.0, 0.1, true)") {
    check_reference(optim::prodigy([](std::int64_t t) { return 0.5 * (t + 1); }, {0.8, 0.99}, 0.9,
                                   1e-6, 1e-3, 2.0, 0.1, true),
                    {{0.49948750999980002, -1.4994625066665779, 1.9994500012499969,
                      0.99947500499995001, -1.9994500012499969, 0.4994875033333111,
                      0.24949378999680025, 2.9994250011111085, -0.99947500124999689},
                     {0.49846800610447944, -1.4984037781413722, 1.9983716684171433,
                      0.99843587517391386, -1.9983716684171433, 0.49846798998303871,
                      0.24848417827371735, 2.9983074792570439, -0.99843586610649082},
                     {0.49694194751108456, -1.4968245283974726, 1.9967658974645131,
                      0.99688316120402287, -1.9967658974645131, 0.49694191977576335,
                      0.24697174030377286, 2.9966487113605278, -0.99688314560644331}});
  }

  TEST_CASE("dog: dog()") {
    check_reference(optim::dog(),
                    {{0.49999966662810763, -1.4999994999421613, 1.9999973330248608,
                      0.99999933325621526, -1.9999973330248608, 0.49999899988432284,
                      0.24999991665702689, 2.9999969996529683, -0.99999733302486082},
                     {0.49999943089855792, -1.4999991463477189, 1.9999954471897208,
                      0.99999886179711583, -1.9999954471897208, 0.49999829269661683,
                      0.24999985772461983, 2.9999948780877284, -0.99999544719223543},
                     {0.49999910232772393, -1.4999986534911876, 1.9999928186260409,
                      0.99999820465544786, -1.9999928186260409, 0.4999973069863588,
                      0.24999977558186459, 2.9999919209519055, -0.99999281863453926}});
  }

  TEST_CASE("dog distance wd: dog(0.5, {distance, 0.1}, 1e-8, 0.01)") {
    check_reference(optim::dog(0.5, {"distance", 0.1}, 1e-8, 0.01),
                    {{0.49704599415402861, -1.4955251198570929, 1.9764849435627623,
                      0.99409198830805723, -1.9764849435627623, 0.49119647762735258,
                      0.24925418664284882, 2.9735016901341575, -0.97654343872802907},
                     {0.49495547230322601, -1.4923489724676011, 1.9599414842668195,
                      0.98991094460645201, -1.9599414842668195, 0.48503962867742051,
                      0.2487248287446002, 2.954804260974365, -0.96023649027074565},
                     {0.49324649914590496, -1.4897470862278452, 1.9464739868764092,
                      0.98649299829180992, -1.9464739868764092, 0.48004858402072131,
                      0.24829118103797423, 2.9395513266165247, -0.94707302246322689}});
  }

  TEST_CASE("dog learning_rate: dog(1.0, {learning_rate, 0.05})") {
    check_reference(
        optim::dog(1.0, {"learning_rate", 0.05}),
        {{0.47499999999999998, -1.4624999999999999, 1.8, 0.94999999999999996, -1.8,
          0.42499999999999999, 0.24374999999999999, 2.7749999999999999, -0.80000000000000004},
         {0.45722440873824161, -1.4351349450312403, 1.6652797293845683, 0.91444881747648321,
          -1.6652797293845683, 0.37728657082370121, 0.23918915750520672, 2.6192296871009066,
          -0.6802486483418384},
         {0.43292712592980859, -1.397002816735732, 1.4882910482611518, 0.86585425185961717,
          -1.4882910482611518, 0.3171386106365488, 0.2328338027892887, 2.410447642994745,
          -0.53565274774740423}});
  }

  TEST_CASE("dowg: dowg()") {
    check_reference(optim::dowg(),
                    {{0.49941277296410436, -1.4991191594461566, 1.9953021837128349,
                      0.99882554592820871, -1.9953021837128349, 0.49823831889231313,
                      0.24985319324102609, 2.9947149566769391, -0.99530218371283496},
                     {0.49899732452243289, -1.4984956204095243, 1.99198250417013,
                      0.99799464904486579, -1.99198250417013, 0.49699490456029899,
                      0.24974927006825404, 2.990978118946646, -0.99199032015146438},
                     {0.49822560218923284, -1.497336874180194, 1.9858211188870201,
                      0.99645120437846568, -1.9858211188870201, 0.49468902806465115,
                      0.24955614569669898, 2.9840395909253399, -0.98585368537001083}});
  }

  TEST_CASE("dowg init wd: dowg(0.5, 0.01, 1e-4, 0.01)") {
    check_reference(optim::dowg(0.5, 0.01, 1e-4, 0.01),
                    {{0.49704633970352086, -1.4955256433132544, 1.9764876942735718,
                      0.99409267940704171, -1.9764876942735718, 0.49119750743326507,
                      0.24925427388554239, 2.9735047898157414, -0.97654618259627446},
                     {0.49495599214248015, -1.4923497618199466, 1.9599456027074624,
                      0.9899119842849603, -1.9599456027074624, 0.48504116316154827,
                      0.24872496030332444, 2.9548089129953143, -0.96024055919305629},
                     {0.49324713627641359, -1.4897480555107609, 1.946479015472482,
                      0.98649427255282718, -1.946479015472482, 0.48005045050607514,
                      0.24829134258512683, 2.9395570174920955, -0.94707795287751106}});
  }

  TEST_CASE("cocob: cocob()") {
    check_reference(
        optim::cocob(),
        {{0.48999999999999999, -1.49, 1.99, 0.98999999999999999, -1.99, 0.48999999999999999,
          0.23999999999999999, 2.9900000000000002, -0.98999999999999999},
         {0.48000596000000001, -1.4798686622222221, 1.9798514974999999, 0.97990299000000003,
          -1.9798514974999999, 0.48000596000000001, 0.23021184, 2.979834332222222,
          -0.97990299000000003},
         {0.46974743855202228, -1.4693130258528018, 1.9692583833958068, 0.96942208313867084,
          -1.9692583833958068, 0.46974743855202228, 0.22039002065157748, 2.9692036649774689,
          -0.96942208313867084}});
  }

  TEST_CASE("cocob lr alpha wd: cocob(0.5, 10.0, 1e-8, 0.01)") {
    check_reference(
        optim::cocob(0.5, 10.0, 1e-8, 0.01),
        {{0.40000000000000002, -1.3999999999999999, 1.8999999999999999, 0.90000000000000002,
          -1.8999999999999999, 0.40000000000000002, 0.14999999999999999, 2.8999999999999999,
          -0.90000000000000002},
         {0.30559999999999998, -1.2886222222222221, 1.786475, 0.79289999999999994, -1.786475,
          0.30559999999999998, 0.080399999999999971, 2.7843222222222224, -0.79289999999999994},
         {0.21094117744640001, -1.1439883145258452, 1.6344368408248355, 0.66225389950890001,
          -1.6344368408248355, 0.21094117744639995, 0.035829347942399975, 2.6245944635035432,
          -0.66225389950890001}});
  }
  TEST_CASE("mechanize sgd: mechanize(sgd(0.1))") {
    check_reference(
        optim::mechanize(optim::sgd(0.1)),
        {{0.49999995000000003, -1.499999925, 1.9999996, 0.99999990000000005, -1.9999996,
          0.49999985000000002, 0.24999998749999999, 2.9999995500000001, -0.99999959999999999},
         {0.49999990049505438, -1.4999998507425778, 1.9999992039604748, 0.99999980099010877,
          -1.9999992039604748, 0.49999970148519313, 0.24999997512376296, 2.9999991044555117,
          -0.99999920396055497},
         {0.49999979987857451, -1.4999996998178466, 1.9999983990287562, 0.99999959975714903,
          -1.9999983990287562, 0.49999939963584389, 0.24999994996964109, 2.9999981989072602,
          -0.99999839902907772}});
  }

  TEST_CASE("mechanize adam: mechanize(adam(0.1), 0.1, 1e-8, 1e-3, 3)") {
    check_reference(optim::mechanize(optim::adam(0.1), 0.1, 1e-8, 1e-3, 3),
                    {{0.49990000000200002, -1.4999000000013334, 1.99990000000025,
                      0.99990000000099999, -1.99990000000025, 0.49990000000066664, 0.249900000008,
                      2.9999000000002223, -0.99990000000025003},
                     {0.49980000152487414, -1.4998000011755077, 1.9998000011298713,
                      0.99980000126180313, -1.9998000011298713, 0.49980000152220733,
                      0.24980000205984582, 2.9998000010863537, -0.99980000126030322},
                     {0.49959459081814911, -1.4995945890919282, 1.9995945888722788,
                      0.99959458952121272, -1.9995945888722788, 0.4995945908127431,
                      0.24959459343262497, 2.9995945886569491, -0.99959458951817215}});
  }
}

TEST_SUITE("optim contrib learning-rate-free: behaviour and states") {
  TEST_CASE("mechanize: the first step is s_init times the base update; x0 is the first params") {
    // At the first step x0 = params, so delta_prev and h are 0: each s_i becomes
    // (s_init / n) * eps / eps, their sum s_init, and the step s_init * (base update).
    auto tx = optim::mechanize(optim::sgd(1.0), 1e-2, 1e-8, 1e-3, 4);
    Params p = p0();
    Params g = linum::grad(quad_loss)(p);
    auto [u, s] = tx.update(g, tx.init(p), p);
    Vec want = flat(g);
    for (double& x : want) x *= -1e-3;
    check_close(flat(u), want, 1e-12, 0.0);
    check_close(s.s, {2.5e-4, 2.5e-4, 2.5e-4, 2.5e-4}, 1e-12, 0.0);
    check_close(s.m, {1e-8, 1e-8, 1e-8, 1e-8}, 0.0, 0.0);
    CHECK(flat(s.x0) == flat(p));
    CHECK(s.count.item<int>() == 1);
    CHECK_THROWS_AS(tx.update(g, s), linum::ValueError);
    CHECK_THROWS_AS(optim::mechanize(optim::sgd(1.0), 1e-2, 1e-8, 1e-6, 0), linum::ValueError);
  }

  TEST_CASE("dadapt_adamw and prodigy grow their step-size estimate (20 steps, the reference's)") {
    // The estimates the NumPy reference prints after 20 steps on the trajectory problem; both
    // start at estim_lr0 = 1e-6 and never decrease.
    auto run = [](const auto& tx) {
      Params p = p0();
      auto s = tx.init(p);
      double prev = 1e-6;
      for (int t = 0; t < 20; ++t) {
        auto [u, next] = tx.update(linum::grad(quad_loss)(p), s, p);
        s = next;
        p = optim::apply_updates(p, u);
        const double d = s.estim_lr.template item<double>();
        CHECK(d >= prev);
        prev = d;
      }
      CHECK(s.count.template item<int>() == 20);
      return prev;
    };
    CHECK(run(optim::dadapt_adamw()) == doctest::Approx(0.023661160044039811).epsilon(1e-12));
    CHECK(run(optim::prodigy()) == doctest::Approx(0.00089893980439487977).epsilon(1e-12));
  }

  TEST_CASE("dog: the learning_rate init step is the first step's rate; bad init steps") {
    // {"learning_rate", 0.05}: the first update is exactly -0.05 * g, whatever the distance.
    auto tx = optim::dog(1.0, {"learning_rate", 0.05});
    Params p = p0();
    Params g = linum::grad(quad_loss)(p);
    auto [u, s] = tx.update(g, tx.init(p), p);
    Vec want = flat(g);
    for (double& x : want) x *= -0.05;
    check_close(flat(u), want, 1e-15, 0.0);
    CHECK_FALSE(std::get<1>(s).is_init_step.item<bool>());
    // The heuristic's r0 = 1e-6 * (1 + |p0|): the first rate is r0 / sqrt(|g|**2 + eps).
    auto h = optim::scale_by_dog({"heuristic", 1e-6});
    auto [uh, sh] = h.update(g, h.init(p), p);
    const double p_norm = std::sqrt(optim::tree_utils::tree_l2_norm(p, true).item<double>());
    const double g_sq = optim::tree_utils::tree_l2_norm(g, true).item<double>();
    CHECK(sh.max_dist.item<double>() == doctest::Approx(1e-6 * (1 + p_norm)).epsilon(1e-14));
    Vec wh = flat(g);
    for (double& x : wh) x *= 1e-6 * (1 + p_norm) / std::sqrt(g_sq + 1e-8);
    check_close(flat(uh), wh, 1e-13, 0.0);
    CHECK_THROWS_AS(optim::dog(1.0, {"distanse", 0.1}), linum::ValueError);
    CHECK(message_of([] {
            optim::scale_by_dog({"lr", 0.1});
          }).find("scale_by_dog") != std::string::npos);
    CHECK_THROWS_AS(h.update(g, h.init(p)), linum::ValueError);
  }

  TEST_CASE("dowg: the docstring's values (float32)") {
    // optax's dowg docstring prints these objective values (f = sum(x**2) from [1, 2, 3]).
    Array x = f32({1.0, 2.0, 3.0});
    auto tx = optim::dowg();
    auto s = tx.init(x);
    auto f = [](const Array& y) { return linum::sum(y * y); };
    const Vec want{13.925367, 13.872763, 13.775433, 13.596172, 13.268837};
    for (double w : want) {
      auto [u, next] = tx.update(linum::grad(f)(x), s, x);
      s = next;
      x = optim::apply_updates(x, u);
      CHECK(x.dtype() == linum::float32);
      CHECK(f(x).item<double>() == doctest::Approx(w).epsilon(1e-6));
    }
    CHECK(std::get<1>(s).estim_sq_dist.dtype() == linum::float32);
  }

  TEST_CASE("cocob: the first step is -sign(g) / alpha, whatever |g|") {
    // Step 1: L = |g|, G = |g|, R = 0, C = -g, so p0 + C / (L * max(2 L, alpha L)) * L - p0.
    auto tx = optim::scale_by_cocob(20.0);
    Array p = f64({1.0, -2.0, 0.5, 3.0});
    Array g = f64({1e-3, -5.0, 40.0, -0.25});
    auto [u, s] = tx.update(g, tx.init(p), p);
    check_close(u, {-0.05, 0.05, -0.05, 0.05}, 1e-14, 0.0);
    check_close(s.scale, {1e-3, 5.0, 40.0, 0.25}, 0.0, 0.0);
    CHECK_THROWS_AS(tx.update(g, s), linum::ValueError);
  }

  TEST_CASE("prodigy and dadapt_adamw need params") {
    Params p = p0();
    auto a = optim::prodigy();
    auto b = optim::dadapt_adamw();
    CHECK_THROWS_AS(a.update(p, a.init(p)), linum::ValueError);
    CHECK_THROWS_AS(b.update(p, b.init(p)), linum::ValueError);
  }

  TEST_CASE("state layouts are optax's NamedTuples") {
    Params p{{"b", f32({1.0})}};
    CHECK(linum::pytree::repr(optim::prodigy().init(p)) ==
          "ProdigyState(exp_avg={'b': Array([0.], dtype=float32)}, exp_avg_sq={'b': "
          "Array([0.], dtype=float32)}, grad_sum={'b': Array([0.], dtype=float32)}, "
          "params0={'b': Array([1.], dtype=float32)}, estim_lr=Array(1.e-06, dtype=float32), "
          "numerator_weighted=Array(0., dtype=float32), count=Array(0, dtype=int32))");
    CHECK(linum::pytree::repr(optim::dadapt_adamw().init(p)) ==
          "DAdaptAdamWState(exp_avg={'b': Array([0.], dtype=float32)}, exp_avg_sq={'b': "
          "Array([0.], dtype=float32)}, grad_sum={'b': Array([0.], dtype=float32)}, "
          "estim_lr=Array(1.e-06, dtype=float32), numerator_weighted=Array(0., dtype=float32), "
          "count=Array(0, dtype=int32))");
    CHECK(linum::pytree::repr(optim::scale_by_dog({"distance", 0.5}).init(p)) ==
          "DoGState(is_init_step=Array(True, dtype=bool), init_params={'b': Array([1.], "
          "dtype=float32)}, max_dist=Array(0.5, dtype=float32), sum_sq_norm_grads=Array(0., "
          "dtype=float32))");
    CHECK(linum::pytree::repr(optim::scale_by_dowg().init(p)) ==
          "DoWGState(init_params={'b': Array([1.], dtype=float32)}, "
          "weighted_sq_norm_grads=Array(0., dtype=float32), estim_sq_dist=Array(1.e-04, "
          "dtype=float32))");
    CHECK(linum::pytree::repr(optim::scale_by_cocob().init(p)) ==
          "COCOBState(init_particles={'b': Array([1.], dtype=float32)}, "
          "cumulative_gradients={'b': Array([0.], dtype=float32)}, scale={'b': Array([1.e-08], "
          "dtype=float32)}, subgradients={'b': Array([0.], dtype=float32)}, reward={'b': "
          "Array([0.], dtype=float32)})");
    CHECK(linum::pytree::repr(optim::mechanize(optim::sgd(0.1), 1e-2, 1e-8, 0.5, 2).init(p)) ==
          "MechanicState(base_optimizer_state=(EmptyState(), EmptyState()), count=Array(0, "
          "dtype=int32), r=Array([0., 0.], dtype=float32), m=Array([0., 0.], dtype=float32), "
          "v=Array([0., 0.], dtype=float32), s=Array([0.5, 0.5], dtype=float32), x0={'b': "
          "Array([1.], dtype=float32)})");
    // The chains: dog / dowg without weight decay start with identity's EmptyState, cocob with
    // add_decayed_weights' and scale's.
    static_assert(std::is_same_v<std::tuple_element_t<1, decltype(optim::dog().init(p))>,
                                 optim::DoGState<Params>>);
    static_assert(std::is_same_v<std::tuple_element_t<0, decltype(optim::dowg().init(p))>,
                                 optim::EmptyState>);
    static_assert(std::is_same_v<std::tuple_element_t<2, decltype(optim::cocob().init(p))>,
                                 optim::COCOBState<Params>>);
  }
}

}  // namespace test_contrib_learning_rate_free
