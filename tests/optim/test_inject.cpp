// optax.inject_hyperparams: the hyper-parameters live in the state, schedules are evaluated at
// their own count, and a value changed in the state takes effect at the next update. Known
// answers: the same optimizer built with the values directly.
#include <map>
#include <string>

#include <linum/optim/inject.hpp>

#include "autodiff/check_grads.hpp"
#include "helpers.hpp"

namespace test_inject {

using namespace linum;
using optim_test::check_close;
using optim_test::f64;
using optim_test::values;

namespace {
using Params = std::map<std::string, Array>;
}  // namespace

TEST_CASE("inject_hyperparams with a schedule equals the optimizer given the schedule") {
  auto sched = optim::exponential_decay(0.1, 2, 0.5);
  auto tx = optim::inject_hyperparams(
      [](const optim::Hyperparams& h) { return optim::adam(h.at("learning_rate"), h.at("b1")); },
      {{"learning_rate", sched}, {"b1", 0.8}});
  auto ref = optim::adam(sched, 0.8);
  Params p{{"w", f64({1.0, -2.0})}};
  auto s = tx.init(p);
  auto rs = ref.init(p);
  CHECK(s.hyperparams.at("learning_rate").item<double>() == doctest::Approx(0.1));
  CHECK(s.hyperparams.at("b1").item<double>() == doctest::Approx(0.8));
  CHECK(s.hyperparams.at("b1").dtype() == float64);  // the params' float dtype
  for (int t = 0; t < 4; ++t) {
    INFO("step " << t);
    Params g{{"w", f64({0.5 * (t + 1), -1.0 + t})}};
    auto [u, next] = tx.update(g, s, p);
    auto [ru, rnext] = ref.update(g, rs, p);
    check_close(u.at("w"), values(ru.at("w")), 1e-12);
    // The state shows the value used at this step (schedule at count t).
    CHECK(next.hyperparams.at("learning_rate").item<double>() == doctest::Approx(sched(t)));
    CHECK(next.count.item<int>() == t + 1);
    s = next, rs = rnext;
  }
}

TEST_CASE("a hyper-parameter changed in the state takes effect at the next update") {
  // sgd: u = -learning_rate * g.
  auto tx = optim::inject_hyperparams(
      [](const optim::Hyperparams& h) { return optim::sgd(h.at("learning_rate")); },
      {{"learning_rate", 0.5}}, float32);
  Params g{{"w", f64({2.0})}};
  auto s = tx.init(g);
  CHECK(s.hyperparams.at("learning_rate").dtype() == float32);
  auto [u1, s1] = tx.update(g, s);
  check_close(u1.at("w"), {-1.0});
  s1.hyperparams["learning_rate"] = Array(0.25f);
  auto [u2, s2] = tx.update(g, s1);
  check_close(u2.at("w"), {-0.5});
  // inject_stateful_hyperparams is the same transformation.
  auto st = optim::inject_stateful_hyperparams(
      [](const optim::Hyperparams& h) { return optim::sgd(h.at("learning_rate")); },
      {{"learning_rate", 0.5}});
  auto [u3, s3] = st.update(g, st.init(g));
  check_close(u3.at("w"), {-1.0});
}

}  // namespace test_inject
