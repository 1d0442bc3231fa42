// Flattening: one pre-order walk over any pytree, reporting leaves, the structure and key
// paths to a visitor; on it tree_leaves, tree_flatten, tree_flatten_with_path,
// tree_leaves_with_path, tree_structure, tree_reduce and tree_all. Order is JAX's: dicts by
// sorted key.
#pragma once

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <linum/error.hpp>
#include <linum/pytree/frozen_dict.hpp>
#include <linum/pytree/key_path.hpp>
#include <linum/pytree/leaf_types.hpp>
#include <linum/pytree/traits.hpp>
#include <linum/pytree/tree.hpp>
#include <linum/pytree/treedef.hpp>

namespace linum::pytree {
namespace detail {

template <bool Structure, bool Path>
struct VisitorBase {
  static constexpr bool kStructure = Structure;
  static constexpr bool kPath = Path;
  TreeDefBuilder builder;
  std::vector<KeyRef> path;

  std::size_t begin(NodeKind k, std::size_t arity) {
    if constexpr (Structure)
      return builder.begin(k, arity);
    else
      return 0;
  }
  void data(std::size_t node, std::string_view s) {
    if constexpr (Structure) builder.data(node, s);
  }
  void end(std::size_t node) {
    if constexpr (Structure) builder.end(node);
  }
  template <class X>
  void static_field([[maybe_unused]] std::size_t node, [[maybe_unused]] std::string_view name,
                    [[maybe_unused]] const X& x) {
    if constexpr (Structure) builder.static_field(node, name, StaticValue::of(x));
  }
  void empty_node(NodeKind k) { end(begin(k, 0)); }
  template <class Fn>
  void child(KeyRef key, Fn&& fn) {
    if constexpr (Path) path.push_back(key);
    fn();
    if constexpr (Path) path.pop_back();
  }
  void note_leaf() {
    if constexpr (Structure) builder.leaf();
  }
};

template <class T, std::size_t I>
KeyRef custom_key() {
  if constexpr (custom_has_keys<T>())
    return KeyRef::attr(node_traits<T>::keys[I]);
  else
    return KeyRef::flat(I);
}

template <class V, class T>
void walk(V& v, const T& t);

template <class V, class L>
void walk_dynamic(V& v, const BasicTree<L>& t) {
  switch (t.kind()) {
    case NodeKind::None:
      v.empty_node(NodeKind::None);
      return;
    case NodeKind::EmptyNode:
      v.empty_node(NodeKind::EmptyNode);
      return;
    case NodeKind::Leaf:
      v.note_leaf();
      v.leaf(t.leaf());
      return;
    case NodeKind::Dict:
    case NodeKind::FrozenDict: {
      const auto& d = t.as_mapping();
      const auto order = d.sorted_positions();
      const std::size_t node = v.begin(t.kind(), d.size());
      for (std::size_t pos : order)
        v.data(node, (d.begin() + static_cast<std::ptrdiff_t>(pos))->first);
      for (std::size_t pos : order) {
        const auto& kv = *(d.begin() + static_cast<std::ptrdiff_t>(pos));
        v.child(KeyRef::dict(kv.first), [&] { walk_dynamic(v, kv.second); });
      }
      v.end(node);
      return;
    }
    case NodeKind::Box: {
      // One child, the value; the metadata is static (part of the structure).
      const std::size_t node = v.begin(NodeKind::Box, 1);
      v.data(node, t.box_metadata()->type_name());
      v.static_field(node, "metadata", BoxRef{t.box_metadata()});
      v.child(KeyRef::attr("value"), [&] { walk_dynamic(v, t.box_value()); });
      v.end(node);
      return;
    }
    default: {
      const auto& s = t.items();
      const std::size_t node = v.begin(t.kind(), s.size());
      for (std::size_t i = 0; i < s.size(); ++i) {
        v.child(KeyRef::seq(i), [&] { walk_dynamic(v, s[i]); });
      }
      v.end(node);
      return;
    }
  }
}

// Entries of a string-keyed mapping in sorted-key order.
template <class M>
std::vector<const typename M::value_type*> sorted_entries(const M& m) {
  std::vector<const typename M::value_type*> items;
  items.reserve(m.size());
  if constexpr (requires { m.sorted_positions(); }) {
    for (std::size_t pos : m.sorted_positions()) {
      items.push_back(&*(m.begin() + static_cast<std::ptrdiff_t>(pos)));
    }
  } else {
    for (const auto& kv : m) items.push_back(&kv);
    if constexpr (!requires { typename M::key_compare; }) {  // std::map is already sorted
      std::sort(items.begin(), items.end(), [](auto* a, auto* b) { return a->first < b->first; });
    }
  }
  return items;
}

template <class V, class T>
void walk(V& v, const T& t) {
  constexpr Category c = category_v<T>;
  check_pytree<T>();
  if constexpr (c == Category::Leaf) {
    v.note_leaf();
    v.leaf(t);
  } else if constexpr (c == Category::Optional) {
    if (t)
      walk(v, *t);
    else
      v.empty_node(NodeKind::None);
  } else if constexpr (c == Category::Tuple) {
    constexpr std::size_t n = std::tuple_size_v<T>;
    const std::size_t node = v.begin(NodeKind::Tuple, n);
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      (v.child(KeyRef::seq(I), [&] { walk(v, std::get<I>(t)); }), ...);
    }
    (std::make_index_sequence<n>{});
    v.end(node);
  } else if constexpr (c == Category::List) {
    const std::size_t node = v.begin(NodeKind::List, t.size());
    std::size_t i = 0;
    for (const auto& e : t) {
      v.child(KeyRef::seq(i++), [&] { walk(v, e); });
    }
    v.end(node);
  } else if constexpr (c == Category::Dict || c == Category::Frozen) {
    const auto items = sorted_entries(t);
    const std::size_t node =
        v.begin(c == Category::Frozen ? NodeKind::FrozenDict : NodeKind::Dict, items.size());
    for (auto* kv : items) v.data(node, kv->first);
    for (auto* kv : items) {
      v.child(KeyRef::dict(kv->first), [&] {
        if constexpr (c == Category::Frozen)
          walk_dynamic(v, kv->second);
        else
          walk(v, kv->second);
      });
    }
    v.end(node);
  } else if constexpr (c == Category::TupleDict) {
    const auto items = sorted_entries(t);  // tuples compare element-wise, as in Python
    const std::size_t node = v.begin(NodeKind::TupleDict, items.size());
    if constexpr (V::kStructure) {
      for (auto* kv : items) v.data(node, encode_tuple_key(kv->first));
    }
    for (auto* kv : items) {
      v.child(KeyRef::tuple_dict(kv->first), [&] { walk(v, kv->second); });
    }
    v.end(node);
  } else if constexpr (c == Category::Struct) {
    constexpr std::size_t n = struct_size_v<T>;
    const std::size_t node = v.begin(NodeKind::NamedTuple, n);
    if constexpr (V::kStructure) {
      v.data(node, type_name<T>());
      [&]<std::size_t... I>(std::index_sequence<I...>) {
        (v.data(node, struct_field_name<I, T>()), ...);
      }
      (std::make_index_sequence<n>{});
      [&]<std::size_t... J>(std::index_sequence<J...>) {
        (v.static_field(node, static_field<J, T>().name, t.*(static_field<J, T>().ptr)), ...);
      }
      (std::make_index_sequence<static_size_v<T>>{});
    }
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      (v.child(KeyRef::attr(struct_field_name<I, T>()), [&] { walk(v, struct_field<I>(t)); }), ...);
    }
    (std::make_index_sequence<n>{});
    v.end(node);
  } else if constexpr (c == Category::Custom) {
    constexpr std::size_t n = custom_size_v<T>;
    const std::size_t node = v.begin(NodeKind::Custom, n);
    v.data(node, type_name<T>());
    auto children = node_traits<T>::children(t);
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      (v.child(custom_key<T, I>(), [&] { walk(v, std::get<I>(children)); }), ...);
    }
    (std::make_index_sequence<n>{});
    v.end(node);
  } else if constexpr (c == Category::Dynamic) {
    walk_dynamic(v, t);
  }
}

template <class L, bool Structure, bool Path>
struct LeavesVisitor : VisitorBase<Structure, Path> {
  std::vector<L> leaves;
  std::vector<std::pair<KeyPath, L>> with_path;
  template <class X>
  void leaf(const X& x) {
    if constexpr (Path)
      with_path.emplace_back(to_key_path(this->path), leaf_cast<L>(x));
    else
      leaves.push_back(leaf_cast<L>(x));
  }
};

struct StructureVisitor : VisitorBase<true, false> {
  template <class X>
  void leaf(const X&) {}
};

// With an initializer every leaf goes through f; without one the first leaf starts the value.
template <class F, class Acc, bool HasInit>
struct ReduceVisitor : VisitorBase<false, false> {
  F& f;
  std::optional<Acc> acc;
  ReduceVisitor(F& fn, std::optional<Acc> init) : f(fn), acc(std::move(init)) {}
  template <class X>
  void leaf(const X& x) {
    if constexpr (HasInit) {
      acc.emplace(f(std::move(*acc), x));
    } else {
      if (acc)
        acc.emplace(f(std::move(*acc), x));
      else
        acc.emplace(leaf_cast<Acc>(x));
    }
  }
};

}  // namespace detail

// The leaves in flattening order, each converted to L (by default the common leaf type).
template <class L = void, class T>
std::vector<detail::flat_leaf_t<L, T>> tree_leaves(const T& tree) {
  detail::check_flat_leaf<L, T>();
  detail::LeavesVisitor<detail::flat_leaf_t<L, T>, false, false> v;
  detail::walk(v, tree);
  return std::move(v.leaves);
}

// (leaves, treedef): tree_unflatten<T>(treedef, leaves) rebuilds the same C++ type.
template <class L = void, class T>
std::pair<std::vector<detail::flat_leaf_t<L, T>>, TreeDef> tree_flatten(const T& tree) {
  detail::check_flat_leaf<L, T>();
  detail::LeavesVisitor<detail::flat_leaf_t<L, T>, true, false> v;
  detail::walk(v, tree);
  return {std::move(v.leaves), std::move(v.builder).finish()};
}

// ([(key path, leaf)], treedef), JAX's tree_flatten_with_path.
template <class L = void, class T>
std::pair<std::vector<std::pair<KeyPath, detail::flat_leaf_t<L, T>>>, TreeDef>
tree_flatten_with_path(const T& tree) {
  detail::check_flat_leaf<L, T>();
  detail::LeavesVisitor<detail::flat_leaf_t<L, T>, true, true> v;
  detail::walk(v, tree);
  return {std::move(v.with_path), std::move(v.builder).finish()};
}

template <class L = void, class T>
std::vector<std::pair<KeyPath, detail::flat_leaf_t<L, T>>> tree_leaves_with_path(const T& tree) {
  detail::check_flat_leaf<L, T>();
  detail::LeavesVisitor<detail::flat_leaf_t<L, T>, false, true> v;
  detail::walk(v, tree);
  return std::move(v.with_path);
}

template <class T>
TreeDef tree_structure(const T& tree) {
  detail::StructureVisitor v;
  detail::walk(v, tree);
  return std::move(v.builder).finish();
}

// functools.reduce(f, tree_leaves(tree), initializer).
template <class F, class T, class Acc>
Acc tree_reduce(F&& f, const T& tree, Acc initializer) {
  detail::ReduceVisitor<std::remove_reference_t<F>, Acc, true> v(f, std::move(initializer));
  detail::walk(v, tree);
  return std::move(*v.acc);
}

// Without an initializer the first leaf starts the reduction; TypeError for a tree without leaves.
template <class F, class T>
auto tree_reduce(F&& f, const T& tree) {
  using L = detail::default_leaf_t<T>;
  detail::check_flat_leaf<void, T>();
  detail::ReduceVisitor<std::remove_reference_t<F>, L, false> v(f, std::nullopt);
  detail::walk(v, tree);
  if (!v.acc) throw TypeError("tree_reduce: reduce of a tree with no leaves and no initializer");
  return std::move(*v.acc);
}

// Whether every leaf is truthy (or satisfies pred).
template <class T>
bool tree_all(const T& tree) {
  return tree_reduce([](bool acc, const auto& x) { return acc && static_cast<bool>(x); }, tree,
                     true);
}
template <class T, class Pred>
bool tree_all(const T& tree, Pred&& pred) {
  return tree_reduce([&](bool acc, const auto& x) { return acc && static_cast<bool>(pred(x)); },
                     tree, true);
}

}  // namespace linum::pytree
