// optax's L-BFGS: scale_by_lbfgs (ScaleByLBFGSState: the last memory_size differences of params
// and updates, applied by the two-loop recursion) and the lbfgs alias, whose default
// linesearch is scale_by_zoom_linesearch(max_linesearch_steps=20, initial_guess_strategy="one").
//
//   auto opt = optim::lbfgs();
//   auto state = opt.init(params);
//   auto value_and_grad = optim::value_and_grad_from_state(f);
//   for (...) {
//     auto [value, grad] = value_and_grad(params, state);
//     auto [updates, next] = opt.update(grad, state, params, {value, grad, f});
//     state = next;
//     params = optim::apply_updates(params, updates);
//   }
#pragma once

#include <cstdint>
#include <optional>
#include <type_traits>
#include <utility>

#include <linum/optim/adaptive.hpp>
#include <linum/optim/combine.hpp>
#include <linum/optim/linesearch.hpp>
#include <linum/optim/transform.hpp>

namespace linum::optim {

// diff_*_memory: per leaf, memory_size rows of the leaf's shape; weights_memory: the 1 / <dw, du>
// of each row.
template <class P, class C = Array>
struct ScaleByLBFGSState {
  BOOST_HANA_DEFINE_STRUCT(ScaleByLBFGSState, (C, count), (P, params), (P, updates),
                           (P, diff_params_memory), (P, diff_updates_memory),
                           (Array, weights_memory));
};

namespace detail {
// One step over the leaves (lbfgs.cpp): the preconditioned updates and the new memories.
struct LbfgsStep {
  Arrays updates, diff_params_memory, diff_updates_memory;
  Array weights_memory;
};
LbfgsStep lbfgs_step(bool scale_init_precond, std::int64_t count, const Arrays& updates,
                     const Arrays& params, const Arrays& prev_params, const Arrays& prev_updates,
                     const Arrays& dp_memory, const Arrays& du_memory, const Array& weights);
Array lbfgs_memory_leaf(std::int64_t memory_size, const Array& p);
}  // namespace detail

// optax.scale_by_lbfgs: the updates multiplied by L-BFGS's inverse-Hessian approximation, the
// initial one scaled by <dw, du> / |du|^2 (by min(1, 1 / |updates|) at the first step) when
// scale_init_precond. Needs params; runs eagerly (the memory slot is chosen on the host).
struct ScaleByLBFGS : Transformation<ScaleByLBFGS> {
  std::int64_t memory_size = 10;
  bool scale_init_precond = true;
  template <class P>
  ScaleByLBFGSState<P> init(const P& params) const {
    const std::int64_t m = memory_size;
    P mem = linum::detail::tree_apply_skip_empty(
        params, [m](const Array& p) { return detail::lbfgs_memory_leaf(m, p); });
    return {zero_count(), tree_utils::tree_zeros_like(params), tree_utils::tree_zeros_like(params),
            mem, mem, zeros({m}, detail::scalar_dtype(params))};
  }
  template <class U, class P, class Q>
  std::pair<U, ScaleByLBFGSState<P>> update_impl(const U& updates, const ScaleByLBFGSState<P>& s,
                                                 const Q* params) const {
    if (!params) throw_no_params("scale_by_lbfgs");
    using linum::detail::tree_arrays;
    detail::LbfgsStep r = detail::lbfgs_step(
        scale_init_precond, concrete_count(s.count, "scale_by_lbfgs"), tree_arrays(updates),
        tree_arrays(*params), tree_arrays(s.params), tree_arrays(s.updates),
        tree_arrays(s.diff_params_memory), tree_arrays(s.diff_updates_memory), s.weights_memory);
    return {pytree::tree_unflatten_like(updates, r.updates),
            {safe_increment(s.count), P(*params), P(updates),
             pytree::tree_unflatten_like(s.diff_params_memory, r.diff_params_memory),
             pytree::tree_unflatten_like(s.diff_updates_memory, r.diff_updates_memory),
             r.weights_memory}};
  }
};
inline ScaleByLBFGS scale_by_lbfgs(std::int64_t memory_size = 10, bool scale_init_precond = true) {
  if (memory_size < 1) throw ValueError("memory_size must be >= 1");
  ScaleByLBFGS t;
  t.memory_size = memory_size, t.scale_init_precond = scale_init_precond;
  return t;
}

// optax.lbfgs: scale_by_lbfgs, -lr (scale(-1) for learning_rate std::nullopt, optax's None),
// the linesearch (none for std::nullopt).
template <class LR = std::nullopt_t, class LS = ScaleByZoomLinesearch>
auto lbfgs(LR learning_rate = std::nullopt, std::int64_t memory_size = 10,
           bool scale_init_precond = true,
           LS linesearch = scale_by_zoom_linesearch(20, std::nullopt, 0.0, 2.0, 1e-4, 0.9, 1e-6,
                                                    1e-5, "one")) {
  auto base_scaling = [&] {
    if constexpr (std::is_same_v<LR, std::nullopt_t>)
      return scale(-1.0);
    else
      return scale_by_learning_rate(std::move(learning_rate));
  }();
  auto search = [&] {
    if constexpr (std::is_same_v<LS, std::nullopt_t>)
      return identity();
    else
      return std::move(linesearch);
  }();
  return chain(scale_by_lbfgs(memory_size, scale_init_precond), std::move(base_scaling),
               std::move(search));
}

}  // namespace linum::optim
