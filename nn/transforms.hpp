// flax.linen's lifted transforms over modules (spec §3.3): a transformed module type
// (nn::vmap(nn::Dense(2), {...}) is a VmapDense whose params live under its own name) and the
// direct transforms over functions taking a module first (nn::value_and_grad(fn, module, x)).
// Each is the lift/ transform around a copy of the module bound to the lifted scope; they add
// no semantics of their own.
#pragma once

#include <utility>

#include <linum/lift/transforms.hpp>
#include <linum/lift/transforms_ad.hpp>
#include <linum/nn/module.hpp>

namespace linum::nn {

namespace detail {
// A copy of `proto` bound as the root of a lifted scope.
template <class M>
M bind_inner(const M& proto, const Scope& inner) {
  M m = proto.clone();
  m.bind_root(inner);
  return m;
}
// A copy of the running module `outer` bound to a lifted scope, continuing its auto-names (the
// direct transforms' module argument, Flax's _state.export/reimport).
template <class M>
struct LiftedSelf {
  M& outer;
  M inner;
  LiftedSelf(M& o, const Scope& s) : outer(o), inner(o.clone()) {
    inner.copy_autoname_cursor_from(outer);
    inner.bind_root(s);
  }
  ~LiftedSelf() { outer.copy_autoname_cursor_from(inner); }
  LiftedSelf(const LiftedSelf&) = delete;
  LiftedSelf& operator=(const LiftedSelf&) = delete;
};
}  // namespace detail

// ---- transformed module types ------------------------------------------------------------------

// nn.vmap(Module, variable_axes, split_rngs, in_axes, out_axes, axis_size, axis_name).
template <class M>
struct Vmap : Module<Vmap<M>> {
  M target;
  lift::VmapOptions opts;
  Vmap(M t, lift::VmapOptions o) : target(std::move(t)), opts(std::move(o)) { target.orphan(); }
  template <class... A>
  auto call(const A&... args) {
    auto fn = [this](Scope& s, const auto&... a) {
      M m = detail::bind_inner(target, s);
      return m(a...);
    };
    return lift::vmap(fn, opts)(this->scope(), args...);
  }
};
template <class M>
Vmap<M> vmap(M target, lift::VmapOptions opts) {
  return Vmap<M>(std::move(target), std::move(opts));
}

// nn.scan(Module, variable_axes, variable_broadcast, variable_carry, split_rngs, in_axes,
// out_axes, length, reverse): the module's call(carry, xs...) -> (carry, ys) runs over the xs.
template <class M>
struct Scan : Module<Scan<M>> {
  M target;
  lift::ScanOptions opts;
  Scan(M t, lift::ScanOptions o) : target(std::move(t)), opts(std::move(o)) { target.orphan(); }
  template <class C, class... X>
  auto call(const C& carry, const X&... xs) {
    auto fn = [this](Scope& s, const auto& c, const auto&... x) {
      M m = detail::bind_inner(target, s);
      return m(c, x...);
    };
    return lift::scan(fn, opts)(this->scope(), carry, xs...);
  }
};
template <class M>
Scan<M> scan(M target, lift::ScanOptions opts) {
  return Scan<M>(std::move(target), std::move(opts));
}

// ---- direct transforms: functions whose first argument is a module -----------------------------

// nn.vjp(fn, module, *primals) -> (y, bwd) with bwd(ct) = (params grads, primal grads...).
template <class F, class M, class... P>
auto vjp(F fn, M& module, const P&... primals) {
  auto body = [&](Scope& s, const auto&... p) {
    detail::LiftedSelf<M> m(module, s);
    return fn(m.inner, p...);
  };
  return lift::vjp(body, module.scope(), primals...);
}

// nn.value_and_grad(fn, module, *primals) -> (y, (grad of each primal...)); y must be a scalar.
template <class F, class M, class... P>
auto value_and_grad(F fn, M& module, const P&... primals) {
  auto body = [&](Scope& s, const auto&... p) {
    detail::LiftedSelf<M> m(module, s);
    Array y = fn(m.inner, p...);
    if (y.ndim() != 0) {
      throw ValueError("grad can only work on functions with scalar-valued outputs. out shape=" +
                       linum::detail::aval_str(y));
    }
    return y;
  };
  return lift::value_and_grad(body, module.scope(), primals...);
}
// nn.grad: the gradients only.
template <class F, class M, class... P>
auto grad(F fn, M& module, const P&... primals) {
  return nn::value_and_grad(std::move(fn), module, primals...).second;
}

// nn.jvp(fn, module, primals, tangents, variable_tangents) -> (y, y_tangent).
template <class F, class M, class... P, class... T>
auto jvp(F fn, M& module, const std::tuple<P...>& primals, const std::tuple<T...>& tangents,
         const Tree& variable_tangents = Tree::dict()) {
  auto body = [&](Scope& s, const auto&... p) {
    detail::LiftedSelf<M> m(module, s);
    return fn(m.inner, p...);
  };
  return lift::jvp(body, module.scope(), primals, tangents, variable_tangents);
}

}  // namespace linum::nn
