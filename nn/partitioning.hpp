// flax.linen.spmd and flax.core.meta's partition specs, as metadata: logical axis names on boxed
// variables (LogicallyPartitioned, with_logical_partitioning), the thread's logical axis rules
// (logical_axis_rules, set_ / get_logical_axis_rules), Flax's rule-based mapping of logical names
// to mesh axes (logical_to_mesh_axes, logical_to_mesh) and the specs of a variable tree
// (get_partition_spec). linum has no device meshes: nothing here shards an array, and
// with_logical_constraint is what Flax's is without a mesh, the names checked and the value
// returned unchanged.
#pragma once

#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <linum/lift/meta.hpp>

namespace linum::nn {

using lift::meta::LogicalNames;

// jax.sharding.PartitionSpec.UNCONSTRAINED: the dimension's sharding is left to the compiler.
struct Unconstrained {
  friend bool operator==(Unconstrained, Unconstrained) { return true; }
};
inline constexpr Unconstrained UNCONSTRAINED{};

// jax.sharding.PartitionSpec: per array dimension, None (not sharded), a mesh axis name, a tuple
// of mesh axis names (sharded over all of them) or UNCONSTRAINED. A logical spec holds logical
// axis names in the same places. PartitionSpec{"data", std::nullopt, {"model", "emb"}}.
class PartitionSpec {
 public:
  class Entry {
   public:
    Entry() = default;  // None
    Entry(std::nullopt_t) {}
    Entry(const char* name) : v_(std::string(name)) {}
    Entry(std::string name) : v_(std::move(name)) {}
    Entry(const std::optional<std::string>& name);  // a LogicalNames entry
    Entry(std::initializer_list<std::string> names) : v_(std::vector<std::string>(names)) {}
    Entry(std::vector<std::string> names) : v_(std::move(names)) {}
    Entry(Unconstrained) : v_(Unconstrained{}) {}

    bool is_none() const { return v_.index() == 0; }
    bool is_unconstrained() const { return v_.index() == 3; }
    bool is_tuple() const { return v_.index() == 2; }
    // The single axis name, or nullptr (None, a tuple, UNCONSTRAINED).
    const std::string* name() const { return std::get_if<std::string>(&v_); }
    // The axis names this entry uses: its name or its tuple's (none for None / UNCONSTRAINED).
    std::vector<std::string> axis_names() const;
    void repr_into(std::string& out) const;  // 'data', None, ('model', 'emb'), UNCONSTRAINED
    friend bool operator==(const Entry&, const Entry&) = default;

   private:
    std::variant<std::monostate, std::string, std::vector<std::string>, Unconstrained> v_;
  };

  PartitionSpec() = default;  // PartitionSpec(): replicated
  PartitionSpec(std::initializer_list<Entry> entries) : entries_(entries) {}
  PartitionSpec(const LogicalNames& names);  // NOLINT: a Partitioned box's names
  explicit PartitionSpec(std::vector<Entry> entries) : entries_(std::move(entries)) {}

  const std::vector<Entry>& entries() const { return entries_; }
  std::size_t size() const { return entries_.size(); }
  const Entry& operator[](std::size_t i) const { return entries_.at(i); }
  void repr_into(std::string& out) const;  // PartitionSpec('data', None)
  std::string repr() const;
  friend bool operator==(const PartitionSpec&, const PartitionSpec&) = default;

 private:
  std::vector<Entry> entries_;
};

// flax.typing.LogicalRules: (logical axis name, mesh axes) pairs in order of precedence, e.g.
// {{"batch", "data"}, {"embed", std::nullopt}, {"mlp", {"model", "replica"}}}.
using LogicalRules = std::vector<std::pair<std::string, PartitionSpec::Entry>>;

// The calling thread's rules (a threading.local in Flax), () until set.
void set_logical_axis_rules(LogicalRules rules);
LogicalRules get_logical_axis_rules();
// with nn.logical_axis_rules(rules): these rules until the object goes out of scope, then the
// previous ones again. Spelt as Flax's context manager: nn::logical_axis_rules scope(rules);
class logical_axis_rules {
 public:
  explicit logical_axis_rules(LogicalRules rules);
  ~logical_axis_rules();
  logical_axis_rules(const logical_axis_rules&) = delete;
  logical_axis_rules& operator=(const logical_axis_rules&) = delete;

 private:
  LogicalRules previous_;
};

// The mesh axes of an array whose dimensions have these logical names. Each rule in turn gives
// its mesh axes to the dimension its logical name labels, unless that dimension already has
// some or one of the rule's mesh axes is already used; dimensions no rule assigns are None.
// None, tuple and UNCONSTRAINED entries are kept. Rules default to get_logical_axis_rules().
// A logical name on two dimensions is a ValueError. With the docstring's rules
// {{"batch", "X"}, {"features", "X"}, {"heads", "Y"}, {"batch", "Z"}},
// ("batch", "length", "heads", "features") maps to PartitionSpec('X', None, 'Y', None).
PartitionSpec logical_to_mesh_axes(const PartitionSpec& array_dim_names,
                                   const std::optional<LogicalRules>& rules = std::nullopt);

// A tree of logical specs (get_partition_spec's) as mesh specs: logical_to_mesh_axes per leaf.
pytree::BasicTree<PartitionSpec> logical_to_mesh(
    const pytree::BasicTree<LogicalNames>& tree,
    const std::optional<LogicalRules>& rules = std::nullopt);

// The variables' tree with each Partitioned (or LogicallyPartitioned) box replaced by its names
// and each unboxed array by () (replicated), as flax.core.meta.get_partition_spec.
pytree::BasicTree<LogicalNames> get_partition_spec(const Tree& tree);

// flax.linen.spmd.RulesFallback: what with_logical_constraint does for a name no rule maps.
enum class RulesFallback { AXIS_IS_UNSHARDED, RAISE_ERROR, NO_CONSTRAINT };

namespace detail {
// with_logical_constraint's checks: the names map under the rules (duplicate names are a
// ValueError) and, with RAISE_ERROR, every name matches a rule.
void check_logical_constraint(const std::optional<PartitionSpec>& names,
                              const std::optional<LogicalRules>& rules, RulesFallback fallback);
}  // namespace detail

// nn.with_logical_constraint(x, names, rules, fallback=...) as Flax runs it without a mesh: the
// names are mapped (and checked) when there are rules, and x, any pytree, comes back unchanged,
// since linum has no device mesh for a sharding constraint to refer to.
template <class T>
T with_logical_constraint(T x, const std::optional<PartitionSpec>& logical_axis_resources,
                          const std::optional<LogicalRules>& rules = std::nullopt,
                          RulesFallback fallback = RulesFallback::AXIS_IS_UNSHARDED) {
  detail::check_logical_constraint(logical_axis_resources, rules, fallback);
  return x;
}

// flax.linen.LogicallyPartitioned(value, names, mesh=None, rules=None): a Partitioned box whose
// names are logical axis names, with the rules (None: the thread's) that map them to mesh axes.
// vmap / scan add and remove axis names as on Partitioned, keeping the rules; unbox gives the
// value; lift::meta::partition_names reads the names.
class LogicallyPartitioned final : public lift::meta::Partitioned {
 public:
  explicit LogicallyPartitioned(LogicalNames names,
                                std::optional<LogicalRules> rules = std::nullopt)
      : Partitioned(std::move(names)), rules_(std::move(rules)) {}
  static Tree box(Tree value, LogicalNames names, std::optional<LogicalRules> rules = std::nullopt);
  const std::optional<LogicalRules>& rules() const { return rules_; }

  std::string type_name() const override { return "LogicallyPartitioned"; }
  std::string repr_fields() const override;  // ", names=('a',), mesh=None, rules=None"
  bool equals(const pytree::BoxMetadata& other) const override;

 protected:
  Tree with_names(Tree value, LogicalNames names) const override;

 private:
  std::optional<LogicalRules> rules_;
};

// with_logical_partitioning(init_fn, names, rules): init_fn's parameters are stored as
// LogicallyPartitioned(value, names, rules=rules) (Flax's mesh argument has no linum meaning).
template <class Init>
auto with_logical_partitioning(Init init_fn, LogicalNames names,
                               std::optional<LogicalRules> rules = std::nullopt) {
  return lift::meta::boxed_init(std::move(init_fn), std::make_shared<const LogicallyPartitioned>(
                                                        std::move(names), std::move(rules)));
}

}  // namespace linum::nn
