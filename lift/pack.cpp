// pack, rule for rule as flax/core/lift.py:125-334.
#include <linum/lift/pack.hpp>

#include <algorithm>
#include <string>

#include <linum/autodiff/tree_bridge.hpp>

namespace linum::lift {

namespace {

Filter union_all(const std::vector<Filter>& fs) {
  Filter u = false;
  for (const auto& f : fs) u = union_filters(u, f);
  return u;
}

bool keys_sorted(const Tree& t) {
  if (t.is_box()) return keys_sorted(t.box_value());
  if (t.is_tuple() || t.is_list()) {
    for (const auto& v : t.items())
      if (!keys_sorted(v)) return false;
    return true;
  }
  if (!t.is_dict() && !t.is_frozen_dict()) return true;
  const std::string* prev = nullptr;
  for (const auto& [k, v] : t.as_mapping()) {
    if ((prev && !(*prev < k)) || !keys_sorted(v)) return false;
    prev = &k;
  }
  return true;
}

// A pytree as it comes out of a JAX transform: flattened (dict keys visited sorted) and rebuilt.
Tree with_sorted_keys(const Tree& t) {
  if (keys_sorted(t)) return t;
  auto [leaves, def] = pytree::tree_flatten<Array>(t);
  return pytree::tree_unflatten(def, std::move(leaves));
}

}  // namespace

Packed pack(const Scope& scope, const PackSpec& spec) {
  // _populate_collections: every root collection appears, empty where the scope has nothing.
  Tree own = scope.variables();
  Tree all = Tree::dict();
  for (const auto& col : scope.root().variables().as_dict().keys())
    all[col] = own.contains(col) ? own[col] : Tree::dict();
  Packed p;
  p.variables = group_collections(all, spec.in_filters);
  p.rngs.resize(spec.rng_filters.size());
  for (const auto& [stream, r] : scope.rngs()) {
    for (std::size_t i = 0; i < spec.rng_filters.size(); ++i) {
      if (in_filter(spec.rng_filters[i], stream)) {
        p.rngs[i].emplace(stream, r);
        break;
      }
    }
  }
  return p;
}

Scope inner_scope(const Scope& outer, const PackSpec& spec, const std::vector<Tree>& variables,
                  const std::vector<RngGroup>& rngs, const Filter& mutable_filter,
                  std::shared_ptr<RngCounters> counters) {
  // The inner root keeps the outer path, so its variables sit nested under that path.
  Tree vars = Tree::dict();
  for (const auto& g : variables) {
    if (!g.is_dict()) continue;
    for (const auto& [col, v] : g.as_dict()) {
      Tree nested = with_sorted_keys(v);
      for (auto it = outer.path().rbegin(); it != outer.path().rend(); ++it)
        nested = Tree::dict({{*it, nested}});
      vars[col] = nested;
    }
  }
  RngGroup all_rngs;
  for (const auto& g : rngs) all_rngs.insert(g.begin(), g.end());
  Filter mut = intersect_filters(
      intersect_filters(outer.mutable_filter(), union_all(spec.out_filters)), mutable_filter);
  std::vector<std::string> debug = outer.debug_path();
  if (debug.empty()) {
    debug.push_back(spec.name + "()");
  } else {
    debug.back() = spec.name + "(" + debug.back() + ")";
  }
  return Scope::lifted_root(std::move(vars), std::move(all_rngs), std::move(mut), outer.flags(),
                            outer.name(), outer.path(), std::move(debug),
                            counters ? std::move(counters) : outer.rng_counters());
}

std::vector<Tree> repack(Scope& inner, const PackSpec& spec) {
  Tree mut = inner.mutable_variables();
  inner.invalidate();
  std::vector<Filter> fs = spec.out_filters;
  fs.emplace_back(true);
  std::vector<Tree> groups = group_collections(mut, fs);
  const Tree& rest = groups.back();
  if (rest.is_dict() && rest.size() > 0) {
    std::string names = "(";
    std::size_t i = 0;
    for (const auto& col : rest.as_dict().keys()) names += (i++ ? ", '" : "'") + col + "'";
    names += rest.size() == 1 ? ",)" : ")";
    throw ValueError("unmapped output variables: " + names);
  }
  groups.pop_back();
  if (spec.sorted_outputs)
    for (auto& g : groups) g = with_sorted_keys(g);
  return groups;
}

void publish(Scope& outer, const std::vector<Tree>& out_groups) {
  for (const auto& g : out_groups) {
    if (!g.is_dict()) continue;
    for (const auto& [col, vs] : g.as_dict()) {
      if (!outer.is_mutable_collection(col) || !vs.is_dict()) continue;
      for (const auto& [name, v] : vs.as_dict()) outer.put_variable(col, name, v);
    }
  }
}

RngCounters snapshot_counters(const RngCounters& c) {
  RngCounters out;
  out.count = c.count;
  for (const auto& [k, child] : c.children)
    if (child) out.children[k] = std::make_shared<RngCounters>(snapshot_counters(*child));
  return out;
}

void restore_counters(RngCounters& live, const RngCounters& snap) {
  live.count = snap.count;
  for (auto it = live.children.begin(); it != live.children.end();) {
    if (!snap.children.contains(it->first))
      it = live.children.erase(it);
    else
      ++it;
  }
  for (const auto& [k, child] : snap.children) {
    auto& l = live.children[k];
    if (!l) l = std::make_shared<RngCounters>();
    restore_counters(*l, *child);
  }
}

Tree rng_keys(const RngGroup& group) {
  Tree t = Tree::dict();
  for (const auto& [k, r] : group) t[k] = r.rng;
  return t;
}

RngGroup with_keys(const RngGroup& group, const Tree& keys) {
  RngGroup out;
  for (const auto& [k, r] : group) out.emplace(k, LazyRng{keys[k].leaf(), r.suffix});
  return out;
}

LiftedScopes dedup_scopes(const std::vector<Scope>& scopes) {
  auto given = [&](const Scope& s) {
    return std::find(scopes.begin(), scopes.end(), s) != scopes.end();
  };
  // Per scope: its topmost strict ancestor among the given scopes (itself when none), and the
  // names from that ancestor down to it.
  std::vector<std::pair<Scope, std::vector<std::string>>> tops;
  for (const Scope& leaf : scopes) {
    Scope top = leaf;
    std::vector<std::string> top_path, path{leaf.name()};
    for (auto p = leaf.parent(); p; p = p->parent()) {
      if (given(*p)) {
        top = *p;
        top_path.assign(path.rbegin(), path.rend());
      }
      path.push_back(p->name());
    }
    tops.emplace_back(std::move(top), std::move(top_path));
  }
  LiftedScopes l;
  for (std::size_t i = 0; i < scopes.size(); ++i)  // the given order, as flax's OrderedDict
    if (tops[i].first == scopes[i] &&
        std::find(l.roots.begin(), l.roots.end(), scopes[i]) == l.roots.end())
      l.roots.push_back(scopes[i]);
  for (auto& [top, names] : tops) {
    const auto at = std::find(l.roots.begin(), l.roots.end(), top) - l.roots.begin();
    l.paths.emplace_back(static_cast<std::size_t>(at), std::move(names));
  }
  return l;
}

std::vector<Scope> dup_scopes(const std::vector<Scope>& inner_roots, const LiftedScopes& lifted) {
  std::vector<Scope> out;
  for (const auto& [root, names] : lifted.paths) {
    Scope s = inner_roots[root];
    for (const auto& n : names) s = s.push(n, "", true);
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace linum::lift
