// optax's SGD-like optimizers beyond sgd (alias_sgd.hpp): each against a trajectory of
// tests/optim/reference_optax.py (an independent NumPy implementation of optax 0.2.8, which
// also asserts it reproduces optax's docstring output), the docstring values in float32,
// polyak_sgd's extra argument and noisy_sgd's noise stream.
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include "trajectory.hpp"

namespace test_alias_sgd {

namespace optim = linum::optim;
using namespace optim_test;
using linum::Array;

TEST_SUITE("optim sgd-like optimizers: trajectories of the NumPy reference (float64)") {
  TEST_CASE("sign_sgd: sign_sgd(0.1)") {
    check_reference(optim::sign_sgd(0.1),
                    {{0.40000000000000002, -1.3999999999999999, 1.8999999999999999, 0.90000000000000002, -1.8999999999999999, 0.40000000000000002, 0.14999999999999999, 2.8999999999999999, -0.90000000000000002},
     {0.30000000000000004, -1.2999999999999998, 1.7999999999999998, 0.80000000000000004, -1.7999999999999998, 0.30000000000000004, 0.049999999999999989, 2.7999999999999998, -0.80000000000000004},
     {0.20000000000000004, -1.1999999999999997, 1.6999999999999997, 0.70000000000000007, -1.6999999999999997, 0.20000000000000004, -0.050000000000000017, 2.6999999999999997, -0.70000000000000007}});
  }

  TEST_CASE("signum: signum(0.1)") {
    check_reference(optim::signum(0.1),
                    {{0.40000000000000002, -1.3999999999999999, 1.8999999999999999, 0.90000000000000002, -1.8999999999999999, 0.40000000000000002, 0.14999999999999999, 2.8999999999999999, -0.90000000000000002},
     {0.30000000000000004, -1.2999999999999998, 1.7999999999999998, 0.80000000000000004, -1.7999999999999998, 0.30000000000000004, 0.049999999999999989, 2.7999999999999998, -0.80000000000000004},
     {0.20000000000000004, -1.1999999999999997, 1.6999999999999997, 0.70000000000000007, -1.6999999999999997, 0.20000000000000004, -0.050000000000000017, 2.6999999999999997, -0.70000000000000007}});
  }

  TEST_CASE("fromage: fromage(0.1)") {
    check_reference(optim::fromage(0.1),
                    {{0.46658361456965008, -1.4461533145119672, 1.7425945361372221, 0.94277895404454382, -1.7810414357581965, 0.4191312408568264, 0.24222701803181662, 2.749949507885463, -0.78600424554820725},
     {0.43436650664827009, -1.3926371398105488, 1.5105940609852389, 0.88701739352765441, -1.5791976164647958, 0.34892162700761042, 0.23446258070739059, 2.5128006659857984, -0.61175073087612331},
     {0.40321886592821549, -1.3392496912983547, 1.3014468871931208, 0.83296873626381418, -1.3945842830402699, 0.28860233466230983, 0.22673752640451603, 2.2893671051042528, -0.47175543639135209}});
  }

  TEST_CASE("lars: lars(0.1, 0.01, true, 0.5)") {
    check_reference(optim::lars(0.1, 0.01, true, 0.5),
                    {{0.48438703818461915, -1.4763486816064033, 1.8757146405983547, 0.97360770788531181, -1.8949534511870829, 0.4606728716508855, 0.24666829975779928, 2.8816266502182799, -0.89521476101000053},
     {0.45496228459525417, -1.4314029526022676, 1.6453873637264713, 0.92371379014017818, -1.6991582979653126, 0.38841691047664029, 0.24032552578549848, 2.6594184162611967, -0.70547780605205079},
     {0.41350412691723593, -1.3671599773245504, 1.3303074535239339, 0.85314153281680749, -1.4289792905162191, 0.29122082304357105, 0.23124494228462344, 2.3489488083288137, -0.45688286523370203}});
  }

  TEST_CASE("lars nesterov: lars(0.1, 0.0, true, 0.001, 0.0, true, 0.9, true)") {
    check_reference(optim::lars(0.1, 0.0, true, 0.001, 0.0, true, 0.9, true),
                    {{0.49994093038572279, -1.4999113955785843, 1.9995274430857826, 0.999900214133008, -1.9996008565320322, 0.49985032119951206, 0.249987526766626, 2.9995509635985362, -0.99960085653203212},
     {0.49985668200225275, -1.4997850177692456, 1.9988535118487816, 0.99975789161421325, -1.9990316062882523, 0.49963686729486928, 0.24996973582941104, 2.9989105346691218, -0.99903168595105052},
     {0.49974977609736621, -1.4996246439804286, 1.9979984238689898, 0.99957728957592651, -1.9983093117587392, 0.4993660494521831, 0.24994715879916277, 2.9980978894112438, -0.99830961864495349}});
  }

  TEST_CASE("rprop: rprop(0.1)") {
    check_reference(optim::rprop(0.1),
                    {{0.5, -1.5, 2, 1, -2, 0.5, 0.25, 3, -1},
     {0.40000000000000002, -1.3999999999999999, 1.8999999999999999, 0.90000000000000002, -1.8999999999999999, 0.40000000000000002, 0.14999999999999999, 2.8999999999999999, -0.90000000000000002},
     {0.28000000000000003, -1.2799999999999998, 1.7799999999999998, 0.78000000000000003, -1.7799999999999998, 0.28000000000000003, 0.029999999999999999, 2.7799999999999998, -0.78000000000000003}});
  }

  TEST_CASE("optimistic_gradient_descent: optimistic_gradient_descent(0.1, 0.5, 2.0)") {
    check_reference(optim::optimistic_gradient_descent(0.1, 0.5, 2.0),
                    {{0.47499999999999998, -1.4624999999999999, 1.8, 0.94999999999999996, -1.8, 0.42499999999999999, 0.24374999999999999, 2.7749999999999999, -0.80000000000000004},
     {0.45624999999999999, -1.4296875, 1.7, 0.91249999999999998, -1.7, 0.40625, 0.23828125, 2.6343749999999999, -0.80000000000000004},
     {0.43718750000000001, -1.3972265625, 1.5700000000000001, 0.87437500000000001, -1.5700000000000001, 0.3565625, 0.23287109375000001, 2.478984375, -0.64000000000000012}});
  }

  TEST_CASE("polyak_sgd(): the step min(f / |g|^2, 1), the value passed as an extra argument") {
    check_reference(optim::polyak_sgd(), {{0.37329876863253403, -1.3099481529488011, 0.98639014906027223, 0.74659753726506806, -0.98639014906027223, 0.11989630589760208, 0.21832469215813349, 1.8596889176928062, 0.013609850939727774},
     {0.25464782618178289, -1.1017682767087136, 0.35935287680317773, 0.50929565236356578, -0.35935287680317773, 0.0055711790570345809, 0.18362804611811892, 0.97305121101981051, -0.0036934115010067298},
     {0.15798517588895233, -0.8926562586873954, 0.086536870611539973, 0.31597035177790467, -0.086536870611539973, -0.00077317040375104226, 0.14877604311456591, 0.41900539210510768, 0.0019145679530094724}}, /*with_value=*/true);
  }

  TEST_CASE("polyak_sgd(0.3, 0.5, 1.0, 0.0, \"sps+\"): capped, scaled, f_min = 1") {
    check_reference(optim::polyak_sgd(0.3, 0.5, 1.0, 0.0, "sps+"), {{0.42499999999999999, -1.3875, 1.3999999999999999, 0.84999999999999998, -1.3999999999999999, 0.27500000000000002, 0.23125000000000001, 2.3250000000000002, -0.40000000000000002},
     {0.36124999999999996, -1.2834375, 0.97999999999999998, 0.72249999999999992, -0.97999999999999998, 0.15125000000000002, 0.21390625000000002, 1.8018750000000001, -0.16000000000000003},
     {0.30706249999999996, -1.1871796875, 0.68599999999999994, 0.61412499999999992, -0.68599999999999994, 0.083187500000000011, 0.19786328125000002, 1.3964531250000001, -0.064000000000000015}}, /*with_value=*/true);
  }
}

TEST_SUITE("optim sgd-like optimizers: optax's docstring examples (float32)") {
  TEST_CASE("the objective values printed by optax's docstrings") {
    using S = std::vector<std::string>;
    CHECK(docstring_run(optim::fromage(0.003)) ==
          S{"1.39E+01", "1.38E+01", "1.37E+01", "1.37E+01", "1.36E+01"});
    CHECK(docstring_run(optim::lars(0.003)) ==
          S{"1.40E+01", "1.40E+01", "1.40E+01", "1.40E+01", "1.40E+01"});
    CHECK(docstring_run(optim::sign_sgd(0.003)) ==
          S{"1.40E+01", "1.39E+01", "1.39E+01", "1.39E+01", "1.38E+01"});
    CHECK(docstring_run(optim::optimistic_gradient_descent(0.003)) ==
          S{"1.38E+01", "1.37E+01", "1.35E+01", "1.33E+01", "1.32E+01"});
    CHECK(docstring_run(optim::rprop(0.003)) ==
          S{"1.40E+01", "1.40E+01", "1.39E+01", "1.39E+01", "1.38E+01"});
    CHECK(docstring_run(optim::noisy_sgd(0.003, 0.01, 0.55, 0)) ==
          S{"1.38E+01", "1.37E+01", "1.35E+01", "1.33E+01", "1.32E+01"});
  }

  TEST_CASE("polyak_sgd's docstring: f(updates) 3.5, 0.875, 0.21875, 0.0546875, 0.013671875") {
    // optax's example (sic) takes the updates as the next params; the Polyak step with
    // f_min = 0 halves x each time, so f falls by 4 exactly.
    auto solver = optim::polyak_sgd();
    Array x = f32({1.0, 2.0, 3.0});
    auto s = solver.init(x);
    auto f = [](const Array& y) { return linum::sum(y * y); };
    for (double want : {3.5, 0.875, 0.21875, 0.0546875, 0.013671875}) {
      auto [value, g] = linum::value_and_grad(f)(x);
      auto [u, next] = solver.update(g, s, x, optim::ExtraArgs<Array>{value});
      s = next;
      x = u;
      CHECK(f(x).item<double>() == want);
    }
  }
}

TEST_SUITE("optim sgd-like optimizers: noise, states and errors") {
  TEST_CASE("noisy_sgd adds sqrt(eta / t**gamma) N(0, 1) noise drawn as optax draws it") {
    // optax.add_noise: (rng_key, sample_key) = split(state.rng_key); one key per leaf from
    // split(sample_key, num_leaves); normal(key, leaf.shape, leaf.dtype).
    const double eta = 0.5, gamma = 0.55;
    auto tx = optim::noisy_sgd(1.0, eta, gamma, 7);
    Params p = p0();
    auto s = tx.init(p);
    Array key = linum::random::key(7);
    for (int t = 1; t <= 2; ++t) {
      Params g = p;  // any updates: the noise does not depend on them
      auto [u, next] = tx.update(g, s, p);
      s = next;
      Array keys = linum::random::split(key);
      key = linum::lax_slice(keys, {0, 0}, {1, 2}).reshape({2});
      Array sample = linum::lax_slice(keys, {1, 0}, {2, 2}).reshape({2});
      Array leaf_keys = linum::random::split(sample, 2);  // leaves b, w in key order
      const double sd = std::sqrt(eta / std::pow(t, gamma));
      int i = 0;
      for (const char* name : {"b", "w"}) {
        Array k = linum::lax_slice(leaf_keys, {i, 0}, {i + 1, 2}).reshape({2});
        Array n = linum::random::normal(k, p.at(name).shape(), linum::float64);
        INFO("step " << t << " leaf " << name);
        check_close(u.at(name), values(-(g.at(name) + sd * n)), 1e-12, 1e-12);
        ++i;
      }
      CHECK(std::get<0>(s).count.item<int>() == t);
      CHECK(values(std::get<0>(s).rng_key) == values(key));
    }
  }

  TEST_CASE("state layouts: lars masks, fromage, signum's ema, rprop, optimistic") {
    Params p = p0();
    auto l = optim::lars(0.1).init(p);
    static_assert(std::is_same_v<std::tuple_element_t<0, decltype(l)>,
                                 optim::MaskedState<optim::EmptyState>>);
    static_assert(std::is_same_v<std::tuple_element_t<3, decltype(l)>, optim::TraceState<Params>>);
    auto sg = optim::signum(0.1).init(p);
    static_assert(std::is_same_v<std::tuple_element_t<0, decltype(sg)>, optim::EmaState<Params>>);
    auto r = std::get<0>(optim::rprop(0.25).init(p));
    check_close(r.step_sizes.at("b"), {0.25, 0.25, 0.25});
    auto og = std::get<0>(optim::optimistic_gradient_descent(0.1).init(p));
    CHECK(og.is_initial_step.item<bool>());
    auto ps = optim::polyak_sgd().init(p);
    static_assert(std::tuple_size_v<std::tuple_element_t<0, decltype(ps)>> == 2);  // sgd's chain
  }

  TEST_CASE("lars with a partial trust-ratio mask leaves the other leaves unscaled") {
    std::map<std::string, bool> mask{{"b", false}, {"w", true}};
    auto masked = optim::lars(0.1, 0.0, true, 0.5, 0.0, mask, 0.0);
    auto plain = optim::sgd(0.1);
    Params p = p0(), g = p0();
    auto [u, s] = masked.update(g, masked.init(p), p);
    auto [v, t] = plain.update(g, plain.init(p), p);
    check_close(u.at("b"), values(v.at("b")));      // no trust ratio on b
    CHECK(values(u.at("w")) != values(v.at("w")));  // 0.5 * |w| / |g_w| = 0.5 on w
    check_close(u.at("w"), values(0.5 * v.at("w")), 1e-14);
  }

  TEST_CASE("polyak_sgd needs the value; an unknown variant is a ValueError") {
    auto tx = optim::polyak_sgd();
    Params p = p0();
    auto s = tx.init(p);
    linum::testing::check_error<linum::ValueError>([&] { tx.update(p, s, p); },
                                                   {"scale_by_polyak", "value"});
    linum::testing::check_error<linum::ValueError>([] { optim::polyak_sgd(1, 1, 0, 0, "sps2"); },
                                                   {"Polyak", "sps2"});
    // A zero gradient takes no step (the float64 epsilon test).
    Params z = linum::optim::tree_utils::tree_zeros_like(p);
    auto [u, s2] = tx.update(z, s, p, optim::ExtraArgs<Params>{Array(1.0)});
    check_close(u.at("w"), Vec(6, 0.0));
  }
}

}  // namespace test_alias_sgd
