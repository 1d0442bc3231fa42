// The non-template halves of the lifted transforms: filters, axis sizes, rng keys and jit's
// signature, decided outside the autodiff/ transform (flax/core/lift.py).
#include <linum/lift/transforms.hpp>

#include <set>
#include <sstream>

#include <linum/autodiff/random/random.hpp>
#include <linum/lift/jit.hpp>
#include <linum/lift/transforms_ad.hpp>
#include <linum/lift/transforms_cf.hpp>

namespace linum::lift::detail {

namespace {

AxisSpec axis_spec(std::optional<int> a) { return a ? AxisSpec(*a) : AxisSpec(std::nullopt); }

std::int64_t axis_len(const Array& leaf, int axis, const char* fn) {
  const int nd = leaf.ndim();
  const int a = axis < 0 ? axis + nd : axis;
  if (a < 0 || a >= nd)
    throw ValueError(std::string(fn) + ": axis " + std::to_string(axis) +
                     " is out of range for an array of rank " + std::to_string(nd));
  return leaf.shape(a);
}

// The mapped size from every size found (`what` names it in Flax's errors) and the option.
std::int64_t one_size(const std::set<std::int64_t>& sizes, std::optional<std::int64_t> given,
                      const std::string& what, const std::string& option) {
  if (!given && sizes.size() == 1) return *sizes.begin();
  if (sizes.size() > 1) {
    std::string set;  // Python's repr of the set
    for (auto v : sizes) set += (set.empty() ? "{" : ", ") + std::to_string(v);
    throw ValueError("Inconsistent " + what + ": " + set + "}");
  }
  if (!given) throw ValueError(option + " should be specified manually.");
  return *given;
}

// split(base, n) for every stream of an rng group (the suffix is kept by with_keys).
Tree split_keys(const std::vector<RngGroup>& group, std::int64_t n) {
  return linum::detail::tree_apply(rng_keys(group),
                                   [&](const Array& k) { return random::split(k, n); });
}

// Flax's _split_in_out_axes: the (filter, axis) pairs lifted as inputs, or those lifted as outputs.
std::vector<std::pair<Filter, std::optional<int>>> var_axes(const VmapOptions& opts, bool in) {
  std::vector<std::pair<Filter, std::optional<int>>> out;
  for (const auto& [f, ax] : opts.variable_axes)
    if (ax.dir != (in ? VariableAxis::Dir::Out : VariableAxis::Dir::In))
      out.emplace_back(f, ax.axis);
  return out;
}

}  // namespace

std::string jit_fingerprint(const std::vector<Scope>& scopes) {
  std::ostringstream os;
  for (std::size_t i = 0; i < scopes.size(); ++i) {
    os << (i ? "; " : "") << "mutable=" << scopes[i].mutable_filter();
    for (const auto& [flag, on] : scopes[i].flags()) os << ' ' << flag << '=' << on;
  }
  return os.str();
}

PackSpec vmap_spec(const VmapOptions& opts) {
  PackSpec spec;
  spec.name = "vmap";
  for (const auto& [f, axis] : var_axes(opts, true)) spec.in_filters.push_back(f);
  for (const auto& [f, axis] : var_axes(opts, false)) spec.out_filters.push_back(f);
  for (const auto& [f, split] : opts.split_rngs) spec.rng_filters.push_back(f);
  return spec;
}

VmapCall vmap_call(const Pack& p, const VmapOptions& opts, const Arrays& arg_leaves,
                   const pytree::TreeDef& arg_def) {
  VmapCall v;
  const auto in_vars = var_axes(opts, true);
  // Boxes of a mapped group lose the axis before slicing.
  v.variables = Tree::tuple();
  for (std::size_t g = 0; g < in_vars.size(); ++g) {
    const Tree& group = p.variables()[g];
    const std::optional<int> axis = in_vars[g].second;
    v.variables.items().push_back(axis ? meta::remove_axis(group, *axis, opts.metadata_params)
                                       : group);
  }

  // The batch size: every leaf of an argument with an axis, and the first leaf of every variable
  // group with an integer axis.
  const std::size_t nargs = arg_def.nodes().front().arity;
  std::vector<AxisSpec> arg_specs;
  if (opts.in_axes.kind() == AxisSpec::Kind::Seq) {
    arg_specs = opts.in_axes.items();
    if (arg_specs.size() != nargs)
      throw ValueError("vmap: in_axes has " + std::to_string(arg_specs.size()) +
                       " entries but the function got " + std::to_string(nargs) + " arguments");
  } else {
    arg_specs.assign(nargs, opts.in_axes);
  }
  auto arg_axes = linum::detail::vmap_leaf_axes(AxisSpec::seq(arg_specs), arg_def, true);
  std::set<std::int64_t> sizes;
  for (std::size_t i = 0; i < arg_leaves.size(); ++i)
    if (arg_axes[i]) sizes.insert(axis_len(arg_leaves[i], *arg_axes[i], "vmap"));
  for (std::size_t g = 0; g < in_vars.size(); ++g) {
    if (!in_vars[g].second) continue;
    Arrays l = pytree::tree_leaves<Array>(v.variables[g]);
    if (!l.empty()) sizes.insert(axis_len(l.front(), *in_vars[g].second, "vmap"));
  }
  v.axis_size = one_size(sizes, opts.axis_size, "batch axis sizes", "axis_size");

  // split_rngs: split(base, n) mapped on axis 0, else the same base key (the suffix is kept).
  v.rng_keys = Tree::tuple();
  std::vector<AxisSpec> rng_axes, in_var, out_var;
  for (std::size_t g = 0; g < opts.split_rngs.size(); ++g) {
    const bool split = opts.split_rngs[g].second;
    v.rng_keys.items().push_back(split ? split_keys(p.rngs()[g], v.axis_size)
                                       : rng_keys(p.rngs()[g]));
    rng_axes.push_back(split ? AxisSpec(0) : AxisSpec(std::nullopt));
  }
  for (const auto& [f, axis] : in_vars) in_var.push_back(axis_spec(axis));
  for (const auto& [f, axis] : var_axes(opts, false)) out_var.push_back(axis_spec(axis));
  std::vector<AxisSpec> all{AxisSpec::seq(in_var), AxisSpec::seq(rng_axes)};
  all.insert(all.end(), arg_specs.begin(), arg_specs.end());
  v.in_axes = AxisSpec::seq(std::move(all));
  v.out_axes = AxisSpec::seq({opts.out_axes, AxisSpec::seq(out_var)});
  return v;
}

Tree vmap_output_axes(Tree out_groups, const VmapOptions& opts) {
  const auto out_vars = var_axes(opts, false);
  for (std::size_t g = 0; g < out_vars.size(); ++g)
    if (const auto axis = out_vars[g].second)
      out_groups.items()[g] = meta::add_axis(out_groups[g], *axis, opts.metadata_params);
  return out_groups;
}

PackSpec scan_spec(const ScanOptions& opts) {
  PackSpec spec;
  spec.name = "scan";
  spec.in_filters = {opts.variable_broadcast, opts.variable_carry};
  for (const auto& [f, ax] : opts.variable_axes) spec.in_filters.push_back(f);
  spec.out_filters = spec.in_filters;
  for (const auto& [f, split] : opts.split_rngs) spec.rng_filters.push_back(f);
  return spec;
}

ScanVariables ScanVariables::of(const Tree& groups) {
  const auto& g = groups.items();
  return {g[0], g[1], Tree::tuple(Tree::seq_type(g.begin() + 2, g.end()))};
}

Tree ScanVariables::groups() const {
  Tree out = Tree::tuple({broadcast, carry});
  for (const auto& g : scan.items()) out.items().push_back(g);
  return out;
}

ScanCall scan_call(const Pack& p, const ScanOptions& opts, const std::vector<Arrays>& arg_leaves) {
  ScanCall c;
  const ScanVariables vars = ScanVariables::of(p.variables());
  const std::size_t n = arg_leaves.size();
  if (opts.in_axes.size() == 1) {
    c.arg_axes.assign(n, opts.in_axes[0].axis);
  } else if (opts.in_axes.size() == n) {
    for (const auto& a : opts.in_axes) c.arg_axes.push_back(a.axis);
  } else {
    throw ValueError("scan: in_axes has " + std::to_string(opts.in_axes.size()) +
                     " entries but the function got " + std::to_string(n) + " xs arguments");
  }
  // The length: the first leaf of every scanned argument.
  std::set<std::int64_t> lengths;
  for (std::size_t i = 0; i < n; ++i)
    if (c.arg_axes[i] && !arg_leaves[i].empty())
      lengths.insert(axis_len(arg_leaves[i].front(), *c.arg_axes[i], "scan"));
  c.length = one_size(lengths, opts.length, "scan lengths", "length");

  // The scan groups lose their axis in the boxes and have it moved to 0.
  c.xs.scan = Tree::tuple();
  for (std::size_t g = 0; g < opts.variable_axes.size(); ++g) {
    const int axis = opts.variable_axes[g].second;
    c.xs.scan.items().push_back(
        move_axis(meta::remove_axis(vars.scan[g], axis, opts.metadata_params), axis, 0));
  }
  // Split streams: split(base, length), iteration t takes element t whatever `reverse` is.
  c.xs.rng_keys = Tree::tuple();
  for (std::size_t g = 0; g < opts.split_rngs.size(); ++g)
    c.xs.rng_keys.items().push_back(opts.split_rngs[g].second ? split_keys(p.rngs()[g], c.length)
                                                              : Tree::tuple());
  c.xs.args = Tree::tuple();
  for (std::size_t i = 0; i < n; ++i) {
    Tree leaves = Tree::list();
    if (c.arg_axes[i])
      for (const auto& l : arg_leaves[i]) leaves.items().push_back(moveaxis(l, *c.arg_axes[i], 0));
    c.xs.args.items().push_back(std::move(leaves));
  }
  return c;
}

Tree scan_outputs(const ScanOptions& opts, ScanVariables out) {
  for (std::size_t g = 0; g < opts.variable_axes.size(); ++g) {
    const int axis = opts.variable_axes[g].second;
    out.scan.items()[g] =
        meta::add_axis(move_axis(out.scan[g], 0, axis), axis, opts.metadata_params);
  }
  return out.groups();
}

Tree merge_trees(Tree a, const Tree& b) {
  if (a.is_tuple() && b.is_tuple() && a.size() == b.size()) {
    for (std::size_t i = 0; i < a.size(); ++i) a.items()[i] = merge_trees(a[i], b[i]);
    return a;
  }
  if (!a.is_dict() || !b.is_dict()) return b;
  for (const auto& [k, v] : b.as_dict()) a[k] = a.contains(k) ? merge_trees(a[k], v) : v;
  return a;
}

Tree zeros_like_tree(const Tree& t) {
  return linum::detail::tree_apply(t, [](const Array& a) { return zeros_like(a); });
}

Tree variable_tangents_for(const Tree& vars, const Tree& variable_tangents) {
  Tree out = zeros_like_tree(vars);
  if (!variable_tangents.is_dict()) return out;
  Tree& own = out.items()[0].items()[0];  // the one group of the one packed scope
  for (const auto& [col, t] : variable_tangents.as_dict())
    if (own.contains(col) && !(t.is_dict() && t.size() == 0)) own[col] = t;
  return out;
}

RngGroups loop_rngs(const Pack& p, const WhileOptions& opts, const Array& i, bool for_cond) {
  return split_groups(p.rngs(), opts.split_rngs, [&](std::size_t, const Tree& keys) {
    const Array d = for_cond ? subtract(zeros_like(i), i) : i;
    return linum::detail::tree_apply(keys, [&](const Array& k) { return random::fold_in(k, d); });
  });
}

}  // namespace linum::lift::detail
