// Logical axis rules and partition specs as flax/linen/spmd.py, flax/core/spmd.py and
// flax/core/meta.py define them, without device meshes.
#include <linum/nn/partitioning.hpp>

#include <algorithm>
#include <set>

#include <linum/error.hpp>
#include <linum/pytree/repr.hpp>
#include <linum/pytree/tree_map.hpp>

namespace linum::nn {

// ---- PartitionSpec ----

PartitionSpec::Entry::Entry(const std::optional<std::string>& name) {
  if (name) v_ = *name;
}

std::vector<std::string> PartitionSpec::Entry::axis_names() const {
  if (const auto* s = name()) return {*s};
  if (const auto* t = std::get_if<std::vector<std::string>>(&v_)) return *t;
  return {};
}

void PartitionSpec::Entry::repr_into(std::string& out) const {
  if (is_none())
    out += "None";
  else if (is_unconstrained())
    out += "UNCONSTRAINED";
  else if (const auto* s = name())
    out += pytree::str_repr(*s);
  else
    out += pytree::repr_as_tuple(axis_names());
}

PartitionSpec::PartitionSpec(const LogicalNames& names) : entries_(names.begin(), names.end()) {}

void PartitionSpec::repr_into(std::string& out) const {
  out += "PartitionSpec(";
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    if (i) out += ", ";
    entries_[i].repr_into(out);
  }
  out += ")";
}

std::string PartitionSpec::repr() const {
  std::string out;
  repr_into(out);
  return out;
}

// ---- the thread's rules ----

namespace {
thread_local LogicalRules g_rules;
}  // namespace

void set_logical_axis_rules(LogicalRules rules) { g_rules = std::move(rules); }
LogicalRules get_logical_axis_rules() { return g_rules; }

logical_axis_rules::logical_axis_rules(LogicalRules rules) : previous_(std::move(g_rules)) {
  g_rules = std::move(rules);
}
logical_axis_rules::~logical_axis_rules() { g_rules = std::move(previous_); }

// ---- logical_to_mesh_axes ----

namespace {

// The rules given, else the thread's (Flax's `if rules is None: rules = get_logical_axis_rules()`).
const LogicalRules& rules_or_current(const std::optional<LogicalRules>& rules) {
  return rules ? *rules : g_rules;
}

// Flax's _logical_to_mesh_axes: the mapped entries, nullopt where no rule assigned a name
// (AXIS_IS_UNSHARDED makes those None, RAISE_ERROR rejects them).
std::vector<std::optional<PartitionSpec::Entry>> assign_mesh_axes(const PartitionSpec& names,
                                                                  const LogicalRules& rules) {
  // None and UNCONSTRAINED may repeat; a logical name may not.
  std::set<std::string> seen, dups;
  for (const auto& e : names.entries())
    if (const auto* s = e.name(); s && !seen.insert(*s).second) dups.insert(*s);
  if (!dups.empty()) {
    throw ValueError("logical_to_mesh_axes: unsupported: dimensions " +
                     pytree::repr_as_tuple(dups) + " occur more than once in array names " +
                     names.repr());
  }
  std::vector<std::optional<PartitionSpec::Entry>> result;
  for (const auto& e : names.entries())
    result.push_back(e.name() ? std::nullopt : std::optional<PartitionSpec::Entry>(e));
  for (const auto& [logical, mesh] : rules) {
    auto pos = std::find_if(names.entries().begin(), names.entries().end(),
                            [&](const auto& e) { return e.name() && *e.name() == logical; });
    if (pos == names.entries().end()) continue;
    auto& slot = result[static_cast<std::size_t>(pos - names.entries().begin())];
    if (slot) continue;
    // A mesh axis shards at most one dimension: the rule applies only if all of its are free.
    std::set<std::string> used;
    for (const auto& r : result)
      if (r)
        for (auto& a : r->axis_names()) used.insert(std::move(a));
    const auto wanted = mesh.axis_names();
    if (std::none_of(wanted.begin(), wanted.end(), [&](const auto& a) { return used.count(a); }))
      slot = mesh;
  }
  return result;
}

}  // namespace

PartitionSpec logical_to_mesh_axes(const PartitionSpec& array_dim_names,
                                   const std::optional<LogicalRules>& rules) {
  std::vector<PartitionSpec::Entry> out;
  for (auto& e : assign_mesh_axes(array_dim_names, rules_or_current(rules)))
    out.push_back(e.value_or(std::nullopt));
  return PartitionSpec(std::move(out));
}

pytree::BasicTree<PartitionSpec> logical_to_mesh(const pytree::BasicTree<LogicalNames>& tree,
                                                 const std::optional<LogicalRules>& rules) {
  return pytree::tree_map(
      [&](const LogicalNames& names) { return logical_to_mesh_axes(names, rules); }, tree);
}

void detail::check_logical_constraint(const std::optional<PartitionSpec>& names,
                                      const std::optional<LogicalRules>& rules,
                                      RulesFallback fallback) {
  // Flax constrains nothing without rules or names.
  const LogicalRules& rs = rules_or_current(rules);
  if (rs.empty() || !names) return;
  auto mapped = assign_mesh_axes(*names, rs);
  if (fallback == RulesFallback::RAISE_ERROR &&
      std::any_of(mapped.begin(), mapped.end(), [](const auto& e) { return !e; })) {
    throw ValueError("with_logical_constraint: axis names " + names->repr() +
                     " did not match a rule");
  }
}

// ---- get_partition_spec ----

pytree::BasicTree<LogicalNames> get_partition_spec(const Tree& tree) {
  using Out = pytree::BasicTree<LogicalNames>;
  switch (tree.kind()) {
    case pytree::NodeKind::Leaf: return Out(LogicalNames{});  // replicated
    case pytree::NodeKind::Box:
      // Partitioned boxes give their names; other AxisMetadata has no spec (Flax: None).
      if (dynamic_cast<const lift::meta::Partitioned*>(tree.box_metadata().get()))
        return Out(lift::meta::partition_names(tree));
      return Out();
    case pytree::NodeKind::Dict:
    case pytree::NodeKind::FrozenDict: {
      Out::dict_type d;
      for (const auto& [k, v] : tree.as_mapping()) d.insert_or_assign(k, get_partition_spec(v));
      return Out(std::move(d));
    }
    case pytree::NodeKind::Tuple:
    case pytree::NodeKind::List: {
      Out::seq_type s;
      for (const auto& v : tree.items()) s.push_back(get_partition_spec(v));
      return tree.is_tuple() ? Out::tuple(std::move(s)) : Out::list(std::move(s));
    }
    default: return Out();  // None and empty nodes hold no leaves
  }
}

// ---- LogicallyPartitioned ----

Tree LogicallyPartitioned::box(Tree value, LogicalNames names, std::optional<LogicalRules> rules) {
  return Tree::box(std::make_shared<const LogicallyPartitioned>(std::move(names), std::move(rules)),
                   std::move(value));
}

std::string LogicallyPartitioned::repr_fields() const {
  std::string out = Partitioned::repr_fields() + ", rules=";
  if (!rules_) return out + "None";
  out += "(";
  for (std::size_t i = 0; i < rules_->size(); ++i) {
    const auto& [logical, mesh] = (*rules_)[i];
    out += (i ? ", (" : "(") + pytree::str_repr(logical) + ", ";
    mesh.repr_into(out);
    out += ")";
  }
  return out + (rules_->size() == 1 ? ",)" : ")");
}

bool LogicallyPartitioned::equals(const pytree::BoxMetadata& other) const {
  return Partitioned::equals(other) &&
         static_cast<const LogicallyPartitioned&>(other).rules_ == rules_;
}

Tree LogicallyPartitioned::with_names(Tree value, LogicalNames names) const {
  return box(std::move(value), std::move(names), rules_);
}

}  // namespace linum::nn
