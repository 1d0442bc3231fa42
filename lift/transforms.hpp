// flax.core.lift's transforms (flax/core/lift.py): each is pack (lift/pack.hpp) around the
// autodiff/ transform of the same name, with variables and rng keys passed as explicit Tree
// arguments.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <linum/autodiff/control_flow.hpp>
#include <linum/autodiff/transforms.hpp>
#include <linum/lift/meta.hpp>
#include <linum/lift/pack.hpp>

namespace linum::lift {

// A vmap variable axis: an int, None (broadcast), In(axis) (lifted as input only) or Out(axis)
// (only as output), as flax.core.lift's In/Out.
struct VariableAxis {
  enum class Dir { Both, In, Out };
  std::optional<int> axis;
  Dir dir = Dir::Both;
  VariableAxis(int a) : axis(a) {}  // NOLINT(google-explicit-constructor)
  VariableAxis(std::nullopt_t) {}   // NOLINT(google-explicit-constructor)
  VariableAxis(std::optional<int> a, Dir d) : axis(a), dir(d) {}
};
inline VariableAxis In(std::optional<int> axis) { return {axis, VariableAxis::Dir::In}; }
inline VariableAxis Out(std::optional<int> axis) { return {axis, VariableAxis::Dir::Out}; }

// {filter: axis} and {filter: split?} in dict order: {{"params", 0}, {"batch_stats",
// std::nullopt}}.
using VariableAxes = std::vector<std::pair<Filter, VariableAxis>>;
using SplitRngs = std::vector<std::pair<Filter, bool>>;

struct VmapOptions {
  VariableAxes variable_axes = {};
  SplitRngs split_rngs = {};
  AxisSpec in_axes = 0;  // per positional argument (after the scope), or one for all
  AxisSpec out_axes = 0;
  std::optional<std::int64_t> axis_size = {};
  std::string axis_name = {};
  // Passed to the add_axis / remove_axis of the boxes in integer-axis collections.
  meta::MetadataParams metadata_params = {};
};

namespace detail {

// Everything vmap decides outside the mapped function. The scopes are lifted together:
// each variable group and rng group is a tuple with one entry per lifted root.
struct VmapPlan {
  PackSpec spec;
  LiftedScopes scopes;
  std::vector<Packed> packed;  // per lifted root
  Tree variables;              // per in-group: (the group of each root...)
  AxisSpec in_axes, out_axes;  // over (variable groups, rng keys, args...) and (out, groups)
  Tree rng_keys;               // per rng group: ({stream: key or (n, 2) keys} of each root...)
  std::int64_t axis_size = 0;
  std::vector<std::optional<int>> out_var_axes;  // per out-group
};
// arg_leaves/arg_def: the positional arguments' leaves and structure (a tuple).
VmapPlan vmap_plan(const std::vector<Scope>& scopes, const VmapOptions& opts,
                   const Arrays& arg_leaves, const pytree::TreeDef& arg_def);
// Inside: one inner root per lifted root over its slices of `vars` and `keys`.
std::vector<Scope> vmap_inner_roots(const VmapPlan& plan, const Tree& vars, const Tree& keys);
// After the body: the inner roots' output groups, per out-group a tuple over roots, and
// publishing them to the outer roots.
Tree repack_all(std::vector<Scope>& inner_roots, const PackSpec& spec);
void publish_all(std::vector<Scope>& outer_roots, const Tree& out_groups);
// The mapped output groups with add_axis applied to their boxes (lift.py:856-864).
Tree add_metadata_axes(Tree out_groups, const VmapPlan& plan, const meta::MetadataParams& params);

// A scope function's first argument: one Scope, or a std::vector<Scope> lifted together (flax's
// tuple of scopes).
template <class S>
std::vector<Scope> scope_list(S& s) {
  if constexpr (std::is_same_v<std::remove_cvref_t<S>, std::vector<Scope>>)
    return s;
  else
    return {s};
}
// Invalidates every inner root when the body returns or throws.
struct InnerGuards {
  std::vector<Scope>& s;
  ~InnerGuards() {
    for (auto& x : s) x.invalidate();
  }
};

}  // namespace detail

// lift.vmap(fn, variable_axes, split_rngs, in_axes, out_axes, axis_size, axis_name):
// returns (Scope&, args...) -> fn mapped; fn(Scope&, args...) is run once. Given a
// std::vector<Scope> instead, fn gets the vector of inner scopes: a scope below another one in
// the vector is re-pushed inside from it, so its parent is that lifted scope.
template <class F>
auto vmap(F fn, VmapOptions opts) {
  return [fn = std::move(fn), opts = std::move(opts)](auto&& scopes, const auto&... args) {
    constexpr bool multi =
        std::is_same_v<std::remove_cvref_t<decltype(scopes)>, std::vector<Scope>>;
    const std::vector<Scope> given = detail::scope_list(scopes);
    auto targs = std::make_tuple(args...);
    auto [leaves, def] = pytree::tree_flatten<Array>(targs);
    detail::VmapPlan plan = detail::vmap_plan(given, opts, leaves, def);
    auto mapped = [&](const Tree& vars, const Tree& keys, const auto&... a) {
      std::vector<Scope> roots = detail::vmap_inner_roots(plan, vars, keys);
      detail::InnerGuards guard{roots};
      std::vector<Scope> inner = dup_scopes(roots, plan.scopes);
      auto y = [&] {
        if constexpr (multi)
          return fn(inner, a...);
        else
          return fn(inner.front(), a...);
      }();
      return std::make_pair(std::move(y), detail::repack_all(roots, plan.spec));
    };
    auto [y, out] = linum::vmap(mapped, {plan.in_axes, plan.out_axes, opts.axis_name,
                                         plan.axis_size})(plan.variables, plan.rng_keys, args...);
    detail::publish_all(plan.scopes.roots,
                        detail::add_metadata_axes(std::move(out), plan, opts.metadata_params));
    return y;
  };
}

// ---- scan ---------------------------------------------------------------------------------------

// flax.core.broadcast (nn.broadcast): a scan input passed whole to every iteration.
struct Broadcast {};
inline constexpr Broadcast broadcast{};
// A scan in_axis: an int (negative counts from the end) or broadcast.
struct ScanAxis {
  std::optional<int> axis;      // nullopt: broadcast
  ScanAxis(int a) : axis(a) {}  // NOLINT(google-explicit-constructor)
  ScanAxis(Broadcast) {}        // NOLINT(google-explicit-constructor)
};

struct ScanOptions {
  std::vector<std::pair<Filter, int>> variable_axes = {};  // stacked along that axis
  Filter variable_broadcast = false;                       // loop-invariant
  Filter variable_carry = false;                           // threaded through iterations
  SplitRngs split_rngs = {};
  std::vector<ScanAxis> in_axes = {0};  // one per xs argument, or one for all of them
  int out_axes = 0;                     // where the ys' stacked axis goes
  std::optional<std::int64_t> length = {};
  bool reverse = false;
  // Passed to the add_axis / remove_axis of the boxes in variable_axes collections.
  meta::MetadataParams metadata_params = {};
};

namespace detail {

struct ScanPlan {
  PackSpec spec;
  Packed packed;  // groups: broadcast, carry, then one per variable_axes entry
  std::vector<std::optional<int>> arg_axes;  // per xs argument; nullopt: broadcast
  std::vector<int> var_axes;
  std::int64_t length = 0;
};
ScanPlan scan_plan(const Scope& scope, const ScanOptions& opts,
                   const std::vector<Arrays>& arg_leaves);
// What linum::scan slices: (axis groups with their axis moved to 0, split rng keys, the leaves of
// the scanned xs moved likewise).
Tree scan_xs(const ScanPlan& plan, const ScanOptions& opts, const std::vector<Arrays>& arg_leaves);
// One iteration's rng groups: split streams from the slice, the others the outer base keys.
std::vector<RngGroup> scan_rng_groups(const ScanPlan& plan, const ScanOptions& opts,
                                      const Tree& keys);
// The carry variables after an iteration: those it wrote, the others unchanged.
Tree keep_carry(const Tree& in, const Tree& out);
Tree merge_trees(Tree a, const Tree& b);
Tree move_axis(const Tree& t, int from, int to);

}  // namespace detail

// lift.scan(fn, variable_axes, variable_broadcast, variable_carry, split_rngs, in_axes, out_axes,
// length, reverse): fn(Scope&, carry, xs...) -> (carry, ys); returns (Scope&, init, xs...) ->
// (carry, ys). Flax traces the body twice (lift.py's scan): the first run finds the broadcast
// variables and advances the rng counters once; every iteration then starts from the counters
// the second trace sees. Eagerly the first trace is one extra, discarded run of the body.
template <class F>
auto scan(F fn, ScanOptions opts) {
  return [fn = std::move(fn), opts = std::move(opts)](Scope& scope, const auto& init,
                                                      const auto&... xs) {
    using Carry = std::decay_t<decltype(init)>;
    const auto targs = std::make_tuple(xs...);
    const std::vector<Arrays> arg_leaves{linum::detail::tree_arrays(xs)...};
    const detail::ScanPlan plan = detail::scan_plan(scope, opts, arg_leaves);
    const Tree scanned = detail::scan_xs(plan, opts, arg_leaves);
    Tree bcast = plan.packed.variables[0];
    std::optional<RngCounters> snap;
    std::optional<Tree> bcast_out;
    auto run = [&](const Tree& carry_vars, const Carry& c, const Tree& x) {
      std::vector<Tree> groups{bcast, carry_vars};
      for (const auto& g : x[0].items()) groups.push_back(g);
      std::size_t k = 0, i = 0;
      auto arg = [&](const auto& like) {
        const std::size_t n = arg_leaves[i].size();
        if (!plan.arg_axes[i++]) return like;
        Arrays l;
        for (std::size_t j = 0; j < n; ++j) l.push_back(x[2][k++].leaf());
        return linum::detail::tree_rebuild(like, l);
      };
      auto args = std::apply([&](const auto&... a) { return std::tuple{arg(a)...}; }, targs);
      Scope inner =
          inner_scope(scope, plan.spec, groups, detail::scan_rng_groups(plan, opts, x[1]));
      InnerGuard guard{inner};
      auto r = std::apply([&](const auto&... a) { return fn(inner, c, a...); }, args);
      return std::make_pair(repack(inner, plan.spec), std::move(r));
    };
    auto step = [&](const std::pair<Tree, Carry>& carry, const Tree& x) {
      if (!snap) {
        auto first = run(carry.first, carry.second, x);
        bcast_out = first.first[0];
        bcast = detail::merge_trees(bcast, *bcast_out);
        snap = snapshot_counters(*scope.rng_counters());
      } else {
        restore_counters(*scope.rng_counters(), *snap);
      }
      auto [out, r] = run(carry.first, carry.second, x);
      Tree axis_out = Tree::tuple(Tree::seq_type(out.begin() + 2, out.end()));
      return std::make_pair(
          std::make_pair(detail::keep_carry(carry.first, out[1]), Carry(std::get<0>(r))),
          std::make_pair(std::move(axis_out), std::get<1>(r)));
    };
    auto [cfinal, ys] = linum::scan(step, std::make_pair(plan.packed.variables[1], init), scanned,
                                    linum::ScanOptions{plan.length, opts.reverse});
    std::vector<Tree> out{bcast_out ? *bcast_out : Tree::dict(), cfinal.first};
    for (std::size_t g = 0; g < plan.var_axes.size(); ++g)
      out.push_back(meta::add_axis(detail::move_axis(ys.first[g], 0, plan.var_axes[g]),
                                   plan.var_axes[g], opts.metadata_params));
    publish(scope, out);
    auto y = ys.second;
    if (opts.out_axes != 0)
      y = linum::detail::tree_apply(y,
                                    [&](const Array& a) { return moveaxis(a, 0, opts.out_axes); });
    return std::make_pair(cfinal.second, y);
  };
}

}  // namespace linum::lift
