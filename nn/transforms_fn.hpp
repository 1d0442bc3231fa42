// Linen transforms applied to a function fn(module, args...) rather than a module type: Flax's
// method decorators (@nn.vmap on __call__) and nn.scan(body_fn)(self, ...). Each returns
// (module, args...) -> result: the lift/ transform over detail::LiftDirect's body, lifting the
// module's scope plus its fields' (transforms_scopes.hpp).
#pragma once

#include <concepts>
#include <utility>
#include <vector>

#include <linum/nn/transforms.hpp>

namespace linum::nn {

namespace detail {
template <class F>
concept NotModule = !std::derived_from<F, ModuleBase>;
}  // namespace detail

// @nn.vmap(variable_axes, split_rngs, in_axes, out_axes, axis_size, axis_name) on a method:
// nn::vmap(fn, opts)(module, args...).
template <detail::NotModule F>
auto vmap(F fn, lift::VmapOptions opts) {
  return [fn = std::move(fn), opts = std::move(opts)]<class M, class... A>(M& module,
                                                                           const A&... args) {
    const detail::LiftDirect<M> lifted(module);
    return lift::vmap(lifted.body(fn), opts)(lifted.scopes(), args...);
  };
}

// nn.scan(body_fn, ...)(module, carry, xs...) with body_fn(module, carry, xs...) -> (carry, ys);
// modules body_fn creates are named in the calling module.
template <detail::NotModule F>
auto scan(F fn, lift::ScanOptions opts) {
  return [fn = std::move(fn), opts = std::move(opts)]<class M, class C, class... X>(
             M& module, const C& carry, const X&... xs) {
    const detail::LiftDirect<M> lifted(module);
    return lift::scan(lifted.body(fn), opts)(lifted.scopes(), carry, xs...);
  };
}

// @nn.checkpoint / @nn.remat on a method: nn::checkpoint(fn, variables, rngs)(module, args...).
template <detail::NotModule F>
auto checkpoint(F fn, Filter variables = true, Filter rngs = true) {
  return [=]<class M, class... A>(M& module, const A&... args) {
    const detail::LiftDirect<M> lifted(module);
    return lift::checkpoint(lifted.body(fn), variables, rngs)(lifted.scopes(), args...);
  };
}
template <detail::NotModule F>
auto remat(F fn, Filter variables = true, Filter rngs = true) {
  return nn::checkpoint(std::move(fn), std::move(variables), std::move(rngs));
}

// @nn.jit and nn.fold_rngs(fn)(module, args...): fn runs eagerly on a copy of the module over its
// own variables after fork_rngs (fields stay bound where they are, as for JitM).
namespace detail {
template <class F>
auto forked_fn(F fn, const char* name) {
  return [fn = std::move(fn), name]<class M, class... A>(M& module, const A&... args) {
    const LiftDirect<M> lifted(module);
    return forked(lifted.scope(), name, lifted.body(fn), args...);
  };
}
}  // namespace detail
template <detail::NotModule F>
auto jit(F fn) {
  return detail::forked_fn(std::move(fn), "jit");
}
template <detail::NotModule F>
auto fold_rngs(F fn) {
  return detail::forked_fn(std::move(fn), "fold_rngs");
}

}  // namespace linum::nn
