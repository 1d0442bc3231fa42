// TreeDef: the structure of a pytree without its leaves (JAX's PyTreeDef). Built by tree_flatten
// / tree_structure from any pytree, compared with ==, printed as PyTreeDef({'a': *, 'b': (*,)}),
// and used by tree_unflatten to rebuild a value from leaves.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>
#include <typeinfo>
#include <vector>

#include <linum/pytree/traits.hpp>

namespace linum::pytree {

namespace detail {
class TreeDefBuilder;
}

// A static struct field's value, type-erased: a TreeDef keeps it so that tree_unflatten can
// restore the field, and compares it (with the type's ==) in TreeDef equality, as JAX does.
class StaticValue {
 public:
  template <class V>
  static StaticValue of(const V& v) {
    StaticValue s;
    s.p_ = std::make_shared<const V>(v);
    s.type_ = &typeid(V);
    s.eq_ = [](const void* a, const void* b) {
      return detail::static_equal(*static_cast<const V*>(a), *static_cast<const V*>(b));
    };
    return s;
  }
  // The value when it has type V, else nullptr.
  template <class V>
  const V* get() const {
    return *type_ == typeid(V) ? static_cast<const V*>(p_.get()) : nullptr;
  }
  const std::type_info& type() const { return *type_; }
  friend bool operator==(const StaticValue& a, const StaticValue& b) {
    return *a.type_ == *b.type_ && a.eq_(a.p_.get(), b.p_.get());
  }

 private:
  std::shared_ptr<const void> p_;
  const std::type_info* type_ = &typeid(void);
  bool (*eq_)(const void*, const void*) = nullptr;
};

class TreeDef {
 public:
  // One node in pre-order (a node, then its children's subtrees left to right).
  struct Node {
    NodeKind kind = NodeKind::Leaf;
    std::uint32_t arity = 0;          // number of children
    std::uint32_t num_leaves = 1;     // leaves in this subtree
    std::uint32_t num_nodes = 1;      // nodes in this subtree, itself included
    std::uint32_t data_begin = 0;     // node data in data(): sorted keys of a dict / FrozenDict,
    std::uint32_t data_size = 0;      // [name, field names..., static field names...] of a
                                      // namedtuple, [name] of a custom node
    std::uint32_t statics_begin = 0;  // the static field values of a namedtuple
    std::uint32_t statics_size = 0;
  };

  // A single leaf: PyTreeDef(*).
  TreeDef();

  std::size_t num_leaves() const { return nodes_.front().num_leaves; }
  std::size_t num_nodes() const { return nodes_.size(); }
  NodeKind kind() const { return nodes_.front().kind; }
  bool is_leaf() const { return kind() == NodeKind::Leaf; }

  // The root's children, each as its own TreeDef.
  std::vector<TreeDef> children() const;

  // The tuple of the given structures (jax.tree_util.treedef_tuple).
  static TreeDef tuple(const std::vector<TreeDef>& defs);

  // PyTreeDef((*, [*, *], {'a': *}, None, CustomNode(FrozenDict[('b',)], [*])))
  std::string to_string() const;
  friend std::ostream& operator<<(std::ostream& os, const TreeDef& d);

  // Same kinds, arities, keys and names, node for node (C++ types are not part of a structure:
  // a std::tuple and a Tree tuple of the same leaves are equal, as in JAX).
  friend bool operator==(const TreeDef& a, const TreeDef& b);

  const std::vector<Node>& nodes() const { return nodes_; }
  std::string_view data(const Node& n, std::size_t i) const { return data_[n.data_begin + i]; }
  const StaticValue& static_value(const Node& n, std::size_t j) const {
    return statics_[n.statics_begin + j];
  }

 private:
  friend class detail::TreeDefBuilder;
  std::vector<Node> nodes_;
  std::vector<std::string> data_;
  std::vector<StaticValue> statics_;
};

namespace detail {

// Appends nodes in pre-order while a tree is walked.
class TreeDefBuilder {
 public:
  TreeDefBuilder() { def_.nodes_.clear(); }

  std::size_t begin(NodeKind kind, std::size_t arity) {
    TreeDef::Node n;
    n.kind = kind;
    n.arity = static_cast<std::uint32_t>(arity);
    n.data_begin = static_cast<std::uint32_t>(def_.data_.size());
    n.statics_begin = static_cast<std::uint32_t>(def_.statics_.size());
    n.num_leaves = static_cast<std::uint32_t>(leaves_);  // leaves before it, fixed in end()
    def_.nodes_.push_back(n);
    return def_.nodes_.size() - 1;
  }
  void data(std::size_t node, std::string_view s) {
    def_.data_.emplace_back(s);
    ++def_.nodes_[node].data_size;
  }
  // A static field: its name joins the node data, its value the node's statics.
  void static_field(std::size_t node, std::string_view name, StaticValue value) {
    data(node, name);
    def_.statics_.push_back(std::move(value));
    ++def_.nodes_[node].statics_size;
  }
  void end(std::size_t node) {
    auto& n = def_.nodes_[node];
    n.num_nodes = static_cast<std::uint32_t>(def_.nodes_.size() - node);
    n.num_leaves = static_cast<std::uint32_t>(leaves_) - n.num_leaves;
  }
  void leaf() {
    def_.nodes_.push_back(TreeDef::Node{});
    ++leaves_;
  }
  TreeDef finish() && { return std::move(def_); }

 private:
  TreeDef def_;
  std::size_t leaves_ = 0;
};

// A tuple-keyed dict's key as one string of TreeDef node data, and back.
std::string encode_tuple_key(const std::vector<std::string>& key);
std::vector<std::string> decode_tuple_key(std::string_view s);

// "a tuple of 2", "a dict with keys ['a', 'b']", ... for error messages.
std::string describe_node(const TreeDef& def, const TreeDef::Node& n);

}  // namespace detail
}  // namespace linum::pytree
