// optax.perturbations: make_perturbed_fun turns any function of a pytree into a smooth,
// differentiable Monte-Carlo approximation E_z f(x + sigma z), with z drawn from Gumbel (the
// default) or Normal noise by linum::random, key for key as optax under JAX.
#pragma once

#include <cstdint>
#include <type_traits>
#include <utility>

#include <linum/autodiff/ops.hpp>
#include <linum/autodiff/transforms.hpp>
#include <linum/optim/tree_random.hpp>
#include <linum/optim/tree_utils.hpp>

namespace linum::optim::perturbations {

// optax.perturbations.Normal: standard normal noise; log_prob is -x^2 / 2 (unnormalised, as
// optax's: only its gradient matters).
struct Normal {
  Array sample(const Array& key, const Shape& sample_shape = {}, DType dtype = float32) const;
  Array log_prob(const Array& inputs) const;
};

// optax.perturbations.Gumbel: standard Gumbel noise; log_prob is -x - exp(-x).
struct Gumbel {
  Array sample(const Array& key, const Shape& sample_shape = {}, DType dtype = float32) const;
  Array log_prob(const Array& inputs) const;
};

namespace detail {
// ValueError naming make_perturbed_fun for num_samples < 1 or sigma == 0 (JAX would return NaN).
void check_perturbation_args(std::int64_t num_samples, double sigma);
}  // namespace detail

// optax.perturbations.make_perturbed_fun(fun, num_samples=1000, sigma=0.1, noise=Gumbel(),
// use_baseline=true) -> g(key, x). g splits key into num_samples keys and, vmapped over them,
// draws z like x (optax.tree.random_like: one key per leaf, noise.sample(key, shape, leaf
// dtype)), evaluates fun at y = stop_gradient(x + sigma z) and weights it by the magic box
// exp(l - stop_gradient(l)), l = sum of noise.log_prob((y - x) / sigma): one in value, the
// score-function estimator in derivative, at every order. With use_baseline, fun(x) (without
// gradient) is added with weight 1 - box to reduce the variance. g returns the mean over the
// samples, a tree shaped like fun's output. noise is any type with optax's sample / log_prob.
template <class F, class Noise = Gumbel>
auto make_perturbed_fun(F fun, std::int64_t num_samples = 1000, double sigma = 0.1,
                        Noise noise = Noise(), bool use_baseline = true) {
  detail::check_perturbation_args(num_samples, sigma);
  return [fun = std::move(fun), num_samples, sigma, noise = std::move(noise),
          use_baseline]<class X>(const Array& key, const X& x) {
    using linum::detail::tree_apply_skip_empty;
    using R = std::decay_t<std::invoke_result_t<const F&, const X&>>;
    // One perturbed evaluation, weighted by the magic box; the baseline term when given.
    auto estimate = [&](const Array& k, const X& xs, const R* baseline) -> R {
      const X z = tree_utils::tree_random_like(
          k, xs,
          [&](const Array& kk, const Shape& s, DType dt) { return noise.sample(kk, s, dt); });
      const X shifted = tree_apply_skip_empty(
          xs, [&](const Array& a, const Array& b) { return stop_gradient(a + sigma * b); }, z);
      const X sample = tree_apply_skip_empty(
          xs, [&](const Array& a, const Array& y) { return (y - a) / sigma; }, shifted);
      const Array log_prob = tree_utils::tree_sum(
          tree_apply_skip_empty(sample, [&](const Array& s) { return noise.log_prob(s); }));
      const Array box = exp(log_prob - stop_gradient(log_prob));
      R out = tree_apply_skip_empty(fun(shifted), [&](const Array& o) { return box * o; });
      if (!baseline) return out;
      return tree_apply_skip_empty(
          out, [&](const Array& o, const Array& b) { return o + (1.0 - box) * b; }, *baseline);
    };
    const Array keys = random::split(key, num_samples);
    R out;
    if (use_baseline) {
      const R baseline =
          fun(tree_apply_skip_empty(x, [](const Array& a) { return stop_gradient(a); }));
      out = vmap([&](const Array& k, const X& xs, const R& b) { return estimate(k, xs, &b); },
                 {.in_axes = {0, VmapOptions::kNone, VmapOptions::kNone}})(keys, x, baseline);
    } else {
      out = vmap([&](const Array& k, const X& xs) { return estimate(k, xs, nullptr); },
                 {.in_axes = {0, VmapOptions::kNone}})(keys, x);
    }
    return tree_apply_skip_empty(out, [](const Array& o) { return mean(o, {0}); });
  };
}

}  // namespace linum::optim::perturbations
