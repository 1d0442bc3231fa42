// optax's monitoring transformations: snapshot, monitor and measure_with_ema pass the updates
// through (or average a measurement of them), with the measurements in their states; known
// answers worked out in the comments.
#include <map>
#include <string>

#include <linum/optim/monitoring.hpp>

#include "autodiff/check_grads.hpp"
#include "helpers.hpp"

namespace test_monitoring {

using namespace linum;
using optim_test::check_close;
using optim_test::f64;
using optim_test::values;
using testing::check_error;

namespace {
using Params = std::map<std::string, Array>;
Array sum_sq(const Params& u) { return optim::tree_utils::tree_norm(u, "2", true); }
}  // namespace

TEST_CASE("snapshot keeps measure(updates), measure(params) after init") {
  auto tx = optim::snapshot("sq", sum_sq);
  Params p{{"w", f64({1.0, 2.0})}};
  auto s = tx.init(p);
  check_close(s.measurement.at("sq").leaf(), {5.0});
  Params u{{"w", f64({3.0, 4.0})}};
  auto [out, s2] = tx.update(u, s);
  check_close(out.at("w"), {3.0, 4.0});
  check_close(s2.measurement.at("sq").leaf(), {25.0});
}

TEST_CASE("monitor: function and transformation measures, updates unchanged") {
  auto tx = optim::monitor<Params>({{"sq", sum_sq}, {"scaled", optim::scale(2.0)}});
  Params p{{"w", f64({1.0, 2.0})}};
  auto s = tx.init(p);
  CHECK(s.measurements.empty());
  CHECK(s.measure_states.size() == 2);
  Params u{{"w", f64({3.0, 4.0})}};
  auto [out, s2] = tx.update(u, s, p);
  check_close(out.at("w"), {3.0, 4.0});
  check_close(s2.measurements.at("sq").leaf(), {25.0});
  check_close(s2.measurements.at("scaled").at("w").leaf(), {6.0, 8.0});
  auto other = optim::monitor<Params>({{"sq", sum_sq}});
  check_error<ValueError>([&] { other.update(u, s); },
                          {"monitor", "2 measure states", "1 measures"});
}

TEST_CASE("measure_with_ema: the debiased moving average of the measurement") {
  // ema starts at 0 (of measure(params)'s shape); decay 0.5 on measurements 25 then 1:
  // raw 12.5, debiased / (1 - 0.5) = 25; raw 0.5 + 6.25 = 6.75, debiased / 0.75 = 9.
  auto tx = optim::measure_with_ema(sum_sq, 0.5);
  Params p{{"w", f64({1.0, 2.0})}};
  auto s = tx.init(p);
  auto [m1, s1] = tx.update(Params{{"w", f64({3.0, 4.0})}}, s);
  check_close(m1, {25.0}, 1e-14);
  auto [m2, s2] = tx.update(Params{{"w", f64({1.0, 0.0})}}, s1);
  check_close(m2, {9.0}, 1e-14);
  // Without debiasing the raw average: 12.5.
  auto raw = optim::measure_with_ema(sum_sq, 0.5, false);
  auto [r1, rs1] = raw.update(Params{{"w", f64({3.0, 4.0})}}, raw.init(p));
  check_close(r1, {12.5}, 1e-14);
}

}  // namespace test_monitoring
