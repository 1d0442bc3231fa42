// flax.core.lift's differentiation transforms (spec §3.2): vjp, value_and_grad, jvp. Each packs
// the scope's variables as explicit Tree arguments of linum::vjp / linum::jvp.
#pragma once

#include <tuple>
#include <utility>

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

// lift.vjp(fn, scope, *primals, vjp_variables, variables, rngs) -> (y, bwd) where
// bwd(cotangent) = (vars_grad {col: grads}, grads of each primal...).
template <class F, class... P>
auto vjp(const VjpOptions& opts, F fn, Scope& scope, const P&... primals) {
  PackSpec spec{{opts.vjp_variables, opts.variables}, {opts.variables}, {opts.rngs}, "vjp"};
  Packed packed = pack(scope, spec);
  const Tree other = packed.variables[1];
  auto wrapper = [&](const Tree& vjp_vars, const P&... a) {
    Scope inner = inner_scope(scope, spec, {vjp_vars, other}, packed.rngs);
    InnerGuard guard{inner};
    auto y = fn(inner, a...);
    return std::make_pair(std::move(y), Tree::tuple(repack(inner, spec)));
  };
  auto [out, pullback] = linum::vjp(wrapper, packed.variables[0], primals...);
  publish(scope, out.second.items());
  // The published variables are outputs too; they get zero cotangents.
  Tree zero = detail::zeros_like_tree(out.second);
  auto bwd = [pullback = std::move(pullback), zero](const auto& ct) {
    return pullback(std::make_pair(ct, zero));
  };
  return std::make_pair(out.first, std::move(bwd));
}
template <class F, class... P>
auto vjp(F fn, Scope& scope, const P&... primals) {
  return vjp(VjpOptions{}, std::move(fn), scope, primals...);
}

// lift.value_and_grad(fn, scope, *primals) -> (y, (grad of each primal...)), seeded with
// ones_like(y); never w.r.t. the variables.
template <class F, class... P>
auto value_and_grad(F fn, Scope& scope, const P&... primals) {
  auto [y, bwd] = vjp(VjpOptions{.vjp_variables = false}, std::move(fn), scope, primals...);
  auto grads = bwd(ones_like(y));
  return std::make_pair(
      y, std::apply([](const auto&, const auto&... g) { return std::tuple{g...}; }, grads));
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

}  // namespace linum::lift
