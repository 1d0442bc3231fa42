// optax's wrappers (conditionally_transform / conditionally_mask, apply_if_finite, lookahead,
// flatten, named_chain, freeze, selective_transform) and constraints (keep_params_nonnegative,
// zero_nans), step by step against what optax's definitions give, worked out in the comments.
#include <cmath>
#include <limits>
#include <map>
#include <string>

#include <linum/optim/wrappers.hpp>

#include "autodiff/check_grads.hpp"
#include "helpers.hpp"

namespace test_wrappers {

using namespace linum;
using optim_test::check_close;
using optim_test::f64;
using optim_test::values;
using testing::check_error;

namespace {
using Params = std::map<std::string, Array>;
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
}  // namespace

TEST_CASE("conditionally_transform and conditionally_mask switch on the step count") {
  // scale(2) from step 2 on (the condition sees the count before this update).
  auto from2 = [](const Array& step) { return step >= 2; };
  auto tx = optim::conditionally_transform(optim::scale(2.0), from2);
  auto mk = optim::conditionally_mask(optim::scale(2.0), from2);
  Params p{{"w", f64({1.0, -3.0})}};
  auto st = tx.init(p);
  auto sm = mk.init(p);
  for (int step = 0; step < 4; ++step) {
    INFO("step " << step);
    auto [u, next] = tx.update(p, st);
    auto [um, nextm] = mk.update(p, sm);
    const double f = step >= 2 ? 2.0 : 1.0;
    check_close(u.at("w"), {f, -3.0 * f});
    check_close(um.at("w"), step >= 2 ? std::vector<double>{2.0, -6.0} : std::vector<double>{0, 0});
    CHECK(next.step.item<int>() == step + 1);
    st = next, sm = nextm;
  }
  auto bad = optim::conditionally_transform(optim::scale(2.0),
                                            [](const Array&) { return zeros({2}, bool_); });
  check_error<ValueError>([&] { bad.update(p, bad.init(p)); },
                          {"conditionally_transform", "scalar", "(2,)"});
}

TEST_CASE("apply_if_finite skips non-finite updates until max_consecutive_errors is passed") {
  auto tx = optim::apply_if_finite(optim::scale(2.0), 2);
  Params p{{"w", f64({1.0})}};
  Params nan{{"w", f64({kNan})}};
  auto s = tx.init(p);
  // Two NaN steps are rejected (zeros); the third (3 > 2 in a row) goes through as NaN.
  for (int i = 1; i <= 3; ++i) {
    auto [u, next] = tx.update(nan, s);
    CHECK(next.notfinite_count.item<int>() == i);
    CHECK(next.total_notfinite.item<int>() == i);
    CHECK_FALSE(next.last_finite.item<bool>());
    if (i < 3)
      check_close(u.at("w"), {0.0});
    else
      CHECK(std::isnan(values(u.at("w"))[0]));
    s = next;
  }
  // A finite step applies the inner transformation and resets the run, not the total.
  auto [u, next] = tx.update(p, s);
  check_close(u.at("w"), {2.0});
  CHECK(next.notfinite_count.item<int>() == 0);
  CHECK(next.total_notfinite.item<int>() == 3);
  CHECK(next.last_finite.item<bool>());
}

TEST_CASE("keep_params_nonnegative and zero_nans") {
  // 1 - 2 < 0: the update becomes -1 (the param lands on 0); 0.5 - 0.3 stays.
  Params p{{"w", f64({1.0, 0.5})}};
  Params u{{"w", f64({-2.0, -0.3})}};
  auto k = optim::keep_params_nonnegative();
  auto [ku, ks] = k.update(u, k.init(p), p);
  check_close(ku.at("w"), {-1.0, -0.3});
  check_error<ValueError>([&] { k.update(u, k.init(p)); }, {"keep_params_nonnegative"});

  auto z = optim::zero_nans();
  auto zs = z.init(p);
  CHECK_FALSE(zs.found_nan.at("w").item<bool>());
  auto [zu, zs2] = z.update(Params{{"w", f64({kNan, 1.0})}}, zs);
  check_close(zu.at("w"), {0.0, 1.0});
  CHECK(zs2.found_nan.at("w").item<bool>());
  auto [zu3, zs3] = z.update(u, zs2);
  check_close(zu3.at("w"), {-2.0, -0.3});
  CHECK_FALSE(zs3.found_nan.at("w").item<bool>());
}

TEST_CASE("lookahead: the slow weights move toward the fast ones every sync_period steps") {
  // Fast optimizer sgd(1) on a constant gradient 1: each step moves fast by -1. With
  // sync_period 2 and slow_step_size 0.5, from fast = slow = 1:
  //   step 1: fast 0, slow 1;
  //   step 2 (sync): fast would be -1; slow = 1 + 0.5 * (-1 - 1) = 0, and fast is reset to it;
  //   step 3: fast -1, slow 0;  step 4 (sync): slow = 0 + 0.5 * (-2 - 0) = -1 = fast.
  auto tx = optim::lookahead(optim::sgd(1.0), 2, 0.5);
  Params p0{{"w", f64({1.0})}};
  auto params = optim::LookaheadParams<Params>::init_synced(p0);
  auto state = tx.init(params);
  Params g{{"w", f64({1.0})}};
  const double fast[] = {0.0, 0.0, -1.0, -1.0}, slow[] = {1.0, 0.0, 0.0, -1.0};
  for (int t = 0; t < 4; ++t) {
    INFO("step " << t + 1);
    auto [u, next] = tx.update(g, state, params);
    params = optim::apply_updates(params, u);
    state = next;
    check_close(params.fast.at("w"), {fast[t]}, 1e-15);
    check_close(params.slow.at("w"), {slow[t]}, 1e-15);
    CHECK(state.steps_since_sync.item<int>() == (t + 1) % 2);
  }
  check_error<TypeError>([&] { tx.update(g, state, p0); }, {"lookahead", "LookaheadParams"});
  check_error<ValueError>([] { optim::lookahead(optim::sgd(1.0), 0, 0.5); },
                          {"lookahead", "Synchronization period", "0"});
}

TEST_CASE("flatten: the inner transformation sees one vector") {
  // adam is elementwise, so flatten(adam) gives adam's updates; its moments are one vector of
  // all 3 entries.
  Params p{{"a", f64({1.0, 2.0})}, {"b", f64({-1.0})}};
  Params g{{"a", f64({0.3, -0.1})}, {"b", f64({2.0})}};
  auto flat = optim::flatten(optim::adam(0.1));
  auto plain = optim::adam(0.1);
  auto fs = flat.init(p);
  auto ps = plain.init(p);
  for (int t = 0; t < 2; ++t) {
    auto [fu, fn] = flat.update(g, fs, p);
    auto [pu, pn] = plain.update(g, ps, p);
    check_close(fu.at("a"), values(pu.at("a")), 1e-14);
    check_close(fu.at("b"), values(pu.at("b")), 1e-14);
    fs = fn, ps = pn;
  }
  // clip_by_global_norm is already global; scale_by_trust_ratio is per leaf in optax, so
  // flattening turns it into one ratio |params| / |updates| over all leaves: here
  // |p| = sqrt 6, |g| = sqrt(4.1), every update scaled by sqrt(6 / 4.1).
  auto tr = optim::flatten(optim::scale_by_trust_ratio());
  auto [tu, ts] = tr.update(g, tr.init(p), p);
  const double r = std::sqrt(6.0 / 4.1);
  check_close(tu.at("a"), {0.3 * r, -0.1 * r}, 1e-14);
  check_close(tu.at("b"), {2.0 * r}, 1e-14);
}

TEST_CASE("named_chain keeps the members' states by name") {
  Params p{{"w", f64({3.0, 4.0})}};
  auto nc = optim::named_chain(std::pair{std::string("clip"), optim::clip_by_global_norm(1.0)},
                               std::pair{std::string("scale"), optim::scale(-2.0)});
  auto s = nc.init(p);
  CHECK(s.contains("clip"));
  CHECK(s.contains("scale"));
  // |(3, 4)| = 5 clipped to 1, then scaled by -2.
  auto [u, s2] = nc.update(p, s);
  check_close(u.at("w"), {-1.2, -1.6}, 1e-15);
  check_error<ValueError>(
      [] {
        optim::named_chain(std::pair{std::string("a"), optim::scale(1.0)},
                           std::pair{std::string("a"), optim::scale(2.0)});
      },
      {"named_chain", "unique names", "'a', 'a'"});
}

TEST_CASE("freeze and selective_transform zero the frozen leaves") {
  Params p{{"a", f64({1.0})}, {"b", f64({2.0})}};
  std::map<std::string, bool> mask{{"a", true}, {"b", false}};
  auto fr = optim::freeze(mask);
  auto [fu, fs] = fr.update(p, fr.init(p));
  check_close(fu.at("a"), {0.0});
  check_close(fu.at("b"), {2.0});
  auto sel = optim::selective_transform<Params>(optim::sgd(0.5), mask);
  auto [su, ss] = sel.update(p, sel.init(p), p);
  check_close(su.at("a"), {0.0});
  check_close(su.at("b"), {-1.0});
  // with_extra_args_support is the identity: every transformation takes the extra arguments.
  auto w = optim::with_extra_args_support(optim::scale(3.0));
  auto [wu, ws] = w.update(p, w.init(p));
  check_close(wu.at("b"), {6.0});
}

}  // namespace test_wrappers
