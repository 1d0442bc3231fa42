// flax.core.lift's pack (flax/core/lift.py:125-334): how variables and rng streams cross a
// transform boundary as explicit pytree arguments, and how the collections mutated inside come
// back. Every lifted transform of lift/transforms.hpp is pack around one autodiff/ transform.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <linum/lift/scope.hpp>

namespace linum::lift {

// One group of rng streams: stream name -> the outer LazyRng (base key + suffix).
using RngGroup = std::map<std::string, LazyRng>;

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

// Outside: the scope's collections grouped by in_filters (each group a dict {col: the scope's
// part}, every root collection populated) and its rng streams grouped by rng_filters. Collections
// and streams that match no filter are invisible inside.
struct Packed {
  std::vector<Tree> variables;
  std::vector<RngGroup> rngs;
};
Packed pack(const Scope& scope, const PackSpec& spec);

// Inside: a new root over the groups (their dicts' keys sorted, as Flax's scope_fn copies them
// with jax.tree_util.tree_map), sharing the outer rng counters (the same object, so every trace
// advances them). A collection in an in-filter but no out-filter is immutable there;
// `mutable_filter` narrows it further. `counters` replaces the shared ones (a recomputation that
// must not advance them).
Scope inner_scope(const Scope& outer, const PackSpec& spec, const std::vector<Tree>& variables,
                  const std::vector<RngGroup>& rngs, const Filter& mutable_filter = true,
                  std::shared_ptr<RngCounters> counters = nullptr);

// After the body: invalidates `inner` and groups its mutable collections by out_filters,
// keys sorted when spec.sorted_outputs; one that matches none is ValueError("unmapped output
// variables: ...").
std::vector<Tree> repack(Scope& inner, const PackSpec& spec);

// Writes every top-level entry of the output groups into the outer scope's mutable collections;
// immutable ones are skipped silently.
void publish(Scope& outer, const std::vector<Tree>& out_groups);

// The base keys of a group as a dict {stream: key}, and a group with new base keys but the same
// suffixes: splitting an rng maps over its base key and keeps the suffix.
Tree rng_keys(const RngGroup& group);
RngGroup with_keys(const RngGroup& group, const Tree& keys);

// A deep copy of rng counters, and writing one back in place (the objects inner scopes share stay
// the same): eager loops replay Flax's counter values, which advance once per trace of the body,
// not once per eager iteration.
RngCounters snapshot_counters(const RngCounters& c);
void restore_counters(RngCounters& live, const RngCounters& snap);

// Invalidates an inner scope when the body returns or throws.
struct InnerGuard {
  Scope& s;
  ~InnerGuard() { s.invalidate(); }
};

// Several scopes lifted at once (flax's _dedup_scopes): a scope below another given one is not
// packed itself; inside it is re-pushed, name by name, from its topmost given ancestor.
struct LiftedScopes {
  std::vector<Scope> roots;  // the scopes that are packed, in first-appearance order
  // Per given scope: the index of its root in `roots` and the names leading down to it.
  std::vector<std::pair<std::size_t, std::vector<std::string>>> paths;
};
LiftedScopes dedup_scopes(const std::vector<Scope>& scopes);
// flax's _dup_scopes: the scopes the body sees, one per given scope, each rebuilt from the inner
// scope of its root by push(name, reuse = true), so its parent is that lifted scope.
std::vector<Scope> dup_scopes(const std::vector<Scope>& inner_roots, const LiftedScopes& lifted);

}  // namespace linum::lift
