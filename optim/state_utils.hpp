// optax.tree_utils's optimizer-state utilities: tree_get / tree_get_all_with_path (values by
// field or dict key anywhere in a state, or whole states by their NamedTuple name), tree_set
// (replace them) and tree_map_params (map a function over the parts of a state shaped like the
// params, found by initialising the transformation on a placeholder, as optax does).
#pragma once

#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
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

namespace state_detail {

using pytree::detail::Category;

// Visits every node of x, depth first, calling visit(path, node) on each (a generic lambda);
// path names the node as optax's key paths print: [0].mu['w'].
template <class T, class V>
void walk_nodes(const T& x, const std::string& path, V& visit) {
  constexpr Category c = pytree::detail::category_v<T>;
  visit(path, x);
  if constexpr (c == Category::Tuple) {
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      (walk_nodes(std::get<I>(x), path + "[" + std::to_string(I) + "]", visit), ...);
    }
    (std::make_index_sequence<std::tuple_size_v<T>>{});
  } else if constexpr (c == Category::Struct) {
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      (walk_nodes(pytree::detail::struct_field<I>(x),
                  path + "." + std::string(pytree::detail::struct_field_name<I, T>()), visit),
       ...);
    }
    (std::make_index_sequence<pytree::detail::struct_size_v<T>>{});
  } else if constexpr (c == Category::Dict) {
    for (const auto& [k, v] : x) walk_nodes(v, path + "['" + k + "']", visit);
  } else if constexpr (c == Category::List) {
    for (std::size_t i = 0; i < x.size(); ++i)
      walk_nodes(x[i], path + "[" + std::to_string(i) + "]", visit);
  } else if constexpr (c == Category::Optional) {
    if (x) walk_nodes(*x, path, visit);
  } else if constexpr (std::is_same_v<T, Tree>) {
    if (x.is_dict() || x.is_frozen_dict()) {
      for (const auto& [k, v] : x.as_mapping()) walk_nodes(v, path + "['" + k + "']", visit);
    } else if (x.is_tuple() || x.is_list()) {
      for (std::size_t i = 0; i < x.size(); ++i)
        walk_nodes(x.items()[i], path + "[" + std::to_string(i) + "]", visit);
    }
  }
}

// Replaces, in a copy of x, every field / dict entry named key (and every state whose NamedTuple
// name is key) by value; counts the replacements in n.
template <class T, class V>
void set_nodes(T& x, const std::string& key, const V& value, int& n) {
  constexpr Category c = pytree::detail::category_v<T>;
  auto assign = [&](auto& slot) {
    using S = std::remove_cvref_t<decltype(slot)>;
    slot = optim::detail::from_tree<S>(optim::detail::to_tree(value), key);
    ++n;
  };
  if constexpr (c == Category::Struct) {
    if (pytree::detail::type_name<T>() == key) {
      assign(x);
      return;
    }
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      (
          [&] {
            auto& f = pytree::detail::struct_field<I>(x);
            if (pytree::detail::struct_field_name<I, T>() == key)
              assign(f);
            else
              set_nodes(f, key, value, n);
          }(),
          ...);
    }
    (std::make_index_sequence<pytree::detail::struct_size_v<T>>{});
  } else if constexpr (c == Category::Tuple) {
    std::apply([&](auto&... e) { (set_nodes(e, key, value, n), ...); }, x);
  } else if constexpr (c == Category::Dict) {
    for (auto& [k, v] : x) {
      if (k == key)
        assign(v);
      else
        set_nodes(v, key, value, n);
    }
  } else if constexpr (c == Category::List) {
    for (auto& e : x) set_nodes(e, key, value, n);
  } else if constexpr (c == Category::Optional) {
    if (x) set_nodes(*x, key, value, n);
  } else if constexpr (std::is_same_v<T, Tree>) {
    if (x.is_dict()) {
      for (auto& [k, v] : x.as_dict()) {
        if (k == key)
          assign(v);
        else
          set_nodes(v, key, value, n);
      }
    } else if (x.is_tuple() || x.is_list()) {
      for (auto& e : x.items()) set_nodes(e, key, value, n);
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

// optax.tree_utils.tree_get_all_with_path: (path, value) of every field or dict entry named key,
// and of every state whose NamedTuple name is key, in depth-first order; values as dynamic
// Trees (to_tree).
template <class T>
std::vector<std::pair<std::string, Tree>> tree_get_all_with_path(const T& tree,
                                                                 const std::string& key) {
  std::vector<std::pair<std::string, Tree>> found;
  auto visit = [&]<class N>(const std::string& path, const N& node) {
    using pytree::detail::Category;
    constexpr Category c = pytree::detail::category_v<N>;
    if constexpr (c == Category::Struct) {
      if (pytree::detail::type_name<N>() == key)
        found.emplace_back(path, optim::detail::to_tree(node));
      [&]<std::size_t... I>(std::index_sequence<I...>) {
        ((pytree::detail::struct_field_name<I, N>() == key
              ? (void)found.emplace_back(
                    path + "." + key,
                    optim::detail::to_tree(pytree::detail::struct_field<I>(node)))
              : (void)0),
         ...);
      }
      (std::make_index_sequence<pytree::detail::struct_size_v<N>>{});
    } else if constexpr (c == Category::Dict) {
      if (auto it = node.find(key); it != node.end())
        found.emplace_back(path + "['" + key + "']", optim::detail::to_tree(it->second));
    } else if constexpr (std::is_same_v<N, Tree>) {
      if ((node.is_dict() || node.is_frozen_dict()) && node.as_mapping().contains(key))
        found.emplace_back(path + "['" + key + "']", node.as_mapping().at(key));
    }
  };
  state_detail::walk_nodes(tree, "", visit);
  return found;
}

// optax.tree_utils.tree_get: the one value named key (std::nullopt when there is none; KeyError
// when there are several).
template <class T>
std::optional<Tree> tree_get(const T& tree, const std::string& key) {
  auto found = tree_get_all_with_path(tree, key);
  if (found.size() > 1) {
    std::string paths;
    for (const auto& [p, v] : found) paths += (paths.empty() ? "" : ", ") + p;
    throw KeyError("tree_get: Found multiple values for '" + key + "' (at " + paths + ")");
  }
  if (found.empty()) return std::nullopt;
  return found[0].second;
}

// optax.tree_utils.tree_set: a copy of tree with every value named key replaced by value
// (converted to the field's type); KeyError when there is none.
template <class T, class V>
T tree_set(const T& tree, const std::string& key, const V& value) {
  T out = tree;
  int n = 0;
  state_detail::set_nodes(out, key, value, n);
  if (n == 0) throw KeyError("tree_set: Found no values matching '" + key + "'");
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
