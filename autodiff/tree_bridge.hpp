// How the transforms see their arguments and results: flatten a value to its Array leaves and
// rebuild the same C++ type from new leaves. This is the single place that decides what a
// "tree" of Arrays is for the transforms; it delegates to linum::pytree (every container kind of
// pytree/traits.hpp: tuples, vectors, maps, optionals, Hana structs, FrozenDict, the dynamic Tree).
#pragma once

#include <string_view>
#include <type_traits>
#include <utility>

#include <linum/autodiff/array.hpp>
#include <linum/pytree/tree.hpp>
#include <linum/pytree/tree_util.hpp>

namespace linum {
struct ShapeDtype;  // autodiff/primitive.hpp
}  // namespace linum

namespace linum::pytree {
// Arrays are the leaves of every pytree the transforms see; eval_shape's ShapeDtype placeholders
// stand in for them.
template <>
struct is_leaf<Array> : std::true_type {};
template <>
struct is_leaf<ShapeDtype> : std::true_type {};
}  // namespace linum::pytree

namespace linum {
// The dynamic pytree of Arrays (runtime-shaped data such as Flax variable collections).
using Tree = pytree::BasicTree<Array>;
}  // namespace linum

namespace linum::detail {

// Arguments that are not pytrees of Arrays: the transforms that trace or re-run a function (jit,
// checkpoint) pass them through by value as static arguments.
template <class A>
constexpr bool always_static_v = std::is_arithmetic_v<A> || std::is_enum_v<A> ||
                                 std::is_convertible_v<const A&, std::string_view>;

template <class T>
Arrays tree_arrays(const T& t) {
  if constexpr (std::is_same_v<T, Array>)
    return Arrays{t};
  else
    return pytree::tree_leaves<Array>(t);
}

// Whether every leaf of T can hold what a transform computes (an Array): an int or a double leaf
// cannot carry a traced or differentiated value.
template <class Leaves>
struct leaves_hold_arrays;
template <class... L>
struct leaves_hold_arrays<pytree::detail::tlist<L...>>
    : std::conjunction<std::disjunction<std::is_same<L, Array>, std::is_same<L, ShapeDtype>,
                                        std::is_constructible<L, const Array&>>...> {};
template <class T>
constexpr void check_array_leaves() {
  if constexpr (!std::is_same_v<T, Array>)
    static_assert(leaves_hold_arrays<decltype(pytree::detail::leaf_types_of<T>())>::value,
                  "linum: a transform rebuilds this value from Arrays, but it has a leaf that is "
                  "not an Array (an int, a double, ...): make that leaf a linum::Array");
}

// A value of T's type and structure whose leaves are `leaves`, in flattening order.
template <class T>
T tree_rebuild(const T& like, const Arrays& leaves) {
  check_array_leaves<T>();
  if constexpr (std::is_same_v<T, Array>)
    return leaves.at(0);
  else
    return pytree::tree_unflatten_like(like, leaves);
}

// Applies f to every leaf of t, keeping t's structure. With further trees `rest`, f also gets
// their matching leaves (or subtrees, where t is a prefix of them), as in pytree::tree_map.
template <class T, class F, class... R>
T tree_apply(const T& t, F&& f, const R&... rest) {
  check_array_leaves<T>();
  if constexpr (std::is_same_v<T, Array>)
    return f(t, rest...);
  else
    return pytree::tree_map([&](const Array& a, const auto&... b) -> Array { return f(a, b...); },
                            t, rest...);
}

// tree_apply for trees that hold placeholders: an empty Array() leaf of t stays empty and f never
// sees it (optim's MaskedNode: the leaves optax.masked leaves out of the inner transformation).
template <class T, class F, class... R>
T tree_apply_skip_empty(const T& t, F&& f, const R&... rest) {
  return tree_apply(
      t,
      [&](const Array& a, const auto&... b) -> Array { return a.valid() ? f(a, b...) : Array(); },
      rest...);
}

}  // namespace linum::detail
