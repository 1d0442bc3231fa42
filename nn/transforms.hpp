// flax.linen's lifted transforms over modules (flax/linen/transforms.py): a transformed module type
// (nn::vmap(nn::Dense(2), {...}) is a VmapDense whose params live under its own name) and the
// direct transforms over functions taking a module first (nn::value_and_grad(fn, module, x)).
// Each is the lift/ transform around a copy of the module bound to the lifted scope; they add
// no semantics of their own.
#pragma once

#include <concepts>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <linum/lift/jit.hpp>
#include <linum/lift/transforms.hpp>
#include <linum/lift/transforms_ad.hpp>
#include <linum/lift/transforms_cf.hpp>
#include <linum/lift/transforms_vars.hpp>
#include <linum/nn/module.hpp>
#include <linum/nn/transforms_scopes.hpp>

namespace linum::nn {

namespace detail {
// The module a transformed type wraps is a prototype (Flax's Module class): a module already
// bound to a scope would silently lose its variables there, so it is Flax's
// TransformTargetError. A prototype built inside a compact method gives its auto-name back.
template <class M>
void take_target(M& target, const char* transform) {
  target.orphan();
  if (target.is_bound()) {
    throw lift::TransformTargetError(
        std::string("nn::") + transform + " expects an unbound module prototype (as Flax's " +
        "transforms expect a Module class), but the " + target.type_name() +
        " passed is already bound at \"" + target.scope().path_text() + "\"; pass a fresh " +
        target.type_name() + "(...)");
  }
}
}  // namespace detail

// ---- transformed module types ------------------------------------------------------------------

namespace detail {
// The base of a module-class transform (Flax's lift_transform: nn.vmap(Dense), nn.remat(Dense)):
// calling it runs the wrapped module's call under the transform. Flax records and captures only
// that inner call (tabulate's row for the transform's path is the wrapped class's first call,
// capture_intermediates sows the wrapped call's output), so the transform's own call is a method
// neither sees ("<lambda>", as a direct transform's body).
template <class D>
struct LiftedModule : Module<D> {
  template <class... A>
  decltype(auto) operator()(A&&... args) {
    return this->method("<lambda>", [&]() -> decltype(auto) {
      return static_cast<D&>(*this).call(std::forward<A>(args)...);
    });
  }
};
}  // namespace detail

// nn.vmap(Module, variable_axes, split_rngs, in_axes, out_axes, axis_size, axis_name).
template <class M>
struct Vmap : detail::LiftedModule<Vmap<M>> {
  M target;
  lift::VmapOptions opts;
  Vmap(M t, lift::VmapOptions o) : target(std::move(t)), opts(std::move(o)) {
    detail::take_target(target, "vmap");
  }
  template <class... A>
  auto call(const A&... args) {
    return lift::vmap(detail::lifted_call(target), opts)(
        detail::module_scopes(this->scope(), target), args...);
  }
};
template <class M>
requires std::derived_from<M, ModuleBase> Vmap<M> vmap(M target, lift::VmapOptions opts) {
  return Vmap<M>(std::move(target), std::move(opts));
}

// nn.scan(Module, variable_axes, variable_broadcast, variable_carry, split_rngs, in_axes,
// out_axes, length, reverse): the module's call(carry, xs...) -> (carry, ys) runs over the xs.
template <class M>
struct Scan : detail::LiftedModule<Scan<M>> {
  M target;
  lift::ScanOptions opts;
  // methods={name: options}: call_method(name, &M::method, carry, xs...) scans that
  // method with its own options, over the same scope.
  std::map<std::string, lift::ScanOptions> methods;
  Scan(M t, lift::ScanOptions o) : target(std::move(t)), opts(std::move(o)) {
    detail::take_target(target, "scan");
  }
  Scan(M t, std::map<std::string, lift::ScanOptions> m)
      : target(std::move(t)), methods(std::move(m)) {
    detail::take_target(target, "scan");
  }
  template <class C, class... X>
  auto call(const C& carry, const X&... xs) {
    return lift::scan(detail::lifted_call(target), opts)(
        detail::module_scopes(this->scope(), target), carry, xs...);
  }
  template <class Fn, class C, class... X>
  auto call_method(const std::string& name, Fn method_ptr, const C& carry, const X&... xs) {
    auto it = methods.find(name);
    if (it == methods.end()) {
      throw ValueError("nn::scan: no options for method \"" + name +
                       "\"; pass them in methods={name: options}");
    }
    return this->method(name.c_str(), [&] {
      auto body = [t = target, method_ptr](auto& inner, const auto&... a) {
        M m = detail::lifted_copy(t, inner);
        return (m.*method_ptr)(a...);
      };
      return lift::scan(body, it->second)(detail::module_scopes(this->scope(), target), carry,
                                          xs...);
    });
  }
  // A scanned cell's carry, as Flax's transformed class inherits LSTMCell.initialize_carry
  // (it needs no scope: the rng and the input shape).
  auto initialize_carry(const Array& rng, const Shape& input_shape) const requires
      requires(const M& t, const Array& r, const Shape& s) {
    t.initialize_carry(r, s);
  }
  { return target.initialize_carry(rng, input_shape); }
};
template <class M>
requires std::derived_from<M, ModuleBase> Scan<M> scan(M target, lift::ScanOptions opts) {
  return Scan<M>(std::move(target), std::move(opts));
}
template <class M>
requires std::derived_from<M, ModuleBase> Scan<M> scan(
    M target, std::map<std::string, lift::ScanOptions> methods) {
  return Scan<M>(std::move(target), std::move(methods));
}

// ---- direct transforms: functions whose first argument is a module -----------------------------

// nn.vjp(fn, module, *primals) -> (y, bwd) with bwd(ct) = (params grads, primal grads...).
template <class F, class M, class... P>
auto vjp(F fn, M& module, const P&... primals) {
  const detail::LiftDirect<M> lifted(module);
  return lift::vjp(lifted.body(std::move(fn)), lifted.scope(), primals...);
}

namespace detail {
// Flax's check on the differentiated output of nn.value_and_grad / nn.grad.
inline void check_scalar_output(const Array& y) {
  if (y.ndim() != 0) {
    throw ValueError("grad can only work on functions with scalar-valued outputs. out shape=" +
                     linum::detail::aval_str(y));
  }
}
// nn.value_and_grad's work over the primals (the has_aux tag already split off).
template <bool Aux, class F, class M, class... P>
auto module_value_and_grad(F& fn, M& module, const P&... primals) {
  const LiftDirect<M> lifted(module);
  auto body = lifted.body([&fn](M& m, const auto&... p) {
    auto y = fn(m, p...);
    if constexpr (Aux)
      check_scalar_output(std::get<0>(y));
    else
      check_scalar_output(y);
    return y;
  });
  if constexpr (Aux) {
    auto [y, aux, grads] = lift::value_and_grad(linum::has_aux, body, module.scope(), primals...);
    return std::make_pair(std::make_pair(y, std::move(aux)), std::move(grads));
  } else {
    return lift::value_and_grad(body, module.scope(), primals...);
  }
}
// Calls module_value_and_grad with the primals, telling whether the last argument is has_aux.
template <class F, class M, class... A>
auto module_value_and_grad_args(F& fn, M& module, const A&... args) {
  if constexpr (std::is_same_v<typename linum::detail::last_type<A...>::type, HasAux>) {
    auto all = std::forward_as_tuple(args...);
    return [&]<std::size_t... K>(std::index_sequence<K...>) {
      return module_value_and_grad<true>(fn, module, std::get<K>(all)...);
    }
    (std::make_index_sequence<sizeof...(A) - 1>{});
  } else {
    return module_value_and_grad<false>(fn, module, args...);
  }
}
}  // namespace detail

// nn.value_and_grad(fn, module, *primals) -> (y, (grad of each primal...)); y must be a scalar.
// With a trailing linum::has_aux (Flax's has_aux=True) fn returns (y, aux) and the result is
// ((y, aux), grads).
template <class F, class M, class... P>
auto value_and_grad(F fn, M& module, const P&... primals) {
  return detail::module_value_and_grad_args(fn, module, primals...);
}
// nn.grad: the gradients only; with a trailing linum::has_aux, (grads, aux).
template <class F, class M, class... P>
auto grad(F fn, M& module, const P&... primals) {
  auto [out, grads] = nn::value_and_grad(std::move(fn), module, primals...);
  if constexpr (std::is_same_v<typename linum::detail::last_type<P...>::type, HasAux>)
    return std::make_pair(std::move(grads), std::move(out.second));
  else
    return grads;
}

// nn.jvp(fn, module, primals, tangents, variable_tangents) -> (y, y_tangent).
template <class F, class M, class... P, class... T>
auto jvp(F fn, M& module, const std::tuple<P...>& primals, const std::tuple<T...>& tangents,
         const Tree& variable_tangents = Tree::dict()) {
  const detail::LiftDirect<M> lifted(module);
  return lift::jvp(lifted.body(std::move(fn)), lifted.scope(), primals, tangents,
                   variable_tangents);
}

// ---- checkpoint, remat_scan, map_variables, jit: transformed module types ----------------------

// nn.checkpoint / nn.remat(Module, variables, rngs): the module's call under lift::checkpoint;
// class name CheckpointM as in Flax (lift.checkpoint's name).
template <class M>
struct Checkpoint : detail::LiftedModule<Checkpoint<M>> {
  M target;
  Filter variables = true, rngs = true;
  Checkpoint(M t, Filter v, Filter r)
      : target(std::move(t)), variables(std::move(v)), rngs(std::move(r)) {
    detail::take_target(target, "checkpoint");
  }
  template <class... A>
  auto call(const A&... args) {
    return lift::checkpoint(detail::lifted_call(target), variables, rngs)(
        detail::module_scopes(this->scope(), target), args...);
  }
};
template <class M>
requires std::derived_from<M, ModuleBase> Checkpoint<M> checkpoint(M target,
                                                                   Filter variables = true,
                                                                   Filter rngs = true) {
  return Checkpoint<M>(std::move(target), std::move(variables), std::move(rngs));
}
template <class M>
requires std::derived_from<M, ModuleBase> Checkpoint<M> remat(M target, Filter variables = true,
                                                              Filter rngs = true) {
  return checkpoint(std::move(target), std::move(variables), std::move(rngs));
}

// nn.remat_scan(Module, lengths, variable_broadcast, variable_carry, variable_axes={True: 0},
// split_rngs={True: True}): call(carry) -> carry repeated prod(lengths) times, every collection
// stacked, so nn::remat_scan(nn::Dense(8), {100}) holds a (100, 8, 8) kernel. (Flax's class name
// is "Remat_scanDense"; here it is RematScanDense.)
template <class M>
struct RematScan : detail::LiftedModule<RematScan<M>> {
  M target;
  std::vector<std::int64_t> lengths;
  lift::RematScanOptions opts;
  RematScan(M t, std::vector<std::int64_t> l, lift::RematScanOptions o)
      : target(std::move(t)), lengths(std::move(l)), opts(std::move(o)) {
    detail::take_target(target, "remat_scan");
  }
  template <class C>
  C call(const C& carry) {
    auto body = [fn = detail::lifted_call(target)](Scope& s, const C& c) { return C(fn(s, c)); };
    return lift::remat_scan(body, lengths, opts)(this->scope(), carry);
  }
};
template <class M>
RematScan<M> remat_scan(M target, std::vector<std::int64_t> lengths,
                        lift::RematScanOptions opts = {}) {
  return RematScan<M>(std::move(target), std::move(lengths), std::move(opts));
}

// nn.map_variables(Module, mapped_collections=True, trans_in_fn, trans_out_fn, init, mutable,
// rngs, variables): the target sees its variables through trans_in_fn ({col: its variables} ->
// the same), writes go back through trans_out_fn when init or mutable. (Flax's class name is
// "Map_variablesM"; here MapVariablesM.)
using VariablesMap = std::function<Tree(const Tree&)>;
template <class M>
struct MapVariables : detail::LiftedModule<MapVariables<M>> {
  M target;
  Filter mapped_collections;
  VariablesMap trans_in_fn, trans_out_fn;
  lift::MapVariablesOptions opts;
  MapVariables(M t, Filter mapped, VariablesMap in, VariablesMap out, lift::MapVariablesOptions o)
      : target(std::move(t)),
        mapped_collections(std::move(mapped)),
        trans_in_fn(std::move(in)),
        trans_out_fn(std::move(out)),
        opts(std::move(o)) {
    detail::take_target(target, "map_variables");
  }
  template <class... A>
  auto call(const A&... args) {
    return lift::map_variables(detail::lifted_call(target), mapped_collections, trans_in_fn,
                               trans_out_fn, opts)(this->scope(), args...);
  }
};
inline Tree identity_variables(const Tree& t) { return t; }
template <class M>
requires std::derived_from<M, ModuleBase> MapVariables<M> map_variables(
    M target, Filter mapped_collections = true, VariablesMap trans_in_fn = identity_variables,
    VariablesMap trans_out_fn = identity_variables, lift::MapVariablesOptions opts = {}) {
  return MapVariables<M>(std::move(target), std::move(mapped_collections), std::move(trans_in_fn),
                         std::move(trans_out_fn), std::move(opts));
}
// nn.map_variables over a function fn(module, args...) (Flax's decorator form,
// nn.map_variables(f, 'params', map_fn, map_fn, mutable=True)(self, ...)): returns
// (module, args...) -> y.
template <class F>
requires(!std::derived_from<F, ModuleBase>) auto map_variables(
    F fn, Filter mapped_collections, VariablesMap trans_in_fn, VariablesMap trans_out_fn,
    lift::MapVariablesOptions opts = {}) {
  return [=]<class M, class... A>(M& module, const A&... args) {
    const detail::LiftDirect<M> lifted(module);
    return lift::map_variables(lifted.body(fn), mapped_collections, trans_in_fn, trans_out_fn,
                               opts)(lifted.scope(), args...);
  };
}

// nn.add_metadata_axis(target, variable_axes, metadata_params): the target's boxed variables of
// each named collection gain axis `axis` in their metadata on the way out (add_axis) and lose
// it on the way in (remove_axis); the values are not mapped. A Module type or a function
// fn(module, args...). Flax chains one map_variables per collection; one map over all of them
// does the same.
template <class T>
auto add_metadata_axis(T target, std::map<std::string, int> variable_axes,
                       lift::meta::MetadataParams metadata_params = {}) {
  std::set<std::string> cols;
  for (const auto& [col, axis] : variable_axes) cols.insert(col);
  auto fn = [variable_axes, metadata_params](bool add) {
    return [=](const Tree& vars) {
      return lift::meta::collection_axes(vars, variable_axes, metadata_params, add);
    };
  };
  return nn::map_variables(std::move(target), Filter(std::move(cols)), fn(false), fn(true),
                           lift::MapVariablesOptions{.mutable_ = true});
}
// flax.linen's names for the metadata boxes.
using lift::meta::AxisMetadata;
using lift::meta::PARTITION_NAME;
using lift::meta::Partitioned;
using lift::meta::unbox;
using lift::meta::with_partitioning;

// nn.jit(Module) and nn.fold_rngs(Module), after Flax's fork_rngs. JitM runs the target's call
// under lift::jit: traced once per signature and mutable filter, replayed after; copies of a
// JitM (each apply binds one) share its traces. A target holding modules bound elsewhere
// (module_fields) has their scopes lifted with its own, as nn::vmap does. Call arguments that
// are modules still run eagerly (same values).
template <class M>
struct Jit : detail::LiftedModule<Jit<M>> {
  M target;
  // The module whose call is being traced: copies of a JitM share the lifted jit, whose body
  // reads the target (its fields bound where this call's are) through this slot.
  std::shared_ptr<const M*> current = std::make_shared<const M*>(nullptr);
  struct Body {
    std::shared_ptr<const M*> current;
    template <class... A>
    auto operator()(std::vector<Scope>& inner, const A&... a) const {
      M m = detail::lifted_copy(**current, inner);
      return m(a...);
    }
  };
  std::shared_ptr<lift::LiftedJit<Body, std::vector<Scope>>> jitted =
      std::make_shared<lift::LiftedJit<Body, std::vector<Scope>>>(Body{current}, true, true,
                                                                  JitOptions{});
  explicit Jit(M t) : target(std::move(t)) { detail::take_target(target, "jit"); }
  template <class... A>
  auto call(const A&... args) {
    if constexpr ((std::is_base_of_v<ModuleBase, A> || ...)) {
      return detail::forked(this->scope(), "jit", detail::lifted_call(target), args...);
    } else {
      std::vector<Scope> scopes = detail::module_scopes(this->scope(), target);
      auto traced = [&](Scope& own, const A&... a) {
        scopes[0] = own;  // the module's own scope, its rngs forked
        *current = &target;
        return (*jitted)(scopes, a...);
      };
      return detail::forked(this->scope(), "jit", traced, args...);
    }
  }
};
template <class M>
requires std::derived_from<M, ModuleBase> Jit<M> jit(M target) { return Jit<M>(std::move(target)); }
template <class M>
struct FoldRngs : detail::LiftedModule<FoldRngs<M>> {
  M target;
  explicit FoldRngs(M t) : target(std::move(t)) { detail::take_target(target, "fold_rngs"); }
  template <class... A>
  auto call(const A&... args) {
    return detail::forked(this->scope(), "fold_rngs", detail::lifted_call(target), args...);
  }
};
template <class M>
requires std::derived_from<M, ModuleBase> FoldRngs<M> fold_rngs(M target) {
  return FoldRngs<M>(std::move(target));
}

// ---- cond, switch_, while_loop, custom_vjp: direct transforms ----------------------------------

// nn.cond(pred, true_fun, false_fun, module, *operands): the branches take the module first.
template <class TF, class FF, class M, class... Ops>
auto cond(const Array& pred, const TF& true_fun, const FF& false_fun, M& module,
          const Ops&... operands) {
  const detail::LiftDirect<M> lifted(module);
  return lift::cond(pred, lifted.body(true_fun), lifted.body(false_fun), lifted.scope(),
                    operands...);
}

// nn.switch(index, branches, module, *operands): branches a std::vector of fn(M&, operands...).
template <class Branches, class M, class... Ops>
auto switch_(const Array& index, const Branches& branches, M& module, const Ops&... operands) {
  const detail::LiftDirect<M> lifted(module);
  std::vector<decltype(lifted.body(*std::begin(branches)))> bodies;
  for (const auto& b : branches) bodies.push_back(lifted.body(b));
  return lift::switch_(index, bodies, lifted.scope(), operands...);
}

// nn.while_loop(cond_fn, body_fn, module, init, carry_variables=False, broadcast_variables=True,
// split_rngs={}): cond_fn(M&, carry) -> bool Array, body_fn(M&, carry) -> carry.
template <class CF, class BF, class M, class C>
C while_loop(const CF& cond_fn, const BF& body_fn, M& module, const C& init,
             const lift::WhileOptions& opts = {}) {
  const detail::LiftDirect<M> lifted(module);
  return lift::while_loop(lifted.body(cond_fn), lifted.body(body_fn), lifted.scope(), init, opts);
}

// nn.custom_vjp(fn, forward_fn, backward_fn, grad_vars='params', nondiff_argnums): returns
// (module, args...) -> fn(module, args...) whose derivative is forward_fn(module, args...) ->
// (y, residuals) and backward_fn(nondiff..., residuals, g) -> std::tuple({col: variable grads},
// input grads...). nondiff_argnums count the module as argument 0, as in Flax.
template <class F, class Fwd, class Bwd, int... ND>
auto custom_vjp(F fn, Fwd forward_fn, Bwd backward_fn, Filter grad_vars = "params",
                NondiffArgnums<ND...> nd = {}) {
  return [=]<class M, class... A>(M& module, const A&... args) {
    const detail::LiftDirect<M> lifted(module);
    return lift::custom_vjp(lifted.body(fn), lifted.body(forward_fn), backward_fn, grad_vars, nd)(
        lifted.scope(), args...);
  };
}

}  // namespace linum::nn

// The function forms: nn::vmap(fn, ...)(module, ...), nn::scan, nn::checkpoint, nn::jit, ...
#include <linum/nn/transforms_fn.hpp>
