// What a pytree is, at the type level: which C++ types are leaves, which are nodes and of what
// kind, how a user type joins (a Hana struct declaration or one node_traits specialisation),
// and how a leaf converts to the leaf type a flatten asks for.
#pragma once

#include <array>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <unordered_map>
#include <utility>
#include <vector>

#include <boost/hana/accessors.hpp>
#include <boost/hana/at.hpp>
#include <boost/hana/concept/struct.hpp>
#include <boost/hana/define_struct.hpp>
#include <boost/hana/first.hpp>
#include <boost/hana/length.hpp>
#include <boost/hana/pair.hpp>
#include <boost/hana/second.hpp>
#include <boost/hana/string.hpp>

#include <linum/pytree/static_field.hpp>

namespace linum::pytree {

// The node kinds a TreeDef records; BasicTree uses None..EmptyNode, FrozenDict and Box.
enum class NodeKind : unsigned char {
  None,
  Leaf,
  Dict,
  Tuple,
  List,
  EmptyNode,   // flax traverse_util.empty_node: a node without children
  NamedTuple,  // a Hana struct: named children, like an optax state NamedTuple
  FrozenDict,  // flax.core.FrozenDict
  Custom,      // a node_traits specialisation
  TupleDict,   // a dict with tuple-of-string keys: traverse_util.flatten_dict's result
  Box,         // a metadata box (flax.core.meta.AxisMetadata): one child plus static metadata
};

// "dict", "tuple", ... as used in error messages.
std::string_view kind_name(NodeKind k);

namespace detail {

// Builds a message by appending pieces; avoids `"literal" + std::string&&`, on which GCC 12
// raises a false -Wrestrict warning.
inline void cat_into(std::string& out, std::string_view s) { out.append(s); }
template <class I>
requires std::is_integral_v<I>
void cat_into(std::string& out, I i) { out += std::to_string(i); }
template <class... A>
std::string cat(const A&... a) {
  std::string out;
  (cat_into(out, a), ...);
  return out;
}

}  // namespace detail

template <class L>
class BasicTree;
template <class L>
class FrozenDict;
template <class K, class V>
class Dict;

// Declares T a leaf. Arithmetic types are leaves; the autodiff layer adds
// `template <> struct linum::pytree::is_leaf<Array> : std::true_type {};`.
template <class T>
struct is_leaf : std::is_arithmetic<T> {};
template <class T>
inline constexpr bool is_leaf_v = is_leaf<std::remove_cvref_t<T>>::value;

// A user container joins the pytree world with one specialisation (JAX's register_pytree_node):
//
//   template <> struct linum::pytree::node_traits<Point> {
//     static constexpr std::string_view name = "Point";
//     static auto children(const Point& p) { return std::tie(p.x, p.y); }
//     static Point from_children(double x, double y) { return {x, y}; }
//     static constexpr std::array<std::string_view, 2> keys = {"x", "y"};  // optional
//   };
//
// children() returns a std::tuple of the children (references are fine); from_children gets the
// (possibly re-typed, after a leaf-type-changing tree_map) children and builds the node. With
// `keys`, children appear in key paths as GetAttrKey(.x); without, as FlattenedIndexKey([0]).
template <class T>
struct node_traits {};

// Overrides the name under which a Hana struct prints (repr and TreeDef); the default is the
// unqualified C++ name without template arguments.
template <class T>
struct struct_name {};

// How a leaf converts to the leaf type a flatten collects (and back, in tree_unflatten).
// The default is static_cast; specialise for conversions that need more (e.g. Array -> float).
template <class To, class From>
struct LeafCast {
  static To cast(const From& x) { return static_cast<To>(x); }
};

template <class To, class From>
To leaf_cast(From&& x) {
  using F = std::remove_cvref_t<From>;
  if constexpr (std::is_same_v<To, F>) {
    return std::forward<From>(x);
  } else {
    static_assert(
        requires(const F& f) { LeafCast<To, F>::cast(f); },
        "linum::pytree: this leaf type cannot be converted to the requested leaf type; "
        "specialise linum::pytree::LeafCast<To, From>");
    return LeafCast<To, F>::cast(x);
  }
}

namespace detail {

template <class T>
struct is_std_tuple : std::false_type {};
template <class... Ts>
struct is_std_tuple<std::tuple<Ts...>> : std::true_type {};
template <class A, class B>
struct is_std_tuple<std::pair<A, B>> : std::true_type {};
template <class T, std::size_t N>
struct is_std_tuple<std::array<T, N>> : std::true_type {};

template <class T>
struct is_std_vector : std::false_type {};
template <class T, class A>
struct is_std_vector<std::vector<T, A>> : std::true_type {};

template <class T>
struct is_std_optional : std::false_type {};
template <class T>
struct is_std_optional<std::optional<T>> : std::true_type {};

// String-keyed mappings: all flatten as dicts, in sorted-key order.
template <class T>
struct is_string_map : std::false_type {};
template <class V, class C, class A>
struct is_string_map<std::map<std::string, V, C, A>> : std::true_type {};
template <class V, class H, class E, class A>
struct is_string_map<std::unordered_map<std::string, V, H, E, A>> : std::true_type {};
template <class V>
struct is_string_map<Dict<std::string, V>> : std::true_type {};

// Mappings keyed by tuples of strings (flatten_dict without sep): dicts in sorted-key order.
template <class T>
struct is_tuple_key_map : std::false_type {};
template <class V, class C, class A>
struct is_tuple_key_map<std::map<std::vector<std::string>, V, C, A>> : std::true_type {};
template <class V>
struct is_tuple_key_map<Dict<std::vector<std::string>, V>> : std::true_type {};

template <class T>
struct is_basic_tree : std::false_type {};
template <class L>
struct is_basic_tree<BasicTree<L>> : std::true_type {};

template <class T>
struct is_frozen_dict : std::false_type {};
template <class L>
struct is_frozen_dict<FrozenDict<L>> : std::true_type {};

template <class T>
concept CustomNode = requires(const T& t) {
  node_traits<T>::children(t);
};

template <class T>
concept HanaStruct = boost::hana::Struct<T>::value;

enum class Category {
  Leaf,       // declared leaf (or arithmetic)
  Optional,   // std::optional: None when empty, else its value's structure
  Tuple,      // std::tuple / std::pair / std::array
  List,       // std::vector
  Dict,       // std::map / std::unordered_map / Dict with std::string keys
  TupleDict,  // std::map / Dict with std::vector<std::string> keys (flatten_dict's result)
  Struct,     // BOOST_HANA_DEFINE_STRUCT / BOOST_HANA_ADAPT_STRUCT
  Custom,     // node_traits specialisation
  Dynamic,    // BasicTree<L>: kind known at run time
  Frozen,     // FrozenDict<L>
  Invalid,
};

// User declarations win over the built-in categories, then leaves, then containers.
template <class T>
constexpr Category category_of() {
  using U = std::remove_cvref_t<T>;
  if constexpr (CustomNode<U>)
    return Category::Custom;
  else if constexpr (is_leaf_v<U>)
    return Category::Leaf;
  else if constexpr (is_basic_tree<U>::value)
    return Category::Dynamic;
  else if constexpr (is_frozen_dict<U>::value)
    return Category::Frozen;
  else if constexpr (is_std_optional<U>::value)
    return Category::Optional;
  else if constexpr (is_std_tuple<U>::value)
    return Category::Tuple;
  else if constexpr (is_std_vector<U>::value)
    return Category::List;
  else if constexpr (is_string_map<U>::value)
    return Category::Dict;
  else if constexpr (is_tuple_key_map<U>::value)
    return Category::TupleDict;
  else if constexpr (HanaStruct<U>)
    return Category::Struct;
  else
    return Category::Invalid;
}

template <class T>
inline constexpr Category category_v = category_of<T>();

template <class T>
inline constexpr bool is_pytree_v = category_v<T> != Category::Invalid;

// Fails with a readable message when a type is neither a leaf nor a node.
template <class T>
constexpr void check_pytree() {
  static_assert(
      is_pytree_v<T>,
      "linum::pytree: this type is neither a leaf nor a pytree node. Declare a leaf with "
      "`template <> struct linum::pytree::is_leaf<T> : std::true_type {};`, a struct with "
      "BOOST_HANA_DEFINE_STRUCT, or a container with a linum::pytree::node_traits<T> "
      "specialisation");
}

// --- Hana structs -------------------------------------------------------------------------------

template <class T>
inline constexpr std::size_t struct_size_v =
    decltype(boost::hana::length(boost::hana::accessors<T>()))::value;

template <std::size_t I, class T>
decltype(auto) struct_field(T& t) {
  return boost::hana::second(
      boost::hana::at_c<I>(boost::hana::accessors<std::remove_const_t<T>>()))(t);
}

template <std::size_t I, class T>
const char* struct_field_name() {
  return boost::hana::to<const char*>(
      boost::hana::first(boost::hana::at_c<I>(boost::hana::accessors<T>())));
}

template <class T, std::size_t I>
using struct_field_t = std::remove_cvref_t<decltype(struct_field<I>(std::declval<const T&>()))>;

// Demangles a typeid name and keeps the unqualified name without template arguments.
std::string short_type_name(const char* mangled);

template <class T>
std::string_view type_name() {
  if constexpr (requires { std::string_view(struct_name<T>::value); }) {
    return struct_name<T>::value;
  } else if constexpr (requires { std::string_view(node_traits<T>::name); }) {
    return node_traits<T>::name;
  } else {
    static const std::string name = short_type_name(typeid(T).name());
    return name;
  }
}

// --- custom nodes -------------------------------------------------------------------------------

template <class T>
using custom_children_t = decltype(node_traits<T>::children(std::declval<const T&>()));

template <class T>
inline constexpr std::size_t custom_size_v =
    std::tuple_size_v<std::remove_cvref_t<custom_children_t<T>>>;

template <class T, std::size_t I>
using custom_child_t =
    std::remove_cvref_t<std::tuple_element_t<I, std::remove_cvref_t<custom_children_t<T>>>>;

template <class T>
constexpr bool custom_has_keys() {
  return requires { node_traits<T>::keys; };
}

// --- type lists ---------------------------------------------------------------------------------

template <class... Ts>
struct tlist {};

template <class A, class B>
struct tconcat;
template <class... As, class... Bs>
struct tconcat<tlist<As...>, tlist<Bs...>> {
  using type = tlist<As..., Bs...>;
};

}  // namespace detail
}  // namespace linum::pytree
