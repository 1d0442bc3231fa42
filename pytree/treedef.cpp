// TreeDef printing (JAX's PyTreeDef format), equality, children and composition.
#include <linum/pytree/treedef.hpp>

#include <ostream>

#include <linum/pytree/box.hpp>
#include <linum/pytree/repr.hpp>

namespace linum::pytree {

std::string_view kind_name(NodeKind k) {
  switch (k) {
    case NodeKind::None: return "None";
    case NodeKind::Leaf: return "leaf";
    case NodeKind::Dict: return "dict";
    case NodeKind::Tuple: return "tuple";
    case NodeKind::List: return "list";
    case NodeKind::EmptyNode: return "empty_node";
    case NodeKind::NamedTuple: return "namedtuple";
    case NodeKind::FrozenDict: return "FrozenDict";
    case NodeKind::Custom: return "custom node";
    case NodeKind::TupleDict: return "dict";
    case NodeKind::Box: return "box";
  }
  return "?";
}

TreeDef::TreeDef() : nodes_(1) {}

std::vector<TreeDef> TreeDef::children() const {
  std::vector<TreeDef> out;
  const Node& root = nodes_.front();
  std::size_t pos = 1;
  for (std::uint32_t c = 0; c < root.arity; ++c) {
    TreeDef child;
    child.nodes_.assign(nodes_.begin() + static_cast<std::ptrdiff_t>(pos),
                        nodes_.begin() + static_cast<std::ptrdiff_t>(pos + nodes_[pos].num_nodes));
    // Re-base the node data into the child's own table.
    for (auto& n : child.nodes_) {
      const std::uint32_t begin = static_cast<std::uint32_t>(child.data_.size());
      for (std::uint32_t i = 0; i < n.data_size; ++i)
        child.data_.push_back(data_[n.data_begin + i]);
      n.data_begin = begin;
      const std::uint32_t sbegin = static_cast<std::uint32_t>(child.statics_.size());
      for (std::uint32_t i = 0; i < n.statics_size; ++i)
        child.statics_.push_back(statics_[n.statics_begin + i]);
      n.statics_begin = sbegin;
    }
    pos += nodes_[pos].num_nodes;
    out.push_back(std::move(child));
  }
  return out;
}

TreeDef TreeDef::tuple(const std::vector<TreeDef>& defs) {
  TreeDef out;
  out.nodes_.front().kind = NodeKind::Tuple;
  out.nodes_.front().arity = static_cast<std::uint32_t>(defs.size());
  std::uint32_t leaves = 0;
  for (const auto& d : defs) {
    const std::uint32_t offset = static_cast<std::uint32_t>(out.data_.size());
    const std::uint32_t soffset = static_cast<std::uint32_t>(out.statics_.size());
    for (Node n : d.nodes_) {
      n.data_begin += offset;
      n.statics_begin += soffset;
      out.nodes_.push_back(n);
    }
    out.data_.insert(out.data_.end(), d.data_.begin(), d.data_.end());
    out.statics_.insert(out.statics_.end(), d.statics_.begin(), d.statics_.end());
    leaves += static_cast<std::uint32_t>(d.num_leaves());
  }
  out.nodes_.front().num_leaves = leaves;
  out.nodes_.front().num_nodes = static_cast<std::uint32_t>(out.nodes_.size());
  return out;
}

namespace {

// Prints the subtree rooted at nodes[pos]; returns the position after it.
std::size_t print_node(const TreeDef& def, std::size_t pos, std::string& out) {
  const auto& nodes = def.nodes();
  const TreeDef::Node& n = nodes[pos];
  ++pos;
  auto children = [&](std::string_view sep = ", ") {
    for (std::uint32_t c = 0; c < n.arity; ++c) {
      if (c) out += sep;
      pos = print_node(def, pos, out);
    }
  };
  switch (n.kind) {
    case NodeKind::Leaf: out += '*'; break;
    case NodeKind::None: out += "None"; break;
    case NodeKind::Tuple:
      out += '(';
      children();
      out += n.arity == 1 ? ",)" : ")";
      break;
    case NodeKind::List:
      out += '[';
      children();
      out += ']';
      break;
    case NodeKind::Dict:
      out += '{';
      for (std::uint32_t c = 0; c < n.arity; ++c) {
        if (c) out += ", ";
        out += str_repr(def.data(n, c));
        out += ": ";
        pos = print_node(def, pos, out);
      }
      out += '}';
      break;
    case NodeKind::TupleDict:
      out += '{';
      for (std::uint32_t c = 0; c < n.arity; ++c) {
        if (c) out += ", ";
        out += repr_as_tuple(detail::decode_tuple_key(def.data(n, c)));
        out += ": ";
        pos = print_node(def, pos, out);
      }
      out += '}';
      break;
    case NodeKind::FrozenDict: {
      out += "CustomNode(FrozenDict[(";
      for (std::uint32_t c = 0; c < n.data_size; ++c) {
        if (c) out += ", ";
        out += str_repr(def.data(n, c));
      }
      out += n.data_size == 1 ? ",)], [" : ")], [";
      children();
      out += "])";
      break;
    }
    case NodeKind::NamedTuple:
      out += "CustomNode(namedtuple[";
      out += def.data(n, 0);
      // Static fields are part of the structure: named after the type.
      for (std::uint32_t j = 0; j < n.statics_size; ++j) {
        out += j ? ", " : "; static ";
        out += def.data(n, n.data_size - n.statics_size + j);
      }
      out += "], [";
      children();
      out += "])";
      break;
    case NodeKind::EmptyNode: out += "CustomNode(_EmptyNode[()], [])"; break;
    case NodeKind::Custom:
      out += "CustomNode(";
      out += def.data(n, 0);
      out += "[()], [";
      children();
      out += "])";
      break;
    case NodeKind::Box: {
      // CustomNode(Partitioned[names=('a', 'b'), mesh=None], [*]): the metadata is static.
      out += "CustomNode(";
      out += def.data(n, 0);
      out += '[';
      const auto* box = def.static_value(n, 0).get<detail::BoxRef>();
      const std::string fields = box ? box->meta->repr_fields() : "";
      out += fields.size() > 2 ? std::string_view(fields).substr(2) : std::string_view();
      out += "], [";
      children();
      out += "])";
      break;
    }
  }
  return pos;
}

}  // namespace

std::string TreeDef::to_string() const {
  std::string out = "PyTreeDef(";
  print_node(*this, 0, out);
  out += ')';
  return out;
}

std::ostream& operator<<(std::ostream& os, const TreeDef& d) { return os << d.to_string(); }

bool operator==(const TreeDef& a, const TreeDef& b) {
  if (a.nodes_.size() != b.nodes_.size()) return false;
  for (std::size_t i = 0; i < a.nodes_.size(); ++i) {
    const auto& x = a.nodes_[i];
    const auto& y = b.nodes_[i];
    if (x.kind != y.kind || x.arity != y.arity || x.data_size != y.data_size ||
        x.statics_size != y.statics_size)
      return false;
    for (std::uint32_t j = 0; j < x.data_size; ++j) {
      if (a.data(x, j) != b.data(y, j)) return false;
    }
    for (std::uint32_t j = 0; j < x.statics_size; ++j) {
      if (!(a.static_value(x, j) == b.static_value(y, j))) return false;
    }
  }
  return true;
}

namespace detail {

// Each part as <length>:<bytes>, so any strings (empty, with separators) round-trip.
std::string encode_tuple_key(const std::vector<std::string>& key) {
  std::string out;
  for (const auto& part : key) {
    out += std::to_string(part.size());
    out += ':';
    out += part;
  }
  return out;
}

std::vector<std::string> decode_tuple_key(std::string_view s) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < s.size()) {
    const std::size_t colon = s.find(':', i);
    const std::size_t len = std::stoul(std::string(s.substr(i, colon - i)));
    out.emplace_back(s.substr(colon + 1, len));
    i = colon + 1 + len;
  }
  return out;
}

std::string describe_node(const TreeDef& def, const TreeDef::Node& n) {
  auto keys = [&] {
    std::string s = "[";
    for (std::uint32_t i = 0; i < n.data_size; ++i) {
      if (i) s += ", ";
      s += n.kind == NodeKind::TupleDict ? repr_as_tuple(decode_tuple_key(def.data(n, i)))
                                         : str_repr(def.data(n, i));
    }
    return s + "]";
  };
  switch (n.kind) {
    case NodeKind::Leaf: return "a leaf";
    case NodeKind::None: return "None";
    case NodeKind::EmptyNode: return "an empty_node";
    case NodeKind::Tuple: return cat("a tuple of ", n.arity);
    case NodeKind::List: return cat("a list of ", n.arity);
    case NodeKind::Dict: return cat("a dict with keys ", keys());
    case NodeKind::FrozenDict: return cat("a FrozenDict with keys ", keys());
    case NodeKind::NamedTuple: return cat("a namedtuple ", def.data(n, 0));
    case NodeKind::Custom: return cat("a custom node ", def.data(n, 0));
    case NodeKind::TupleDict: return cat("a dict with keys ", keys());
    case NodeKind::Box: return cat("a ", def.data(n, 0), " box");
  }
  return "?";
}

}  // namespace detail
}  // namespace linum::pytree
