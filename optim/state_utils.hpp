// optax.tree_utils's optimizer-state utilities: tree_get / tree_get_all_with_path (values by
// field or dict key anywhere in a state, or whole states by their NamedTuple name, optionally
// filtered by their key path, whose NamedTupleKey entries name the state a field is in),
// tree_set (replace them) and tree_map_params (map a function over the parts of a state shaped
// like the params, found by initialising the transformation on a placeholder, as optax does).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include <linum/optim/erased.hpp>

namespace linum::optim {

// optax's _ParamsPlaceholder: a pytree node without children that stands for the params.
struct ParamsPlaceholder {};

}  // namespace linum::optim

template <>
struct linum::pytree::node_traits<linum::optim::ParamsPlaceholder> {
  static constexpr std::string_view name = "ParamsPlaceholder";
  static std::tuple<> children(const linum::optim::ParamsPlaceholder&) { return {}; }
  static linum::optim::ParamsPlaceholder from_children() { return {}; }
};

namespace linum::optim::tree_utils {

// optax.tree_utils.NamedTupleKey: the entry of a key path that names a field of a NamedTuple
// state together with the state's name, so that a filter can tell apart equal field names of
// different states (the count of ScaleByAdamState from that of a schedule's state).
struct NamedTupleKey {
  std::string tuple_name, name;
  friend bool operator==(const NamedTupleKey&, const NamedTupleKey&) = default;
};

// The key paths of tree_get_all_with_path and of the filters: a dict key, a tuple or list index,
// or a state's field (optax's _KeyPath).
using StateKeyEntry = std::variant<pytree::DictKey, pytree::SequenceKey, NamedTupleKey>;
using StateKeyPath = std::vector<StateKeyEntry>;

// jax.tree_util.keystr of such a path, as optax's paths print: "[0]ScaleByAdamState.mu['w']".
inline std::string keystr(const StateKeyPath& path) {
  std::string out;
  for (const StateKeyEntry& e : path) {
    if (const auto* d = std::get_if<pytree::DictKey>(&e))
      out += "['" + d->key + "']";
    else if (const auto* q = std::get_if<pytree::SequenceKey>(&e))
      out += "[" + std::to_string(q->idx) + "]";
    else
      out += std::get<NamedTupleKey>(e).tuple_name + "." + std::get<NamedTupleKey>(e).name;
  }
  return out;
}

// optax's filtering(path, value): whether a value found for a key is kept (replaced, for
// tree_set); the value as a dynamic Tree (a state as the dict of its fields). Empty: all are.
using StateFilter = std::function<bool(const StateKeyPath& path, const Tree& value)>;

namespace state_detail {

using pytree::detail::Category;

// Visits the nodes of x, depth first, calling visit(path, node) on each (a generic lambda
// returning whether the node holds what is searched, optax's is_leaf: then its children are not
// visited); a struct's fields get NamedTupleKey entries, as in optax's paths.
template <class T, class V>
void walk_nodes(const T& x, StateKeyPath& path, V& visit) {
  constexpr Category c = pytree::detail::category_v<T>;
  if (visit(path, x)) return;
  auto child = [&](StateKeyEntry e, const auto& node) {
    path.push_back(std::move(e));
    walk_nodes(node, path, visit);
    path.pop_back();
  };
  if constexpr (c == Category::Tuple) {
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      (child(pytree::SequenceKey{I}, std::get<I>(x)), ...);
    }
    (std::make_index_sequence<std::tuple_size_v<T>>{});
  } else if constexpr (c == Category::Struct) {
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      (child(NamedTupleKey{std::string(pytree::detail::type_name<T>()),
                           std::string(pytree::detail::struct_field_name<I, T>())},
             pytree::detail::struct_field<I>(x)),
       ...);
    }
    (std::make_index_sequence<pytree::detail::struct_size_v<T>>{});
  } else if constexpr (c == Category::Dict) {
    for (const auto& [k, v] : x) child(pytree::DictKey{k}, v);
  } else if constexpr (c == Category::List) {
    for (std::size_t i = 0; i < x.size(); ++i) child(pytree::SequenceKey{i}, x[i]);
  } else if constexpr (c == Category::Optional) {
    if (x) walk_nodes(*x, path, visit);
  } else if constexpr (std::is_same_v<T, Tree>) {
    if (x.is_dict() || x.is_frozen_dict()) {
      for (const auto& [k, v] : x.as_mapping()) child(pytree::DictKey{k}, v);
    } else if (x.is_tuple() || x.is_list()) {
      for (std::size_t i = 0; i < x.size(); ++i) child(pytree::SequenceKey{i}, x.items()[i]);
    }
  }
}

// Whether filter keeps the node at path (an empty filter keeps all).
template <class N>
bool kept(const StateFilter& filter, const StateKeyPath& path, const N& node) {
  return !filter || filter(path, optim::detail::to_tree(node));
}

// Replaces, in a copy of x, every field / dict entry named key (and every state whose NamedTuple
// name is key) that filter keeps by value; counts the replacements in n.
template <class T, class V>
void set_nodes(T& x, StateKeyPath& path, const std::string& key, const V& value,
               const StateFilter& filter, int& n) {
  constexpr Category c = pytree::detail::category_v<T>;
  auto assign = [&](auto& slot) {
    using S = std::remove_cvref_t<decltype(slot)>;
    slot = optim::detail::from_tree<S>(optim::detail::to_tree(value), key);
    ++n;
  };
  // A child named key is replaced when kept, else searched.
  auto child = [&](StateKeyEntry e, auto& node, bool named_key) {
    path.push_back(std::move(e));
    if (named_key && kept(filter, path, node))
      assign(node);
    else
      set_nodes(node, path, key, value, filter, n);
    path.pop_back();
  };
  if constexpr (c == Category::Struct) {
    if (pytree::detail::type_name<T>() == key && kept(filter, path, x)) {
      assign(x);
      return;
    }
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      (child(NamedTupleKey{std::string(pytree::detail::type_name<T>()),
                           std::string(pytree::detail::struct_field_name<I, T>())},
             pytree::detail::struct_field<I>(x), pytree::detail::struct_field_name<I, T>() == key),
       ...);
    }
    (std::make_index_sequence<pytree::detail::struct_size_v<T>>{});
  } else if constexpr (c == Category::Tuple) {
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      (child(pytree::SequenceKey{I}, std::get<I>(x), false), ...);
    }
    (std::make_index_sequence<std::tuple_size_v<T>>{});
  } else if constexpr (c == Category::Dict) {
    for (auto& [k, v] : x) child(pytree::DictKey{k}, v, k == key);
  } else if constexpr (c == Category::List) {
    for (std::size_t i = 0; i < x.size(); ++i) child(pytree::SequenceKey{i}, x[i], false);
  } else if constexpr (c == Category::Optional) {
    if (x) set_nodes(*x, path, key, value, filter, n);
  } else if constexpr (std::is_same_v<T, Tree>) {
    if (x.is_dict()) {
      for (auto& [k, v] : x.as_dict()) child(pytree::DictKey{k}, v, k == key);
    } else if (x.is_tuple() || x.is_list()) {
      for (std::size_t i = 0; i < x.size(); ++i) child(pytree::SequenceKey{i}, x.items()[i], false);
    }
  }
}

// Maps the parts of `state` that are ParamsPlaceholder in `like` (the state of the params
// placeholder): f over their leaves; g over the other leaves.
template <class L, class S, class F, class G>
S map_params_like(const L& like, const S& state, F& f, G& g) {
  constexpr Category c = pytree::detail::category_v<S>;
  if constexpr (std::is_same_v<L, ParamsPlaceholder>) {
    return linum::detail::tree_apply(state, [&](const Array& x) { return f(x); });
  } else if constexpr (c == Category::Struct) {
    S out = state;
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      ((pytree::detail::struct_field<I>(out) = map_params_like(
            pytree::detail::struct_field<I>(like), pytree::detail::struct_field<I>(state), f, g)),
       ...);
    }
    (std::make_index_sequence<pytree::detail::struct_size_v<S>>{});
    return out;
  } else if constexpr (c == Category::Tuple) {
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      return S{map_params_like(std::get<I>(like), std::get<I>(state), f, g)...};
    }
    (std::make_index_sequence<std::tuple_size_v<S>>{});
  } else if constexpr (c == Category::Optional) {
    if (!state) return state;
    if constexpr (pytree::detail::category_v<L> == Category::Optional) {
      if (like) return S(map_params_like(*like, *state, f, g));
    }
    return S(linum::detail::tree_apply(*state, [&](const Array& x) { return g(x); }));
  } else if constexpr (std::is_same_v<S, Array>) {
    return g(state);
  } else {
    return linum::detail::tree_apply(state, [&](const Array& x) { return g(x); });
  }
}

}  // namespace state_detail

// optax.tree_utils.tree_get_all_with_path(tree, key, filtering): (path, value) of every field or
// dict entry named key, and of every state whose NamedTuple name is key, in depth-first order
// (the search does not go into a node that holds key), kept by filtering; values as dynamic
// Trees (to_tree). keystr(path) prints the path as optax's.
template <class T>
std::vector<std::pair<StateKeyPath, Tree>> tree_get_all_with_path(
    const T& tree, const std::string& key, const StateFilter& filtering = {}) {
  std::vector<std::pair<StateKeyPath, Tree>> found;
  auto add = [&](StateKeyPath path, Tree value) {
    if (!filtering || filtering(path, value)) found.emplace_back(std::move(path), std::move(value));
  };
  auto with = [](StateKeyPath path, StateKeyEntry e) {
    path.push_back(std::move(e));
    return path;
  };
  auto visit = [&]<class N>(const StateKeyPath& path, const N& node) -> bool {
    using pytree::detail::Category;
    constexpr Category c = pytree::detail::category_v<N>;
    if constexpr (c == Category::Struct) {
      const std::string name(pytree::detail::type_name<N>());
      if (name == key) {
        add(path, optim::detail::to_tree(node));
        return true;
      }
      bool has = false;
      [&]<std::size_t... I>(std::index_sequence<I...>) {
        ((pytree::detail::struct_field_name<I, N>() == key
              ? (add(with(path, NamedTupleKey{name, key}),
                     optim::detail::to_tree(pytree::detail::struct_field<I>(node))),
                 has = true)
              : false),
         ...);
      }
      (std::make_index_sequence<pytree::detail::struct_size_v<N>>{});
      return has;
    } else if constexpr (c == Category::Dict) {
      auto it = node.find(key);
      if (it == node.end()) return false;
      add(with(path, pytree::DictKey{key}), optim::detail::to_tree(it->second));
      return true;
    } else if constexpr (std::is_same_v<N, Tree>) {
      if (!(node.is_dict() || node.is_frozen_dict()) || !node.as_mapping().contains(key))
        return false;
      add(with(path, pytree::DictKey{key}), node.as_mapping().at(key));
      return true;
    } else {
      return false;
    }
  };
  StateKeyPath path;
  state_detail::walk_nodes(tree, path, visit);
  return found;
}

// optax.tree_utils.tree_get(tree, key, filtering): the one value named key that filtering keeps
// (std::nullopt when there is none, optax's default; KeyError when there are several).
template <class T>
std::optional<Tree> tree_get(const T& tree, const std::string& key,
                             const StateFilter& filtering = {}) {
  auto found = tree_get_all_with_path(tree, key, filtering);
  if (found.size() > 1) {
    std::string paths;
    for (const auto& [p, v] : found) paths += (paths.empty() ? "" : ", ") + keystr(p);
    throw KeyError("tree_get: Found multiple values for '" + key + "' (at " + paths + ")");
  }
  if (found.empty()) return std::nullopt;
  return found[0].second;
}

// optax.tree_utils.tree_set(tree, filtering, key=value): a copy of tree with every value named key
// that filtering keeps replaced by value (converted to the field's type); KeyError when there is
// none.
template <class T, class V>
T tree_set(const T& tree, const std::string& key, const V& value,
           const StateFilter& filtering = {}) {
  T out = tree;
  int n = 0;
  StateKeyPath path;
  state_detail::set_nodes(out, path, key, value, filtering, n);
  if (n == 0)
    throw KeyError("tree_set: Found no values matching '" + key + "'" +
                   (filtering ? " given the filtering operation" : ""));
  return out;
}

// optax.tree_utils.tree_map_params(initable, f, state, transform_non_params): f over every leaf
// of the parts of state that hold params-shaped trees (the moments, traces, ...), the other
// leaves through transform_non_params (unchanged by default). f must keep each leaf's shape
// class (the state's type does not change).
template <class Tx, class S, class F, class G = std::nullptr_t>
S tree_map_params(const Tx& initable, F f, const S& state, G transform_non_params = nullptr) {
  auto like = initable.init(ParamsPlaceholder{});
  auto g = [&](const Array& x) -> Array {
    if constexpr (std::is_same_v<G, std::nullptr_t>)
      return x;
    else
      return transform_non_params(x);
  };
  return state_detail::map_params_like(like, state, f, g);
}

}  // namespace linum::optim::tree_utils
