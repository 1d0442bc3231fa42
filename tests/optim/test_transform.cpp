// optim transformations: optax's base cases (its update_test.py, transform_test.py, numerics.py),
// every transformation against hand-computed values, masked / multi_transform / MultiSteps, and
// the errors users meet.
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>

#include "helpers.hpp"
#include "../autodiff/check_grads.hpp"

namespace test_transform {

namespace optim = linum::optim;
using namespace optim_test;
using linum::Array;
using linum::Tree;
using Params = std::map<std::string, Array>;

TEST_SUITE("optim base") {
  TEST_CASE("safe_increment saturates at the int32 maximum") {
    CHECK(optim::safe_increment(Array(1)).item<int>() == 2);
    Array top = linum::full({}, 2147483647.0, linum::int32);
    Array next = optim::safe_increment(top);
    CHECK(next.dtype() == linum::int32);
    CHECK(next.item<std::int64_t>() == 2147483647);
    CHECK(optim::safe_increment(Array(2.5)).item<double>() == 3.5);
    CHECK_THROWS_AS(optim::safe_increment(Array(true)), linum::TypeError);
  }

  TEST_CASE("apply_updates adds leafwise over nested containers") {
    using P = std::tuple<Params, Array>;
    P params{{{"a", linum::ones({3, 2})}}, linum::ones({1})};
    P grads = linum::detail::tree_apply_skip_empty(params, [](const Array& p) { return 2.0 * p; });
    P out = optim::apply_updates(params, grads);
    check_close(std::get<0>(out).at("a"), Vec(6, 3.0));
    check_close(std::get<1>(out), {3.0});
  }

  TEST_CASE("apply_updates / incremental_update leave None parameters None, as optax") {
    // optax maps with is_leaf=lambda x: x is None and returns None where the parameter (the new
    // tensor) is None, whatever the update (the old tensor) holds there.
    Tree params{{"w", f64({1.0, 2.0})}, {"b", Tree()}};
    Tree none_updates{{"w", f64({0.5, 0.5})}, {"b", Tree()}};
    Tree array_updates{{"w", f64({0.5, 0.5})}, {"b", f64({7.0})}};
    for (const Tree& u : {none_updates, array_updates}) {
      Tree out = optim::apply_updates(params, u);
      CHECK(out["b"].is_none());
      check_close(out["w"].leaf(), {1.5, 2.5});
    }
    using Opt = std::map<std::string, std::optional<Array>>;
    Opt p{{"w", f64({1.0})}, {"b", std::nullopt}};
    Opt u{{"w", f64({1.0})}, {"b", f64({3.0})}};
    Opt out = optim::apply_updates(p, u);
    CHECK_FALSE(out.at("b").has_value());
    check_close(*out.at("w"), {2.0});
    // incremental_update: None where the new tensor is None; 0.25 * new + 0.75 * old elsewhere.
    Tree old_tensors{{"w", f64({0.0, 4.0})}, {"b", f64({1.0})}};
    Tree avg = optim::incremental_update(params, old_tensors, 0.25);
    CHECK(avg["b"].is_none());
    check_close(avg["w"].leaf(), {0.25, 3.5});
    Opt avg2 = optim::incremental_update(p, u, 0.5);
    CHECK_FALSE(avg2.at("b").has_value());
    check_close(*avg2.at("w"), {1.0});
  }

  TEST_CASE("apply_updates keeps the parameter dtype") {
    Params params{{"w", f32({1.0, 2.0})}};
    Params updates{{"w", f64({0.25, 0.5})}};
    Params out = optim::apply_updates(params, updates);
    CHECK(out.at("w").dtype() == linum::float32);
    check_close(out.at("w"), {1.25, 2.5});
  }

  TEST_CASE("incremental_update is a convex combination") {
    Params p1{{"x", f64({1.0, -2.0})}};
    Params p2{{"x", f64({2.0, -4.0})}};
    check_close(optim::incremental_update(p2, p1, 0.5).at("x"), {1.5, -3.0});
  }

  TEST_CASE("periodic_update takes the new value on multiples of the period") {
    Params p1{{"x", f64({1.0})}};
    Params p2{{"x", f64({2.0})}};
    for (int j = 0; j < 3; ++j) {
      for (int i = 1; i <= 4; ++i) {
        CHECK(values(optim::periodic_update(p2, p1, Array(j * 5 + i), 5).at("x")) == Vec{1.0});
      }
      CHECK(values(optim::periodic_update(p2, p1, Array((j + 1) * 5), 5).at("x")) == Vec{2.0});
    }
    CHECK_THROWS_AS(optim::periodic_update(p2, p1, Array(1), 0), linum::ValueError);
  }

  TEST_CASE("identity, stateless and user-written transformations") {
    Params g{{"w", f64({1.0, -2.0})}};
    auto id = optim::identity();
    auto [u0, s0] = id.update(g, id.init(g));
    check_close(u0.at("w"), {1.0, -2.0});
    static_assert(std::is_same_v<decltype(s0), optim::EmptyState>);

    auto neg = optim::stateless_with_tree_map([](const Array& u, const Array&) { return -u; });
    check_close(neg.update(g, neg.init(g)).first.at("w"), {-1.0, 2.0});

    // optax.GradientTransformation(init_fn, update_fn): a counter of calls.
    auto counting = optim::transformation([](const Params&) { return Array(0); },
                                          [](const Params& u, const Array& n, const Params*) {
                                            return std::pair{u, n + 1};
                                          });
    Array n = counting.init(g);
    for (int i = 0; i < 3; ++i) n = counting.update(g, n).second;
    CHECK(n.item<int>() == 3);
  }
}

TEST_SUITE("optim transformations") {
  TEST_CASE("scale and scale_by_learning_rate") {
    Params g{{"w", f32({1.0, -2.0})}};
    auto s = optim::scale(0.5);
    auto [u, st] = s.update(g, s.init(g));
    CHECK(u.at("w").dtype() == linum::float32);  // a weak scalar keeps float32
    check_close(u.at("w"), {0.5, -1.0});
    check_close(optim::scale_by_learning_rate(0.1).update(g, optim::EmptyState{}).first.at("w"),
                {f32v(-0.1), f32v(0.2)}, 1e-7);
    check_close(
        optim::scale_by_learning_rate(0.1, false).update(g, optim::EmptyState{}).first.at("w"),
        {f32v(0.1), f32v(-0.2)}, 1e-7);
  }

  TEST_CASE("scale_by_schedule reads the schedule at the count before the step") {
    Params g{{"w", f64({1.0, 2.0})}};
    auto tx = optim::scale_by_schedule([](std::int64_t t) { return 1.0 / (t + 1); });
    auto st = tx.init(g);
    CHECK(st.count.dtype() == linum::int32);
    CHECK(st.count.item<int>() == 0);
    for (int t = 0; t < 3; ++t) {
      auto [u, next] = tx.update(g, st);
      check_close(u.at("w"), {1.0 / (t + 1), 2.0 / (t + 1)});
      CHECK(next.count.item<int>() == t + 1);
      st = next;
    }
  }

  TEST_CASE("trace: momentum and Nesterov by hand") {
    Params g1{{"w", f64({1.0, -1.0})}}, g2{{"w", f64({0.5, 2.0})}};
    auto plain = optim::trace(0.9);
    auto [u1, s1] = plain.update(g1, plain.init(g1));
    check_close(u1.at("w"), {1.0, -1.0});
    auto [u2, s2] = plain.update(g2, s1);
    check_close(u2.at("w"), {0.5 + 0.9 * 1.0, 2.0 - 0.9});  // g + 0.9 * trace
    check_close(s2.trace.at("w"), {1.4, 1.1});

    auto nest = optim::trace(0.9, true);
    auto [v1, t1] = nest.update(g1, nest.init(g1));
    check_close(v1.at("w"), {1.0 + 0.9 * 1.0, -1.0 - 0.9});  // g + 0.9 * new_trace
    auto [v2, t2] = nest.update(g2, t1);
    const double tr0 = 0.5 + 0.9 * 1.0, tr1 = 2.0 - 0.9;
    check_close(v2.at("w"), {0.5 + 0.9 * tr0, 2.0 + 0.9 * tr1});
    check_close(t2.trace.at("w"), {tr0, tr1});
  }

  TEST_CASE("scale_by_adam: the first two steps by hand, eps outside and eps_root inside") {
    const double b1 = 0.9, b2 = 0.999, eps = 1e-3, eps_root = 1e-2;
    Params g1{{"w", f64({0.5, -2.0})}}, g2{{"w", f64({1.5, 1.0})}};
    auto tx = optim::scale_by_adam(b1, b2, eps, eps_root);
    auto s0 = tx.init(g1);
    CHECK(s0.count.item<int>() == 0);
    check_close(s0.mu.at("w"), {0.0, 0.0});
    auto [u1, s1] = tx.update(g1, s0);
    auto [u2, s2] = tx.update(g2, s1);
    Vec want1, want2;
    for (int i = 0; i < 2; ++i) {
      const double a = values(g1.at("w"))[i], b = values(g2.at("w"))[i];
      double m = (1 - b1) * a, v = (1 - b2) * a * a;
      want1.push_back(m / (1 - b1) / (std::sqrt(v / (1 - b2) + eps_root) + eps));
      m = (1 - b1) * b + b1 * m, v = (1 - b2) * b * b + b2 * v;
      want2.push_back(m / (1 - b1 * b1) / (std::sqrt(v / (1 - b2 * b2) + eps_root) + eps));
    }
    check_close(u1.at("w"), want1);
    check_close(u2.at("w"), want2);
    CHECK(s2.count.item<int>() == 2);
    check_close(s2.mu.at("w"),
                {(1 - b1) * 1.5 + b1 * (1 - b1) * 0.5, (1 - b1) * 1.0 + b1 * (1 - b1) * -2.0});
  }

  TEST_CASE("scale_by_rms with bias correction and eps outside equals scale_by_adam(b1=0)") {
    auto rms = optim::chain(optim::scale_by_rms<true>(0.999, 1e-8, 0.0, false), optim::scale(-0.1));
    auto adam = optim::chain(optim::scale_by_adam(0.0, 0.999), optim::scale(-0.1));
    Array x = f64({1.0, -2.0, 3.0});
    Array y = x;
    auto sr = rms.init(x);
    auto sa = adam.init(y);
    static_assert(std::is_same_v<std::tuple_element_t<0, decltype(sr)>,
                                 optim::ScaleByRmsWithCountState<Array>>);
    auto grad = linum::grad([](const Array& p) { return linum::sum(p * p); });  // norm(x)**2
    for (int i = 0; i < 5; ++i) {
      auto [ur, nr] = rms.update(grad(x), sr);
      auto [ua, na] = adam.update(grad(y), sa);
      x = optim::apply_updates(x, ur), sr = nr;
      y = optim::apply_updates(y, ua), sa = na;
      check_close(x, values(y), 1e-14, 1e-15);
    }
  }

  TEST_CASE("scale_by_rms and scale_by_stddev by hand") {
    Params g{{"w", f64({2.0, -1.0})}};
    auto rms = optim::scale_by_rms(0.9, 1e-8, 1.0);  // initial_scale 1 (TF1)
    auto [u, s] = rms.update(g, rms.init(g));
    static_assert(std::is_same_v<decltype(s), optim::ScaleByRmsState<Params>>);
    const double v0 = 0.1 * 4 + 0.9, v1 = 0.1 * 1 + 0.9;
    check_close(u.at("w"), {2.0 / std::sqrt(v0 + 1e-8), -1.0 / std::sqrt(v1 + 1e-8)});
    check_close(s.nu.at("w"), {v0, v1});

    auto sd = optim::scale_by_stddev(0.9, 1e-8, 0.0, false);
    auto [w, t] = sd.update(g, sd.init(g));
    // mu = 0.1 g, nu = 0.1 g^2, var = 0.1 g^2 - 0.01 g^2 = 0.09 g^2.
    check_close(w.at("w"), {2.0 / (std::sqrt(0.09 * 4) + 1e-8), -1.0 / (std::sqrt(0.09) + 1e-8)});
    check_close(t.mu.at("w"), {0.2, -0.1});
  }

  TEST_CASE("scale_by_rss (Adagrad) and scale_by_lion by hand") {
    Params g{{"w", f64({2.0, 0.0})}};
    auto rss = optim::scale_by_rss(0.0, 1e-7);
    auto [u, s] = rss.update(g, rss.init(g));
    check_close(u.at("w"), {2.0 / std::sqrt(4.0 + 1e-7), 0.0});  // 0 where the sum is 0
    check_close(s.sum_of_squares.at("w"), {4.0, 0.0});

    Params g2{{"w", f64({-1.0, 3.0})}};
    auto lion = optim::scale_by_lion(0.9, 0.99);
    auto [l1, m1] = lion.update(g2, lion.init(g2));
    check_close(l1.at("w"), {-1.0, 1.0});
    check_close(m1.mu.at("w"), {-0.01, 0.03});
    Params g3{{"w", f64({0.05, -0.2})}};
    auto [l2, m2] = lion.update(g3, m1);
    // sign(0.1 * 0.05 + 0.9 * -0.01) = sign(-0.004); sign(0.1 * -0.2 + 0.9 * 0.03) = sign(0.007).
    check_close(l2.at("w"), {-1.0, 1.0});
    CHECK(m2.count.item<int>() == 2);
  }

  TEST_CASE("clip, clip_by_global_norm and global_norm") {
    Params g{{"a", f64({3.0, -4.0})}, {"b", f64({12.0})}};
    CHECK(optim::global_norm(g).item<double>() == doctest::Approx(13.0));
    auto [c, s] = optim::clip(2.5).update(g, optim::EmptyState{});
    check_close(c.at("a"), {2.5, -2.5});
    check_close(c.at("b"), {2.5});
    auto [n, t] = optim::clip_by_global_norm(6.5).update(g, optim::EmptyState{});
    check_close(n.at("a"), {1.5, -2.0});
    check_close(n.at("b"), {6.0});
    auto [m, r] = optim::clip_by_global_norm(20.0).update(g, optim::EmptyState{});
    check_close(m.at("b"), {12.0});
  }

  TEST_CASE("add_decayed_weights, scale_by_trust_ratio: by hand, and they need params") {
    Params g{{"w", f64({1.0, 2.0})}};
    Params p{{"w", f64({3.0, 4.0})}};
    auto wd = optim::add_decayed_weights(0.1);
    check_close(wd.update(g, wd.init(p), p).first.at("w"), {1.3, 2.4});
    const std::string msg = message_of<linum::ValueError>([&] { wd.update(g, wd.init(p)); });
    CHECK(msg.find("add_decayed_weights") != std::string::npos);
    CHECK(msg.find(optim::kNoParamsMsg) != std::string::npos);

    auto tr = optim::scale_by_trust_ratio();
    // |p| = 5, |g| = sqrt(5): g * 5 / sqrt(5).
    check_close(tr.update(g, tr.init(p), p).first.at("w"), {std::sqrt(5.0), 2 * std::sqrt(5.0)});
    Params z{{"w", f64({0.0, 0.0})}};
    check_close(tr.update(g, tr.init(z), z).first.at("w"), {1.0, 2.0});  // ratio 1 at |p| = 0
    CHECK_THROWS_AS(tr.update(g, tr.init(p)), linum::ValueError);
  }

  TEST_CASE("centralize subtracts the mean over the non-leading axes") {
    auto c = optim::centralize();
    check_close(c.update(f64({1.0, 2.0}), optim::EmptyState{}).first, {1.0, 2.0});
    check_close(c.update(linum::array({{1.0, 2.0}, {3.0, 4.0}}), optim::EmptyState{}).first,
                {-0.5, 0.5, -0.5, 0.5});
    Array x3 = linum::reshape(linum::astype(linum::arange(1, 9), linum::float64), {2, 2, 2});
    check_close(c.update(x3, optim::EmptyState{}).first,
                {-1.5, -0.5, 0.5, 1.5, -1.5, -0.5, 0.5, 1.5});
  }

  TEST_CASE("chain threads the updates and keeps a tuple of states") {
    using P = std::tuple<Array, Array>;
    P params{f64({1.0, 2.0}), f64({3.0, 4.0})};
    P per_step{f64({500.0, 5.0}), f64({300.0, 3.0})};
    auto chained = optim::chain(optim::scale_by_adam(), optim::trace(0.0), optim::scale(-1e-2));
    auto state = chained.init(params);
    static_assert(std::tuple_size_v<decltype(state)> == 3);
    static_assert(
        std::is_same_v<std::tuple_element_t<0, decltype(state)>, optim::ScaleByAdamState<P>>);
    static_assert(std::is_same_v<std::tuple_element_t<1, decltype(state)>, optim::TraceState<P>>);
    auto adam = optim::scale_by_adam();
    auto tr = optim::trace(0.0);
    auto sc = optim::scale(-1e-2);
    auto sa = adam.init(params);
    auto st = tr.init(params);
    P manual = params;
    for (int i = 0; i < 50; ++i) {
      auto [u, next] = chained.update(per_step, state);
      state = next;
      params = optim::apply_updates(params, u);
      auto [u1, sa1] = adam.update(per_step, sa);
      auto [u2, st1] = tr.update(u1, st);
      auto [u3, sc1] = sc.update(u2, optim::EmptyState{});
      sa = sa1, st = st1;
      manual = optim::apply_updates(manual, u3);
    }
    check_close(std::get<0>(params), values(std::get<0>(manual)), 1e-4);
    check_close(std::get<1>(params), values(std::get<1>(manual)), 1e-4);
  }

  TEST_CASE("apply_every(4) + trace(0) + scale equals sgd every 4th step, zeros between") {
    using P = std::tuple<Array, Array>;
    const P init{f64({1.0, 2.0}), f64({3.0, 4.0})};
    const P per_step{f64({500.0, 5.0}), f64({300.0, 3.0})};
    const double lr = 1e-2;
    auto sgd = optim::sgd(lr, 0.0);
    auto every = optim::chain(optim::apply_every(4), optim::trace(0.0), optim::scale(-lr));
    P a = init, b = init;
    auto sa = sgd.init(a);
    auto sb = every.init(b);
    for (int i = 0; i < 50; ++i) {
      auto [ua, na] = sgd.update(per_step, sa);
      auto [ub, nb] = every.update(per_step, sb);
      sa = na, sb = nb;
      a = optim::apply_updates(a, ua);
      b = optim::apply_updates(b, ub);
      if (i % 4 == 3) {
        check_close(std::get<0>(b), values(std::get<0>(a)), 1e-5, 1e-6);
        check_close(std::get<1>(b), values(std::get<1>(a)), 1e-5, 1e-6);
      } else {
        CHECK(values(std::get<0>(ub)) == Vec{0.0, 0.0});
        CHECK(values(std::get<1>(ub)) == Vec{0.0, 0.0});
      }
    }
    CHECK(std::get<0>(sb).count.item<int>() == 50 % 4);
    CHECK_THROWS_AS(optim::apply_every(0), linum::ValueError);
  }
}

TEST_SUITE("optim masked, multi_transform, MultiSteps") {
  TEST_CASE("masked: only the masked leaves are transformed; the others pass through") {
    Params g{{"bias", f64({1.0, 2.0})}, {"kernel", f64({3.0})}};
    std::map<std::string, bool> mask{{"bias", false}, {"kernel", true}};
    auto tx = optim::masked(optim::trace(0.5), mask);
    auto s0 = tx.init(g);
    static_assert(std::is_same_v<decltype(s0), optim::MaskedState<optim::TraceState<Params>>>);
    CHECK_FALSE(s0.inner_state.trace.at("bias").valid());  // optax's MaskedNode
    CHECK(s0.inner_state.trace.at("kernel").valid());
    auto [u1, s1] = tx.update(g, s0);
    auto [u2, s2] = tx.update(g, s1);
    check_close(u2.at("bias"), {1.0, 2.0});
    check_close(u2.at("kernel"), {3.0 + 0.5 * 3.0});

    // A mask given as a function of the params.
    auto decay = optim::add_decayed_weights(0.1, [](const Params& p) {
      Params m = p;
      for (auto& [k, v] : m) v = Array(k == "kernel");
      return m;
    });
    Params p{{"bias", f64({10.0, 10.0})}, {"kernel", f64({10.0})}};
    auto [d, ds] = decay.update(g, decay.init(p), p);
    check_close(d.at("bias"), {1.0, 2.0});
    check_close(d.at("kernel"), {4.0});
  }

  TEST_CASE("multi_transform: each label gets its own optimizer, state per label") {
    Params params{{"bias", f64({1.0, -1.0})}, {"kernel", f64({2.0, 0.5})}};
    Params grads{{"bias", f64({0.5, 0.25})}, {"kernel", f64({-1.0, 2.0})}};
    auto label = [](const linum::pytree::KeyPath& path, const Array&) {
      return linum::keystr(path, true, "/") == "kernel" ? "adam" : "sgd";
    };
    auto tx = optim::multi_transform<Params>({{"adam", optim::adam(0.1)}, {"sgd", optim::sgd(0.5)}},
                                             label);
    auto state = tx.init(params);
    CHECK(state.inner_states.size() == 2);
    auto adam = optim::adam(0.1);
    auto sa = adam.init(params.at("kernel"));
    Params p = params;
    Array k = params.at("kernel");
    Vec bias = values(params.at("bias"));
    for (int i = 0; i < 3; ++i) {
      auto [u, next] = tx.update(grads, state, p);
      state = next;
      p = optim::apply_updates(p, u);
      auto [uk, nsa] = adam.update(grads.at("kernel"), sa);
      sa = nsa;
      k = optim::apply_updates(k, uk);
      bias[0] -= 0.5 * 0.5, bias[1] -= 0.5 * 0.25;
    }
    check_close(p.at("kernel"), values(k));
    check_close(p.at("bias"), bias);

    auto bad = optim::multi_transform<Params>({{"adam", optim::adam(0.1)}}, label);
    const std::string msg = message_of<linum::ValueError>([&] { bad.init(params); });
    CHECK(msg ==
          "Some parameters have no corresponding transformation.\nParameter labels: "
          "['adam', 'sgd'] \nTransforms keys: ['adam'] \n");
  }

  TEST_CASE("MultiSteps: accumulate the mean of k mini-steps, then one inner step") {
    Params g1{{"w", f64({1.0, 2.0})}}, g2{{"w", f64({3.0, 0.0})}}, g3{{"w", f64({2.0, 1.0})}};
    optim::MultiSteps ms(optim::sgd(0.1, 0.9), 3);
    auto s = ms.init(g1);
    CHECK(s.mini_step.item<int>() == 0);
    auto [u1, s1] = ms.update(g1, s);
    check_close(u1.at("w"), {0.0, 0.0});
    CHECK_FALSE(ms.has_updated(s1));
    auto [u2, s2] = ms.update(g2, s1);
    check_close(u2.at("w"), {0.0, 0.0});
    check_close(s2.acc_grads.at("w"), {2.0, 1.0});
    auto [u3, s3] = ms.update(g3, s2);
    check_close(u3.at("w"), {-0.2, -0.1});  // -lr * mean
    CHECK(ms.has_updated(s3));
    CHECK(s3.mini_step.item<int>() == 0);
    CHECK(s3.gradient_step.item<int>() == 1);
    check_close(s3.acc_grads.at("w"), {0.0, 0.0});
    check_close(std::get<0>(s3.inner_opt_state).trace.at("w"), {2.0, 1.0});

    optim::MultiSteps summed(optim::sgd(1.0), 2, false);
    auto t = summed.init(g1);
    t = summed.update(g1, t).second;
    check_close(summed.update(g2, t).first.at("w"), {-4.0, -2.0});
  }

  TEST_CASE("MultiSteps(k=0) and k<0 follow optax: no error, the inner optimizer never runs") {
    // optax: mini_step = (mini_step + 1) % k with jnp.remainder (XLA's x % 0 == x; the sign of k
    // otherwise) never equals k - 1, so updates stay zero and the mean keeps accumulating.
    Params g1{{"w", f64({1.0, 2.0})}}, g2{{"w", f64({3.0, 0.0})}}, g3{{"w", f64({2.0, 1.0})}};
    optim::MultiSteps never(optim::sgd(0.1), 0);
    auto s = never.init(g1);
    for (const Params& g : {g1, g2, g3}) {
      auto [u, next] = never.update(g, s);
      check_close(u.at("w"), {0.0, 0.0});
      s = next;
    }
    CHECK(s.mini_step.item<int>() == 3);  // 1, 2, 3: x % 0 == x
    CHECK(s.gradient_step.item<int>() == 0);
    CHECK_FALSE(never.has_updated(s));
    check_close(s.acc_grads.at("w"), {2.0, 1.0});  // the Welford mean of g1, g2, g3
    // k = -1: (mini + 1) % -1 == 0, so each step's mean is just its own gradient.
    optim::MultiSteps negative(optim::sgd(0.1), -1);
    auto t = negative.init(g1);
    t = negative.update(g1, t).second;
    auto [u2, t2] = negative.update(g2, t);
    check_close(u2.at("w"), {0.0, 0.0});
    CHECK(t2.mini_step.item<int>() == 0);
    check_close(t2.acc_grads.at("w"), {3.0, 0.0});
    // A schedule may return 0 too (optax calls it every step).
    optim::MultiSteps scheduled(
        optim::sgd(0.1), std::function<std::int64_t(std::int64_t)>([](std::int64_t) { return 0; }));
    check_close(scheduled.update(g1, scheduled.init(g1)).first.at("w"), {0.0, 0.0});
  }
}

TEST_SUITE("optim updates under transforms") {
  TEST_CASE(
      "an update is differentiable (meta-gradients through adam and a clipped momentum chain)") {
    const Array p = f64({0.5, -1.0, 2.0});
    auto adam = optim::adam(0.1, 0.9, 0.999, 1e-8, /*eps_root=*/1e-8);
    auto two_steps = [&](const Array& g) {
      auto s = adam.init(p);
      auto [u1, s1] = adam.update(g, s);
      Array q = optim::apply_updates(p, u1);
      auto [u2, s2] = adam.update(g * q, s1);
      return optim::apply_updates(q, u2);
    };
    linum::testing::check_grads(two_steps, f64({0.3, -0.7, 1.1}));

    auto clipped = optim::chain(optim::clip_by_global_norm(1.0), optim::sgd(0.5, 0.9, true));
    auto step = [&](const Array& g) {
      auto [u, s] = clipped.update(g, clipped.init(p));
      return optim::apply_updates(p, u);
    };
    linum::testing::check_grads(step, f64({0.3, -0.7, 1.1}));  // inside the clip radius
    linum::testing::check_grads(step, f64({3.0, -4.0, 1.0}));  // clipped
  }

  TEST_CASE("vmap over per-example gradients gives the per-example updates") {
    const Array p = f64({0.5, -1.0, 2.0});
    auto tx = optim::adam(0.1);
    const auto state = tx.init(p);
    auto update = [&](const Array& g) { return tx.update(g, state).first; };
    Array gs = linum::array({{0.3, -0.7, 1.1}, {-2.0, 0.1, 0.5}});
    Array batched = linum::vmap(update)(gs);
    CHECK(batched.shape() == linum::Shape{2, 3});
    Vec b = values(batched);
    for (int i = 0; i < 2; ++i) {
      Vec one = values(update(linum::reshape(linum::slice(gs, {{i, i + 1}}), {3})));
      check_close(Vec(b.begin() + 3 * i, b.begin() + 3 * i + 3), one);
    }
  }
}

}  // namespace test_transform
