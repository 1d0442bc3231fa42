// flax.core.lift's transforms (spec §3.2): each is pack (lift/pack.hpp) around the autodiff/
// transform of the same name, with variables and rng keys passed as explicit Tree arguments.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <linum/autodiff/control_flow.hpp>
#include <linum/autodiff/transforms.hpp>
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
};

namespace detail {

// Everything vmap decides outside the mapped function.
struct VmapPlan {
  PackSpec spec;
  Packed packed;
  AxisSpec in_axes, out_axes;  // over (variable groups, rng keys, args...) and (out, groups)
  Tree rng_keys;               // one dict {stream: key or (n, 2) keys} per rng group
  std::int64_t axis_size = 0;
};
// arg_leaves/arg_def: the positional arguments' leaves and structure (a tuple).
VmapPlan vmap_plan(const Scope& scope, const VmapOptions& opts, const Arrays& arg_leaves,
                   const pytree::TreeDef& arg_def);
std::vector<RngGroup> rng_groups_from(const Packed& packed, const Tree& keys);

}  // namespace detail

// lift.vmap(fn, variable_axes, split_rngs, in_axes, out_axes, axis_size, axis_name):
// returns (Scope&, args...) -> fn mapped; fn(Scope&, args...) is run once.
template <class F>
auto vmap(F fn, VmapOptions opts) {
  return [fn = std::move(fn), opts = std::move(opts)](Scope& scope, const auto&... args) {
    auto targs = std::make_tuple(args...);
    auto [leaves, def] = pytree::tree_flatten<Array>(targs);
    detail::VmapPlan plan = detail::vmap_plan(scope, opts, leaves, def);
    auto mapped = [&](const Tree& vars, const Tree& keys, const auto&... a) {
      Scope inner =
          inner_scope(scope, plan.spec, vars.items(), detail::rng_groups_from(plan.packed, keys));
      InnerGuard guard{inner};
      auto y = fn(inner, a...);
      return std::make_pair(std::move(y), Tree::tuple(repack(inner, plan.spec)));
    };
    auto [y, out] =
        linum::vmap(mapped, {plan.in_axes, plan.out_axes, opts.axis_name, plan.axis_size})(
            Tree::tuple(plan.packed.variables), plan.rng_keys, args...);
    publish(scope, out.items());
    return y;
  };
}

}  // namespace linum::lift
