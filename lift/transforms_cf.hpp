// flax.core.lift's branches and loops (flax/core/lift.py): cond, switch, while_loop, fori_loop,
// each pack around linum::cond / switch_ / while_loop with the variables as explicit Tree values.
#pragma once

#include <functional>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include <linum/autodiff/control_flow.hpp>
#include <linum/lift/pack.hpp>

namespace linum::lift {

namespace detail {

// lax.cond/switch trace every branch in order, and each trace advances the shared rng counters,
// so branch k starts from the counters the branches before it left, and the counters end where
// the last one left them. Eagerly: one discarded run of every branch records those counters; then
// the autodiff transform runs the branch(es) it needs from them. `call(k, inner)` runs branch k;
// `core(run)` calls the autodiff transform with run(k) -> (y, output variables).
template <class Call, class Core>
auto lifted_branches(Scope& scope, const char* name, std::size_t n, const Call& call,
                     const Core& core) {
  PackSpec spec{{true}, {true}, {true}, name};
  Packed packed = pack(scope, spec);
  const bool replay = !packed.rngs.empty();
  std::vector<RngCounters> starts;
  auto run = [&](std::size_t k) {
    if (replay && starts.size() == n) restore_counters(*scope.rng_counters(), starts[k]);
    Scope inner = inner_scope(scope, spec, packed.variables, packed.rngs);
    InnerGuard guard{inner};
    auto y = call(k, inner);
    return std::make_pair(std::move(y), Tree::tuple(repack(inner, spec)));
  };
  std::optional<RngCounters> end;
  if (replay) {
    std::vector<RngCounters> s;
    for (std::size_t k = 0; k < n; ++k) {
      s.push_back(snapshot_counters(*scope.rng_counters()));
      run(k);
    }
    end = snapshot_counters(*scope.rng_counters());
    starts = std::move(s);
  }
  auto [y, out] = core(run);
  if (end) restore_counters(*scope.rng_counters(), *end);
  publish(scope, out.items());
  return y;
}

}  // namespace detail

// lift.cond(pred, true_fun, false_fun, scope, *operands): every collection and stream visible.
template <class TF, class FF, class... Ops>
auto cond(const Array& pred, const TF& true_fun, const FF& false_fun, Scope& scope,
          const Ops&... operands) {
  auto call = [&](std::size_t k, Scope& inner) {
    if (k == 0) return true_fun(inner, operands...);
    return false_fun(inner, operands...);
  };
  return detail::lifted_branches(scope, "cond", 2, call, [&](auto& run) {
    return linum::cond(
        pred, [&] { return run(0); }, [&] { return run(1); });
  });
}

// lift.switch(index, branches, scope, *operands): branches a std::vector (or std::array) of
// functions (Scope&, operands...) -> y.
template <class Branches, class... Ops>
auto switch_(const Array& index, const Branches& branches, Scope& scope, const Ops&... operands) {
  const std::size_t n = std::size(branches);
  auto call = [&](std::size_t k, Scope& inner) { return branches[k](inner, operands...); };
  return detail::lifted_branches(scope, "switch", n, call, [&](auto& run) {
    using R = decltype(run(0));
    std::vector<std::function<R()>> fns;
    for (std::size_t k = 0; k < n; ++k) fns.push_back([&run, k] { return run(k); });
    return linum::switch_(index, fns);
  });
}

// ---- while_loop / fori_loop ------------------------------------------------------------------

struct WhileOptions {
  Filter carry_variables = false;     // threaded through the loop (and written back)
  Filter broadcast_variables = true;  // read-only inside
  std::vector<std::pair<Filter, bool>> split_rngs = {};
};

namespace detail {
// Body iteration i sees split streams as fold_in(base, i); the cond fn as fold_in(base, -i)
// (lift.py:1125-1151). Non-split streams keep the base key.
std::vector<RngGroup> loop_rngs(const Packed& packed, const WhileOptions& opts, const Array& i,
                                bool for_cond);
}  // namespace detail

// lift.while_loop(cond_fn, body_fn, scope, init, carry_variables, broadcast_variables,
// split_rngs): cond_fn(Scope&, carry) -> bool Array, body_fn(Scope&, carry) -> carry. lax traces
// cond once, then body once (each trace advances the shared counters): every cond call starts from
// the outer counters, every body iteration from those plus cond's draws, and the loop ends with
// both added. Eagerly that is one discarded run of each (when the scope has rng streams).
template <class CF, class BF, class C>
C while_loop(const CF& cond_fn, const BF& body_fn, Scope& scope, const C& init,
             const WhileOptions& opts = {}) {
  PackSpec spec{
      {opts.carry_variables, opts.broadcast_variables}, {opts.carry_variables}, {}, "while_loop"};
  for (const auto& [f, split] : opts.split_rngs) spec.rng_filters.push_back(f);
  Packed packed = pack(scope, spec);
  const Tree bcast = packed.variables[1];
  using State = std::tuple<Array, Tree, C>;
  std::optional<RngCounters> at_cond, at_body, end;
  auto cond = [&](const State& s) {
    if (at_cond) restore_counters(*scope.rng_counters(), *at_cond);
    Scope inner = inner_scope(scope, spec, {std::get<1>(s), bcast},
                              detail::loop_rngs(packed, opts, std::get<0>(s), true), false);
    InnerGuard guard{inner};
    return Array(cond_fn(inner, std::get<2>(s)));
  };
  auto body = [&](const State& s) {
    if (at_body) restore_counters(*scope.rng_counters(), *at_body);
    Scope inner = inner_scope(scope, spec, {std::get<1>(s), bcast},
                              detail::loop_rngs(packed, opts, std::get<0>(s), false));
    InnerGuard guard{inner};
    C c = body_fn(inner, std::get<2>(s));
    std::vector<Tree> out = repack(inner, spec);
    Tree carry_vars = std::get<1>(s);
    for (const auto& [col, v] : out[0].as_dict()) carry_vars[col] = v;
    return State(std::get<0>(s) + 1, std::move(carry_vars), std::move(c));
  };
  const State start(Array(0), packed.variables[0], init);
  if (!packed.rngs.empty()) {
    auto snap0 = snapshot_counters(*scope.rng_counters());
    cond(start);
    auto snap1 = snapshot_counters(*scope.rng_counters());
    body(start);
    end = snapshot_counters(*scope.rng_counters());
    at_cond = std::move(snap0);
    at_body = std::move(snap1);
  }
  State out = linum::while_loop(cond, body, start);
  if (end) restore_counters(*scope.rng_counters(), *end);
  publish(scope, {std::get<1>(out)});
  return std::get<2>(out);
}

// fori_loop(lower, upper, body_fn, scope, init, ...): body_fn(Scope&, i, carry) -> carry, as a
// lifted while_loop over (i, carry).
template <class BF, class C>
C fori_loop(int lower, int upper, const BF& body_fn, Scope& scope, const C& init,
            const WhileOptions& opts = {}) {
  using S = std::pair<Array, C>;
  S out = while_loop(
      [&](Scope&, const S& s) { return less(s.first, Array(upper)); },
      [&](Scope& inner, const S& s) { return S(s.first + 1, body_fn(inner, s.first, s.second)); },
      scope, S(Array(lower), init), opts);
  return out.second;
}

}  // namespace linum::lift
