// Several scopes lifted through one lift/ transform (nn/transforms_scopes.hpp): the combined
// root, its split inside the transform, and the write-back of what the body mutated.
#include <linum/nn/transforms_scopes.hpp>

#include <algorithm>
#include <memory>
#include <set>
#include <string>

namespace linum::nn::detail {

namespace {
std::shared_ptr<lift::RngCounters> fresh_counters(const std::map<std::string, lift::LazyRng>& r) {
  auto c = std::make_shared<lift::RngCounters>();
  for (const auto& [k, v] : r) c->count[k] = 0;
  return c;
}
}  // namespace

bool scope_within(const Scope& s, const Scope& outer) {
  const auto& p = s.path();
  const auto& q = outer.path();
  return p.size() >= q.size() && std::equal(q.begin(), q.end(), p.begin());
}

int find_scope(const std::vector<Scope>& scopes, const Scope& s) {
  for (std::size_t i = 0; i < scopes.size(); ++i)
    if (scopes[i] == s) return static_cast<int>(i);
  return -1;
}

Scope combined_scope(const std::vector<Scope>& scopes) {
  const Scope& primary = scopes[0];
  std::set<std::string> cols;
  for (const auto& s : scopes)
    for (const auto& col : s.root().variables().as_dict().keys()) cols.insert(col);
  Tree vars = Tree::dict();
  for (const auto& col : cols) {
    Tree parts = Tree::dict();
    for (std::size_t k = 0; k < scopes.size(); ++k) {
      Tree own = scopes[k].variables();
      parts[std::to_string(k)] = own.contains(col) ? own[col] : Tree::dict();
    }
    vars[col] = parts;
  }
  // The base keys are the primary's (every scope of one apply shares them); each part keeps
  // its own suffix and counters (split_scope).
  std::map<std::string, lift::LazyRng> rngs;
  for (const auto& [k, r] : primary.rngs()) rngs.emplace(k, lift::LazyRng{r.rng, {}});
  auto counters = fresh_counters(rngs);
  for (std::size_t k = 0; k < scopes.size(); ++k)
    counters->children[std::to_string(k)] = scopes[k].rng_counters();
  return Scope::lifted_root(std::move(vars), std::move(rngs), primary.mutable_filter(),
                            primary.flags(), primary.name(), {}, primary.debug_path(),
                            std::move(counters));
}

std::vector<Scope> split_scope(const Scope& inner, const std::vector<Scope>& outer) {
  const Tree all = inner.variables();
  std::vector<Scope> out;
  for (std::size_t k = 0; k < outer.size(); ++k) {
    const std::string key = std::to_string(k);
    Tree vars = Tree::dict();
    for (const auto& [col, v] : all.as_dict()) {
      if (!v.contains(key)) continue;
      Tree nested = v[key];
      const auto& path = outer[k].path();
      for (auto it = path.rbegin(); it != path.rend(); ++it) nested = Tree::dict({{*it, nested}});
      vars[col] = nested;
    }
    std::map<std::string, lift::LazyRng> rngs;
    for (const auto& [stream, r] : inner.rngs()) {
      auto it = outer[k].rngs().find(stream);
      if (it != outer[k].rngs().end())
        rngs.emplace(stream, lift::LazyRng{r.rng, it->second.suffix});
    }
    auto& counters = inner.rng_counters()->children[key];
    if (!counters) counters = fresh_counters(rngs);
    out.push_back(Scope::lifted_root(std::move(vars), std::move(rngs), inner.mutable_filter(),
                                     inner.flags(), outer[k].name(), outer[k].path(),
                                     outer[k].debug_path(), counters));
  }
  return out;
}

void merge_split(Scope& inner, std::vector<Scope>& parts) {
  for (std::size_t k = 0; k < parts.size(); ++k) {
    const Tree m = parts[k].mutable_variables();
    parts[k].invalidate();
    for (const auto& [col, v] : m.as_dict())
      if (inner.is_mutable_collection(col)) inner.put_variable(col, std::to_string(k), v);
  }
}

void write_back(const Scope& combined, std::vector<Scope>& scopes) {
  const Tree m = combined.mutable_variables();
  for (const auto& [col, parts] : m.as_dict()) {
    for (std::size_t k = 0; k < scopes.size(); ++k) {
      const std::string key = std::to_string(k);
      if (!parts.contains(key) || !scopes[k].is_mutable_collection(col)) continue;
      const Tree& part = parts[key];
      if (!part.is_dict()) continue;
      for (const auto& [name, v] : part.as_dict()) scopes[k].put_variable(col, name, v);
    }
  }
}

}  // namespace linum::nn::detail
