// flax.core.meta: boxed variables. A box (a Tree box node, pytree/box.hpp) wraps a variable's
// value with metadata that lifted transforms keep in step: vmap and scan remove_axis from the
// boxes of a mapped collection before slicing and add_axis after stacking. Reads see the unboxed
// value; Scope::variables() and init's result keep the boxes, as in Flax.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include <linum/autodiff/tree_bridge.hpp>
#include <linum/pytree/box.hpp>

namespace linum::lift::meta {

// metadata_params: Flax passes any Python value; boxes read names and sizes. std::nullopt is
// Python's None ({nn::PARTITION_NAME: None} adds an axis that is not partitioned).
using MetadataValue = std::variant<std::int64_t, double, std::string, std::nullopt_t>;
using MetadataParams = std::map<std::string, MetadataValue>;
// The metadata_params key naming the axis a transform adds (nn.PARTITION_NAME).
inline constexpr const char* PARTITION_NAME = "partition_name";

// flax.core.meta.AxisMetadata: subclass it for a custom box. The hooks take the box's
// value and return the new box (metadata is immutable, as Flax's dataclass replace()).
class AxisMetadata : public pytree::BoxMetadata {
 public:
  // What a read sees: the boxed value itself unless a box says otherwise.
  virtual Tree unbox(const Tree& value) const { return value; }
  // The box after a transform added / removed axis `index` of the value.
  virtual Tree add_axis(const Tree& value, int index, const MetadataParams& params) const = 0;
  virtual Tree remove_axis(const Tree& value, int index, const MetadataParams& params) const = 0;
};

bool is_axis_metadata(const Tree& t);
// Every box replaced by what it unboxes to (flax.core.meta.unbox).
Tree unbox(const Tree& tree);
// add_axis / remove_axis on every AxisMetadata box of `tree`; other values are unchanged.
Tree add_axis(const Tree& tree, int index, const MetadataParams& params);
Tree remove_axis(const Tree& tree, int index, const MetadataParams& params);
// {col: variables} with add_axis (add) or remove_axis at axes[col]: nn::add_metadata_axis's map.
Tree collection_axes(const Tree& vars, const std::map<std::string, int>& axes,
                     const MetadataParams& params, bool add);
// `values` re-boxed where `tree` has boxes (flax.core.meta.replace_boxed): writes keep metadata.
Tree replace_boxed(const Tree& tree, const Tree& values);

// Per-dimension axis names (nullopt: not partitioned), a jax.sharding.PartitionSpec's entries.
using LogicalNames = std::vector<std::optional<std::string>>;

// flax.core.meta.Partitioned(value, names, mesh=None): add_axis inserts
// metadata_params[PARTITION_NAME] at the axis index, remove_axis takes it out again. Subclasses
// (nn::LogicallyPartitioned) add fields and keep their type through both.
class Partitioned : public AxisMetadata {
 public:
  explicit Partitioned(LogicalNames names) : names_(std::move(names)) {}
  // Partitioned(value, names) as a Tree box.
  static Tree box(Tree value, LogicalNames names);
  const LogicalNames& names() const { return names_; }

  std::string type_name() const override { return "Partitioned"; }
  std::string repr_fields() const override;  // ", names=('a', 'b'), mesh=None"
  // Boxes of the same class with the same names (subclasses compare their own fields too).
  bool equals(const pytree::BoxMetadata& other) const override;
  Tree add_axis(const Tree& value, int index, const MetadataParams& params) const override;
  Tree remove_axis(const Tree& value, int index, const MetadataParams& params) const override;

 protected:
  // This box with other names around `value` (dataclass replace): a subclass keeps its type.
  virtual Tree with_names(Tree value, LogicalNames names) const;

 private:
  LogicalNames names_;
};
// The names of a Partitioned box, or an empty list for any other value (a PartitionSpec()).
LogicalNames partition_names(const Tree& t);

// An init function that stores what it returns in a box; Scope::param still returns the plain
// value. Initializer types with a boxed(meta) member stay their own type (a Dense kernel_init).
template <class Init>
struct BoxedInit {
  Init fn;
  std::shared_ptr<const pytree::BoxMetadata> meta;
  template <class... A>
  auto operator()(A&&... args) const {
    return fn(std::forward<A>(args)...);
  }
  const std::shared_ptr<const pytree::BoxMetadata>& box_metadata() const { return meta; }
};
// init_fn whose parameters Scope::param stores in the box `meta` describes.
template <class Init>
auto boxed_init(Init init_fn, std::shared_ptr<const pytree::BoxMetadata> meta) {
  if constexpr (requires { init_fn.boxed(meta); })
    return init_fn.boxed(std::move(meta));
  else
    return BoxedInit<Init>{std::move(init_fn), std::move(meta)};
}
// flax.core.meta.with_partitioning: init_fn's parameters stored as Partitioned(value, names).
template <class Init>
auto with_partitioning(Init init_fn, LogicalNames names) {
  return boxed_init(std::move(init_fn), std::make_shared<const Partitioned>(std::move(names)));
}

}  // namespace linum::lift::meta
