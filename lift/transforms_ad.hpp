// flax.core.lift's differentiation transforms (flax/core/lift.py): vjp, value_and_grad, jvp and
// checkpoint. Each is pack around linum::vjp / jvp / checkpoint with the variable groups as
// explicit Tree arguments.
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
// jvp's tangents for the variable group: zeros, except variable_tangents' non-empty collections.
Tree variable_tangents_for(const Tree& vars, const Tree& variable_tangents);

// lift.vjp's work for fn returning (y, aux), aux undifferentiated: (y, bwd, aux).
template <class F, class... P>
auto vjp_aux(const VjpOptions& opts, F& fn, Scope& scope, const P&... primals) {
  PackSpec spec{{opts.vjp_variables, opts.variables}, {opts.variables}, {opts.rngs}, "vjp"};
  return pack(spec, scope, [&](const auto& p) {
    auto wrapper = [&](const Tree& vjp_vars, const P&... a) {
      auto [y, out] = p.call(fn, Tree::tuple({vjp_vars, p.variables()[1]}), p.rngs(), a...);
      return std::make_pair(std::make_pair(std::move(y.first), std::move(out)),
                            std::move(y.second));
    };
    auto result = linum::vjp(wrapper, p.variables()[0], primals..., linum::has_aux);
    auto& [y, out] = std::get<0>(result);
    // The published variables are outputs too; they get zero cotangents. The variables' gradient
    // is the one packed scope's dict.
    auto bwd = [pullback = std::move(std::get<1>(result)),
                zero = zeros_like_tree(out)](const auto& ct) {
      auto grads = pullback(std::make_pair(ct, zero));
      std::get<0>(grads) = Tree(std::get<0>(grads)[0]);
      return grads;
    };
    return std::make_pair(std::make_tuple(y, std::move(bwd), std::move(std::get<2>(result))), out);
  });
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
  auto no_aux = [&fn](auto& s, const auto&... a) { return std::pair(fn(s, a...), std::tuple<>{}); };
  auto [y, bwd, aux] = detail::vjp_aux(opts, no_aux, scope, primals...);
  return std::make_pair(std::move(y), std::move(bwd));
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
// has_aux: fn returns (y, aux) and the result is (y, aux, grads), as Flax's lift.value_and_grad.
template <class F, class... P>
auto value_and_grad(HasAux, F fn, Scope& scope, const P&... primals) {
  auto [y, bwd, aux] = detail::vjp_aux(VjpOptions{.vjp_variables = false}, fn, scope, primals...);
  auto grads = detail::primal_grads(bwd(ones_like(y)));
  return std::make_tuple(y, std::move(aux), std::move(grads));
}

// lift.jvp(fn, scope, primals, tangents, variable_tangents) -> (y, y_tangent).
// variable_tangents is {col: tangents}; collections not named (or empty) get zero tangents.
template <class F, class... P, class... T>
auto jvp(F fn, Scope& scope, const std::tuple<P...>& primals, const std::tuple<T...>& tangents,
         const Tree& variable_tangents, Filter variables = true, Filter rngs = true) {
  return pack(PackSpec{{variables}, {variables}, {rngs}, "jvp"}, scope, [&](const auto& p) {
    auto wrapper = [&](const Tree& vars, const P&... a) {
      return p.call(fn, vars, p.rngs(), a...);
    };
    Tree vt = detail::variable_tangents_for(p.variables(), variable_tangents);
    auto [out, out_t] = linum::jvp(wrapper, std::tuple_cat(std::tuple{p.variables()}, primals),
                                   std::tuple_cat(std::tuple{vt}, tangents));
    return std::make_pair(std::make_pair(out.first, out_t.first), out.second);
  });
}

// lift.checkpoint / remat(fn, variables, rngs): fn(scopes, args...) under linum::checkpoint. Flax
// traces it once per call, so the backward pass's recomputation draws the keys the first run drew
// from a copy of the counters and leaves the outer ones alone.
template <class F>
auto checkpoint(F fn, Filter variables = true, Filter rngs = true) {
  return [fn = std::move(fn), variables, rngs](auto&& scopes, const auto&... args) {
    PackSpec spec{{variables}, {variables}, {rngs}, "remat"};  // Flax packs checkpoint as "remat"
    return pack(spec, scopes, [&](const auto& p) {
      auto body = [p, fn, before = p.counters(), first = std::make_shared<bool>(true)](
                      const Tree& vars, const auto&... a) {
        const bool again = !std::exchange(*first, false);
        return p.call_with({.counters = again ? &before : nullptr}, fn, vars, p.rngs(), a...);
      };
      return linum::checkpoint(body)(p.variables(), args...);
    });
  };
}
template <class F>
auto remat(F fn, Filter variables = true, Filter rngs = true) {
  return checkpoint(std::move(fn), std::move(variables), std::move(rngs));
}

}  // namespace linum::lift
