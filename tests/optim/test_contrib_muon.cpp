// optax.contrib's Muon (contrib_muon.hpp): trajectories of tests/optim/reference_optax_contrib.py
// (an independent NumPy implementation of optax 0.2.8's muon; run it with /usr/bin/python3 to
// reprint these values) on the trajectory problem, whose 2-D leaf w goes through Muon and 1-D
// leaf b through AdamW; the orthogonalized update's singular values; the batched dimension
// numbers against a loop over the batch; the state layout and the errors.
#include <string>
#include <type_traits>
#include <vector>

#include "trajectory.hpp"

namespace test_contrib_muon {

namespace optim = linum::optim;
using namespace optim_test;
using linum::Array;

TEST_SUITE("optim contrib muon: trajectories of the NumPy reference (float64)") {
  TEST_CASE("muon: muon(0.1)") {
    check_reference(optim::muon<Params>(0.1),
                    {{0.35263158189473676, -1.3526315809122806, 1.8526315793157895,
                      0.95739284266843239, -1.9280995901623357, 0.51860664782435617,
                      0.22703187964501831, 2.9613734231295075, -0.92515921921424638},
                     {0.24811198483929064, -1.2399382830846326, 1.7391214748022332,
                      0.90273261861708765, -1.8512894677702443, 0.54680000706069232,
                      0.19505170892083551, 2.9264788583688643, -0.84437238288748606},
                     {0.15744563133300143, -1.1362586712449412, 1.6342841859346382,
                      0.83310408821411286, -1.7700209017145925, 0.58453459143543185,
                      0.15167647294068506, 2.8951465016251112, -0.75736390563476519}},
                    false, 1e-10);
  }

  TEST_CASE("muon dion wd: muon(0.05, \"dion\", 5, 0.9, 1e-8, 0.1), adam_learning_rate 0.01") {
    optim::MuonOptions o;
    o.adam_learning_rate = 0.01;
    check_reference(
        optim::muon<Params>(0.05, "dion", 5, 0.9, 1e-8, 0.1, optim::NoMask{}, std::nullopt, o),
        {{0.48526315818947369, -1.4852631580912281, 1.9852631579315789, 0.96467610521481406,
          -1.9402439328862866, 0.51192849914485916, 0.23214982042240437, 2.9597096314228026,
          -0.94310898409804544},
         {0.47377492628157858, -1.4737177705926601, 1.9737107849272471, 0.92688670680319896,
          -1.8805495619768477, 0.52483290489024448, 0.2123086233324406, 2.9198548808386633,
          -0.88614011473991949},
         {0.46310387548237514, -1.4629714650522414, 1.9629553969174451, 0.88942120608541586,
          -1.8226447193751492, 0.53533642798312664, 0.19250058301345147, 2.8787634946167713,
          -0.83117746724267461}},
        false, 1e-10);
  }

  TEST_CASE("muon aol adaptive: 4 steps of the standard coefficients, no nesterov") {
    check_reference(
        optim::muon<Params>(0.1, {3.4445, -4.7750, 2.0315}, 4, 0.95, 1e-8, 0.0, optim::NoMask{},
                            std::nullopt,
                            {.nesterov = false, .adaptive = true, .preconditioning = "aol"}),
        {{0.40000000199999997, -1.4000000013333334, 1.9000000002499999, 0.35698510074900802,
          -0.89786097485863681, 0.76653613005844412, -0.14906602191298207, 2.520458023933291,
          0.1398885454948855},
         {0.30118742373064028, -1.3002390643206105, 1.8001664861157012, -0.08550484785239304,
          -0.57486549320510161, 0.14718030241207714, -0.44121520276638004, 1.7270297142235804,
          0.14199672284142353},
         {0.20487125573945103, -1.2009028735999021, 1.7006233920464653, -0.27425695169370801,
          -0.27442929927829873, -0.34774284451678017, -0.53050537355515681, 1.0929794699368058,
          0.067025193698190808}},
        false, 1e-10);
  }

  TEST_CASE("muon schatten rms: schatten preconditioning, consistent_rms 0.2") {
    check_reference(
        optim::muon<Params>(0.1, "standard", 5, 0.95, 1e-8, 0.0, optim::NoMask{}, std::nullopt,
                            {.preconditioning = "schatten", .consistent_rms = 0.2}),
        {{0.35263158189473676, -1.3526315809122806, 1.8526315793157895, 0.98801829745448499,
          -1.9801640672656056, 0.50555355604414742, 0.24347240231945377, 2.9897335030816596,
          -0.97932575312187953},
         {0.24811198483929064, -1.2399382830846326, 1.7391214748022332, 0.97581658327254028,
          -1.9603917032418166, 0.51106240348631904, 0.23676189003899376, 2.9793972452082205,
          -0.95871941572977315},
         {0.15744563133300143, -1.1362586712449412, 1.6342841859346382, 0.96312647920238859,
          -1.9404677276082636, 0.51686937967706337, 0.22968053110398423, 2.9691473459687203,
          -0.93793247286918391}},
        false, 1e-10);
  }

  TEST_CASE("muon spectral: spectral-norm preconditioning") {
    check_reference(optim::muon<Params>(0.1, "standard", 5, 0.95, 1e-8, 0.0, optim::NoMask{},
                                        std::nullopt, {.preconditioning = "spectral"}),
                    {{0.35263158189473676, -1.3526315809122806, 1.8526315793157895,
                      0.95763061305768837, -1.9298927143634155, 0.51966851412263693,
                      0.22691082681578673, 2.9637518624296191, -0.92692721439401138},
                     {0.24811198483929064, -1.2399382830846326, 1.7391214748022332,
                      0.90629931657472496, -1.8566523672062896, 0.54531204659273835,
                      0.19706866016602587, 2.9294139487893642, -0.85002649806325292},
                     {0.15744563133300143, -1.1362586712449412, 1.6342841859346382,
                      0.83875100697274296, -1.7774074280378911, 0.58232154993110585,
                      0.15503877469775151, 2.899184663753267, -0.76520188073096029}},
                    false, 1e-10);
  }
}

TEST_SUITE("optim contrib muon: orthogonalization, layout, errors") {
  TEST_CASE("scale_by_muon's update has near-unit singular values") {
    // A fixed 4 x 6 gradient: at the first step without Nesterov mu_hat is g itself, so the
    // update is Newton-Schulz of g (reference_optax_contrib.py prints it and its singular values).
    Array g = linum::array({{0.3, -1.2, 0.5, 2.0, -0.7, 0.1},
                            {1.1, 0.4, -0.9, 0.2, 0.6, -1.5},
                            {-0.8, 0.9, 1.3, -0.4, 0.05, 0.7},
                            {0.2, -0.3, 0.8, 1.6, -1.1, 0.9}});
    auto tx = optim::scale_by_muon({3.4445, -4.7750, 2.0315}, 5, 0.95, 1e-8, std::nullopt, false);
    auto [u, s] = tx.update(g, tx.init(g));
    check_close(
        u, {-0.06546901594333826,  -0.4986906523077288,  0.31947801593267211,  0.63275568604896315,
            -0.051361481502249506, -0.09526440152614013, 0.38607492234294316,  0.35872375434227011,
            -0.11997872032812404,  0.12590430959750143,  0.21019095084371159,  -0.50431107135017506,
            -0.21298126810502749,  0.38116418832232224,  0.57242166050885768,  0.014728675638323224,
            0.14228896131330371,   0.017451146337256099, 0.24125840808181542,  0.14437270461896867,
            0.14999827918409869,   0.50472203446772912,  -0.50265240077955076, 0.39834405252102822},
        1e-10, 1e-12);
    // The singular values of g span a factor of ~3; the update's lie in [0.68, 1.2] (the
    // quintic's fixed band, "S' ~ Uniform(0.5, 1.5)" in optax's docstring).
    const double smax = linum::linalg::norm(u, 2.0).item<double>(),
                 smin = linum::linalg::norm(u, -2.0).item<double>();
    CHECK(smax < 1.2);
    CHECK(smin > 0.68);
    CHECK(linum::linalg::norm(g, 2.0).item<double>() / linum::linalg::norm(g, -2.0).item<double>() >
          2.0);
  }

  TEST_CASE("dimension numbers: batch axes are orthogonalized independently (one batched op)") {
    // A (3, 2, 4) weight whose axis 0 is a batch axis, rows axis 2 and columns axis 1: equal to
    // orthogonalizing each x[b].T and transposing back.
    Array x = linum::reshape(linum::astype(linum::arange(24), linum::float64), {3, 2, 4});
    x = linum::sin(x * 1.7) + 0.1;
    Array c = linum::array({3.4445, -4.7750, 2.0315});
    optim::MuonDimensionNumbers dims{{2}, {1}};
    Array o = optim::orthogonalize_via_newton_schulz(x, c, 5, "frobenius", 1e-8, dims);
    CHECK(o.shape() == linum::Shape{3, 2, 4});
    for (int b = 0; b < 3; ++b) {
      Array one = linum::linalg::matrix_transpose(optim::orthogonalize_via_newton_schulz(
          linum::linalg::matrix_transpose(x[b]), c, 5, "frobenius", 1e-8));
      check_close(o[b], values(one), 1e-12, 1e-13);
    }
    // Through scale_by_muon with the dimension numbers for that leaf.
    auto tx =
        optim::scale_by_muon({3.4445, -4.7750, 2.0315}, 5, 0.95, 1e-8, std::nullopt, false, false,
                             "frobenius", [dims](const linum::pytree::KeyPath&, const Array&) {
                               return std::optional<optim::MuonDimensionNumbers>(dims);
                             });
    check_close(tx.update(x, tx.init(x)).first, values(o), 1e-12, 1e-13);
  }

  TEST_CASE("MuonState and muon's PartitionState layout") {
    Params p = p0();
    auto s = optim::scale_by_muon().init(Params{{"w", p.at("w")}});
    static_assert(std::is_same_v<decltype(s), optim::MuonState<Params>>);
    CHECK(s.count.dtype() == linum::int32);
    check_close(s.ns_coeffs, {3.4445, -4.7750, 2.0315});
    CHECK(optim::scale_by_muon("dion").init(p0()).ns_coeffs.shape() == linum::Shape{5, 3});
    // muon: {'adam': MaskedState(adamw's states), 'muon': MaskedState(muon chain's states)};
    // w is the muon leaf, b (1-D) the adam one.
    auto ms = optim::muon<Params>(0.1).init(p);
    static_assert(std::is_same_v<
                  decltype(ms),
                  optim::PartitionState<std::map<std::string, optim::MaskedState<linum::Tree>>>>);
    const linum::Tree& mu = ms.inner_states.at("muon").inner_state;
    CHECK(mu[0]["mu"]["w"].leaf().shape() == linum::Shape{2, 3});
    CHECK(!mu[0]["mu"]["b"].leaf().valid());
    CHECK(mu[0]["ns_coeffs"].leaf().shape() == linum::Shape{3});
    const linum::Tree& ad = ms.inner_states.at("adam").inner_state;
    CHECK(ad[0]["nu"]["b"].leaf().shape() == linum::Shape{3});
    CHECK(!ad[0]["nu"]["w"].leaf().valid());
  }

  TEST_CASE("muon: errors name the function and what was expected") {
    linum::testing::check_error<linum::ValueError>(
        [] {
          optim::scale_by_muon({3.4445, -4.7750, 2.0315}, 5, 0.95, 1e-8, std::nullopt, true, false,
                               "qr");
        },
        {"scale_by_muon", "Unknown preconditioning 'qr'"});
    linum::testing::check_error<linum::ValueError>([] { optim::muon<Params>(0.1, "muon"); },
                                                   {"Unknown ns_coeff preset string: 'muon'"});
    // Five per-step triples with three steps: optax refuses the coefficients.
    linum::testing::check_error<linum::ValueError>([] { optim::scale_by_muon("dion", 3); },
                                                   {"scale_by_muon", "ns_steps=3"});
    // A 1-D leaf without dimension numbers cannot be orthogonalized.
    auto tx = optim::scale_by_muon();
    Array v = f64({1.0, 2.0});
    linum::testing::check_error<linum::ValueError>(
        [&] { tx.update(v, tx.init(v)); },
        {"orthogonalize_via_newton_schulz", "must have shape (m, n)"});
  }
}

}  // namespace test_contrib_muon
