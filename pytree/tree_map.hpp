// tree_map and tree_map_with_path over one or several trees (the leaf type may change:
// containers and Hana structs are re-typed), and tree_unflatten_like. Tree 0 may be a prefix
// of the others, as in JAX; mismatches name the key path.
#pragma once

#include <array>
#include <cstddef>
#include <map>
#include <optional>
#include <ranges>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include <linum/error.hpp>
#include <linum/pytree/callable_traits.hpp>
#include <linum/pytree/describe.hpp>
#include <linum/pytree/flatten.hpp>
#include <linum/pytree/frozen_dict.hpp>
#include <linum/pytree/key_path.hpp>
#include <linum/pytree/retype.hpp>
#include <linum/pytree/traits.hpp>
#include <linum/pytree/tree.hpp>
#include <linum/pytree/unflatten.hpp>

namespace linum::pytree {
namespace detail {

// ================================================================================================
// map: walks tree 0 and the other trees in lockstep. At each leaf of tree 0 the function gets
// that leaf and whatever the other trees hold there (a leaf, or a whole subtree: tree 0 may be
// a prefix of the others, as in JAX). The result has tree 0's structure with the function's
// results as leaves; containers are re-typed (std::vector<Array> -> std::vector<Shape>).
// ================================================================================================

struct MapCtx : PathCtx {
  const char* fn;

  [[noreturn]] void mismatch(std::size_t k, const std::string& have0,
                             const std::string& havek) const {
    throw ValueError(cat(fn, ": tree structures do not match at ", where(), ": tree 0 has ", have0,
                         ", tree ", k, " has ", havek));
  }
};

// Calls the user function; PathCall puts the key path first (tree_map_with_path).
template <class F>
struct PlainCall {
  F& f;
  static constexpr std::size_t kOffset = 0;
  template <class... A>
  auto operator()(MapCtx&, const A&... a) -> std::decay_t<decltype(f(a...))> {
    return f(a...);
  }
};
template <class F>
struct PathCall {
  F& f;
  static constexpr std::size_t kOffset = 1;
  template <class... A>
  auto operator()(MapCtx& cx, const A&... a)
      -> std::decay_t<decltype(f(std::declval<const KeyPath&>(), a...))> {
    return f(to_key_path(cx.path), a...);
  }
};

template <class Call>
struct call_fn;
template <class F>
struct call_fn<PlainCall<F>> {
  using type = F;
};
template <class F>
struct call_fn<PathCall<F>> {
  using type = F;
};

// What tree K passes to the function at a leaf of tree 0: itself, or its leaf when it is a
// dynamic tree and the function's parameter is not a Tree.
template <class Call, std::size_t K, class T>
decltype(auto) leaf_arg(MapCtx& cx, const T& t) {
  if constexpr (is_basic_tree<T>::value &&
                !param_wants_tree<typename call_fn<Call>::type, Call::kOffset + K>()) {
    if (!t.is_leaf()) cx.mismatch(K, "a leaf", describe(t));
    return t.leaf();
  } else {
    return (t);
  }
}

template <class Call, class T0, class... Ts>
auto call_leaf(Call& call, MapCtx& cx, const T0& t0, const Ts&... ts) {
  return [&]<std::size_t... K>(std::index_sequence<K...>) {
    using R = decltype(call(cx, t0, leaf_arg<Call, K + 1>(cx, ts)...));
    static_assert(!std::is_void_v<R>, "tree_map: the function must return a value");
    return call(cx, t0, leaf_arg<Call, K + 1>(cx, ts)...);
  }
  (std::index_sequence_for<Ts...>{});
}

template <class T>
struct unopt {
  using type = T;
};
template <class T>
struct unopt<std::optional<T>> {
  using type = T;
};
template <class T>
using unopt_t = typename unopt<T>::type;

// Static shape checks that must not instantiate size traits of the wrong category.
template <class T, std::size_t N>
constexpr bool tuple_compatible() {
  if constexpr (category_v<T> == Category::Dynamic)
    return true;
  else if constexpr (category_v<T> == Category::Tuple)
    return std::tuple_size_v<T> == N;
  else
    return false;
}
template <class T, std::size_t N>
constexpr bool struct_compatible() {
  if constexpr (category_v<T> == Category::Struct)
    return struct_size_v<T> == N;
  else
    return false;
}
template <class T, std::size_t N>
constexpr bool custom_compatible() {
  if constexpr (category_v<T> == Category::Custom)
    return custom_size_v<T> == N;
  else
    return false;
}

template <class Call, class T0, class... Ts>
auto map_rec(Call& call, MapCtx& cx, const T0& t0, const Ts&... ts);

template <class Call, class L0, class... Ls>
auto map_dynamic(Call& call, MapCtx& cx, const BasicTree<L0>& t0, const BasicTree<Ls>&... ts)
    -> BasicTree<decltype(call_leaf(call, cx, std::declval<const L0&>(),
                                    std::declval<const BasicTree<Ls>&>()...))>;

// Checks that every other tree holds a node matching tree 0's; Same(k, t) says whether it does.
template <class Same, class T0, class... Ts>
void check_others([[maybe_unused]] MapCtx& cx, [[maybe_unused]] const T0& t0,
                  [[maybe_unused]] Same same, const Ts&... ts) {
  [[maybe_unused]] std::size_t k = 0;
  ((++k, same(ts) ? void() : cx.mismatch(k, describe(t0), describe(ts))), ...);
}

template <class T0, class... Ts>
void check_dict_keys(MapCtx& cx, const T0& t0, const Ts&... ts) {
  auto same_keys = [&](const auto& d) {
    if (d.size() != t0.size()) return false;
    for (const auto& kv : t0) {
      if (!d.contains(kv.first)) return false;
    }
    return true;
  };
  check_others(
      cx, t0,
      [&](const auto& t) {
        using T = std::remove_cvref_t<decltype(t)>;
        if constexpr (is_basic_tree<T>::value)
          return t.is_dict() && same_keys(t.as_dict());
        else if constexpr (is_frozen_dict<T>::value)
          return same_keys(t.dict());
        else
          return same_keys(t);
      },
      ts...);
}

template <class T>
const auto& dict_child(const T& t, std::string_view key) {
  if constexpr (is_basic_tree<T>::value)
    return t.as_dict().find(key)->second;
  else if constexpr (is_frozen_dict<T>::value)
    return t.find(key)->second;
  else if constexpr (requires { t.find(key); })
    return t.find(key)->second;
  else
    return t.find(std::string(key))->second;
}

template <class T>
using dict_child_t = std::remove_cvref_t<decltype(dict_child(std::declval<const T&>(), ""))>;

template <std::size_t I, class T>
const auto& seq_child(const T& t) {
  if constexpr (is_basic_tree<T>::value)
    return t.items()[I];
  else
    return std::get<I>(t);
}
template <class T>
const auto& list_child(const T& t, std::size_t i) {
  if constexpr (is_basic_tree<T>::value)
    return t.items()[i];
  else
    return t[i];
}
template <class T>
using list_child_t = std::remove_cvref_t<decltype(list_child(std::declval<const T&>(), 0))>;

// Whether two structs hold equal static fields (JAX: the aux data of both trees compare ==).
template <class A, class B>
bool same_statics(const A& a, const B& b) {
  if constexpr (static_size_v<A> != static_size_v<B>) {
    return false;
  } else {
    return [&]<std::size_t... J>(std::index_sequence<J...>) {
      auto one = [&]<std::size_t K>(std::integral_constant<std::size_t, K>) {
        if constexpr (!std::is_same_v<static_field_t<A, K>, static_field_t<B, K>>) {
          return false;
        } else {
          return std::string_view(static_field<K, A>().name) ==
                     std::string_view(static_field<K, B>().name) &&
                 static_equal(a.*(static_field<K, A>().ptr), b.*(static_field<K, B>().ptr));
        }
      };
      return (one(std::integral_constant<std::size_t, J>{}) && ...);
    }
    (std::make_index_sequence<static_size_v<A>>{});
  }
}

// A mapped struct keeps tree 0's static fields.
template <class T0, class R>
void copy_statics(const T0& t0, R& out) {
  static_assert(static_size_v<R> == static_size_v<T0>);
  [&]<std::size_t... J>(std::index_sequence<J...>) {
    static_assert(
        (std::is_assignable_v<static_field_t<R, J>&, const static_field_t<T0, J>&> && ...),
        "tree_map changes leaf types inside a struct whose static fields' types depend "
        "on them (substituting the struct's template arguments re-typed a static "
        "field); keep the leaf types or make the static field's type independent");
    ((out.*(static_field<J, R>().ptr) = t0.*(static_field<J, T0>().ptr)), ...);
  }
  (std::make_index_sequence<static_size_v<T0>>{});
}

template <class Call, class T0, class... Ts>
auto map_rec(Call& call, MapCtx& cx, const T0& t0, const Ts&... ts) {
  constexpr Category c = category_v<T0>;
  check_pytree<T0>();
  if constexpr (c == Category::Leaf) {
    return call_leaf(call, cx, t0, ts...);
  } else if constexpr (c != Category::Optional && (is_std_optional<Ts>::value || ...)) {
    // Another tree holds an optional where tree 0 has a node: it must be engaged.
    auto unwrap = [&]<std::size_t K, class T>(std::integral_constant<std::size_t, K>,
                                              const T& t) -> const unopt_t<T>& {
      if constexpr (is_std_optional<T>::value) {
        if (!t) cx.mismatch(K, describe(t0), "None");
        return *t;
      } else {
        return t;
      }
    };
    return [&]<std::size_t... K>(std::index_sequence<K...>) {
      return map_rec(call, cx, t0, unwrap(std::integral_constant<std::size_t, K + 1>{}, ts)...);
    }
    (std::index_sequence_for<Ts...>{});
  } else if constexpr (c == Category::Optional) {
    using U = typename T0::value_type;
    using R = decltype(map_rec(call, cx, std::declval<const U&>(),
                               std::declval<const unopt_t<Ts>&>()...));
    if (!t0) {
      check_others(
          cx, t0,
          [](const auto& t) {
            using T = std::remove_cvref_t<decltype(t)>;
            if constexpr (is_std_optional<T>::value)
              return !t.has_value();
            else if constexpr (is_basic_tree<T>::value)
              return t.is_none();
            else
              return false;
          },
          ts...);
      return std::optional<R>();
    }
    auto unwrap = [&]<std::size_t K, class T>(std::integral_constant<std::size_t, K>,
                                              const T& t) -> const unopt_t<T>& {
      if constexpr (is_std_optional<T>::value) {
        if (!t) cx.mismatch(K, describe(*t0), "None");
        return *t;
      } else {
        return t;
      }
    };
    return [&]<std::size_t... K>(std::index_sequence<K...>) {
      return std::optional<R>(
          map_rec(call, cx, *t0, unwrap(std::integral_constant<std::size_t, K + 1>{}, ts)...));
    }
    (std::index_sequence_for<Ts...>{});
  } else if constexpr (c == Category::Tuple) {
    constexpr std::size_t n = std::tuple_size_v<T0>;
    static_assert((tuple_compatible<Ts, n>() && ...),
                  "tree_map: where tree 0 has a tuple, every other tree must have a tuple of the "
                  "same size (or a dynamic Tree) too");
    check_others(
        cx, t0,
        [&](const auto& t) {
          if constexpr (is_basic_tree<std::remove_cvref_t<decltype(t)>>::value) {
            return t.is_tuple() && t.size() == n;
          } else {
            return true;
          }
        },
        ts...);
    auto one = [&]<std::size_t I>(std::integral_constant<std::size_t, I>) {
      return cx.child(KeyRef::seq(I),
                      [&] { return map_rec(call, cx, std::get<I>(t0), seq_child<I>(ts)...); });
    };
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      if constexpr (requires { typename T0::first_type; }) {
        using P = std::pair<decltype(one(std::integral_constant<std::size_t, I>{}))...>;
        return P{one(std::integral_constant<std::size_t, I>{})...};
      } else if constexpr (requires { typename T0::value_type; }) {
        using E = decltype(one(std::integral_constant<std::size_t, 0>{}));
        static_assert(
            (std::is_same_v<E, decltype(one(std::integral_constant<std::size_t, I>{}))> && ...),
            "tree_map: the elements of a std::array map to different types");
        return std::array<E, n>{one(std::integral_constant<std::size_t, I>{})...};
      } else {
        using Tup = std::tuple<decltype(one(std::integral_constant<std::size_t, I>{}))...>;
        return Tup{one(std::integral_constant<std::size_t, I>{})...};
      }
    }
    (std::make_index_sequence<n>{});
  } else if constexpr (c == Category::List) {
    static_assert(
        ((category_v<Ts> == Category::List || category_v<Ts> == Category::Dynamic) && ...),
        "tree_map: where tree 0 has a std::vector, every other tree must have a "
        "std::vector (or a dynamic Tree) too");
    check_others(
        cx, t0,
        [&](const auto& t) {
          if constexpr (is_basic_tree<std::remove_cvref_t<decltype(t)>>::value) {
            return t.is_list() && t.size() == t0.size();
          } else {
            return t.size() == t0.size();
          }
        },
        ts...);
    using R = decltype(map_rec(call, cx, std::declval<const typename T0::value_type&>(),
                               std::declval<const list_child_t<Ts>&>()...));
    std::vector<R> out;
    out.reserve(t0.size());
    for (std::size_t i = 0; i < t0.size(); ++i) {
      out.push_back(
          cx.child(KeyRef::seq(i), [&] { return map_rec(call, cx, t0[i], list_child(ts, i)...); }));
    }
    return out;
  } else if constexpr (c == Category::Dict) {
    static_assert(
        ((category_v<Ts> == Category::Dict || category_v<Ts> == Category::Dynamic) && ...),
        "tree_map: where tree 0 has a dict, every other tree must have a dict (or a "
        "dynamic Tree) too");
    check_dict_keys(cx, t0, ts...);
    using R = decltype(map_rec(call, cx, std::declval<const typename T0::mapped_type&>(),
                               std::declval<const dict_child_t<Ts>&>()...));
    typename rebind_dict<T0, R>::type out;
    for (auto* kv : sorted_entries(t0)) {
      auto v = cx.child(KeyRef::dict(kv->first), [&] {
        return map_rec(call, cx, kv->second, dict_child(ts, kv->first)...);
      });
      out.insert_or_assign(kv->first, std::move(v));
    }
    return out;
  } else if constexpr (c == Category::TupleDict) {
    static_assert((is_tuple_key_map<Ts>::value && ...),
                  "tree_map: where tree 0 has a dict with tuple keys, every other tree must have "
                  "one too");
    check_dict_keys(cx, t0, ts...);
    using R = decltype(map_rec(call, cx, std::declval<const typename T0::mapped_type&>(),
                               std::declval<const typename Ts::mapped_type&>()...));
    typename rebind_dict<T0, R>::type out;
    for (auto* kv : sorted_entries(t0)) {
      auto v = cx.child(KeyRef::tuple_dict(kv->first), [&] {
        return map_rec(call, cx, kv->second, ts.find(kv->first)->second...);
      });
      out.insert_or_assign(kv->first, std::move(v));
    }
    return out;
  } else if constexpr (c == Category::Frozen) {
    static_assert((is_frozen_dict<Ts>::value && ...),
                  "tree_map: where tree 0 has a FrozenDict, every other tree must have a "
                  "FrozenDict too");
    check_dict_keys(cx, t0, ts...);
    using R = typename decltype(map_dynamic(
        call, cx, std::declval<const BasicTree<typename T0::leaf_type>&>(),
        std::declval<const BasicTree<typename Ts::leaf_type>&>()...))::leaf_type;
    typename FrozenDict<R>::dict_type out;
    for (std::size_t pos : t0.sorted_positions()) {
      const auto& kv = *(t0.begin() + static_cast<std::ptrdiff_t>(pos));
      out.insert_or_assign(kv.first, cx.child(KeyRef::dict(kv.first), [&] {
        return map_dynamic(call, cx, kv.second, dict_child(ts, kv.first)...);
      }));
    }
    return FrozenDict<R>(std::move(out));
  } else if constexpr (c == Category::Dynamic) {
    static_assert((is_basic_tree<Ts>::value && ...),
                  "tree_map: where tree 0 has a dynamic Tree, every other tree must have a dynamic "
                  "Tree too");
    return map_dynamic(call, cx, t0, ts...);
  } else if constexpr (c == Category::Struct) {
    constexpr std::size_t n = struct_size_v<T0>;
    static_assert((struct_compatible<Ts, n>() && ...),
                  "tree_map: where tree 0 has a Hana struct, every other tree must have a Hana "
                  "struct with as many fields");
    check_others(
        cx, t0,
        [&](const auto& t) {
          using T = std::remove_cvref_t<decltype(t)>;
          return [&]<std::size_t... I>(std::index_sequence<I...>) {
            return ((std::string_view(struct_field_name<I, T>()) ==
                     std::string_view(struct_field_name<I, T0>())) &&
                    ...);
          }
          (std::make_index_sequence<n>{});
        },
        ts...);
    if constexpr (static_size_v < T0 >> 0) {
      std::size_t k = 0;
      ((++k, same_statics(t0, ts) ? void()
                                  : cx.mismatch(k, cat("a namedtuple ", type_name<T0>()),
                                                cat("a namedtuple ", type_name<Ts>(),
                                                    " whose static fields differ"))),
       ...);
    }
    auto one = [&]<std::size_t I>(std::integral_constant<std::size_t, I>) {
      return cx.child(KeyRef::attr(struct_field_name<I, T0>()), [&] {
        return map_rec(call, cx, struct_field<I>(t0), struct_field<I>(ts)...);
      });
    };
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      using Fields = std::tuple<decltype(one(std::integral_constant<std::size_t, I>{}))...>;
      constexpr bool unchanged =
          (std::is_same_v<std::tuple_element_t<I, Fields>, struct_field_t<T0, I>> && ...);
      using R = std::conditional_t<
          unchanged, T0,
          typename subst_args<T0, tlist<subst_pair<struct_field_t<T0, I>,
                                                   std::tuple_element_t<I, Fields>>...>>::type>;
      constexpr bool rebound = [] {
        if constexpr (unchanged)
          return true;
        else if constexpr (!HanaStruct<R> || std::is_same_v<R, T0>)
          return false;
        else
          return (std::is_same_v<struct_field_t<R, I>, std::tuple_element_t<I, Fields>> && ...);
      }();
      static_assert(rebound,
                    "tree_map changes leaf types inside a Hana struct, and substituting the "
                    "struct's template arguments does not give the new field types. Make the "
                    "struct a template over its field types (template <class P> struct State "
                    "{ P mu; ... }) or keep the leaf types");
      Fields fields{one(std::integral_constant<std::size_t, I>{})...};
      if constexpr (rebound) {
        R out = assemble_struct<R>(std::move(fields), std::index_sequence<I...>{});
        copy_statics(t0, out);
        return out;
      } else {
        return T0();
      }
    }
    (std::make_index_sequence<n>{});
  } else if constexpr (c == Category::Custom) {
    constexpr std::size_t n = custom_size_v<T0>;
    static_assert((custom_compatible<Ts, n>() && ...),
                  "tree_map: where tree 0 has a custom node, every other tree must have a custom "
                  "node with as many children");
    check_others(
        cx, t0,
        [&](const auto& t) {
          return type_name<std::remove_cvref_t<decltype(t)>>() == type_name<T0>();
        },
        ts...);
    auto c0 = node_traits<T0>::children(t0);
    auto cs = std::make_tuple(node_traits<Ts>::children(ts)...);
    auto one = [&]<std::size_t I>(std::integral_constant<std::size_t, I>) {
      return cx.child(custom_key<T0, I>(), [&] {
        return std::apply(
            [&](const auto&... other) {
              return map_rec(call, cx, std::get<I>(c0), std::get<I>(other)...);
            },
            cs);
      });
    };
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      std::tuple<decltype(one(std::integral_constant<std::size_t, I>{}))...> mapped{
          one(std::integral_constant<std::size_t, I>{})...};
      return std::apply(
          [](auto&&... xs) { return node_traits<T0>::from_children(std::move(xs)...); },
          std::move(mapped));
    }
    (std::make_index_sequence<n>{});
  }
}

template <class Call, class L0, class... Ls>
auto map_dynamic(Call& call, MapCtx& cx, const BasicTree<L0>& t0, const BasicTree<Ls>&... ts)
    -> BasicTree<decltype(call_leaf(call, cx, std::declval<const L0&>(),
                                    std::declval<const BasicTree<Ls>&>()...))> {
  using Out = BasicTree<decltype(call_leaf(call, cx, std::declval<const L0&>(),
                                           std::declval<const BasicTree<Ls>&>()...))>;
  const NodeKind kind = t0.kind();
  if (kind == NodeKind::Leaf) return Out(call_leaf(call, cx, t0.leaf(), ts...));
  // Other trees may hold a whole subtree at a leaf of tree 0, never a different node.
  check_others(
      cx, t0,
      [&](const auto& t) {
        if (t.kind() != kind) return false;
        if (kind == NodeKind::Tuple || kind == NodeKind::List) return t.size() == t0.size();
        if (kind == NodeKind::Box) return BoxRef{t.box_metadata()} == BoxRef{t0.box_metadata()};
        return true;
      },
      ts...);
  switch (kind) {
    case NodeKind::None:
      return Out();
    case NodeKind::EmptyNode:
      return Out(empty_node);
    case NodeKind::Dict:
    case NodeKind::FrozenDict: {
      // A FrozenDict node stays frozen, a plain dict plain (JAX keeps each node's type).
      check_dict_keys(cx, t0.as_mapping(), ts.as_mapping()...);
      typename Out::dict_type out;
      const auto& d = t0.as_mapping();
      for (std::size_t pos : d.sorted_positions()) {
        const auto& kv = *(d.begin() + static_cast<std::ptrdiff_t>(pos));
        out.insert_or_assign(kv.first, cx.child(KeyRef::dict(kv.first), [&] {
          return map_dynamic(call, cx, kv.second, ts.as_mapping().find(kv.first)->second...);
        }));
      }
      if (kind == NodeKind::FrozenDict)
        return Out(FrozenDict<typename Out::leaf_type>(std::move(out)));
      return Out(std::move(out));
    }
    case NodeKind::Box:  // the value is mapped, the metadata kept (a pytree_node=False field)
      return Out::box(t0.box_metadata(), cx.child(KeyRef::attr("value"), [&] {
        return map_dynamic(call, cx, t0.box_value(), ts.box_value()...);
      }));
    default: {
      typename Out::seq_type out;
      out.reserve(t0.size());
      const auto& s = t0.items();
      for (std::size_t i = 0; i < s.size(); ++i) {
        out.push_back(cx.child(KeyRef::seq(i),
                               [&] { return map_dynamic(call, cx, s[i], ts.items()[i]...); }));
      }
      return kind == NodeKind::Tuple ? Out::tuple(std::move(out)) : Out::list(std::move(out));
    }
  }
}

}  // namespace detail

// f applied to each leaf of `tree`, with the corresponding leaves (or subtrees) of `rest`.
template <class F, class T, class... Rest>
auto tree_map(F&& f, const T& tree, const Rest&... rest) {
  detail::MapCtx cx{{}, "tree_map"};
  detail::PlainCall<std::remove_reference_t<F>> call{f};
  return detail::map_rec(call, cx, tree, rest...);
}

// f(key_path, leaf, other leaves...).
template <class F, class T, class... Rest>
auto tree_map_with_path(F&& f, const T& tree, const Rest&... rest) {
  detail::MapCtx cx{{}, "tree_map_with_path"};
  detail::PathCall<std::remove_reference_t<F>> call{f};
  return detail::map_rec(call, cx, tree, rest...);
}

// The same structure and leaf types as `like`, with leaves taken in order from `leaves`.
template <class T, class Range>
T tree_unflatten_like(const T& like, Range&& leaves) {
  auto it = std::ranges::begin(leaves);
  auto last = std::ranges::end(leaves);
  std::size_t used = 0;
  T out = tree_map(
      [&](const auto& x) {
        using X = std::remove_cvref_t<decltype(x)>;
        if (it == last) {
          throw ValueError(
              detail::cat("tree_unflatten_like: too few leaves (", used, ") for the structure"));
        }
        ++used;
        return leaf_cast<X>(*it++);
      },
      like);
  if (it != last) {
    throw ValueError(
        detail::cat("tree_unflatten_like: the structure has ", used, " leaves, got more"));
  }
  return out;
}

}  // namespace linum::pytree
