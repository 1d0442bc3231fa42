// optax.contrib's Sophia (Liu et al. 2023, a clipped second-order optimizer): sophia and
// scale_by_sophia, which divide the momentum by an EMA of the Hessian's diagonal refreshed every
// update_interval steps, and hutchinson_estimator_diag_hessian, the default estimate of that
// diagonal (Hutchinson's (H r) * r with Rademacher signs r), with optax's states. The per-leaf
// math is in contrib_sophia.cpp.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <type_traits>
#include <utility>

#include <linum/autodiff/control_flow.hpp>
#include <linum/autodiff/random/random.hpp>
#include <linum/optim/combine.hpp>
#include <linum/optim/fused.hpp>
#include <linum/optim/transform.hpp>
#include <linum/optim/tree_random.hpp>
#include <linum/optim/wrappers.hpp>

namespace linum::optim {

template <class K = Array>
struct HutchinsonState {
  BOOST_HANA_DEFINE_STRUCT(HutchinsonState, (K, key));
};

// mu: the momentum (in mu_dtype); nu: the EMA of the Hessian diagonal; hessian_fn_state: the
// state of hessian_diagonal_fn.
template <class P, class H, class C = Array>
struct SophiaState {
  BOOST_HANA_DEFINE_STRUCT(SophiaState, (C, count), (P, mu), (P, nu), (H, hessian_fn_state));
};

namespace detail {
// The two keys optax takes from jax.random.split(key): the next state's and this step's.
std::pair<Array, Array> split_key(const Array& key);
// One leaf of scale_by_sophia's step: {update, mu}; nu is the EMA before this step.
struct SophiaConfig {
  double b1, b2, eps, gamma;
  std::optional<double> clip_threshold;
  std::optional<DType> mu_dtype;
};
std::array<Array, 2> sophia_leaf(const SophiaConfig& c, const Array& count_inc, const Array& g,
                                 const Array& mu, const Array& nu);
// Prints "Sophia optimizer win rate: r" (the share of unclipped entries) every `every` steps.
void print_sophia_win_rate(const Array& count_inc, int every, const Array& not_clipped,
                           std::int64_t size);
[[noreturn]] void throw_hutchinson_needs(const char* what);
}  // namespace detail

// optax.contrib.hutchinson_estimator_diag_hessian(random_seed): the updates become (H r) * r for
// H the Hessian of obj_fn at params and r Rademacher signs (in the params' lowest dtype), an
// unbiased estimate of H's diagonal; the state's key is split each step. update needs params and
// ExtraArgs<Params>{.obj_fn = f} (f: params -> scalar loss); it ignores the updates.
struct HutchinsonEstimatorDiagHessian : Transformation<HutchinsonEstimatorDiagHessian> {
  std::optional<Array> random_seed;
  template <class P>
  HutchinsonState<> init(const P&) const {
    return {random_seed ? *random_seed : random::PRNGKey(0)};
  }
  template <class U, class Q>
  std::pair<U, HutchinsonState<>> update_impl(const U&, const HutchinsonState<>&,
                                              const Q* params) const {
    detail::throw_hutchinson_needs(params ? "obj_fn" : "params");
  }
  template <class U, class Q>
  std::pair<U, HutchinsonState<>> update_extra(const U&, const HutchinsonState<>& s,
                                               const Q* params, const ExtraArgs<Q>& extra) const {
    if (!params) detail::throw_hutchinson_needs("params");
    if (!extra.obj_fn) detail::throw_hutchinson_needs("obj_fn");
    auto [key, subkey] = detail::split_key(s.key);
    Q signs = tree_utils::tree_random_like(
        subkey, *params,
        [](const Array& k, const Shape& shape, DType dt) {
          return random::rademacher(k, shape, dt);
        },
        float32);
    signs = tree_utils::tree_cast(signs, tree_utils::tree_dtype(*params, "lowest"));
    auto [g, hvp] = jvp(grad(extra.obj_fn), std::tuple{*params}, std::tuple{signs});
    Q product = linum::detail::tree_apply_skip_empty(
        hvp, [](const Array& h, const Array& r) { return h * r; }, signs);
    return {U(std::move(product)), {key}};
  }
};
inline HutchinsonEstimatorDiagHessian hutchinson_estimator_diag_hessian(
    std::optional<Array> random_seed = std::nullopt) {
  HutchinsonEstimatorDiagHessian t;
  t.random_seed = std::move(random_seed);
  return t;
}

// optax.contrib's scale_by_sophia: mu_hat / max(gamma * nu, eps) (mu the bias-corrected EMA of
// the gradients, nu the EMA of hessian_diagonal_fn's estimates), clipped to +-clip_threshold;
// nu is refreshed (from the state before this step) when count % update_interval == 0.
// hessian_diagonal_fn gets the gradients, params and the extra arguments of this update.
template <class H>
struct ScaleBySophia : ForwardingTransformation<ScaleBySophia<H>> {
  detail::SophiaConfig c{0.965, 0.99, 1e-8, 0.01, 1.0, std::nullopt};
  std::int64_t update_interval = 10;
  H hessian_diagonal_fn;
  bool verbose = false;
  int print_win_rate_every_n_steps = 0;

  template <class P>
  auto init(const P& params) const {
    auto h = hessian_diagonal_fn.init(params);
    return SophiaState<P, decltype(h)>{zero_count(),
                                       tree_utils::tree_zeros_like(params, c.mu_dtype),
                                       tree_utils::tree_zeros_like(params), std::move(h)};
  }
  template <class U, class S, class Q>
  std::pair<U, S> run(const U& updates, const S& s, const Q* params,
                      const ExtraArgs<Q>* extra) const {
    if (!params) throw ValueError("sophia: params must be provided to sophia's update function.");
    Array count_inc = safe_increment(s.count);
    auto [out, l] = detail::map_leaves<2>(
        updates, static_cast<const U*>(nullptr), false,
        [&](const Array& g, const Array*, const Array& m, const Array& v) {
          return detail::sophia_leaf(c, count_inc, g, m, v);
        },
        s.mu, s.nu);
    if (verbose && c.clip_threshold) {
      Array not_clipped = zeros({}, int32);
      for (const Array& u : linum::detail::tree_arrays(out))
        if (u.valid()) not_clipped = not_clipped + sum(astype(abs(u) < *c.clip_threshold, int32));
      detail::print_sophia_win_rate(count_inc, print_win_rate_every_n_steps, not_clipped,
                                    tree_utils::tree_size(out));
    }
    using HS = std::decay_t<decltype(s.hessian_fn_state)>;
    using P = std::decay_t<decltype(s.nu)>;
    auto refresh = [&](const HS& hs, const P& nu) {
      auto [diag, next] = detail::inner_update(hessian_diagonal_fn, updates, hs, params, extra);
      return std::pair<HS, P>(std::move(next), tree_utils::tree_update_moment(diag, nu, c.b2, 1));
    };
    auto keep = [](const HS& hs, const P& nu) { return std::pair<HS, P>(hs, nu); };
    auto [hs, nu] =
        cond(equal(remainder(s.count, Array(static_cast<int>(update_interval))), zeros({}, int32)),
             refresh, keep, s.hessian_fn_state, s.nu);
    S next{count_inc, detail::rebuild_walked(s.mu, l[0]), std::move(nu), std::move(hs)};
    return {std::move(out), std::move(next)};
  }
};

// optax.contrib.scale_by_sophia(b1, b2, eps, gamma, clip_threshold, update_interval,
// hessian_diagonal_fn, mu_dtype, verbose, print_win_rate_every_n_steps): clip_threshold
// std::nullopt does not clip.
template <class H = HutchinsonEstimatorDiagHessian>
ScaleBySophia<H> scale_by_sophia(double b1 = 0.965, double b2 = 0.99, double eps = 1e-8,
                                 double gamma = 0.01, std::optional<double> clip_threshold = 1.0,
                                 std::int64_t update_interval = 10,
                                 H hessian_diagonal_fn = hutchinson_estimator_diag_hessian(),
                                 std::optional<DType> mu_dtype = std::nullopt, bool verbose = false,
                                 int print_win_rate_every_n_steps = 0) {
  if (update_interval <= 0)
    throw ValueError("sophia: update_interval must be positive, got " +
                     std::to_string(update_interval));
  // Aggregate initialisation: a capturing estimator has no default constructor.
  ScaleBySophia<H> t{{},
                     {b1, b2, eps, gamma, clip_threshold, mu_dtype},
                     update_interval,
                     std::move(hessian_diagonal_fn),
                     verbose,
                     print_win_rate_every_n_steps};
  return t;
}

// optax.contrib.sophia(learning_rate, b1, b2, eps, weight_decay, weight_decay_mask, gamma,
// clip_threshold, update_interval, hessian_diagonal_fn, mu_dtype, verbose,
// print_win_rate_every_n_steps): scale_by_sophia, add_decayed_weights, -lr. The default
// Hessian estimate needs update(grads, state, params, ExtraArgs<Params>{.obj_fn = loss}).
template <class LR, class Mask = NoMask, class H = HutchinsonEstimatorDiagHessian>
auto sophia(LR learning_rate, double b1 = 0.965, double b2 = 0.99, double eps = 1e-8,
            double weight_decay = 1e-4, Mask weight_decay_mask = {}, double gamma = 0.01,
            std::optional<double> clip_threshold = 1.0, std::int64_t update_interval = 10,
            H hessian_diagonal_fn = hutchinson_estimator_diag_hessian(),
            std::optional<DType> mu_dtype = std::nullopt, bool verbose = false,
            int print_win_rate_every_n_steps = 0) {
  return chain(scale_by_sophia(b1, b2, eps, gamma, clip_threshold, update_interval,
                               std::move(hessian_diagonal_fn), mu_dtype, verbose,
                               print_win_rate_every_n_steps),
               add_decayed_weights(weight_decay, std::move(weight_decay_mask)),
               scale_by_learning_rate(std::move(learning_rate)));
}

}  // namespace linum::optim
