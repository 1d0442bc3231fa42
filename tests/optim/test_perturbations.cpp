// optax.perturbations: the noises against linum::random and their closed-form log densities;
// make_perturbed_fun's value and gradient against an explicit loop over the samples that
// follows optax's key use (split(key, num_samples), then one key per leaf) and the
// score-function gradient written out by hand; optax's docstring example (its printed
// gradient); and the Gumbel-max identity E[argmax one-hot(x + sigma G)] = softmax(x / sigma).
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "helpers.hpp"

namespace test_perturbations {

using namespace linum;
using optim_test::check_close;
using optim_test::f32;
using optim_test::values;
using testing::check_error;
namespace pt = optim::perturbations;
using Params = std::map<std::string, Array>;

TEST_CASE("Normal and Gumbel: jax.random's samplers and optax's log densities") {
  const Array key = random::PRNGKey(7);
  CHECK(values(pt::Normal().sample(key, {4})) == values(random::normal(key, {4})));
  CHECK(values(pt::Gumbel().sample(key, {2, 3}, float64)) ==
        values(random::gumbel(key, {2, 3}, float64)));
  CHECK(pt::Gumbel().sample(key).ndim() == 0);
  const Array x = array({-1.0, 0.0, 2.0});
  check_close(pt::Normal().log_prob(x), {-0.5, 0.0, -2.0});
  check_close(pt::Gumbel().log_prob(x), {1.0 - std::exp(1.0), -1.0, -2.0 - std::exp(-2.0)}, 1e-15);
}

namespace {
double relu_sum(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += std::max(x, 0.0);
  return s;
}
}  // namespace

TEST_CASE("make_perturbed_fun: value and gradient equal a loop over optax's keys") {
  const std::int64_t n = 64;
  const double sigma = 0.1;
  auto f = [](const Array& v) { return sum(maximum(v, 0.0f)); };
  const Array x = f32({0.05, -0.02, 0.0});
  const Array key = random::PRNGKey(0);
  auto fn = pt::make_perturbed_fun(f, n, sigma);  // Gumbel noise, with the baseline
  const Array value = fn(key, x);
  const Array g = grad(fn, argnums<1>)(key, x);
  // The loop: sample i draws gumbel(split(split(key, n)[i], 1)[0]) (x is one leaf); its term is
  // f(y) in value and (f(y) - f(x)) * (1 - exp(-s)) / sigma in gradient, y = x + sigma z, s =
  // (y - x) / sigma (the score of the Gumbel log density -s - exp(-s), times ds/dx = -1/sigma).
  const Array keys = random::split(key, n);
  const double fx = relu_sum(values(x));
  double v_sum = 0;
  std::vector<double> g_sum(3, 0.0);
  for (std::int64_t i = 0; i < n; ++i) {
    const Array z = random::gumbel(random::split(keys[i], 1)[0], {3}, float32);
    const Array y = x + sigma * z;
    const std::vector<double> s = values((y - x) / sigma);
    const double fy = relu_sum(values(y));
    v_sum += fy;
    for (int j = 0; j < 3; ++j) g_sum[j] += (fy - fx) * (1.0 - std::exp(-s[j])) / sigma;
  }
  check_close(value, {v_sum / n}, 1e-5);
  check_close(g, {g_sum[0] / n, g_sum[1] / n, g_sum[2] / n}, 1e-4, 1e-5);
  // Without the baseline the gradient weights f(y) itself.
  auto fn_nb = pt::make_perturbed_fun(f, n, sigma, pt::Gumbel(), false);
  double nb0 = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const Array z = random::gumbel(random::split(keys[i], 1)[0], {3}, float32);
    const Array y = x + sigma * z;
    nb0 += relu_sum(values(y)) * (1.0 - std::exp(-values((y - x) / sigma)[0])) / sigma;
  }
  check_close(fn_nb(key, x), values(value), 1e-6);
  check_close(grad(fn_nb, argnums<1>)(key, x)[0], {nb0 / n}, 1e-4, 1e-5);
  // jit traces the same computation.
  check_close(jit(fn)(key, x), values(value), 1e-6);
}

TEST_CASE("make_perturbed_fun: optax's docstring example prints grad [0.69 0.72 0.58]") {
  // optax: key = jax.random.key(0), x = zeros(3), f = sum(max(x, 0)), 1000 samples, sigma 0.1,
  // Gumbel noise: jax.grad(fn, argnums=1)(key, x) printed with precision 2.
  auto fn = pt::make_perturbed_fun([](const Array& v) { return sum(maximum(v, 0.0f)); }, 1000, 0.1);
  check_close(grad(fn, argnums<1>)(random::key(0), zeros({3})), {0.69, 0.72, 0.58}, 0, 0.0051);
}

TEST_CASE("make_perturbed_fun over a tree: one key per leaf, Normal noise, tree output") {
  const std::int64_t n = 16;
  const double sigma = 0.5;
  const Params x{{"a", f32({0.5, -1.0})}, {"b", f32({2.0})}};
  auto f = [](const Params& p) {
    return Params{{"s", sum(sin(p.at("a")))}, {"t", p.at("b") * p.at("a")[0]}};
  };
  const Array key = random::PRNGKey(3);
  const Params out = pt::make_perturbed_fun(f, n, sigma, pt::Normal())(key, x);
  // The loop: leaves in flattening order a, b take split(split(key, n)[i], 2)[0] and [1].
  const Array keys = random::split(key, n);
  double s = 0, t = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const Array leaf_keys = random::split(keys[i], 2);
    const Array a = x.at("a") + sigma * random::normal(leaf_keys[0], {2});
    const Array b = x.at("b") + sigma * random::normal(leaf_keys[1], {1});
    s += sum(sin(a)).item<float>();
    t += (b * a[0]).item<float>();
  }
  check_close(out.at("s"), {s / n}, 1e-5);
  check_close(out.at("t"), {t / n}, 1e-5);
  CHECK(out.at("t").shape() == Shape{1});
}

TEST_CASE("make_perturbed_fun: the perturbed argmax is softmax(x / sigma), value and Jacobian") {
  // Gumbel-max: P(argmax(x + sigma G) = i) = softmax(x / sigma)_i, so the perturbed one-hot argmax
  // estimates it (Monte-Carlo error ~ sqrt(p (1 - p) / n) < 0.004 at n = 20000) and its Jacobian
  // estimates softmax's, (diag(p) - p p^T) / sigma (a noisier estimate: tolerance 0.1, as optax's
  // test).
  const double sigma = 0.5;
  const Array x = f32({0.2, -0.3, 0.5, 0.0});
  auto argmax_one_hot = [](const Array& v) { return one_hot(argmax(v), 4, float32); };
  auto fn = pt::make_perturbed_fun(argmax_one_hot, 20000, sigma);
  const Array key = random::PRNGKey(0);
  const std::vector<double> p = values(softmax(x / sigma));
  check_close(fn(key, x), p, 0, 0.02);
  std::vector<double> jac(16);
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 4; ++c) jac[r * 4 + c] = ((r == c) * p[r] - p[r] * p[c]) / sigma;
  check_close(jacrev(fn, argnums<1>)(key, x), jac, 0, 0.1);
}

TEST_CASE("make_perturbed_fun: no samples or a zero sigma is a ValueError") {
  auto f = [](const Array& v) { return sum(v); };
  check_error<ValueError>([&] { pt::make_perturbed_fun(f, 0); },
                          {"make_perturbed_fun", "num_samples", "0"});
  check_error<ValueError>([&] { pt::make_perturbed_fun(f, 10, 0.0); },
                          {"make_perturbed_fun", "sigma"});
}

}  // namespace test_perturbations
