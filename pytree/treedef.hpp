// TreeDef: the structure of a pytree without its leaves (JAX's PyTreeDef). Built by tree_flatten
// / tree_structure from any pytree, compared with ==, printed as PyTreeDef({'a': *, 'b': (*,)}),
// and used by tree_unflatten to rebuild a value from leaves.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include <linum/pytree/traits.hpp>

namespace linum::pytree {

namespace detail {
class TreeDefBuilder;
}

class TreeDef {
 public:
  // One node in pre-order (a node, then its children's subtrees left to right).
  struct Node {
    NodeKind kind = NodeKind::Leaf;
    std::uint32_t arity = 0;       // number of children
    std::uint32_t num_leaves = 1;  // leaves in this subtree
    std::uint32_t num_nodes = 1;   // nodes in this subtree, itself included
    std::uint32_t data_begin = 0;  // node data in data(): sorted keys of a dict / FrozenDict,
    std::uint32_t data_size = 0;  // [name, field names...] of a namedtuple, [name] of a custom node
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

 private:
  friend class detail::TreeDefBuilder;
  std::vector<Node> nodes_;
  std::vector<std::string> data_;
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
    n.num_leaves = static_cast<std::uint32_t>(leaves_);  // leaves before it, fixed in end()
    def_.nodes_.push_back(n);
    return def_.nodes_.size() - 1;
  }
  void data(std::size_t node, std::string_view s) {
    def_.data_.emplace_back(s);
    ++def_.nodes_[node].data_size;
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

// "a tuple of 2", "a dict with keys ['a', 'b']", ... for error messages.
std::string describe_node(const TreeDef& def, const TreeDef::Node& n);

}  // namespace detail
}  // namespace linum::pytree
