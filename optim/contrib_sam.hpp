// optax.contrib's SAM (Sharpness-Aware Minimization, Foret et al. 2021): sam, which alternates
// sync_period - 1 ascent steps of an adversarial optimizer with one step of the outer optimizer
// from the cached pre-ascent params, and normalize, the gradient normalization its adversarial
// optimizer usually starts with; optax's SAMState and NormalizeState.
#pragma once

#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include <linum/optim/base.hpp>
#include <linum/optim/transform.hpp>
#include <linum/optim/wrappers.hpp>

namespace linum::optim {

// optax.contrib.NormalizeState: normalize keeps no state.
using NormalizeState = EmptyState;

// optax.contrib.normalize(): the updates divided by their global l2 norm.
struct Normalize : StatelessTransformation<Normalize> {
  template <class U, class Q>
  U apply(const U& updates, const Q*) const {
    Array n = tree_utils::tree_l2_norm(updates);
    return linum::detail::tree_apply_skip_empty(updates, [&](const Array& g) { return g / n; });
  }
};
inline Normalize normalize() { return {}; }

// steps_since_sync: int32; cache: the params of the last outer step (None in opaque mode).
template <class S, class A, class P, class C = Array>
struct SAMState {
  BOOST_HANA_DEFINE_STRUCT(SAMState, (C, steps_since_sync), (S, opt_state), (A, adv_state),
                           (std::optional<P>, cache));
};

namespace detail {
// optax's pick_one leaf: cond * a + (1 - cond) * b in the leaf's dtype (a where for bool leaves,
// which that arithmetic would turn into int32).
Array sam_pick_one(const Array& cond, const Array& a, const Array& b);
template <class T>
T sam_pick_one(const Array& cond, const T& a, const T& b) {
  return linum::detail::tree_apply(
      a, [&](const Array& x, const Array& y) { return sam_pick_one(cond, x, y); }, b);
}
template <class T>
T sam_negate(const T& t) {
  return linum::detail::tree_apply_skip_empty(t, [](const Array& x) { return -x; });
}
// The mean over the named (vmap) axis, optax's jax.lax.pmean over batch_axis_name.
Array sam_pmean(const Array& x, const std::string& axis_name);
void check_sam(int sync_period);
}  // namespace detail

template <class Opt, class Adv>
struct Sam : ForwardingTransformation<Sam<Opt, Adv>> {
  Opt optimizer;
  Adv adv_optimizer;
  int sync_period = 2;
  bool reset_state = true, opaque_mode = false;
  std::optional<std::string> batch_axis_name;

  template <class P>
  auto init(const P& params) const {
    using S = state_t<Opt, P>;
    using A = state_t<Adv, P>;
    return SAMState<S, A, P>{zeros({}, int32), optimizer.init(params), adv_optimizer.init(params),
                             opaque_mode ? std::optional<P>() : std::optional<P>(params)};
  }
  template <class U, class S, class Q>
  std::pair<U, S> run(const U& updates, const S& s, const Q* params,
                      const ExtraArgs<Q>* extra) const {
    if (!params) throw_no_params("sam");
    return opaque_mode ? opaque(updates, s, *params, extra) : transparent(updates, s, *params);
  }

 private:
  // One optimizer per call: adversarial steps until the last of the period, which is the outer
  // optimizer's from the cache; both run every call and the states are picked.
  template <class U, class S, class Q>
  std::pair<U, S> transparent(const U& updates, const S& s, const Q& params) const {
    if (!s.cache)
      throw ValueError("sam: the state has no cache (it was made by an opaque-mode sam)");
    const Q& cache = *s.cache;
    Array first = equal(s.steps_since_sync, zeros({}, int32));
    Array last = equal(s.steps_since_sync, full({}, sync_period - 1.0, int32));
    auto [au, adv_state] = adv_optimizer.update(updates, s.adv_state, params);
    au = detail::sam_negate(au);
    auto [ou, opt_state] = optimizer.update(updates, s.opt_state, cache);
    ou = linum::detail::tree_apply_skip_empty(
        ou, [](const Array& u, const Array& c, const Array& p) { return c - p + u; }, cache,
        params);
    S next = s;
    next.cache = detail::sam_pick_one(first, params, cache);
    U out = detail::sam_pick_one(last, U(ou), U(au));
    next.adv_state = detail::sam_pick_one(
        last, reset_state ? adv_optimizer.init(params) : s.adv_state, adv_state);
    next.opt_state = detail::sam_pick_one(last, opt_state, s.opt_state);
    next.steps_since_sync =
        remainder(s.steps_since_sync + 1, full({}, static_cast<double>(sync_period), int32));
    return {std::move(out), std::move(next)};
  }

  // Every call runs the sync_period - 1 adversarial steps internally (grad_fn(params, i) gives
  // their gradients), then the outer step from params.
  template <class U, class S, class Q>
  std::pair<U, S> opaque(const U& updates, const S& s, const Q& params,
                         const ExtraArgs<Q>* extra) const {
    if (!extra || !extra->grad_fn)
      throw ValueError(
          "sam: grad_fn must be provided when opaque_mode=True (update(updates, state, params, "
          "ExtraArgs<Params>{.grad_fn = f}))");
    static_assert(std::is_same_v<U, Q>, "sam: opaque mode needs updates of the params' type");
    Q adv_params = params, adv_updates = updates;
    auto adv_state = s.adv_state;
    for (int i = 0; i < sync_period - 1; ++i) {
      auto [au, as] = adv_optimizer.update(adv_updates, adv_state, adv_params);
      adv_state = std::move(as);
      adv_params = apply_updates(adv_params, detail::sam_negate(au));
      adv_updates = extra->grad_fn(adv_params, i);
      if (batch_axis_name)
        adv_updates = linum::detail::tree_apply_skip_empty(
            adv_updates, [&](const Array& g) { return detail::sam_pmean(g, *batch_axis_name); });
    }
    if (reset_state) adv_state = adv_optimizer.init(params);
    auto [u, opt_state] = optimizer.update(adv_updates, s.opt_state, params);
    return {U(std::move(u)), S{zeros({}, int32), std::move(opt_state), std::move(adv_state), {}}};
  }
};

// optax.contrib.sam(optimizer, adv_optimizer, sync_period, reset_state, opaque_mode,
// batch_axis_name): the outer optimizer steps every sync_period calls; the calls between are
// adv_optimizer's steps up the gradient (its updates negated), typically
// chain(normalize(), sgd(rho)). reset_state re-initializes adv_optimizer after each outer step.
// opaque_mode runs the adversarial steps inside each update, which then needs
// ExtraArgs<Params>{.grad_fn = f} with f(params, step) the gradient. Needs params; ValueError
// for sync_period < 1.
template <class Opt, class Adv>
Sam<Opt, Adv> sam(Opt optimizer, Adv adv_optimizer, int sync_period = 2, bool reset_state = true,
                  bool opaque_mode = false,
                  std::optional<std::string> batch_axis_name = std::nullopt) {
  detail::check_sam(sync_period);
  Sam<Opt, Adv> t{{},          std::move(optimizer), std::move(adv_optimizer),  sync_period,
                  reset_state, opaque_mode,          std::move(batch_axis_name)};
  return t;
}

}  // namespace linum::optim
