// optax.contrib's differentially private SGD: differentially_private_aggregate (per-example
// clipping, Gaussian noise, batch mean) and dpsgd, against closed forms worked out in the
// comments (3-4-5 triangles keep the norms exact) and against the noise drawn explicitly from the
// keys optax's update splits.
#include <map>
#include <string>

#include "helpers.hpp"

namespace test_privacy {

using namespace linum;
using optim_test::check_close;
using optim_test::f64;
using optim_test::values;
using testing::check_error;

namespace {
using Params = std::map<std::string, Array>;
// Three examples. Example 0: w (3, 0), b 4, norm 5 > 1, scaled by 1/5 to w (0.6, 0), b 0.8.
// Example 1: w (0, 0.3), b 0.4, norm 0.5 <= 1, kept. Example 2: zero (its multiplier 1/0 -> nan
// counts as 1). The sums are w (0.6, 0.3), b 1.2; their batch means w (0.2, 0.1), b 0.4.
Params per_example_grads() {
  return {{"w", array(std::vector<double>{3.0, 0.0, 0.0, 0.3, 0.0, 0.0}, Shape{3, 2})},
          {"b", f64({4.0, 0.4, 0.0})}};
}
Params params() { return {{"w", zeros({2}, float64)}, {"b", zeros({}, float64)}}; }
}  // namespace

TEST_CASE("differentially_private_aggregate: clipped per-example mean without noise") {
  auto tx = optim::differentially_private_aggregate(1.0, 0.0, random::key(0));
  auto state = tx.init(params());
  auto [u, next] = tx.update(per_example_grads(), state, params());
  check_close(u.at("w"), {0.2, 0.1}, 1e-15);
  check_close(u.at("b"), {0.4}, 1e-15);
  CHECK(u.at("b").shape() == Shape{});
  // The state moves to the first of split(key, leaves + 1).
  CHECK(values(next.rng_key) == values(random::split(random::key(0), 3)[0]));
}

TEST_CASE("differentially_private_aggregate: noise of std l2_norm_clip * noise_multiplier") {
  // keys = split(rng_key, 3): the leaves in flattening order ('b', then 'w') get keys[1] and
  // keys[2]; (clipped sum + 0.5 * 2 * normal(key, shape, dtype)) / 3, and keys[0] is kept.
  const Array key = random::key(42);
  auto tx = optim::differentially_private_aggregate(0.5, 2.0, key);
  auto state = tx.init(params());
  CHECK(values(state.rng_key) == values(key));
  auto [u, s1] = tx.update(per_example_grads(), state);
  Array keys = random::split(key, 3);
  Array noise_b = random::normal(keys[1], {}, float64),
        noise_w = random::normal(keys[2], {2}, float64);
  // l2_norm_clip 0.5 halves the clipped examples: example 0 -> w (0.3, 0), b 0.4; example 1 has
  // norm 0.5, kept; sums w (0.3, 0.3), b 0.8.
  const std::vector<double> nb = values(noise_b), nw = values(noise_w);
  check_close(u.at("b"), {(0.8 + nb[0]) / 3.0}, 1e-14);
  check_close(u.at("w"), {(0.3 + nw[0]) / 3.0, (0.3 + nw[1]) / 3.0}, 1e-14);
  CHECK(values(s1.rng_key) == values(keys[0]));
  // The next step draws from the new key: other noise.
  auto [u2, s2] = tx.update(per_example_grads(), s1);
  CHECK(values(u2.at("w")) != values(u.at("w")));
  CHECK(values(s2.rng_key) == values(random::split(keys[0], 3)[0]));
  // float32 updates get float32 noise.
  Params g32{{"w", astype(per_example_grads().at("w"), float32)},
             {"b", astype(per_example_grads().at("b"), float32)}};
  CHECK(tx.update(g32, state).first.at("w").dtype() == float32);
}

TEST_CASE("differentially_private_aggregate: a seed is key(seed), and bad updates") {
  auto by_seed = optim::differentially_private_aggregate(1.0, 1.0, 7);
  auto by_key = optim::differentially_private_aggregate(1.0, 1.0, random::key(7));
  auto a = by_seed.update(per_example_grads(), by_seed.init(params())).first;
  auto b = by_key.update(per_example_grads(), by_key.init(params())).first;
  CHECK(values(a.at("w")) == values(b.at("w")));
  check_error<ValueError>(
      [&] {
        auto tx = optim::differentially_private_aggregate(1.0, 1.0);
        Params g{{"w", ones({3, 2})}, {"b", ones({2})}};  // batch sizes 3 and 2
        tx.update(g, tx.init(g));
      },
      {"differentially_private_aggregate", "batch dimension"});
  check_error<ValueError>(
      [&] {
        auto tx = optim::differentially_private_aggregate(1.0, 1.0);
        tx.update(Array(1.0f), tx.init(Array(1.0f)));  // a scalar has no batch axis
      },
      {"differentially_private_aggregate", "batch dimension"});
}

TEST_CASE("dpsgd: the private aggregate, momentum, then -learning_rate") {
  // Without noise: the mean (w (0.2, 0.1), b 0.4) times -lr = -0.5.
  auto tx = optim::dpsgd(0.5, 1.0, 0.0, 0);
  auto state = tx.init(params());
  static_assert(std::is_same_v<std::tuple_element_t<1, decltype(state)>, optim::EmptyState>);
  auto [u, s1] = tx.update(per_example_grads(), state, params());
  check_close(u.at("w"), {-0.1, -0.05}, 1e-15);
  check_close(u.at("b"), {-0.2}, 1e-15);
  // With momentum 0.9: trace t1 = g, t2 = g + 0.9 g = 1.9 g, so the second update is -0.95 g.
  auto txm = optim::dpsgd(0.5, 1.0, 0.0, 0, 0.9);
  auto sm = txm.init(params());
  auto [m1, sm1] = txm.update(per_example_grads(), sm);
  auto [m2, sm2] = txm.update(per_example_grads(), sm1);
  check_close(m2.at("w"), {-0.19, -0.095}, 1e-14);
  check_close(std::get<1>(sm2).trace.at("b"), {0.76}, 1e-14);
  // Nesterov: the update uses g + 0.9 * trace: first step (1 + 0.9) g.
  auto txn = optim::dpsgd(0.5, 1.0, 0.0, 0, 0.9, true);
  check_close(txn.update(per_example_grads(), txn.init(params())).first.at("b"), {-0.38}, 1e-14);
  // The seed is the aggregate's key: noise as differentially_private_aggregate(key(3)).
  auto noisy = optim::dpsgd(0.5, 1.0, 1.0, 3);
  auto agg = optim::differentially_private_aggregate(1.0, 1.0, random::key(3));
  auto un = noisy.update(per_example_grads(), noisy.init(params())).first;
  auto an = agg.update(per_example_grads(), agg.init(params())).first;
  check_close(un.at("w"), values(-0.5 * an.at("w")), 1e-15);
}

}  // namespace test_privacy
