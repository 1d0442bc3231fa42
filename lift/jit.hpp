// flax.core.lift.jit (flax/core/lift.py): pack around linum::jit. The scope's variables and rng
// base keys are the traced arguments; the fingerprint (the scope's mutable filter and flags) is a
// static one, so init, apply and apply(mutable=...) each trace once and later calls replay.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <linum/autodiff/jit.hpp>
#include <linum/lift/pack.hpp>

namespace linum::lift {

namespace detail {

// What the traced body needs of the call that traces it: the outer scope and its rng streams
// with their suffix cleared (Flax's jit drops the suffix; nn::jit forks the streams first).
struct JitCallContext {
  const Scope* outer = nullptr;
  RngGroup rngs;
};

// The static part of the signature: Flax's (mutable filters,), plus the flags (init's
// "initializing"), which the body may branch on as well.
std::string jit_fingerprint(const Scope& scope);

// Flax's _restore_rng_counters: the counters the first call of a fingerprint advanced (new - old,
// per path and stream), and setting live = old + delta on later calls, which replay the program
// without running the body, so the counters advance the same whether or not a trace happens.
RngCounters counter_delta(const RngCounters& old, const RngCounters& now);
void apply_counter_delta(RngCounters& live, const RngCounters& old, const RngCounters& delta);

// The function linum::jit traces: (fingerprint, variables, rng keys, args...) -> (y, variables).
template <class F>
struct JitBody {
  mutable F fn;
  PackSpec spec;
  std::shared_ptr<JitCallContext> ctx;

  template <class... A>
  auto operator()(const std::string& /*fingerprint*/, const Tree& vars, const Tree& keys,
                  const A&... args) const {
    Scope inner = inner_scope(*ctx->outer, spec, {vars}, {with_keys(ctx->rngs, keys)});
    InnerGuard guard{inner};
    auto y = fn(inner, args...);
    return std::make_pair(std::move(y), Tree::tuple(repack(inner, spec)));
  }
};

}  // namespace detail

// lift.jit(fn, variables, rngs, static_argnums): fn(Scope&, args...) traced once per signature
// (the variables' structure and avals, the rng keys, the arguments, the fingerprint) and
// replayed after; the collections it writes come back through pack. A lifted jit object holds
// its cache: keep it (as Flax keeps the decorated function) to reuse the traces. static_argnums
// count fn's arguments after the scope. Calls are serialized per object.
template <class F>
class LiftedJit {
 public:
  LiftedJit(F fn, Filter variables, Filter rngs, JitOptions opts)
      : spec_{{variables}, {variables}, {rngs}, "jit"},
        state_(std::make_shared<State>()),
        jitted_(detail::JitBody<F>{std::move(fn), spec_, state_->ctx}, offset(std::move(opts)),
                "lift.jit") {}

  template <class... A>
  auto operator()(Scope& scope, const A&... args) const {
    std::lock_guard<std::recursive_mutex> lock(state_->mu);
    Packed packed = pack(scope, spec_);
    const std::string fp = detail::jit_fingerprint(scope);
    RngGroup cleared;  // pack made one group, for the one rng filter
    for (const auto& [stream, r] : packed.rngs[0]) cleared.emplace(stream, r.clear_suffix());
    const Tree keys = rng_keys(cleared);
    const RngCounters old = snapshot_counters(*scope.rng_counters());
    // Re-entrant calls (the body calling this object again) restore the caller's context.
    detail::JitCallContext saved = *state_->ctx;
    *state_->ctx = {&scope, std::move(cleared)};
    struct Restore {
      detail::JitCallContext& live;
      detail::JitCallContext saved;
      ~Restore() { live = std::move(saved); }
    } restore{*state_->ctx, std::move(saved)};
    auto [y, groups] = jitted_(fp, packed.variables[0], keys, args...);
    auto delta = state_->deltas.find(fp);
    if (delta == state_->deltas.end())
      state_->deltas.emplace(fp, detail::counter_delta(old, *scope.rng_counters()));
    else
      detail::apply_counter_delta(*scope.rng_counters(), old, delta->second);
    publish(scope, groups.items());
    return y;
  }

  // How many times fn was traced (JAX counts compiles), and the programs kept.
  std::size_t trace_count() const { return jitted_.trace_count(); }
  std::size_t cache_size() const { return jitted_.cache_size(); }

 private:
  struct State {
    std::recursive_mutex mu;
    std::shared_ptr<detail::JitCallContext> ctx = std::make_shared<detail::JitCallContext>();
    std::map<std::string, RngCounters> deltas;  // per fingerprint, from its first call
  };
  // fn's argument i (after the scope) is the traced function's argument i + 3; a negative one
  // counts from the end, which the three leading arguments do not move.
  static JitOptions offset(JitOptions opts) {
    for (int& i : opts.static_argnums)
      if (i >= 0) i += 3;
    return opts;
  }

  PackSpec spec_;
  std::shared_ptr<State> state_;
  Jitted<detail::JitBody<F>> jitted_;
};

template <class F>
LiftedJit<F> jit(F fn, Filter variables = true, Filter rngs = true, JitOptions opts = {}) {
  return LiftedJit<F>(std::move(fn), std::move(variables), std::move(rngs), std::move(opts));
}

}  // namespace linum::lift
