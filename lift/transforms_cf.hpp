// flax.core.lift's branches and loops (flax/core/lift.py): cond, switch, while_loop, fori_loop,
// each pack around linum::cond / switch_ / while_loop with the variables as explicit Tree values.
#pragma once

#include <functional>
#include <tuple>
#include <utility>
#include <vector>

#include <linum/autodiff/control_flow.hpp>
#include <linum/lift/pack.hpp>

namespace linum::lift {

namespace detail {
// lax.cond/switch trace every branch in order (CounterReplay). `call(k, inner)` runs branch k;
// `core(run)` calls the autodiff transform with run(k) -> (y, output groups).
template <class Call, class Core>
auto lifted_branches(Scope& scope, const char* name, std::size_t n, const Call& call,
                     const Core& core) {
  return pack(PackSpec{{true}, {true}, {true}, name}, scope, [&](const auto& p) {
    auto run = [&](std::size_t k) {
      return p.call([&](Scope& inner) { return call(k, inner); }, p.variables(), p.rngs());
    };
    const CounterReplay replay(p, n, run);
    auto out = core([&](std::size_t k) {
      replay.start(k);
      return run(k);
    });
    replay.finish();
    return out;
  });
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
  return detail::lifted_branches(scope, "cond", 2, call, [&](const auto& run) {
    return linum::cond(
        pred, [&] { return run(0); }, [&] { return run(1); });
  });
}

// lift.switch(index, branches, scope, *operands): each branch(Scope&, operands...) -> y.
template <class Branches, class... Ops>
auto switch_(const Array& index, const Branches& branches, Scope& scope, const Ops&... operands) {
  const std::size_t n = std::size(branches);
  auto call = [&](std::size_t k, Scope& inner) { return branches[k](inner, operands...); };
  return detail::lifted_branches(scope, "switch", n, call, [&](const auto& run) {
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
  SplitRngs split_rngs = {};
};

namespace detail {
// Split streams: fold_in(base, i) in body iteration i, fold_in(base, -i) in cond (as lift.py).
RngGroups loop_rngs(const Pack& p, const WhileOptions& opts, const Array& i, bool for_cond);
}  // namespace detail

// lift.while_loop(cond_fn, body_fn, scope, init, carry_variables, broadcast_variables,
// split_rngs): cond_fn(Scope&, carry) -> bool Array, body_fn(Scope&, carry) -> carry. lax traces
// cond once, then body once, and CounterReplay replays the counters those traces see.
template <class CF, class BF, class C>
C while_loop(const CF& cond_fn, const BF& body_fn, Scope& scope, const C& init,
             const WhileOptions& opts = {}) {
  PackSpec spec{
      {opts.carry_variables, opts.broadcast_variables}, {opts.carry_variables}, {}, "while_loop"};
  for (const auto& [f, split] : opts.split_rngs) spec.rng_filters.push_back(f);
  return pack(spec, scope, [&](const auto& p) {
    using State = std::tuple<Array, Tree, C>;  // (iteration, carry variables, carry)
    auto groups = [&](const State& s) { return Tree::tuple({std::get<1>(s), p.variables()[1]}); };
    auto cond = [&](const State& s) {
      auto rngs = detail::loop_rngs(p, opts, std::get<0>(s), true);
      return Array(
          p.call_with({.mutable_filter = false}, cond_fn, groups(s), rngs, std::get<2>(s)).first);
    };
    auto body = [&](const State& s) {
      auto rngs = detail::loop_rngs(p, opts, std::get<0>(s), false);
      auto [c, out] = p.call(body_fn, groups(s), rngs, std::get<2>(s));
      return State(std::get<0>(s) + 1, detail::keep_carry(std::get<1>(s), out[0]), C(c));
    };
    const State start(Array(0), p.variables()[0], init);
    const CounterReplay replay(
        p, 2, [&](std::size_t k) { k == 0 ? (void)cond(start) : (void)body(start); });
    State out = linum::while_loop(
        [&](const State& s) {
          replay.start(0);
          return cond(s);
        },
        [&](const State& s) {
          replay.start(1);
          return body(s);
        },
        start);
    replay.finish();
    return std::make_pair(std::get<2>(out), Tree::tuple({std::get<1>(out)}));
  });
}

// fori_loop(lower, upper, body_fn, scope, init, ...): body_fn(Scope&, i, carry) -> carry.
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
