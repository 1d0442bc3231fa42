// optax's utilities outside the transformations: scale_gradient (identity forward, scaled
// cotangent backward) and multi_normal (a diagonal Gaussian from loc and log_scale), against
// closed forms worked out in the comments; and tree_real / tree_conj over complex leaves.
#include <cmath>
#include <complex>
#include <map>
#include <numbers>
#include <string>

#include "helpers.hpp"

namespace test_optax_utils {

using namespace linum;
using optim_test::check_close;
using optim_test::f64;
using optim_test::values;
using testing::check_error;

TEST_CASE("scale_gradient: the identity forward, the cotangent times scale backward") {
  const Array x = f64({1.0, -2.0, 3.0});
  CHECK(values(optim::scale_gradient(x, 0.5)) == values(x));
  // d/dx sum(scale_gradient(x, s)^2) = s * 2x.
  for (double s : {0.5, 0.0, 1.0, -3.0}) {
    INFO("scale " << s);
    Array g = grad([s](const Array& v) { return sum(square(optim::scale_gradient(v, s))); })(x);
    check_close(g, {2 * s * 1.0, 2 * s * -2.0, 2 * s * 3.0}, 1e-15);
  }
  // Only the path through scale_gradient is scaled: d/dx [x * scale_gradient(x, 0.5)] = x + 0.5x.
  Array g = grad([](const Array& v) { return sum(v * optim::scale_gradient(v, 0.5)); })(x);
  check_close(g, {1.5, -3.0, 4.5}, 1e-15);
}

TEST_CASE("scale_gradient: pytrees, vmap and second order through scale 1 / 0") {
  using Params = std::map<std::string, Array>;
  Params p{{"a", f64({1.0, 2.0})}, {"b", f64({3.0})}};
  auto loss = [](const Params& q) {
    Params s = optim::scale_gradient(q, 2.0);
    return sum(s.at("a")) + 3.0 * sum(s.at("b"));
  };
  Params g = grad(loss)(p);
  check_close(g.at("a"), {2.0, 2.0});
  check_close(g.at("b"), {6.0});
  // Per-example gradients: vmap(grad) of sum(scale_gradient(x, 3) * x) = 3x + x.
  Array xs = array({{1.0, 2.0}, {3.0, 4.0}});
  Array gs = vmap(grad([](const Array& v) { return sum(optim::scale_gradient(v, 3.0) * v); }))(xs);
  check_close(gs, {4.0, 8.0, 12.0, 16.0}, 1e-15);
  // Scale 0 is stop_gradient and scale 1 the input itself, so forward mode works for them.
  auto [y, t] = jvp([](const Array& v) { return optim::scale_gradient(v, 1.0) * 2.0; },
                    std::tuple{f64({1.0})}, std::tuple{f64({1.0})});
  check_close(t, {2.0});
  auto [y0, t0] = jvp([](const Array& v) { return optim::scale_gradient(v, 0.0) * 2.0; },
                      std::tuple{f64({1.0})}, std::tuple{f64({1.0})});
  check_close(t0, {0.0});
}

TEST_CASE("multi_normal: samples are normal(key, shape + param shape) * exp(log_scale) + loc") {
  const Array loc = f64({0.0, 1.0, -2.0}), log_scale = f64({0.0, std::log(2.0), std::log(0.5)});
  auto dist = optim::multi_normal(loc, log_scale);
  CHECK(dist.param_shape() == Shape{3});
  const Array key = random::PRNGKey(5);
  Array s = dist.sample({4}, key);
  CHECK(s.shape() == Shape{4, 3});
  CHECK(s.dtype() == float64);
  Array z = random::normal(key, {4, 3}, float64);
  check_close(s, values(z * array({1.0, 2.0, 0.5}) + loc), 1e-15);
  // float32 parameters sample in float32 (JAX's default float).
  CHECK(optim::multi_normal(array({0.0f}), array({0.0f})).sample({2}, key).dtype() == float32);
  // params is [loc, log_scale].
  auto ps = dist.params();
  REQUIRE(ps.size() == 2);
  CHECK(values(ps[0]) == values(loc));
  CHECK(values(ps[1]) == values(dist.log_scale()));
}

TEST_CASE("multi_normal: log_prob sums the normal log-densities over the parameter axes") {
  // loc (0, 1), scale (1, 2). x (1, 1): -1/2 - l/2 for the first, -log 2 - l/2 for the second
  // (l = log 2 pi). x (2, 1): -2 - l/2 and -log 2 - l/2.
  auto dist = optim::multi_normal(f64({0.0, 1.0}), f64({0.0, std::log(2.0)}));
  const double l = std::log(2.0 * std::numbers::pi);
  Array lp = dist.log_prob(array({{1.0, 1.0}, {2.0, 1.0}}));
  CHECK(lp.shape() == Shape{2});
  check_close(lp, {-0.5 - std::log(2.0) - l, -2.0 - std::log(2.0) - l}, 1e-14);
  // Parameters broadcast: a scalar log_scale with a (2,) loc.
  auto b = optim::multi_normal(f64({0.0, 1.0}), Array(0.0));
  check_close(b.log_prob(f64({0.0, 1.0})), {-l}, 1e-14);
  // Scalar parameters: nothing to sum.
  check_close(optim::multi_normal(Array(0.0), Array(0.0)).log_prob(Array(0.0)), {-l / 2}, 1e-14);
}

TEST_CASE("multi_normal: bad parameters and samples") {
  check_error<ValueError>(
      [] {
        optim::multi_normal(f64({0.0, 1.0}), f64({0.0, 1.0, 2.0}));
      },
      {"multi_normal", "(2,)", "(3,)"});
  check_error<TypeError>(
      [] {
        optim::multi_normal(array({0, 1}), f64({0.0, 0.0}));
      },
      {"multi_normal", "int32"});
  // x must broadcast against the parameters.
  check_error<ValueError>(
      [] {
        optim::multi_normal(ones({2, 3}, float64), ones({2, 3}, float64))
            .log_prob(ones({4}, float64));
      },
      {"(4,)", "(2, 3)"});
}

TEST_CASE("tree_real / tree_conj: jnp.real / jnp.conj of every leaf") {
  using Params = std::map<std::string, Array>;
  Params t{{"z", array(std::vector<std::complex<double>>{{1.0, 2.0}, {-3.0, 0.5}})},
           {"r", f64({4.0})}};
  Params re = optim::tree_utils::tree_real(t);
  CHECK(re.at("z").dtype() == float64);
  check_close(re.at("z"), {1.0, -3.0});
  check_close(re.at("r"), {4.0});
  Params cj = optim::tree_utils::tree_conj(t);
  CHECK(cj.at("z").dtype() == complex128);
  check_close(imag(cj.at("z")), {-2.0, -0.5});
  check_close(real(cj.at("z")), {1.0, -3.0});
}

}  // namespace test_optax_utils
