// flax.core.lift's vmap and scan (flax/core/lift.py): pack (lift/pack.hpp) around linum::vmap /
// linum::scan, with the variable groups and rng keys passed as explicit Tree arguments. Both
// lift one Scope or a std::vector<Scope> together.
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

// {filter: axis} in dict order: {{"params", 0}, {"batch_stats", std::nullopt}}.
using VariableAxes = std::vector<std::pair<Filter, VariableAxis>>;

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
PackSpec vmap_spec(const VmapOptions& opts);
// What vmap decides outside the mapped function (lift.py's vmap inner): the variable groups with
// the mapped axis out of their boxes, the batch size, the rng keys (split ones into axis_size
// keys) and linum::vmap's axes over (variable groups, rng keys, args...) -> (y, output groups).
struct VmapCall {
  Tree variables, rng_keys;
  std::int64_t axis_size = 0;
  AxisSpec in_axes, out_axes;
};
VmapCall vmap_call(const Pack& p, const VmapOptions& opts, const Arrays& arg_leaves,
                   const pytree::TreeDef& arg_def);
// The mapped output groups with add_axis applied to their boxes.
Tree vmap_output_axes(Tree out_groups, const VmapOptions& opts);
}  // namespace detail

// lift.vmap(fn, variable_axes, split_rngs, in_axes, out_axes, axis_size, axis_name): returns
// (scopes, args...) -> fn mapped, running fn(scopes, args...) once; scopes is one Scope or a
// std::vector<Scope> lifted together.
template <class F>
auto vmap(F fn, VmapOptions opts) {
  return [fn = std::move(fn), opts = std::move(opts)](auto&& scopes, const auto&... args) {
    return pack(detail::vmap_spec(opts), scopes, [&](const auto& p) {
      auto [leaves, def] = pytree::tree_flatten<Array>(std::make_tuple(args...));
      const detail::VmapCall v = detail::vmap_call(p, opts, leaves, def);
      auto mapped = [&](const Tree& vars, const Tree& keys, const auto&... a) {
        auto key = [&](std::size_t g, const Tree&) { return keys[g]; };
        return p.call(fn, vars, split_groups(p.rngs(), opts.split_rngs, key), a...);
      };
      auto [y, out] = linum::vmap(mapped, {v.in_axes, v.out_axes, opts.axis_name, v.axis_size})(
          v.variables, v.rng_keys, args...);
      return std::make_pair(std::move(y), detail::vmap_output_axes(std::move(out), opts));
    });
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
PackSpec scan_spec(const ScanOptions& opts);
// A scan's variable groups by role, as Flax names them: broadcast (loop-invariant), carry
// (threaded through the iterations) and scan (a tuple, one group per variable_axes entry,
// stacked). The pack's groups are (broadcast, carry, scan groups...).
struct ScanVariables {
  Tree broadcast, carry, scan;
  static ScanVariables of(const Tree& groups);
  Tree groups() const;
};
// What each iteration gets sliced: the scan groups, the split rng groups' keys (a tuple over rng
// groups, empty for unsplit ones) and each xs argument's leaves (empty for a broadcast one), all
// with the scanned axis moved to 0.
struct ScanSlice {
  BOOST_HANA_DEFINE_STRUCT(ScanSlice, (Tree, scan), (Tree, rng_keys), (Tree, args));
};
// What scan decides outside the loop: the length, each xs argument's axis and the xs to slice.
struct ScanCall {
  std::int64_t length = 0;
  std::vector<std::optional<int>> arg_axes;
  ScanSlice xs;
};
ScanCall scan_call(const Pack& p, const ScanOptions& opts, const std::vector<Arrays>& arg_leaves);
// The output groups: the stacked scan groups' axis moved back and add_axis applied to their boxes.
Tree scan_outputs(const ScanOptions& opts, ScanVariables out);
// Deep merge of b into a (b wins), tuples itemwise.
Tree merge_trees(Tree a, const Tree& b);
// Every leaf with its axis `from` moved to `to`.
template <class T>
T move_axis(const T& t, int from, int to) {
  if (from == to) return t;
  return linum::detail::tree_apply(t, [&](const Array& a) { return moveaxis(a, from, to); });
}
// xs argument `like` as one iteration sees it: whole when broadcast, else rebuilt from its slice.
template <class T>
T scan_arg(const std::optional<int>& axis, const Tree& slice, const T& like) {
  if (!axis) return like;
  return linum::detail::tree_rebuild(like, pytree::tree_leaves<Array>(slice));
}
}  // namespace detail

// lift.scan(fn, variable_axes, variable_broadcast, variable_carry, split_rngs, in_axes, out_axes,
// length, reverse): fn(scopes, carry, xs...) -> (carry, ys); returns (scopes, init, xs...) ->
// (carry, ys). Flax traces the body twice: the first trace finds the broadcast variables and
// advances the rng counters, and every iteration starts from the counters the second one sees.
// Eagerly the first trace is one extra, discarded run of the body.
template <class F>
auto scan(F fn, ScanOptions opts) {
  return [fn = std::move(fn), opts = std::move(opts)](auto&& scopes, const auto& init,
                                                      const auto&... xs) {
    return pack(detail::scan_spec(opts), scopes, [&](const auto& p) {
      using Carry = std::decay_t<decltype(init)>;
      const detail::ScanCall c = detail::scan_call(p, opts, {linum::detail::tree_arrays(xs)...});
      const detail::ScanVariables vars = detail::ScanVariables::of(p.variables());
      Tree broadcast = vars.broadcast;
      std::optional<CounterSnapshot> second_trace;
      Tree broadcast_out = Tree::tuple(Tree::seq_type(p.scopes().size(), Tree::dict()));
      auto body = [&](const Tree& carry_vars, const Carry& carry, const detail::ScanSlice& x) {
        const detail::ScanVariables in{broadcast, carry_vars, x.scan};
        auto run = [&](auto& s, const auto&... a) { return fn(s, carry, a...); };
        auto key = [&](std::size_t g, const Tree&) { return x.rng_keys[g]; };
        return [&]<std::size_t... I>(std::index_sequence<I...>) {
          return p.call(run, in.groups(), split_groups(p.rngs(), opts.split_rngs, key),
                        detail::scan_arg(c.arg_axes[I], x.args[I], xs)...);
        }
        (std::index_sequence_for<decltype(xs)...>{});
      };
      auto step = [&](const std::pair<Tree, Carry>& state, const detail::ScanSlice& x) {
        const auto& [carry_vars, carry] = state;
        // The first step is Flax's first trace too: its broadcast outputs join the loop-invariant
        // variables, and every iteration starts from the counters it left.
        if (!second_trace) {
          broadcast_out = detail::ScanVariables::of(body(carry_vars, carry, x).second).broadcast;
          broadcast = detail::merge_trees(broadcast, broadcast_out);
          second_trace = p.counters();
        } else {
          p.restore(*second_trace);
        }
        auto [r, out] = body(carry_vars, carry, x);
        const auto v = detail::ScanVariables::of(out);
        return std::make_pair(
            std::make_pair(detail::keep_carry(carry_vars, v.carry), Carry(std::get<0>(r))),
            std::make_pair(v.scan, std::get<1>(r)));
      };
      auto [last, ys] = linum::scan(step, std::make_pair(vars.carry, init), c.xs,
                                    linum::ScanOptions{c.length, opts.reverse});
      const detail::ScanVariables out{broadcast_out, last.first, ys.first};
      return std::make_pair(
          std::make_pair(last.second, detail::move_axis(ys.second, 0, opts.out_axes)),
          detail::scan_outputs(opts, out));
    });
  };
}

}  // namespace linum::lift
