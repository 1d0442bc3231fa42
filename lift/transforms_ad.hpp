// flax.core.lift's differentiation transforms (flax/core/lift.py): vjp, value_and_grad, jvp. Each
// packs the scope's variables as explicit Tree arguments of linum::vjp / linum::jvp.
#pragma once

#include <memory>
#include <tuple>
#include <utility>

#include <linum/autodiff/custom.hpp>
#include <linum/autodiff/transforms.hpp>
#include <linum/lift/pack.hpp>

namespace linum::lift {

struct VjpOptions {
  Filter vjp_variables = "params";  // collections that receive cotangents
  Filter variables = true;          // collections visible inside
  Filter rngs = true;               // rng streams visible inside
};

namespace detail {
Tree zeros_like_tree(const Tree& t);
// jvp's tangents for `vars`: zeros, except the non-empty collections of variable_tangents.
Tree variable_tangents_for(const Tree& vars, const Tree& variable_tangents);
}  // namespace detail

namespace detail {
// lift.vjp's work. With Aux, fn returns (y, aux): aux is passed through undifferentiated and the
// result is (y, bwd, aux).
template <bool Aux, class F, class... P>
auto vjp_impl(const VjpOptions& opts, F& fn, Scope& scope, const P&... primals) {
  PackSpec spec{{opts.vjp_variables, opts.variables}, {opts.variables}, {opts.rngs}, "vjp"};
  Packed packed = pack(scope, spec);
  const Tree other = packed.variables[1];
  auto wrapper = [&](const Tree& vjp_vars, const P&... a) {
    Scope inner = inner_scope(scope, spec, {vjp_vars, other}, packed.rngs);
    InnerGuard guard{inner};
    auto y = fn(inner, a...);
    if constexpr (Aux)
      return std::make_pair(std::make_pair(std::move(y.first), Tree::tuple(repack(inner, spec))),
                            std::move(y.second));
    else
      return std::make_pair(std::move(y), Tree::tuple(repack(inner, spec)));
  };
  auto result = [&] {
    if constexpr (Aux)
      return linum::vjp(wrapper, packed.variables[0], primals..., linum::has_aux);
    else
      return linum::vjp(wrapper, packed.variables[0], primals...);
  }();
  auto& out = std::get<0>(result);
  publish(scope, out.second.items());
  // The published variables are outputs too; they get zero cotangents.
  Tree zero = zeros_like_tree(out.second);
  auto bwd = [pullback = std::move(std::get<1>(result)), zero](const auto& ct) {
    return pullback(std::make_pair(ct, zero));
  };
  if constexpr (Aux)
    return std::make_tuple(out.first, std::move(bwd), std::move(std::get<2>(result)));
  else
    return std::make_pair(out.first, std::move(bwd));
}
// Drops the variables' gradient from bwd's result: the gradients of the primals only.
template <class G>
auto primal_grads(const G& grads) {
  return std::apply([](const auto&, const auto&... g) { return std::tuple{g...}; }, grads);
}
}  // namespace detail

// lift.vjp(fn, scope, *primals, vjp_variables, variables, rngs) -> (y, bwd) where
// bwd(cotangent) = (vars_grad {col: grads}, grads of each primal...).
template <class F, class... P>
auto vjp(const VjpOptions& opts, F fn, Scope& scope, const P&... primals) {
  return detail::vjp_impl<false>(opts, fn, scope, primals...);
}
template <class F, class... P>
auto vjp(F fn, Scope& scope, const P&... primals) {
  return lift::vjp(VjpOptions{}, std::move(fn), scope, primals...);
}

// lift.value_and_grad(fn, scope, *primals) -> (y, (grad of each primal...)), seeded with
// ones_like(y); never w.r.t. the variables.
template <class F, class... P>
auto value_and_grad(F fn, Scope& scope, const P&... primals) {
  auto [y, bwd] = lift::vjp(VjpOptions{.vjp_variables = false}, std::move(fn), scope, primals...);
  return std::make_pair(y, detail::primal_grads(bwd(ones_like(y))));
}
// has_aux=True: fn returns (y, aux); the result is (y, aux, (grad of each primal...)), as Flax's
// lift.value_and_grad returns them.
template <class F, class... P>
auto value_and_grad(HasAux, F fn, Scope& scope, const P&... primals) {
  auto [y, bwd, aux] =
      detail::vjp_impl<true>(VjpOptions{.vjp_variables = false}, fn, scope, primals...);
  auto grads = detail::primal_grads(bwd(ones_like(y)));
  return std::make_tuple(y, std::move(aux), std::move(grads));
}

// lift.jvp(fn, scope, primals, tangents, variable_tangents) -> (y, y_tangent).
// variable_tangents is {col: tangents}; collections not named (or empty) get zero tangents.
template <class F, class... P, class... T>
auto jvp(F fn, Scope& scope, const std::tuple<P...>& primals, const std::tuple<T...>& tangents,
         const Tree& variable_tangents, Filter variables = true, Filter rngs = true) {
  PackSpec spec{{variables}, {variables}, {rngs}, "jvp"};
  Packed packed = pack(scope, spec);
  auto wrapper = [&](const Tree& vars, const P&... a) {
    Scope inner = inner_scope(scope, spec, {vars}, packed.rngs);
    InnerGuard guard{inner};
    auto y = fn(inner, a...);
    return std::make_pair(std::move(y), Tree::tuple(repack(inner, spec)));
  };
  Tree vt = detail::variable_tangents_for(packed.variables[0], variable_tangents);
  auto [out, out_t] = linum::jvp(wrapper, std::tuple_cat(std::tuple{packed.variables[0]}, primals),
                                 std::tuple_cat(std::tuple{vt}, tangents));
  publish(scope, out.second.items());
  return std::make_pair(out.first, out_t.first);
}

// lift.checkpoint / remat(fn, variables, rngs): fn(Scope&, args...) under linum::checkpoint. Flax
// traces it once per call, so the backward pass's recomputation draws the same keys from a copy
// of the counters and leaves the outer ones alone.
template <class F>
auto checkpoint(F fn, Filter variables = true, Filter rngs = true) {
  return [fn = std::move(fn), variables, rngs](Scope& scope, const auto&... args) {
    PackSpec spec{{variables}, {variables}, {rngs}, "remat"};  // Flax packs checkpoint as "remat"
    Packed packed = pack(scope, spec);
    auto before = std::make_shared<RngCounters>(snapshot_counters(*scope.rng_counters()));
    auto first = std::make_shared<bool>(true);
    auto body = [fn, spec, rng = packed.rngs, outer = scope, before, first](const Tree& vars,
                                                                            const auto&... a) {
      auto counters =
          *first ? outer.rng_counters() : std::make_shared<RngCounters>(snapshot_counters(*before));
      *first = false;
      Scope inner = inner_scope(outer, spec, {vars}, rng, true, counters);
      InnerGuard guard{inner};
      auto y = fn(inner, a...);
      return std::make_pair(std::move(y), Tree::tuple(repack(inner, spec)));
    };
    auto [y, out] = linum::checkpoint(body)(packed.variables[0], args...);
    publish(scope, out.items());
    return y;
  };
}
template <class F>
auto remat(F fn, Filter variables = true, Filter rngs = true) {
  return checkpoint(std::move(fn), std::move(variables), std::move(rngs));
}

}  // namespace linum::lift
