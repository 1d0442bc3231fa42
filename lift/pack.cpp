// pack, rule for rule as flax/core/lift.py's _partial_pack, _dedup_scopes and _dup_scopes.
#include <linum/lift/pack.hpp>

#include <algorithm>
#include <functional>
#include <string>

#include <linum/autodiff/tree_bridge.hpp>
#include <linum/pytree/repr.hpp>

namespace linum::lift {

namespace detail {

struct PackState {
  PackSpec spec;
  std::vector<Scope> packed;  // the scopes that are packed, in first-appearance order
  // Per given scope: the index of its packed ancestor (itself when none) and the names leading
  // down to it from there.
  std::vector<std::pair<std::size_t, std::vector<std::string>>> paths;
  Tree variables;
  RngGroups rngs;
};

}  // namespace detail

namespace {

Filter union_all(const std::vector<Filter>& fs) {
  Filter u = false;
  for (const auto& f : fs) u = union_filters(u, f);
  return u;
}

bool keys_sorted(const Tree& t) {
  if (t.is_box()) return keys_sorted(t.box_value());
  if (t.is_tuple() || t.is_list())
    return std::all_of(t.items().begin(), t.items().end(), keys_sorted);
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

// _dedup_scopes: a given scope below another given one is reached from its topmost given
// ancestor; the others are packed, in the given order (as Flax's OrderedDict).
void dedup_scopes(const std::vector<Scope>& scopes, detail::PackState& st) {
  auto given = [&](const Scope& s) {
    return std::find(scopes.begin(), scopes.end(), s) != scopes.end();
  };
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
  for (std::size_t i = 0; i < scopes.size(); ++i)
    if (tops[i].first == scopes[i] &&
        std::find(st.packed.begin(), st.packed.end(), scopes[i]) == st.packed.end())
      st.packed.push_back(scopes[i]);
  for (auto& [top, names] : tops) {
    const auto at = std::find(st.packed.begin(), st.packed.end(), top) - st.packed.begin();
    st.paths.emplace_back(static_cast<std::size_t>(at), std::move(names));
  }
}

// out = op(a, b) over b's streams and children (a's missing counters are 0), written in place
// (existing counter objects stay, as inner scopes share them); with `exact`, out also drops the
// streams and children b lacks.
template <class Op>
void zip_counters(RngCounters& out, const RngCounters& a, const RngCounters& b, const Op& op,
                  bool exact = false) {
  static const RngCounters none;
  if (exact) {
    std::erase_if(out.count, [&](const auto& kv) { return !b.count.contains(kv.first); });
    std::erase_if(out.children, [&](const auto& kv) { return !b.children.contains(kv.first); });
  }
  for (const auto& [stream, n] : b.count) {
    auto it = a.count.find(stream);
    out.count[stream] = op(it == a.count.end() ? 0 : it->second, n);
  }
  for (const auto& [name, child] : b.children) {
    if (!child) continue;
    auto& o = out.children[name];
    if (!o) o = std::make_shared<RngCounters>();
    auto it = a.children.find(name);
    zip_counters(*o, it != a.children.end() && it->second ? *it->second : none, *child, op, exact);
  }
}

std::uint64_t second(std::uint64_t, std::uint64_t n) { return n; }

RngCounters copy_counters(const RngCounters& c) {
  RngCounters out;
  zip_counters(out, {}, c, second);
  return out;
}

}  // namespace

Pack::Pack(PackSpec spec, const std::vector<Scope>& scopes) {
  auto st = std::make_shared<detail::PackState>();
  st->spec = std::move(spec);
  dedup_scopes(scopes, *st);
  const std::vector<Filter>& rng_filters = st->spec.rng_filters;
  st->variables = Tree::tuple(Tree::seq_type(st->spec.in_filters.size(), Tree::tuple()));
  st->rngs.assign(rng_filters.size(), std::vector<RngGroup>(st->packed.size()));
  for (std::size_t r = 0; r < st->packed.size(); ++r) {
    const Scope& scope = st->packed[r];
    // _populate_collections: every root collection appears, empty where the scope has nothing.
    Tree own = scope.variables();
    Tree all = Tree::dict();
    for (const auto& col : scope.root().variables().as_dict().keys())
      all[col] = own.contains(col) ? own[col] : Tree::dict();
    std::vector<Tree> g = group_collections(all, st->spec.in_filters);
    for (std::size_t i = 0; i < g.size(); ++i)
      st->variables.items()[i].items().push_back(std::move(g[i]));
    // Each stream joins the first rng filter that matches it.
    for (const auto& [stream, rng] : scope.rngs()) {
      auto it = std::find_if(rng_filters.begin(), rng_filters.end(),
                             [&](const Filter& f) { return in_filter(f, stream); });
      if (it != rng_filters.end()) st->rngs[it - rng_filters.begin()][r].emplace(stream, rng);
    }
  }
  state_ = std::move(st);
}

const std::vector<Scope>& Pack::scopes() const { return state_->packed; }
const Tree& Pack::variables() const { return state_->variables; }
const RngGroups& Pack::rngs() const { return state_->rngs; }

std::vector<Scope> Pack::scope_fn(const Tree& variables, const RngGroups& rngs,
                                  const ScopeFnOptions& opts) const {
  const detail::PackState& st = *state_;
  const Filter out_mutable = union_all(st.spec.out_filters);
  std::vector<Scope> roots;
  for (std::size_t r = 0; r < st.packed.size(); ++r) {
    const Scope& outer = st.packed[r];
    // The inner root keeps the outer path, so its variables sit nested under that path.
    Tree vars = Tree::dict();
    for (const auto& group : variables.items()) {
      const Tree& g = group[r];
      if (!g.is_dict()) continue;
      for (const auto& [col, v] : g.as_dict()) {
        Tree nested = with_sorted_keys(v);
        for (auto it = outer.path().rbegin(); it != outer.path().rend(); ++it)
          nested = Tree::dict({{*it, nested}});
        vars[col] = nested;
      }
    }
    RngGroup all_rngs;
    for (const auto& g : rngs) all_rngs.insert(g[r].begin(), g[r].end());
    Filter mut = intersect_filters(intersect_filters(outer.mutable_filter(), out_mutable),
                                   opts.mutable_filter);
    auto counters = opts.counters
                        ? std::make_shared<RngCounters>(copy_counters((*opts.counters)[r]))
                        : outer.rng_counters();
    roots.push_back(Scope::lifted_root(outer, st.spec.name, std::move(vars), std::move(all_rngs),
                                       std::move(mut), std::move(counters)));
  }
  // _dup_scopes: each given scope re-pushed (reuse) from its packed ancestor's inner root.
  std::vector<Scope> out;
  for (const auto& [root, names] : st.paths) {
    Scope s = roots[root];
    for (const auto& n : names) s = s.push(n, "", true);
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<Tree> repack(Scope& inner, const PackSpec& spec) {
  Tree mut = inner.mutable_variables();
  inner.invalidate();
  std::vector<Filter> fs = spec.out_filters;
  fs.emplace_back(true);
  std::vector<Tree> groups = group_collections(mut, fs);
  const Tree& rest = groups.back();
  if (rest.is_dict() && rest.size() > 0)
    throw ValueError("unmapped output variables: " + pytree::repr_as_tuple(rest.as_dict().keys()));
  groups.pop_back();
  if (spec.sorted_outputs)
    for (auto& g : groups) g = with_sorted_keys(g);
  return groups;
}

Tree Pack::repack(std::vector<Scope>& inner) const {
  const detail::PackState& st = *state_;
  Tree out = Tree::tuple(Tree::seq_type(st.spec.out_filters.size(), Tree::tuple()));
  // The inner roots are the given scopes with no names below their packed ancestor.
  for (std::size_t r = 0; r < st.packed.size(); ++r) {
    std::size_t i = 0;
    while (st.paths[i].first != r || !st.paths[i].second.empty()) ++i;
    std::vector<Tree> g = lift::repack(inner[i], st.spec);
    for (std::size_t k = 0; k < g.size(); ++k) out.items()[k].items().push_back(std::move(g[k]));
  }
  return out;
}

void Pack::publish(const Tree& out_groups) const {
  std::vector<Scope> packed = state_->packed;
  for (std::size_t r = 0; r < packed.size(); ++r) {
    for (const auto& g : out_groups.items()) {
      if (!g[r].is_dict()) continue;
      for (const auto& [col, vs] : g[r].as_dict()) {
        if (!packed[r].is_mutable_collection(col) || !vs.is_dict()) continue;
        for (const auto& [name, v] : vs.as_dict()) packed[r].put_variable(col, name, v);
      }
    }
  }
}

CounterSnapshot Pack::counters() const {
  CounterSnapshot out;
  for (const auto& s : state_->packed) out.push_back(copy_counters(*s.rng_counters()));
  return out;
}

void Pack::restore(const CounterSnapshot& snapshot) const {
  for (std::size_t r = 0; r < state_->packed.size(); ++r)
    zip_counters(*state_->packed[r].rng_counters(), {}, snapshot[r], second, true);
}

void Pack::advance(const CounterSnapshot& old, const CounterSnapshot& delta) const {
  for (std::size_t r = 0; r < delta.size(); ++r)
    zip_counters(*state_->packed[r].rng_counters(), old[r], delta[r], std::plus<>());
}

CounterSnapshot counter_delta(const CounterSnapshot& old, const CounterSnapshot& now) {
  CounterSnapshot d(now.size());
  for (std::size_t r = 0; r < now.size(); ++r)
    zip_counters(d[r], old[r], now[r], [](std::uint64_t o, std::uint64_t n) { return n - o; });
  return d;
}

Tree rng_keys(const std::vector<RngGroup>& group) {
  Tree out = Tree::tuple();
  for (const auto& per_scope : group) {
    Tree d = Tree::dict();
    for (const auto& [k, r] : per_scope) d[k] = r.rng;
    out.items().push_back(std::move(d));
  }
  return out;
}

std::vector<RngGroup> with_keys(const std::vector<RngGroup>& group, const Tree& keys) {
  std::vector<RngGroup> out(group.size());
  for (std::size_t r = 0; r < group.size(); ++r)
    for (const auto& [k, lr] : group[r]) out[r].emplace(k, LazyRng{keys[r][k].leaf(), lr.suffix});
  return out;
}

namespace detail {

Tree keep_carry(const Tree& in, const Tree& out) {
  Tree r = in;
  for (std::size_t k = 0; k < out.size(); ++k) {
    if (!r[k].is_dict()) r.items()[k] = Tree::dict();
    if (out[k].is_dict())
      for (const auto& [col, v] : out[k].as_dict()) r.items()[k][col] = v;
  }
  return r;
}

}  // namespace detail

}  // namespace linum::lift
