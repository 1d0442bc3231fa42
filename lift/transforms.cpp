// The non-template halves of the lifted transforms: filters, axis sizes and rng keys decided
// outside the autodiff/ transform (flax/core/lift.py).
#include <linum/lift/transforms.hpp>

#include <set>

#include <linum/autodiff/random/random.hpp>
#include <linum/lift/transforms_ad.hpp>
#include <linum/lift/transforms_cf.hpp>

namespace linum::lift::detail {

namespace {

AxisSpec axis_spec(std::optional<int> a) { return a ? AxisSpec(*a) : AxisSpec(std::nullopt); }

std::string python_set(const std::set<std::int64_t>& s) {
  std::string out = "{";
  std::size_t i = 0;
  for (auto v : s) out += (i++ ? ", " : "") + std::to_string(v);
  return out + "}";
}

std::int64_t axis_len(const Array& leaf, int axis, const char* fn) {
  const int nd = leaf.ndim();
  const int a = axis < 0 ? axis + nd : axis;
  if (a < 0 || a >= nd)
    throw ValueError(std::string(fn) + ": axis " + std::to_string(axis) +
                     " is out of range for an array of rank " + std::to_string(nd));
  return leaf.shape(a);
}

}  // namespace

VmapPlan vmap_plan(const std::vector<Scope>& scopes, const VmapOptions& opts,
                   const Arrays& arg_leaves, const pytree::TreeDef& arg_def) {
  VmapPlan p;
  p.spec.name = "vmap";
  std::vector<AxisSpec> in_var, out_var, rng_axes;
  std::vector<std::optional<int>> in_var_axes;
  for (const auto& [f, ax] : opts.variable_axes) {
    if (ax.dir != VariableAxis::Dir::Out) {
      p.spec.in_filters.push_back(f);
      in_var.push_back(axis_spec(ax.axis));
      in_var_axes.push_back(ax.axis);
    }
    if (ax.dir != VariableAxis::Dir::In) {
      p.spec.out_filters.push_back(f);
      out_var.push_back(axis_spec(ax.axis));
      p.out_var_axes.push_back(ax.axis);
    }
  }
  for (const auto& [f, split] : opts.split_rngs) p.spec.rng_filters.push_back(f);
  p.scopes = dedup_scopes(scopes);
  for (const auto& s : p.scopes.roots) p.packed.push_back(pack(s, p.spec));
  p.variables = Tree::tuple();
  // Boxes of a mapped group lose the axis before slicing (lift.py:786-795).
  for (std::size_t g = 0; g < in_var.size(); ++g) {
    Tree group = Tree::tuple();
    for (const auto& pk : p.packed)
      group.items().push_back(
          in_var_axes[g] ? meta::remove_axis(pk.variables[g], *in_var_axes[g], opts.metadata_params)
                         : pk.variables[g]);
    p.variables.items().push_back(std::move(group));
  }

  // The batch size: every leaf of an argument with an axis, and the first leaf of every variable
  // group with an integer axis (lift.py:798-817).
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
  AxisSpec args_spec = AxisSpec::seq(arg_specs);
  auto arg_axes = linum::detail::vmap_leaf_axes(args_spec, arg_def, true);
  std::set<std::int64_t> sizes;
  for (std::size_t i = 0; i < arg_leaves.size(); ++i)
    if (arg_axes[i]) sizes.insert(axis_len(arg_leaves[i], *arg_axes[i], "vmap"));
  for (std::size_t g = 0; g < in_var_axes.size(); ++g) {
    if (!in_var_axes[g]) continue;
    Arrays l = pytree::tree_leaves<Array>(p.variables[g]);
    if (!l.empty()) sizes.insert(axis_len(l.front(), *in_var_axes[g], "vmap"));
  }
  if (!opts.axis_size && sizes.size() == 1) {
    p.axis_size = *sizes.begin();
  } else if (sizes.size() > 1) {
    throw ValueError("Inconsistent batch axis sizes: " + python_set(sizes));
  } else if (!opts.axis_size) {
    throw ValueError("axis_size should be specified manually.");
  } else {
    p.axis_size = *opts.axis_size;
  }

  // split_rngs: True -> split(base, n) mapped on axis 0; False -> the same base key (the suffix
  // is kept either way).
  Tree keys = Tree::tuple();
  for (std::size_t g = 0; g < opts.split_rngs.size(); ++g) {
    const bool split = opts.split_rngs[g].second;
    Tree per_root = Tree::tuple();
    for (const auto& pk : p.packed) {
      Tree d = Tree::dict();
      for (const auto& [k, r] : pk.rngs[g])
        d[k] = split ? random::split(r.rng, p.axis_size) : r.rng;
      per_root.items().push_back(std::move(d));
    }
    keys.items().push_back(std::move(per_root));
    rng_axes.push_back(split ? AxisSpec(0) : AxisSpec(std::nullopt));
  }
  p.rng_keys = std::move(keys);
  std::vector<AxisSpec> all{AxisSpec::seq(in_var), AxisSpec::seq(rng_axes)};
  all.insert(all.end(), arg_specs.begin(), arg_specs.end());
  p.in_axes = AxisSpec::seq(std::move(all));
  p.out_axes = AxisSpec::seq({opts.out_axes, AxisSpec::seq(out_var)});
  return p;
}

std::vector<Scope> vmap_inner_roots(const VmapPlan& plan, const Tree& vars, const Tree& keys) {
  std::vector<Scope> roots;
  for (std::size_t r = 0; r < plan.packed.size(); ++r) {
    std::vector<Tree> groups;
    for (const auto& g : vars.items()) groups.push_back(g[r]);
    std::vector<RngGroup> rngs;
    for (std::size_t g = 0; g < plan.packed[r].rngs.size(); ++g)
      rngs.push_back(with_keys(plan.packed[r].rngs[g], keys[g][r]));
    roots.push_back(inner_scope(plan.scopes.roots[r], plan.spec, groups, rngs));
  }
  return roots;
}

Tree repack_all(std::vector<Scope>& inner_roots, const PackSpec& spec) {
  Tree out = Tree::tuple();
  for (std::size_t g = 0; g < spec.out_filters.size(); ++g) out.items().push_back(Tree::tuple());
  for (auto& s : inner_roots) {
    std::vector<Tree> groups = repack(s, spec);
    for (std::size_t g = 0; g < groups.size(); ++g)
      out.items()[g].items().push_back(std::move(groups[g]));
  }
  return out;
}

Tree add_metadata_axes(Tree out_groups, const VmapPlan& plan, const meta::MetadataParams& params) {
  for (std::size_t g = 0; g < plan.out_var_axes.size(); ++g)
    if (plan.out_var_axes[g])
      out_groups.items()[g] = meta::add_axis(out_groups.items()[g], *plan.out_var_axes[g], params);
  return out_groups;
}

void publish_all(std::vector<Scope>& outer_roots, const Tree& out_groups) {
  for (std::size_t r = 0; r < outer_roots.size(); ++r) {
    std::vector<Tree> groups;
    for (const auto& g : out_groups.items()) groups.push_back(g[r]);
    publish(outer_roots[r], groups);
  }
}

ScanPlan scan_plan(const Scope& scope, const ScanOptions& opts,
                   const std::vector<Arrays>& arg_leaves) {
  ScanPlan p;
  p.spec.name = "scan";
  p.spec.in_filters = {opts.variable_broadcast, opts.variable_carry};
  for (const auto& [f, ax] : opts.variable_axes) {
    p.spec.in_filters.push_back(f);
    p.var_axes.push_back(ax);
  }
  p.spec.out_filters = p.spec.in_filters;
  for (const auto& [f, split] : opts.split_rngs) p.spec.rng_filters.push_back(f);
  p.packed = pack(scope, p.spec);
  for (std::size_t g = 0; g < p.var_axes.size(); ++g)
    p.packed.variables[g + 2] =
        meta::remove_axis(p.packed.variables[g + 2], p.var_axes[g], opts.metadata_params);

  const std::size_t n = arg_leaves.size();
  if (opts.in_axes.size() == 1) {
    p.arg_axes.assign(n, opts.in_axes[0].axis);
  } else if (opts.in_axes.size() == n) {
    for (const auto& a : opts.in_axes) p.arg_axes.push_back(a.axis);
  } else {
    throw ValueError("scan: in_axes has " + std::to_string(opts.in_axes.size()) +
                     " entries but the function got " + std::to_string(n) + " xs arguments");
  }
  // The length: the first leaf of every scanned argument (lift.py:976-993).
  std::set<std::int64_t> lengths;
  for (std::size_t i = 0; i < n; ++i)
    if (p.arg_axes[i] && !arg_leaves[i].empty())
      lengths.insert(axis_len(arg_leaves[i].front(), *p.arg_axes[i], "scan"));
  if (!opts.length && lengths.size() == 1) {
    p.length = *lengths.begin();
  } else if (lengths.size() > 1) {
    throw ValueError("Inconsistent scan lengths: " + python_set(lengths));
  } else if (!opts.length) {
    throw ValueError("length should be specified manually.");
  } else {
    p.length = *opts.length;
  }
  return p;
}

Tree move_axis(const Tree& t, int from, int to) {
  if (from == to) return t;
  return linum::detail::tree_apply(t, [&](const Array& a) { return moveaxis(a, from, to); });
}

Tree scan_xs(const ScanPlan& plan, const ScanOptions& opts, const std::vector<Arrays>& arg_leaves) {
  Tree groups = Tree::tuple();
  for (std::size_t g = 0; g < plan.var_axes.size(); ++g)
    groups.items().push_back(move_axis(plan.packed.variables[g + 2], plan.var_axes[g], 0));
  // Split streams: split(base, length), iteration t takes element t whatever `reverse` is.
  Tree keys = Tree::tuple();
  for (std::size_t g = 0; g < plan.packed.rngs.size(); ++g) {
    Tree d = Tree::dict();
    if (opts.split_rngs[g].second)
      for (const auto& [k, r] : plan.packed.rngs[g]) d[k] = random::split(r.rng, plan.length);
    keys.items().push_back(std::move(d));
  }
  Tree leaves = Tree::tuple();
  for (std::size_t i = 0; i < arg_leaves.size(); ++i) {
    if (!plan.arg_axes[i]) continue;
    for (const auto& l : arg_leaves[i]) leaves.items().push_back(moveaxis(l, *plan.arg_axes[i], 0));
  }
  return Tree::tuple({std::move(groups), std::move(keys), std::move(leaves)});
}

std::vector<RngGroup> scan_rng_groups(const ScanPlan& plan, const ScanOptions& opts,
                                      const Tree& keys) {
  std::vector<RngGroup> out;
  for (std::size_t g = 0; g < plan.packed.rngs.size(); ++g) {
    if (opts.split_rngs[g].second)
      out.push_back(with_keys(plan.packed.rngs[g], keys[g]));
    else
      out.push_back(plan.packed.rngs[g]);
  }
  return out;
}

Tree merge_trees(Tree a, const Tree& b) {
  if (!a.is_dict() || !b.is_dict()) return b;
  for (const auto& [k, v] : b.as_dict()) a[k] = a.contains(k) ? merge_trees(a[k], v) : v;
  return a;
}

Tree keep_carry(const Tree& in, const Tree& out) {
  Tree r = in.is_dict() ? in : Tree::dict();
  if (out.is_dict())
    for (const auto& [col, v] : out.as_dict()) r[col] = v;
  return r;
}

}  // namespace linum::lift::detail

namespace linum::lift::detail {

Tree zeros_like_tree(const Tree& t) {
  return linum::detail::tree_apply(t, [](const Array& a) { return zeros_like(a); });
}

Tree variable_tangents_for(const Tree& vars, const Tree& variable_tangents) {
  Tree out = zeros_like_tree(vars);
  if (!variable_tangents.is_dict()) return out;
  for (const auto& [col, t] : variable_tangents.as_dict()) {
    if (!out.contains(col) || (t.is_dict() && t.size() == 0)) continue;
    out[col] = t;
  }
  return out;
}

}  // namespace linum::lift::detail

namespace linum::lift::detail {

std::vector<RngGroup> loop_rngs(const Packed& packed, const WhileOptions& opts, const Array& i,
                                bool for_cond) {
  std::vector<RngGroup> out;
  for (std::size_t g = 0; g < packed.rngs.size(); ++g) {
    if (!opts.split_rngs[g].second) {
      out.push_back(packed.rngs[g]);
      continue;
    }
    RngGroup r;
    const Array d = for_cond ? subtract(zeros_like(i), i) : i;
    for (const auto& [k, lr] : packed.rngs[g])
      r.emplace(k, LazyRng{random::fold_in(lr.rng, d), lr.suffix});
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace linum::lift::detail
