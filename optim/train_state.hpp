// flax.training.train_state.TrainState: step, params and opt_state (the pytree fields) plus the
// static apply_fn and tx. create() initialises the optimizer; apply_gradients() takes one step.
#pragma once

#include <cstddef>
#include <memory>
#include <utility>

#include <linum/autodiff/array.hpp>
#include <linum/optim/base.hpp>
#include <linum/optim/erased.hpp>

namespace linum::optim {

// TrainState<P> (the defaults) holds a run-time chosen optimizer and no apply_fn;
// create_train_state(apply_fn, params, tx) deduces every type from its arguments.
template <class P, class Tx = GradientTransformation<P>, class ApplyFn = std::nullptr_t>
struct TrainState {
  using OptState = state_t<Tx, P>;
  BOOST_HANA_DEFINE_STRUCT(TrainState, (Array, step), (P, params), (OptState, opt_state));

  // flax's TrainState.create: step 0, opt_state = tx.init(params).
  static TrainState create(ApplyFn apply_fn, P params, Tx tx) {
    TrainState s;
    s.step = zeros({}, int32);
    s.opt_state = tx.init(params);
    s.params = std::move(params);
    s.statics_ = std::make_shared<const Statics>(Statics{std::move(apply_fn), std::move(tx)});
    return s;
  }

  // One optimizer step: step + 1, params + updates, the new opt_state.
  TrainState apply_gradients(const P& grads) const {
    auto [updates, new_opt_state] = tx().update(grads, opt_state, params);
    TrainState s = *this;
    s.step = step + 1;
    s.params = apply_updates(params, updates);
    s.opt_state = std::move(new_opt_state);
    return s;
  }

  // The static fields. A TrainState rebuilt from leaves (tree_unflatten, or inside a transform
  // that takes the whole state as an argument) has only the pytree fields: ValueError here.
  const Tx& tx() const { return statics("tx").tx; }
  template <class... A>
  decltype(auto) apply_fn(A&&... args) const {
    return statics("apply_fn").apply_fn(std::forward<A>(args)...);
  }
  bool has_static_fields() const { return statics_ != nullptr; }

 private:
  struct Statics {
    ApplyFn apply_fn;
    Tx tx;
  };
  const Statics& statics(const char* field) const {
    if (!statics_) {
      throw ValueError(std::string("TrainState.") + field +
                       ": this TrainState was rebuilt from its leaves and has no static fields "
                       "(apply_fn, tx); pass state.params through transforms, or copy the fields "
                       "of a rebuilt state into the original");
    }
    return *statics_;
  }
  std::shared_ptr<const Statics> statics_;
};

template <class ApplyFn, class P, class Tx>
TrainState<P, Tx, ApplyFn> create_train_state(ApplyFn apply_fn, P params, Tx tx) {
  return TrainState<P, Tx, ApplyFn>::create(std::move(apply_fn), std::move(params), std::move(tx));
}

}  // namespace linum::optim
