// flax.core.lift's branches and loops (spec §3.2): cond, switch, while_loop, fori_loop, each pack
// around linum::cond / switch_ / while_loop with the variables as explicit Tree values.
#pragma once

#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include <linum/autodiff/control_flow.hpp>
#include <linum/lift/pack.hpp>

namespace linum::lift {

namespace detail {

// lax.cond/switch trace every branch in order, so (R3) branch k starts from the rng counters the
// branches before it left, and the counters end where the last one left them. Eagerly: one
// discarded run of every branch records those counters; then the autodiff transform runs the
// branch(es) it needs from them. `call(k, inner)` runs branch k; `core(run)` calls the autodiff
// transform with run(k) -> (y, output variables).
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

}  // namespace linum::lift
