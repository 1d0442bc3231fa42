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

// in_filters group the visible collections, out_filters the returned ones, rng_filters the rngs.
struct PackSpec {
  std::vector<Filter> in_filters, out_filters, rng_filters;
  std::string name;  // the transform's name, for the inner debug path ("vmap(dense)")
  // A JAX transform's pytree flattening hands dicts back with sorted keys, and Flax's to_bytes
  // writes that order; fold_rngs and map_variables call the body directly and keep creation order.
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

// {filter: split?} in dict order (a transform's split_rngs, one entry per rng group).
using SplitRngs = std::vector<std::pair<Filter, bool>>;
// The rng groups with each split group g's base keys replaced by new_keys(g, its base keys).
template <class F>
RngGroups split_groups(RngGroups rngs, const SplitRngs& split, const F& new_keys) {
  for (std::size_t g = 0; g < rngs.size(); ++g)
    if (split[g].second) rngs[g] = with_keys(rngs[g], new_keys(g, rng_keys(rngs[g])));
  return rngs;
}

// A copy of the packed scopes' rng counters: an eager transform that runs a body again (scan's
// first trace, cond's branches, a recomputation) replays from copies what Flax's traces see.
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
// A loop's carry group after an iteration: what it wrote, the rest as it came in.
Tree keep_carry(const Tree& in, const Tree& out);
}  // namespace detail

// What pack hands its body: Flax's (scope_fn, repack_fn, variable_groups, rng_groups). A scope
// below another given one is not packed itself but re-pushed inside from its topmost given
// ancestor (Flax's _dedup_scopes / _dup_scopes). Cheap to copy, for bodies that run after pack
// returned (checkpoint's recomputation, custom_vjp's backward pass).
class Pack {
 public:
  Pack(PackSpec spec, const std::vector<Scope>& scopes);

  // The outer scopes that are packed, in first-appearance order.
  const std::vector<Scope>& scopes() const;
  // Per in-filter, a tuple with each packed scope's {col: its part}; every root collection is
  // present (empty where the scope has none), as Flax's _populate_collections.
  const Tree& variables() const;
  const RngGroups& rngs() const;

  // One inner scope per scope given to pack, over groups laid out as variables() and rngs(): a
  // new root with the outer path, dict keys sorted (Flax's scope_fn copies with tree_map), the
  // outer rng counters, and the collections of no out-filter immutable.
  std::vector<Scope> scope_fn(const Tree& variables, const RngGroups& rngs,
                              const ScopeFnOptions& opts = {}) const;
  // Invalidates the inner scopes; their mutable collections per out-filter, per packed scope.
  Tree repack(std::vector<Scope>& inner) const;
  // Writes the output groups into the outer scopes' mutable collections (skips immutable ones).
  void publish(const Tree& out_groups) const;

  CounterSnapshot counters() const;
  // Writes a snapshot back in place: the counter objects inner scopes share stay the same.
  void restore(const CounterSnapshot& snapshot) const;
  // Sets the counters to old + delta (counter_delta's), as if the body had run again.
  void advance(const CounterSnapshot& old, const CounterSnapshot& delta) const;

 private:
  std::shared_ptr<const detail::PackState> state_;
};

// The Pack for scopes given as S; `call` hands the lifted function inner scopes of that form.
template <class S>
class Packed : public Pack {
 public:
  using Pack::Pack;

  // Inside the autodiff/ transform: scope_fn over the groups, fn(inner, args...), repack.
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

// flax.core.lift.pack: body(p) -> (y, output groups); pack publishes the groups and returns y.
template <class Scopes, class Body>
auto pack(PackSpec spec, Scopes&& scopes, Body&& body) {
  using S = std::remove_cvref_t<Scopes>;
  static_assert(std::is_same_v<S, Scope> || std::is_same_v<S, std::vector<Scope>>,
                "lift::pack: the scopes are one Scope or a std::vector<Scope>");
  const Packed<S> p(std::move(spec), std::vector<Scope>{scopes});  // a vector is copied whole
  auto out = body(p);
  p.publish(out.second);
  return std::move(out.first);
}

// One inner root's mutable collections grouped by spec.out_filters, after invalidating it (Flax's
// repack_fn); a collection in no out-filter is ValueError("unmapped output variables: ...").
std::vector<Tree> repack(Scope& inner, const PackSpec& spec);

// Flax traces each of `n` bodies once, in order (lax.cond both branches, while_loop its cond then
// its body), each advancing the rng counters; eagerly they run any number of times. So when rngs
// are lifted each runs once first (discarded), recording the counters it starts from and where
// the last one left them: start(k) before a run of body k and finish() at the end put those back.
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
