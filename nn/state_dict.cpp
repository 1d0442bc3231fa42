// flax.serialization's state dicts: to_state_dict (tuples and lists as {'0': ...}, a FrozenDict
// as a dict, a str as itself) and from_state_dict, which restores a state into a target's
// structure and names the path of every mismatch as Flax's errors do.
#include <linum/nn/serialization.hpp>

#include <set>
#include <string>

#include "state_dict_kind.hpp"

namespace linum::serialization {

namespace {

std::string set_repr(const std::set<std::string>& s) {
  if (s.empty()) return "set()";
  std::string out = "{";
  std::size_t n = 0;
  for (const auto& k : s) out += (n++ ? ", " : "") + pytree::str_repr(k);
  return out + "}";
}

}  // namespace

namespace detail {

std::string kind_of(const Tree& t) {
  if (t.is_leaf()) return "an array";
  if (str_value(t)) return "a string";
  return std::string("a ") + std::string(pytree::kind_name(t.kind()));
}

std::string RestorePath::str() const {
  std::string s;
  for (std::size_t i = 0; i < names.size(); ++i) s += (i ? "/" : "") + names[i];
  return s;
}

Tree tree_to_state_dict(const Tree& t) {
  if (t.is_dict() || t.is_frozen_dict()) {  // Flax: a FrozenDict's state is a plain dict
    Tree::dict_type d;
    for (const auto& [k, v] : t.as_mapping()) d.insert_or_assign(k, tree_to_state_dict(v));
    return Tree(std::move(d));
  }
  if (t.is_tuple() || t.is_list()) {
    Tree::dict_type d;
    std::size_t i = 0;
    for (const auto& v : t.items()) d.insert_or_assign(std::to_string(i++), tree_to_state_dict(v));
    return Tree(std::move(d));
  }
  if (t.is_empty_node()) {
    throw TypeError("to_state_dict: flax's empty_node has no state dict; unflatten_dict first");
  }
  if (str_value(t)) return t;  // a str is its own state
  if (t.is_box()) {            // a struct dataclass: its pytree field, {'value': ...}
    Tree::dict_type d;
    d.insert_or_assign("value", tree_to_state_dict(t.box_value()));
    return Tree(std::move(d));
  }
  return t;  // None and leaves are their own state
}

const Tree::dict_type& expect_state_dict(const Tree& state, const char* target_kind,
                                         const RestorePath& path) {
  if (!state.is_dict()) {
    throw TypeError("from_state_dict: the target has " + std::string(target_kind) + " at path " +
                    path.str() + ", where the state dict has " + kind_of(state) +
                    "; expected a dict");
  }
  return state.as_dict();
}

void check_list_state(std::size_t target_size, const Tree& state, const RestorePath& path) {
  const auto& d = expect_state_dict(state, "a sequence", path);
  if (d.size() != target_size) {
    throw ValueError("The size of the list and the state dict do not match, got " +
                     std::to_string(target_size) + " and " + std::to_string(d.size()) +
                     " at path " + path.str());
  }
}

const Tree& list_item(const Tree& state, std::size_t i, const RestorePath& path) {
  const auto& d = state.as_dict();
  auto it = d.find(std::to_string(i));
  if (it == d.end()) {
    throw KeyError("from_state_dict: the state dict of a sequence has no key '" +
                   std::to_string(i) + "' at path " + path.str());
  }
  return it->second;
}

void check_dict_keys(const std::set<std::string>& target_keys, const Tree& state,
                     const RestorePath& path) {
  const auto& d = expect_state_dict(state, "a dict", path);
  std::set<std::string> diff;
  for (const auto& k : target_keys) {
    if (!d.contains(k)) diff.insert(k);
  }
  if (!diff.empty()) {
    throw ValueError(
        "The target dict keys and state dict keys do not match, target dict contains keys " +
        set_repr(diff) + " which are not present in state dict at path " + path.str());
  }
}

void check_struct_fields(const std::set<std::string>& fields, const Tree& state,
                         const RestorePath& path) {
  const auto& d = expect_state_dict(state, "a struct", path);
  std::set<std::string> sd_keys;
  for (const auto& kv : d) sd_keys.insert(kv.first);
  if (sd_keys != fields) {
    throw ValueError("The field names of the state dict and the named tuple do not match, got " +
                     set_repr(sd_keys) + " and " + set_repr(fields) + " at path " + path.str());
  }
}

Array array_from_state(const Array& target, const Tree& state, RestorePath& path) {
  if (!state.is_leaf()) {
    throw TypeError("from_state_dict: expected an array at path " + path.str() + ", got " +
                    kind_of(state));
  }
  const Array& a = state.leaf();
  if (target.valid() && target.shape() != a.shape()) {
    throw ValueError("from_state_dict: the array at path " + path.str() + " has shape " +
                     shape_str(a.shape()) + " in the state dict but " + shape_str(target.shape()) +
                     " in the target");
  }
  return a;
}

Tree tree_from_state_dict(const Tree& target, const Tree& state, RestorePath& path) {
  switch (target.kind()) {
    case pytree::NodeKind::Dict:
    case pytree::NodeKind::FrozenDict: {  // Flax's _restore_dict and _restore_frozen_dict
      const auto& entries = target.as_mapping();
      std::set<std::string> keys;
      for (const auto& kv : entries) keys.insert(kv.first);
      check_dict_keys(keys, state, path);
      Tree::dict_type out;
      for (const auto& [k, v] : entries) {
        PathGuard g(path, k);
        out.insert_or_assign(k, tree_from_state_dict(v, state.as_dict().at(k), path));
      }
      if (target.is_frozen_dict()) return Tree(pytree::FrozenDict<Array>(std::move(out)));
      return Tree(std::move(out));
    }
    case pytree::NodeKind::Tuple:
    case pytree::NodeKind::List: {
      const auto& xs = target.items();
      check_list_state(xs.size(), state, path);
      Tree::seq_type out;
      for (std::size_t i = 0; i < xs.size(); ++i) {
        PathGuard g(path, std::to_string(i));
        out.push_back(tree_from_state_dict(xs[i], list_item(state, i, path), path));
      }
      return target.is_tuple() ? Tree::tuple(std::move(out)) : Tree::list(std::move(out));
    }
    case pytree::NodeKind::Leaf: return Tree(array_from_state(target.leaf(), state, path));
    case pytree::NodeKind::EmptyNode:
      expect_state_dict(state, "an empty_node", path);
      return target;
    case pytree::NodeKind::None:  // not registered in Flax, so the state is taken as it is
      return state;
    case pytree::NodeKind::Box: {  // the value restored, the target's metadata kept
      // A str is not registered in Flax's serialization: the state is taken as it is.
      if (str_value(target)) return state;
      check_dict_keys({"value"}, state, path);
      PathGuard g(path, "value");
      return Tree::box(target.box_metadata(),
                       tree_from_state_dict(target.box_value(), state.as_dict().at("value"), path));
    }
    case pytree::NodeKind::NamedTuple:
    case pytree::NodeKind::Custom:
    case pytree::NodeKind::TupleDict: break;  // static node kinds: a dynamic Tree never holds them
  }
  throw TypeError("from_state_dict: the target holds " + kind_of(target) + " at path " +
                  path.str());
}

}  // namespace detail

}  // namespace linum::serialization
