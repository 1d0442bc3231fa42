// Gaussian-process regression as JAX users write it: the negative log marginal likelihood of an
// RBF kernel, through jnp.linalg.cholesky, triangular solves and the log determinant of the
// factor, minimised over the kernel's log-hyperparameters with value_and_grad and optax's adam.
// 40 noisy samples of sin(2x); the fit must lower the NLL and predict held-out points well.
#include <cmath>
#include <cstdio>
#include <map>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include <linum/linum.hpp>

using linum::Array;
namespace optim = linum::optim;
namespace la = linum::linalg;
namespace lla = linum::lax::linalg;
using Params = std::map<std::string, Array>;

// k(a, b) = s^2 exp(-(a - b)^2 / (2 l^2)) for column vectors a (n, 1) and b (m, 1).
Array rbf(const Params& p, const Array& a, const Array& b) {
  const Array d = a - linum::transpose(b);
  const Array scale = linum::exp(2.0 * p.at("log_amplitude"));
  const Array inv_len2 = linum::exp(-2.0 * p.at("log_length_scale"));
  return scale * linum::exp(-0.5 * d * d * inv_len2);
}

// -log N(y | 0, K + noise^2 I) = y^T K^-1 y / 2 + sum(log diag L) + n log(2 pi) / 2.
Array negative_log_likelihood(const Params& p, const Array& x, const Array& y) {
  const std::int64_t n = x.shape(0);
  const Array noise = linum::exp(2.0 * p.at("log_noise"));
  const Array K = rbf(p, x, x) + noise * linum::eye(n, -1, 0, linum::float64);
  const Array L = la::cholesky(K);
  const Array alpha = lla::triangular_solve(L, y, {.left_side = true, .lower = true});
  return 0.5 * linum::sum(alpha * alpha) + linum::sum(linum::log(la::diagonal(L))) +
         0.5 * static_cast<double>(n) * std::log(2 * std::numbers::pi);
}

// The posterior mean at x_star: k(x*, x) (K + noise^2 I)^-1 y, with the Cholesky solve pair.
Array posterior_mean(const Params& p, const Array& x, const Array& y, const Array& x_star) {
  const Array noise = linum::exp(2.0 * p.at("log_noise"));
  const Array K = rbf(p, x, x) + noise * linum::eye(x.shape(0), -1, 0, linum::float64);
  const Array weights =
      linum::scipy::linalg::cho_solve(linum::scipy::linalg::cho_factor(K, true), y);
  return linum::matmul(rbf(p, x_star, x), weights);
}

int main() {
  std::mt19937 rng(0);
  std::uniform_real_distribution<double> uniform(-3.0, 3.0);
  std::normal_distribution<double> normal(0.0, 0.1);
  std::vector<double> xs(40), ys(40);
  for (std::size_t i = 0; i < xs.size(); ++i) {
    xs[i] = uniform(rng);
    ys[i] = std::sin(2 * xs[i]) + normal(rng);
  }
  const Array x = linum::array(xs, {40, 1}), y = linum::array(ys, {40, 1});

  // Hyperparameters start far from the data's: a long length scale and a large noise.
  Params params{{"log_amplitude", linum::array(0.0)},
                {"log_length_scale", linum::array(std::log(3.0))},
                {"log_noise", linum::array(std::log(0.5))}};
  auto loss_fn = [&](const Params& p) { return negative_log_likelihood(p, x, y); };
  const double initial = loss_fn(params).item<double>();

  auto tx = optim::adam(0.05);
  auto opt_state = tx.init(params);
  double loss = initial;
  for (int step = 0; step <= 150; ++step) {
    auto [value, grads] = linum::value_and_grad(loss_fn)(params);
    loss = value.item<double>();
    auto [updates, new_state] = tx.update(grads, opt_state, params);
    opt_state = new_state;
    params = optim::apply_updates(params, updates);
    if (step % 25 == 0)
      std::printf("step %3d  negative log marginal likelihood %9.4f\n", step, loss);
  }
  const double amplitude = std::exp(params.at("log_amplitude").item<double>());
  const double length = std::exp(params.at("log_length_scale").item<double>());
  const double noise = std::exp(params.at("log_noise").item<double>());
  std::printf("amplitude %.3f  length scale %.3f  noise %.3f\n", amplitude, length, noise);

  // Held-out points: the posterior mean against the noise-free sin(2x).
  const Array x_star =
      linum::reshape(linum::linspace(-2.5, 2.5, 11, true, linum::float64), {11, 1});
  const Array err = posterior_mean(params, x, y, x_star) - linum::sin(2.0 * x_star);
  const double rmse = std::sqrt(linum::mean(err * err).item<double>());
  std::printf("held-out RMSE of the posterior mean %.4f\n", rmse);

  // The fit must have improved the likelihood a lot and found the noise level and the signal.
  const bool ok = loss < initial - 10.0 && noise > 0.05 && noise < 0.2 && rmse < 0.1;
  std::printf("%s: NLL %.4f -> %.4f\n", ok ? "ok" : "FAILED", initial, loss);
  return ok ? 0 : 1;
}
