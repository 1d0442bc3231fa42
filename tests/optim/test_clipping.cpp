// optax's unitwise clipping (unitwise_norm, unitwise_clip, adaptive_grad_clip) and the
// per-example clippings of differentially private training, against closed forms worked out in
// the comments (3-4-5 triangles keep the norms exact).
#include <cmath>
#include <map>
#include <string>

#include "autodiff/check_grads.hpp"
#include "helpers.hpp"

namespace test_clipping {

using namespace linum;
using optim_test::check_close;
using optim_test::f64;
using optim_test::values;
using testing::check_error;

namespace {
using Params = std::map<std::string, Array>;
Array mat(const std::vector<double>& v, const Shape& s) { return array(v, s); }
}  // namespace

TEST_CASE("unitwise_norm: whole vectors, columns of kernels, given axes") {
  check_close(optim::unitwise_norm(f64({3.0, 4.0})), {5.0, 5.0});
  // (1, 2) squeezes to a vector: one norm.
  check_close(optim::unitwise_norm(mat({3.0, 4.0}, {1, 2})), {5.0, 5.0});
  // A (2, 2) kernel: the norm of each output column (axis 0): (3, 4) -> 5, (0, 1) -> 1.
  check_close(optim::unitwise_norm(mat({3.0, 0.0, 4.0, 1.0}, {2, 2})), {5.0, 1.0, 5.0, 1.0});
  // A (1, 1, 2, 2) conv kernel: over axes (0, 1, 2), the same columns.
  check_close(optim::unitwise_norm(mat({3.0, 0.0, 4.0, 1.0}, {1, 1, 2, 2})), {5.0, 1.0, 5.0, 1.0});
  // axis given: rows of the (2, 2) kernel, (3, 0) -> 3, (4, 1) -> sqrt 17.
  const double r = std::sqrt(17.0);
  check_close(optim::unitwise_norm(mat({3.0, 0.0, 4.0, 1.0}, {2, 2}), Axes(1)), {3.0, 3.0, r, r},
              1e-15);
  check_error<ValueError>(
      [] {
        optim::unitwise_norm(ones({2, 1, 2, 1, 2, 2}, float64));
      },
      {"unitwise_norm", "(2, 1, 2, 1, 2, 2)", "axis"});
}

TEST_CASE("unitwise_clip: grad below max_norm, scaled to it above") {
  // Unit 1 has norm 3 > 2: scaled by 2 / 3.
  check_close(optim::unitwise_clip(f64({1.0, 3.0}), f64({2.0, 2.0}), f64({1.0, 3.0})), {1.0, 2.0},
              1e-15);
  check_error<ValueError>(
      [] {
        optim::unitwise_clip(f64({1.0, 3.0}), f64({2.0}), f64({1.0, 3.0}));
      },
      {"unitwise_clip", "(2,)", "(1,)"});
}

TEST_CASE("adaptive_grad_clip clips each unit relative to its parameter's norm") {
  // w's columns have norms 5 and 1, so max_norm = 0.5 * (5, 1) = (2.5, 0.5). The gradient's
  // column 0, (6, 8), has norm 10 and becomes (1.5, 2); column 1, (0.1, 0.2), has norm < 0.5
  // and stays. b is zero: max_norm = 0.5 * eps = 5e-4, so (1, 0) becomes (5e-4, 0).
  Params params{{"w", mat({3.0, 0.0, 4.0, 1.0}, {2, 2})}, {"b", f64({0.0, 0.0})}};
  Params grads{{"w", mat({6.0, 0.1, 8.0, 0.2}, {2, 2})}, {"b", f64({1.0, 0.0})}};
  auto tx = optim::adaptive_grad_clip(0.5);
  auto state = tx.init(params);
  auto [u, next] = tx.update(grads, state, params);
  check_close(u.at("w"), {1.5, 0.1, 2.0, 0.2}, 1e-14);
  check_close(u.at("b"), {5e-4, 0.0}, 1e-14);
  // With an explicit axis (the rows), w's rows have norms 3 and sqrt 17.
  auto rows = optim::adaptive_grad_clip(1.0, 1e-3, Axes(1));
  Params wp{{"w", params.at("w")}}, wg{{"w", grads.at("w")}};
  auto [ur, s2] = rows.update(wg, rows.init(wp), wp);
  const double g0 = std::sqrt(36.01), g1 = std::sqrt(64.04);
  check_close(
      ur.at("w"),
      {6.0 * 3.0 / g0, 0.1 * 3.0 / g0, 8.0 * std::sqrt(17.0) / g1, 0.2 * std::sqrt(17.0) / g1},
      1e-14);
  check_error<ValueError>([&] { tx.update(grads, state); }, {"adaptive_grad_clip"});
}

TEST_CASE("per_example_global_norm_clip and per_example_layer_norm_clip") {
  // Three examples: a = (3, 0), (0, 0), (1, 0); b = 4, 0, 0. Global norms 5, 0, 1; with
  // l2_norm_clip 2.5 the multipliers are 0.5, 1 (2.5 / 0 = inf, capped at 1), 1: one clipped.
  Params grads{{"a", mat({3.0, 0.0, 0.0, 0.0, 1.0, 0.0}, {3, 2})}, {"b", f64({4.0, 0.0, 0.0})}};
  auto [sum_g, n] = optim::per_example_global_norm_clip(grads, 2.5);
  check_close(sum_g.at("a"), {2.5, 0.0}, 1e-15);
  check_close(sum_g.at("b"), {2.0}, 1e-15);
  CHECK(n.item<int>() == 1);
  // Uniform layer budgets 2 * sqrt(2) * sqrt(1 / 2) = 2: a's norms 3, 0, 1 -> multipliers
  // 2 / 3, 1, 1; b's 4, 0, 0 -> 1 / 2, 1, 1.
  auto [sums, counts] = optim::per_example_layer_norm_clip(grads, 2.0 * std::sqrt(2.0));
  check_close(sums.at("a"), {3.0, 0.0}, 1e-14);
  check_close(sums.at("b"), {2.0}, 1e-14);
  CHECK(counts.at("a").item<int>() == 1);
  CHECK(counts.at("b").item<int>() == 1);
  // Budgets by size: a holds 2 of 3 entries per example -> 2 sqrt 2 * sqrt(2 / 3) = 4 / sqrt 3;
  // b -> 2 sqrt 2 / sqrt 3.
  auto [s2, c2] = optim::per_example_layer_norm_clip(grads, 2.0 * std::sqrt(2.0), false);
  check_close(s2.at("a"), {4.0 / std::sqrt(3.0) + 1.0, 0.0}, 1e-14);
  check_close(s2.at("b"), {2.0 * std::sqrt(2.0) / std::sqrt(3.0)}, 1e-14);
  Params bad{{"a", ones({3, 2}, float64)}, {"b", ones({2}, float64)}};
  check_error<ValueError>([&] { optim::per_example_global_norm_clip(bad, 1.0); },
                          {"per_example_global_norm_clip", "batch dimension"});
  Params scalar{{"a", Array(1.0)}};
  check_error<ValueError>([&] { optim::per_example_layer_norm_clip(scalar, 1.0); },
                          {"per_example_layer_norm_clip", "batch dimension"});
}

}  // namespace test_clipping
