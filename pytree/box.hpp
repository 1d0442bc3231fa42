// The static half of a metadata box (flax.core.meta.AxisMetadata): a Tree box node holds one
// child, the boxed value, and a BoxMetadata that is part of the tree's structure, as a
// PyTreeNode dataclass's pytree_node=False fields are (compared by TreeDef ==, kept by tree_map,
// not mapped over). lift/meta.hpp builds Partitioned and user boxes on it.
#pragma once

#include <memory>
#include <string>

namespace linum::pytree {

class BoxMetadata {
 public:
  virtual ~BoxMetadata() = default;
  // The Python class name the box prints as: Partitioned(value=..., names=(...), mesh=None).
  virtual std::string type_name() const = 0;
  // The fields after `value`, each as ", name=repr" ("" when there are none).
  virtual std::string repr_fields() const { return ""; }
  virtual bool equals(const BoxMetadata& other) const = 0;
};

namespace detail {
// A box's metadata as a TreeDef static value (equal when the metadata says so).
struct BoxRef {
  std::shared_ptr<const BoxMetadata> meta;
  friend bool operator==(const BoxRef& a, const BoxRef& b) {
    return a.meta == b.meta || (a.meta && b.meta && a.meta->equals(*b.meta));
  }
};
}  // namespace detail

}  // namespace linum::pytree
