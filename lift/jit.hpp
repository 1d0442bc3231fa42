// flax.core.lift.jit (flax/core/lift.py): pack around linum::jit. The scopes' variables and rng
// base keys are the traced arguments; the fingerprint (the scopes' mutable filters and flags) is
// a static one, so init, apply and apply(mutable=...) each trace once and later calls replay.
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

// What the traced body needs of the call that traces it (Flax's jit_context): the call's pack,
// which outlives the trace, and its rng groups with the suffixes cleared (as Flax's jit does).
template <class S>
struct JitCallContext {
  const Packed<S>* pack = nullptr;
  RngGroups rngs;
};

// The static part of the signature: Flax's mutable filters, plus the flags the body may read.
std::string jit_fingerprint(const std::vector<Scope>& scopes);

// The function linum::jit traces: (fingerprint, variables, rng keys, args...) -> (y, variables).
template <class F, class S>
struct JitBody {
  mutable F fn;
  std::shared_ptr<JitCallContext<S>> ctx;

  template <class... A>
  auto operator()(const std::string& /*fingerprint*/, const Tree& vars, const Tree& keys,
                  const A&... args) const {
    RngGroups rngs = ctx->rngs;
    for (std::size_t g = 0; g < rngs.size(); ++g) rngs[g] = with_keys(rngs[g], keys[g]);
    return ctx->pack->call(fn, vars, rngs, args...);
  }
};

}  // namespace detail

// lift.jit(fn, variables, rngs, static_argnums): fn(scopes, args...) traced once per signature
// (variable structure and avals, rng keys, arguments, fingerprint) and replayed after. The object
// holds the cache: keep it, as Flax keeps the decorated function. static_argnums count fn's
// arguments after the scope; calls are serialized per object; S is one Scope or a vector.
template <class F, class S = Scope>
class LiftedJit {
 public:
  LiftedJit(F fn, Filter variables, Filter rngs, JitOptions opts)
      : spec_{{variables}, {variables}, {rngs}, "jit"},
        state_(std::make_shared<State>()),
        jitted_(detail::JitBody<F, S>{std::move(fn), state_->ctx}, offset(std::move(opts)),
                "lift.jit") {}

  template <class... A>
  auto operator()(const S& scopes, const A&... args) const {
    std::lock_guard<std::recursive_mutex> lock(state_->mu);
    return pack(spec_, scopes, [&](const Packed<S>& p) {
      RngGroups cleared = p.rngs();
      Tree keys = Tree::tuple();
      for (auto& group : cleared) {
        for (auto& per_scope : group)
          for (auto& [stream, r] : per_scope) r = r.clear_suffix();
        keys.items().push_back(rng_keys(group));
      }
      const std::string fp = detail::jit_fingerprint(p.scopes());
      const CounterSnapshot old = p.counters();
      // Re-entrant calls (the body calling this object again) restore the caller's context.
      struct Restore {
        detail::JitCallContext<S>& live;
        detail::JitCallContext<S> saved;
        ~Restore() { live = std::move(saved); }
      } restore{*state_->ctx, std::exchange(*state_->ctx, {&p, std::move(cleared)})};
      auto out = jitted_(fp, p.variables(), keys, args...);
      // Later calls replay the program without running the body: the counters advance by what
      // the first call of the fingerprint advanced, whether or not a trace happens.
      auto delta = state_->deltas.find(fp);
      if (delta == state_->deltas.end())
        state_->deltas.emplace(fp, counter_delta(old, p.counters()));
      else
        p.advance(old, delta->second);
      return out;
    });
  }

  // How many times fn was traced (JAX counts compiles), and the programs kept.
  std::size_t trace_count() const { return jitted_.trace_count(); }
  std::size_t cache_size() const { return jitted_.cache_size(); }

 private:
  struct State {
    std::recursive_mutex mu;
    std::shared_ptr<detail::JitCallContext<S>> ctx = std::make_shared<detail::JitCallContext<S>>();
    std::map<std::string, CounterSnapshot> deltas;  // per fingerprint, from its first call
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
  Jitted<detail::JitBody<F, S>> jitted_;
};

template <class F>
LiftedJit<F> jit(F fn, Filter variables = true, Filter rngs = true, JitOptions opts = {}) {
  return LiftedJit<F>(std::move(fn), std::move(variables), std::move(rngs), std::move(opts));
}

}  // namespace linum::lift
