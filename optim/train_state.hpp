// flax.training.train_state.TrainState: step, params and opt_state (the pytree fields) plus the
// static fields apply_fn and tx. create() initialises the optimizer; apply_gradients() takes
// one step.
#pragma once

#include <cstddef>
#include <utility>

#include <linum/autodiff/array.hpp>
#include <linum/optim/base.hpp>
#include <linum/optim/erased.hpp>
#include <linum/pytree/static_field.hpp>

namespace linum::optim {

// TrainState<P> (the defaults) holds a run-time chosen optimizer and no apply_fn;
// create_train_state(apply_fn, params, tx) deduces every type from its arguments.
template <class P, class Tx = GradientTransformation<P>, class ApplyFn = std::nullptr_t>
struct TrainState {
  using OptState = state_t<Tx, P>;
  BOOST_HANA_DEFINE_STRUCT(TrainState, (Array, step), (P, params), (OptState, opt_state));
  // flax: struct.field(pytree_node=False). Not leaves; kept by tree_map, grad, vmap and
  // tree_unflatten; part of the treedef. Shared holders, so a TrainState stays assignable
  // whatever the function and optimizer types are.
  pytree::Static<ApplyFn> apply_fn;
  pytree::Static<Tx> tx;
  LINUM_PYTREE_STATIC_FIELDS(TrainState, apply_fn, tx);

  // flax's TrainState.create: step 0, opt_state = tx.init(params). Flax's step is the Python
  // int 0 (then step + 1): here a weakly typed int32 scalar, which to_bytes writes as a msgpack
  // int as Flax does.
  static TrainState create(ApplyFn apply_fn, P params, Tx tx) {
    TrainState s;
    s.step = Array(0);
    s.opt_state = tx.init(params);
    s.params = std::move(params);
    s.apply_fn = std::move(apply_fn);
    s.tx = std::move(tx);
    return s;
  }

  // One optimizer step: step + 1, params + updates, the new opt_state.
  TrainState apply_gradients(const P& grads) const {
    if (!tx) {
      throw ValueError(
          "TrainState.apply_gradients: this TrainState has no tx (it was default-constructed); "
          "make it with TrainState::create or create_train_state");
    }
    auto [updates, new_opt_state] = tx->update(grads, opt_state, params);
    TrainState s = *this;
    s.step = step + 1;
    s.params = apply_updates(params, updates);
    s.opt_state = std::move(new_opt_state);
    return s;
  }
};

template <class ApplyFn, class P, class Tx>
TrainState<P, Tx, ApplyFn> create_train_state(ApplyFn apply_fn, P params, Tx tx) {
  return TrainState<P, Tx, ApplyFn>::create(std::move(apply_fn), std::move(params), std::move(tx));
}

}  // namespace linum::optim
