// to_dynamic: the one walk from a typed pytree (any kind of traits.hpp) to the dynamic
// BasicTree<L>. Leaves become L(x), an empty optional None, string maps and Hana structs dicts
// (a struct's fields by name); the nodes whose dynamic form depends on the use go through a
// Style: optax states as Trees keep tuples as tuples (optim/erased.hpp), flax.serialization's
// state dicts make every sequence a dict keyed "0", "1", ... (nn/serialization.hpp).
#pragma once

#include <cstddef>
#include <string>
#include <tuple>
#include <utility>

#include <linum/pytree/traits.hpp>
#include <linum/pytree/tree.hpp>

namespace linum::pytree {

// What kind of sequence Style::sequence gets: a std::tuple / pair / array, a std::vector, or a
// node_traits node's children.
enum class SequenceKind { Tuple, List, Custom };

namespace detail {

// The name of child i of a node of type T: a struct field's name, a keyed custom node's key,
// else i as text ("0", "1", ...).
template <class T>
std::string child_name(std::size_t i) {
  if constexpr (category_v<T> == Category::Struct) {
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      const char* names[] = {struct_field_name<I, T>()..., nullptr};
      return std::string(names[i]);
    }
    (std::make_index_sequence<struct_size_v<T>>{});
  } else if constexpr (category_v<T> == Category::Custom && custom_has_keys<T>()) {
    return std::string(node_traits<T>::keys[i]);
  } else {
    return std::to_string(i);
  }
}

}  // namespace detail

// A Style provides
//   BasicTree<L> dynamic(const BasicTree<X>& x)  for a dynamic tree (a FrozenDict unfrozen), and
//   BasicTree<L> sequence(seq_type items, SequenceKind kind, KeyOf key)  where key(i) is child
//   i's name: its index as text, or a node_traits node's key.
template <class L, class Style, class T>
BasicTree<L> to_dynamic(const T& x, const Style& style) {
  using Tree = BasicTree<L>;
  using detail::Category;
  constexpr Category c = detail::category_v<T>;
  detail::check_pytree<T>();
  auto name = detail::child_name<T>;
  if constexpr (c == Category::Leaf) {
    return Tree(L(x));
  } else if constexpr (c == Category::Dynamic) {
    return style.dynamic(x);
  } else if constexpr (c == Category::Frozen) {
    return style.dynamic(x.unfreeze());
  } else if constexpr (c == Category::Optional) {
    return x ? to_dynamic<L>(*x, style) : Tree();
  } else if constexpr (c == Category::Tuple) {
    typename Tree::seq_type items;
    std::apply([&](const auto&... e) { (items.push_back(to_dynamic<L>(e, style)), ...); }, x);
    return style.sequence(std::move(items), SequenceKind::Tuple, name);
  } else if constexpr (c == Category::List) {
    typename Tree::seq_type items;
    for (const auto& e : x) items.push_back(to_dynamic<L>(e, style));
    return style.sequence(std::move(items), SequenceKind::List, name);
  } else if constexpr (c == Category::Dict) {
    typename Tree::dict_type d;
    for (const auto& [k, v] : x) d.insert_or_assign(k, to_dynamic<L>(v, style));
    return Tree(std::move(d));
  } else if constexpr (c == Category::Struct) {
    typename Tree::dict_type d;
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      (d.insert_or_assign(detail::struct_field_name<I, T>(),
                          to_dynamic<L>(detail::struct_field<I>(x), style)),
       ...);
    }
    (std::make_index_sequence<detail::struct_size_v<T>>{});
    return Tree(std::move(d));
  } else {
    static_assert(c == Category::Custom, "to_dynamic: a dict with tuple keys has no dynamic form");
    typename Tree::seq_type items;
    std::apply([&](const auto&... e) { (items.push_back(to_dynamic<L>(e, style)), ...); },
               node_traits<T>::children(x));
    return style.sequence(std::move(items), SequenceKind::Custom, name);
  }
}

}  // namespace linum::pytree
