// Linen transforms applied to a function fn(module, args...) rather than a module type: Flax's
// method decorators (@nn.vmap on __call__) and nn.scan(body_fn)(self, ...). Each returns
// (module, args...) -> result and lifts the module's scope plus its fields' (transforms_scopes).
#pragma once

#include <concepts>
#include <utility>
#include <vector>

#include <linum/nn/transforms.hpp>

namespace linum::nn {

namespace detail {
template <class F>
concept NotModule = !std::derived_from<F, ModuleBase>;

// The body of a function-form transform: fn run as a method of a copy of `module` bound to the
// lifted scopes, continuing its auto-names. It owns its copies (checkpoint recomputes later).
template <class F, class M>
auto lifted_fn(const F& fn, const M& module, NamesSlot names) {
  M proto = module.clone();
  proto.copy_autoname_cursor_from(module);
  return [fn, proto, names](const std::vector<Scope>& outer, std::vector<Scope>& inner,
                            const auto&... a) {
    M m = bind_lifted(proto, outer, inner, &proto);
    return run_as_method(m, names, fn, a...);
  };
}
// fn under the lift/ transform `make` builds, over module's scopes.
template <class Make, class F, class M, class... A>
auto lift_fn(const Make& make, const F& fn, M& module, const A&... args) {
  NamesBack back(module);
  return lift_scopes(make, module_scopes(module.scope(), module), lifted_fn(fn, module, back.slot),
                     args...);
}
}  // namespace detail

// @nn.vmap(variable_axes, split_rngs, in_axes, out_axes, axis_size, axis_name) on a method:
// nn::vmap(fn, opts)(module, args...).
template <detail::NotModule F>
auto vmap(F fn, lift::VmapOptions opts) {
  return [fn = std::move(fn), opts = std::move(opts)]<class M, class... A>(M& module,
                                                                           const A&... args) {
    return detail::lift_fn([&](auto f) { return lift::vmap(f, opts); }, fn, module, args...);
  };
}

// nn.scan(body_fn, ...)(module, carry, xs...) with body_fn(module, carry, xs...) -> (carry, ys);
// modules body_fn creates are named in the calling module.
template <detail::NotModule F>
auto scan(F fn, lift::ScanOptions opts) {
  return [fn = std::move(fn), opts = std::move(opts)]<class M, class C, class... X>(
             M& module, const C& carry, const X&... xs) {
    return detail::lift_fn([&](auto f) { return lift::scan(f, opts); }, fn, module, carry, xs...);
  };
}

// @nn.checkpoint / @nn.remat on a method: nn::checkpoint(fn, variables, rngs)(module, args...).
template <detail::NotModule F>
auto checkpoint(F fn, Filter variables = true, Filter rngs = true) {
  return [=]<class M, class... A>(M& module, const A&... args) {
    return detail::lift_fn([&](auto f) { return lift::checkpoint(f, variables, rngs); }, fn, module,
                           args...);
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
    NamesBack back(module);
    auto body = [&](Scope& s, const auto&... a) {
      LiftedSelf<M> m(module, s, back.slot);
      return m.run(fn, a...);
    };
    return forked(module.scope(), name, body, args...);
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
