// flax.core.lift.pack (flax/core/lift.py), the one higher-order function every lifted transform is
// built on: pack(spec, scopes, body) groups the scopes' variables and rng streams by the spec's
// filters and calls body(p); body passes the groups through one autodiff/ transform, making inner
// scopes with p.scope_fn and taking the mutated groups back out with p.repack, and returns
// (y, output groups), which pack writes into the outer scopes.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <linum/lift/scope.hpp>

namespace linum::lift {

// The filters of one lifted transform: in_filters group the visible collections, the
// out_filters name those that come back, rng_filters group the visible rng streams.
struct PackSpec {
  std::vector<Filter> in_filters, out_filters, rng_filters;
  std::string name;  // the transform's name, for the inner debug path ("vmap(dense)")
  // The outputs cross a JAX transform (jax.vmap, lax.scan, jax.checkpoint, ...), whose pytree
  // flattening hands dicts back with sorted keys, so the variables come back in that order (what
  // Flax's to_bytes then writes). fold_rngs and map_variables call the body directly: their
  // outputs keep the order the variables were made in.
  bool sorted_outputs = true;
};

// One packed scope's streams of one rng group: stream name -> the outer LazyRng.
using RngGroup = std::map<std::string, LazyRng>;
// Per rng filter, one RngGroup per packed scope (Flax's rng_groups).
using RngGroups = std::vector<std::vector<RngGroup>>;

// Only base keys cross an autodiff/ transform, as LazyRng's suffix is a static field: a group's
// base keys (a tuple over packed scopes of {stream: key}), and the group with new base keys.
Tree rng_keys(const std::vector<RngGroup>& group);
std::vector<RngGroup> with_keys(const std::vector<RngGroup>& group, const Tree& keys);

// A copy of the packed scopes' rng counters. Flax traces a body once per trace, each trace
// advancing the shared counters; an eager transform that runs a body again (scan's first trace,
// the branches of cond, a recomputation) replays the values Flax's traces see from copies.
using CounterSnapshot = std::vector<RngCounters>;
// now - old, per path and stream: what one run of a body advanced (Flax's _restore_rng_counters).
CounterSnapshot counter_delta(const CounterSnapshot& old, const CounterSnapshot& now);

// scope_fn's options beyond the groups.
struct ScopeFnOptions {
  Filter mutable_filter = true;  // narrows the out-filters' collections (while_loop's cond: false)
  // Fresh copies of these counters instead of the shared ones: a recomputation (checkpoint's
  // backward pass) must draw the keys the first run drew and leave the outer counters alone.
  const CounterSnapshot* counters = nullptr;
};

namespace detail {
struct PackState;
// A loop's carried variable group after an iteration: the collections it wrote, the others as
// they came in (per packed scope).
Tree keep_carry(const Tree& in, const Tree& out);
}  // namespace detail

// What pack hands its body: Flax's (scope_fn, repack_fn, variable_groups, rng_groups) for one
// call. Several scopes are packed together (a scope below another given one is not packed itself;
// inside it is re-pushed from its topmost given ancestor, as Flax's _dedup_scopes / _dup_scopes).
// Cheap to copy: a body that runs after pack returned (checkpoint's recomputation, custom_vjp's
// backward pass) keeps a copy.
class Pack {
 public:
  Pack(PackSpec spec, const std::vector<Scope>& scopes);

  // The outer scopes that are packed, in first-appearance order.
  const std::vector<Scope>& scopes() const;
  // Per in-filter, a tuple with each packed scope's {col: its part}; every root collection is
  // present (empty where the scope has none), as Flax's _populate_collections.
  const Tree& variables() const;
  const RngGroups& rngs() const;

  // scope_fn: one inner scope per scope given to pack, over groups laid out as variables() and
  // rngs(). A packed scope becomes a new root with its path, its dicts' keys sorted (Flax's
  // scope_fn copies them with tree_map), sharing the outer rng counters; a collection in an
  // in-filter but no out-filter is immutable there.
  std::vector<Scope> scope_fn(const Tree& variables, const RngGroups& rngs,
                              const ScopeFnOptions& opts = {}) const;
  // repack: invalidates the inner scopes and returns their mutable collections as a tuple over
  // out-filters, each a tuple over packed scopes; one that matches no out-filter is
  // ValueError("unmapped output variables: ...").
  Tree repack(std::vector<Scope>& inner) const;
  // An output group with nothing in it (a tuple of empty dicts).
  Tree empty_group() const;
  // Writes every top-level entry of the output groups into the outer scopes' mutable collections;
  // immutable ones are skipped silently. pack calls it with what its body returns.
  void publish(const Tree& out_groups) const;

  CounterSnapshot counters() const;
  // Writes a snapshot back in place: the counter objects inner scopes share stay the same.
  void restore(const CounterSnapshot& snapshot) const;
  // Sets the counters to old + delta (counter_delta's), as if the body had run again.
  void advance(const CounterSnapshot& old, const CounterSnapshot& delta) const;

 private:
  std::shared_ptr<const detail::PackState> state_;
};

// The Pack of pack(spec, scopes, body) for scopes given as S: one Scope, or a std::vector<Scope>
// lifted together. `call` hands the lifted function its inner scopes in the same form.
template <class S>
class Packed : public Pack {
 public:
  using Pack::Pack;

  // The step every lifted transform runs inside its autodiff/ transform: scope_fn over the groups,
  // fn(inner, args...), repack. Returns (y, output groups).
  template <class F, class... A>
  auto call(F&& fn, const Tree& variables, const RngGroups& rngs, const A&... args) const {
    return call_with({}, fn, variables, rngs, args...);
  }
  template <class F, class... A>
  auto call_with(const ScopeFnOptions& opts, F&& fn, const Tree& variables, const RngGroups& rngs,
                 const A&... args) const {
    std::vector<Scope> inner = scope_fn(variables, rngs, opts);
    detail::InvalidateOnExit guard{inner};
    auto y = [&] {
      if constexpr (std::is_same_v<S, Scope>)
        return fn(inner.front(), args...);
      else
        return fn(inner, args...);
    }();
    return std::make_pair(std::move(y), repack(inner));
  }
};

// flax.core.lift.pack: body(const Packed<S>&) -> (y, output groups laid out as repack's); the
// groups are published to the outer scopes and y returned.
template <class Scopes, class Body>
auto pack(PackSpec spec, Scopes&& scopes, Body&& body) {
  using S = std::remove_cvref_t<Scopes>;
  static_assert(std::is_same_v<S, Scope> || std::is_same_v<S, std::vector<Scope>>,
                "lift::pack: the scopes are one Scope or a std::vector<Scope>");
  const Packed<S> p = [&] {
    if constexpr (std::is_same_v<S, Scope>)
      return Packed<S>(std::move(spec), {scopes});
    else
      return Packed<S>(std::move(spec), scopes);
  }();
  auto out = body(p);
  p.publish(out.second);
  return std::move(out.first);
}

// One inner root's mutable collections grouped by spec.out_filters (what Pack::repack does per
// packed scope); invalidates `inner` first, as Flax's repack_fn.
std::vector<Tree> repack(Scope& inner, const PackSpec& spec);

// Flax traces each of `n` bodies once, in order, each trace advancing the shared rng counters
// (lax.cond traces both branches, while_loop its cond then its body). An eager transform runs
// them any number of times in any order, so when the pack lifts rng groups it runs each once
// first (discarded), recording the counters it starts from and where the last one left them;
// start(k) before a run of body k and finish() at the end put those values back.
class CounterReplay {
 public:
  template <class Run>
  CounterReplay(const Pack& p, std::size_t n, const Run& run) : pack_(p) {
    if (p.rngs().empty()) return;
    for (std::size_t k = 0; k < n; ++k) {
      starts_.push_back(p.counters());
      run(k);
    }
    end_ = p.counters();
  }
  void start(std::size_t k) const {
    if (!starts_.empty()) pack_.restore(starts_[k]);
  }
  void finish() const {
    if (!starts_.empty()) pack_.restore(end_);
  }

 private:
  const Pack& pack_;
  std::vector<CounterSnapshot> starts_;
  CounterSnapshot end_;
};

}  // namespace linum::lift
