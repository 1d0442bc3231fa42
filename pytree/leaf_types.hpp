// The leaf types of a static pytree type, and the leaf type a flatten collects when none is
// named (the common type of all leaf types).
#pragma once

#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

#include <linum/pytree/traits.hpp>

namespace linum::pytree {
namespace detail {

template <class... A, class... B>
constexpr tlist<A..., B...> operator+(tlist<A...>, tlist<B...>) {
  return {};
}

template <class T>
auto leaf_types_of();

template <class T, std::size_t... I>
auto tuple_leaf_types(std::index_sequence<I...>) {
  return (tlist<>{} + ... + leaf_types_of<std::tuple_element_t<I, T>>());
}
template <class T, std::size_t... I>
auto struct_leaf_types(std::index_sequence<I...>) {
  return (tlist<>{} + ... + leaf_types_of<struct_field_t<T, I>>());
}
template <class T, std::size_t... I>
auto custom_leaf_types(std::index_sequence<I...>) {
  return (tlist<>{} + ... + leaf_types_of<custom_child_t<T, I>>());
}

template <class T>
auto leaf_types_of() {
  constexpr Category c = category_v<T>;
  check_pytree<T>();
  if constexpr (c == Category::Leaf)
    return tlist<T>{};
  else if constexpr (c == Category::Optional)
    return leaf_types_of<typename T::value_type>();
  else if constexpr (c == Category::Tuple)
    return tuple_leaf_types<T>(std::make_index_sequence<std::tuple_size_v<T>>{});
  else if constexpr (c == Category::List)
    return leaf_types_of<typename T::value_type>();
  else if constexpr (c == Category::Dict || c == Category::TupleDict)
    return leaf_types_of<typename T::mapped_type>();
  else if constexpr (c == Category::Struct)
    return struct_leaf_types<T>(std::make_index_sequence<struct_size_v<T>>{});
  else if constexpr (c == Category::Custom)
    return custom_leaf_types<T>(std::make_index_sequence<custom_size_v<T>>{});
  else if constexpr (c == Category::Dynamic || c == Category::Frozen)
    return tlist<typename T::leaf_type>{};
  else
    return tlist<>{};
}

template <class List, class = void>
struct common_leaf {
  using type = void;
};
template <class... Ts>
struct common_leaf<tlist<Ts...>, std::void_t<std::common_type_t<Ts...>>> {
  using type = std::common_type_t<Ts...>;
};
template <>
struct common_leaf<tlist<>, void> {
  using type = void;
};

// The leaf type collected when none is given: the common type of all leaf types.
template <class T>
using default_leaf_t = typename common_leaf<decltype(leaf_types_of<T>())>::type;

// Stands in for an undeducible leaf type so that only the static_assert below reports it.
struct NoCommonLeafType {};

template <class L, class T>
using flat_leaf_t = std::conditional_t<
    std::is_void_v<L>,
    std::conditional_t<std::is_void_v<default_leaf_t<T>>, NoCommonLeafType, default_leaf_t<T>>, L>;

template <class L, class T>
constexpr void check_flat_leaf() {
  static_assert(
      !std::is_same_v<flat_leaf_t<L, T>, NoCommonLeafType>,
      "linum::pytree: cannot deduce one leaf type for this tree (no leaves, or leaf types "
      "without a common type); name it: tree_leaves<L>(tree)");
}

}  // namespace detail

}  // namespace linum::pytree
