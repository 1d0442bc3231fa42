// jax.tree_util for C++ types: tree_leaves, tree_flatten, tree_unflatten, tree_structure,
// tree_map (over several trees, leaf type may change), tree_map_with_path, tree_reduce,
// tree_all, over every pytree kind of traits.hpp (static containers, Hana structs, custom
// nodes, the dynamic BasicTree and FrozenDict). Order is JAX's: dicts by sorted key.
#pragma once

#include <cstddef>
#include <iterator>
#include <optional>
#include <ranges>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <linum/error.hpp>
#include <linum/pytree/frozen_dict.hpp>
#include <linum/pytree/key_path.hpp>
#include <linum/pytree/traits.hpp>
#include <linum/pytree/tree.hpp>
#include <linum/pytree/treedef.hpp>

namespace linum::pytree {
namespace detail {

// ================================================================================================
// Leaf types of a static tree type, and the default leaf type a flatten collects.
// ================================================================================================

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
  else if constexpr (c == Category::Dict)
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

// ================================================================================================
// walk: one pre-order pass over a single tree, reporting leaves (and, on demand, the structure
// and the key path) to a visitor.
// ================================================================================================

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
    case NodeKind::Dict: {
      const auto& d = t.as_dict();
      const auto order = d.sorted_positions();
      const std::size_t node = v.begin(NodeKind::Dict, d.size());
      for (std::size_t pos : order)
        v.data(node, (d.begin() + static_cast<std::ptrdiff_t>(pos))->first);
      for (std::size_t pos : order) {
        const auto& kv = *(d.begin() + static_cast<std::ptrdiff_t>(pos));
        v.child(KeyRef::dict(kv.first), [&] { walk_dynamic(v, kv.second); });
      }
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
  } else if constexpr (c == Category::Struct) {
    constexpr std::size_t n = struct_size_v<T>;
    const std::size_t node = v.begin(NodeKind::NamedTuple, n);
    if constexpr (V::kStructure) {
      v.data(node, type_name<T>());
      [&]<std::size_t... I>(std::index_sequence<I...>) {
        (v.data(node, struct_field_name<I, T>()), ...);
      }
      (std::make_index_sequence<n>{});
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

// ================================================================================================
// unflatten: rebuild a C++ type from a TreeDef and leaves, walking the type and the TreeDef
// together; the TreeDef supplies only what the type leaves open (sizes, keys, None or not).
// ================================================================================================

template <class It>
struct LeafSource {
  It it;
  bool move;
  template <class To>
  To next() {
    if (move) return leaf_cast<To>(std::move(*it++));
    return leaf_cast<To>(*it++);
  }
};

struct UnflattenCtx {
  const TreeDef& def;
  std::size_t pos = 0;
  std::vector<KeyRef> path;

  const TreeDef::Node& node() const { return def.nodes()[pos]; }

  [[noreturn]] void mismatch(const std::string& want) const {
    throw ValueError(cat("tree_unflatten: the treedef has ", describe_node(def, node()), " at ",
                         where(), " where the target type has ", want,
                         "; treedef: ", def.to_string()));
  }
  std::string where() const { return path.empty() ? "the root" : keystr(path); }
  void expect(NodeKind kind, std::size_t arity, const char* what) const {
    if (node().kind != kind || (arity != std::size_t(-1) && node().arity != arity)) {
      mismatch(arity != std::size_t(-1) ? cat(what, " of ", arity) : std::string(what));
    }
  }
  template <class Fn>
  decltype(auto) child(KeyRef key, Fn&& fn) {
    path.push_back(key);
    decltype(auto) r = fn();
    path.pop_back();
    return r;
  }
};

// A Hana struct from its field values: default-construct and assign, which works whatever else
// the struct declares; aggregates without a default constructor are brace-initialised.
template <class T, class Tuple, std::size_t... I>
T assemble_struct(Tuple&& fields, std::index_sequence<I...>) {
  if constexpr (std::is_default_constructible_v<T>) {
    T out{};
    ((struct_field<I>(out) = std::get<I>(std::move(fields))), ...);
    return out;
  } else {
    static_assert(std::is_aggregate_v<T>,
                  "linum::pytree: a Hana struct must be default-constructible (or an aggregate of "
                  "its fields) to be rebuilt from leaves");
    return T{std::get<I>(std::move(fields))...};
  }
}

template <class T, class Src>
T build(UnflattenCtx& cx, Src& src);

template <class L, class Src>
BasicTree<L> build_dynamic(UnflattenCtx& cx, Src& src) {
  const TreeDef::Node& n = cx.node();
  const std::size_t here = cx.pos++;
  switch (n.kind) {
    case NodeKind::Leaf:
      return BasicTree<L>(src.template next<L>());
    case NodeKind::None:
      return BasicTree<L>();
    case NodeKind::EmptyNode:
      return BasicTree<L>(empty_node);
    case NodeKind::Dict: {
      typename BasicTree<L>::dict_type d;
      for (std::uint32_t i = 0; i < n.arity; ++i) {
        const std::string_view key = cx.def.data(cx.def.nodes()[here], i);
        d.insert_or_assign(std::string(key),
                           cx.child(KeyRef::dict(key), [&] { return build_dynamic<L>(cx, src); }));
      }
      return BasicTree<L>(std::move(d));
    }
    case NodeKind::Tuple:
    case NodeKind::List: {
      typename BasicTree<L>::seq_type s;
      s.reserve(n.arity);
      const NodeKind kind = n.kind;
      for (std::uint32_t i = 0; i < n.arity; ++i) {
        s.push_back(cx.child(KeyRef::seq(i), [&] { return build_dynamic<L>(cx, src); }));
      }
      return kind == NodeKind::Tuple ? BasicTree<L>::tuple(std::move(s))
                                     : BasicTree<L>::list(std::move(s));
    }
    default:
      --cx.pos;
      throw TypeError(cat("tree_unflatten: a dynamic Tree cannot hold ", describe_node(cx.def, n),
                          " (at ", cx.where(),
                          "); unflatten into the C++ type instead: "
                          "tree_unflatten<T>(treedef, leaves)"));
  }
}

template <class T, class Src>
T build(UnflattenCtx& cx, Src& src) {
  constexpr Category c = category_v<T>;
  check_pytree<T>();
  if constexpr (c == Category::Leaf) {
    cx.expect(NodeKind::Leaf, 0, "a leaf");
    ++cx.pos;
    return src.template next<T>();
  } else if constexpr (c == Category::Optional) {
    if (cx.node().kind == NodeKind::None) {
      ++cx.pos;
      return T();
    }
    return T(build<typename T::value_type>(cx, src));
  } else if constexpr (c == Category::Tuple) {
    constexpr std::size_t n = std::tuple_size_v<T>;
    cx.expect(NodeKind::Tuple, n, "a tuple");
    ++cx.pos;
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      // Braced initialisation evaluates left to right, which is the leaf order.
      if constexpr (
          is_std_tuple<T>::value && requires { typename T::value_type; } &&
          !requires { typename T::first_type; }) {
        using E = typename T::value_type;
        return T{cx.child(KeyRef::seq(I), [&] { return build<E>(cx, src); })...};
      } else {
        return T{cx.child(KeyRef::seq(I),
                          [&] { return build<std::tuple_element_t<I, T>>(cx, src); })...};
      }
    }
    (std::make_index_sequence<n>{});
  } else if constexpr (c == Category::List) {
    cx.expect(NodeKind::List, std::size_t(-1), "a list");
    const std::size_t n = cx.node().arity;
    ++cx.pos;
    T out;
    out.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
      out.push_back(
          cx.child(KeyRef::seq(i), [&] { return build<typename T::value_type>(cx, src); }));
    }
    return out;
  } else if constexpr (c == Category::Dict) {
    cx.expect(NodeKind::Dict, std::size_t(-1), "a dict");
    const std::size_t here = cx.pos++;
    const std::size_t n = cx.def.nodes()[here].arity;
    T out;
    for (std::size_t i = 0; i < n; ++i) {
      const std::string_view key = cx.def.data(cx.def.nodes()[here], i);
      auto value =
          cx.child(KeyRef::dict(key), [&] { return build<typename T::mapped_type>(cx, src); });
      out.insert_or_assign(std::string(key), std::move(value));
    }
    return out;
  } else if constexpr (c == Category::Frozen) {
    cx.expect(NodeKind::FrozenDict, std::size_t(-1), "a FrozenDict");
    const std::size_t here = cx.pos++;
    const std::size_t n = cx.def.nodes()[here].arity;
    typename T::dict_type d;
    for (std::size_t i = 0; i < n; ++i) {
      const std::string_view key = cx.def.data(cx.def.nodes()[here], i);
      d.insert_or_assign(std::string(key), cx.child(KeyRef::dict(key), [&] {
        return build_dynamic<typename T::leaf_type>(cx, src);
      }));
    }
    return T(std::move(d));
  } else if constexpr (c == Category::Dynamic) {
    return build_dynamic<typename T::leaf_type>(cx, src);
  } else if constexpr (c == Category::Struct) {
    constexpr std::size_t n = struct_size_v<T>;
    const TreeDef::Node& node = cx.node();
    bool same = node.kind == NodeKind::NamedTuple && node.arity == n &&
                cx.def.data(node, 0) == type_name<T>();
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      same = same && ((cx.def.data(node, I + 1) == struct_field_name<I, T>()) && ...);
    }
    (std::make_index_sequence<n>{});
    if (!same) cx.mismatch(cat("a namedtuple ", type_name<T>()));
    ++cx.pos;
    auto fields = [&]<std::size_t... I>(std::index_sequence<I...>) {
      return std::tuple<struct_field_t<T, I>...>{
          cx.child(KeyRef::attr(struct_field_name<I, T>()),
                   [&] { return build<struct_field_t<T, I>>(cx, src); })...};
    }
    (std::make_index_sequence<n>{});
    return assemble_struct<T>(std::move(fields), std::make_index_sequence<n>{});
  } else if constexpr (c == Category::Custom) {
    constexpr std::size_t n = custom_size_v<T>;
    const TreeDef::Node& node = cx.node();
    if (node.kind != NodeKind::Custom || node.arity != n ||
        cx.def.data(node, 0) != type_name<T>()) {
      cx.mismatch(cat("a custom node ", type_name<T>(), " of ", n));
    }
    ++cx.pos;
    auto children = [&]<std::size_t... I>(std::index_sequence<I...>) {
      return std::tuple<custom_child_t<T, I>...>{
          cx.child(custom_key<T, I>(), [&] { return build<custom_child_t<T, I>>(cx, src); })...};
    }
    (std::make_index_sequence<n>{});
    return std::apply([](auto&&... xs) { return node_traits<T>::from_children(std::move(xs)...); },
                      std::move(children));
  }
}

// ================================================================================================
// map: walks tree 0 and the other trees in lockstep. At each leaf of tree 0 the function gets
// that leaf and whatever the other trees hold there (a leaf, or a whole subtree: tree 0 may be
// a prefix of the others, as in JAX). The result has tree 0's structure with the function's
// results as leaves; containers are re-typed (std::vector<Array> -> std::vector<Shape>).
// ================================================================================================

struct MapCtx {
  const char* fn;
  std::vector<KeyRef> path;

  std::string where() const { return path.empty() ? "the root" : keystr(path); }
  template <class Fn>
  decltype(auto) child(KeyRef key, Fn&& fn) {
    path.push_back(key);
    decltype(auto) r = fn();
    path.pop_back();
    return r;
  }
  [[noreturn]] void mismatch(std::size_t k, const std::string& have0,
                             const std::string& havek) const {
    throw ValueError(cat(fn, ": tree structures do not match at ", where(), ": tree 0 has ", have0,
                         ", tree ", k, " has ", havek));
  }
};

// "a tuple of 2", "a dict with keys ['a']", ... of any value, for error messages.
template <class T>
std::string describe(const T& x) {
  constexpr Category c = category_v<T>;
  if constexpr (c == Category::Leaf) {
    return "a leaf";
  } else if constexpr (c == Category::Optional) {
    return x ? describe(*x) : "None";
  } else if constexpr (c == Category::Tuple) {
    return cat("a tuple of ", std::tuple_size_v<T>);
  } else if constexpr (c == Category::List) {
    return cat("a list of ", x.size());
  } else if constexpr (c == Category::Dict || c == Category::Frozen) {
    std::string s = c == Category::Frozen ? "a FrozenDict with keys [" : "a dict with keys [";
    std::size_t n = 0;
    for (auto* kv : sorted_entries(x)) {
      s += n++ ? ", " : "";
      s += str_repr(kv->first);
    }
    return s + "]";
  } else if constexpr (c == Category::Struct) {
    return cat("a namedtuple ", type_name<T>());
  } else if constexpr (c == Category::Custom) {
    return cat("a custom node ", type_name<T>());
  } else if constexpr (c == Category::Dynamic) {
    switch (x.kind()) {
      case NodeKind::Dict: {
        std::string s = "a dict with keys [";
        std::size_t n = 0;
        for (auto* kv : sorted_entries(x.as_dict())) {
          s += n++ ? ", " : "";
          s += str_repr(kv->first);
        }
        return s + "]";
      }
      case NodeKind::Tuple:
        return cat("a tuple of ", x.size());
      case NodeKind::List:
        return cat("a list of ", x.size());
      case NodeKind::Leaf:
        return "a leaf";
      case NodeKind::None:
        return "None";
      default:
        return "an empty_node";
    }
  } else {
    return "a value that is not a pytree";
  }
}

// --- the function's parameter types, when it has a single non-template call operator ----------

template <class F, class = void>
struct params_of {
  using type = void;  // generic or overloaded: unknown
};
template <class R, class... A>
struct params_of<R (*)(A...)> {
  using type = tlist<A...>;
};
template <class R, class... A>
struct params_of<R(A...)> {
  using type = tlist<A...>;
};
template <class M>
struct member_params;
#define LINUM_PYTREE_MEMBER_PARAMS(QUALS)      \
  template <class R, class C, class... A>      \
  struct member_params<R (C::*)(A...) QUALS> { \
    using type = tlist<A...>;                  \
  };
LINUM_PYTREE_MEMBER_PARAMS()
LINUM_PYTREE_MEMBER_PARAMS(const)
LINUM_PYTREE_MEMBER_PARAMS(noexcept)
LINUM_PYTREE_MEMBER_PARAMS(const noexcept)
LINUM_PYTREE_MEMBER_PARAMS(&)
LINUM_PYTREE_MEMBER_PARAMS(const&)
#undef LINUM_PYTREE_MEMBER_PARAMS
template <class F>
struct params_of<F, std::void_t<decltype(&F::operator())>>
    : member_params<decltype(&F::operator())> {};

template <std::size_t I, class List>
struct nth;
template <std::size_t I, class T, class... Ts>
struct nth<I, tlist<T, Ts...>> : nth<I - 1, tlist<Ts...>> {};
template <class T, class... Ts>
struct nth<0, tlist<T, Ts...>> {
  using type = T;
};
template <std::size_t I>
struct nth<I, tlist<>> {
  using type = void;
};

// Whether parameter I of F takes a dynamic Tree: then a dynamic tree passes the whole subtree
// there (prefix semantics) instead of requiring a leaf.
template <class F, std::size_t I>
constexpr bool param_wants_tree() {
  using P = typename params_of<std::remove_cvref_t<F>>::type;
  if constexpr (std::is_void_v<P>) {
    return false;
  } else {
    using A = typename nth<I, P>::type;
    if constexpr (std::is_void_v<A>)
      return false;
    else
      return is_basic_tree<std::remove_cvref_t<A>>::value;
  }
}

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

// Re-typing a container after its children were mapped.
template <class T, class R>
struct rebind_dict;
template <class V, class C, class A, class R>
struct rebind_dict<std::map<std::string, V, C, A>, R> {
  using type = std::map<std::string, R>;
};
template <class V, class H, class E, class A, class R>
struct rebind_dict<std::unordered_map<std::string, V, H, E, A>, R> {
  using type = std::unordered_map<std::string, R>;
};
template <class V, class R>
struct rebind_dict<Dict<std::string, V>, R> {
  using type = Dict<std::string, R>;
};

// Struct re-typing: substitute template arguments by the (old field type -> new field type)
// pairs, recursing into template arguments (AdamState<FrozenDict<Array>> -> AdamState<
// FrozenDict<Shape>>).
template <class Old, class New>
struct subst_pair {};

template <class A, class Pairs>
struct subst_arg;
template <class A, class Pairs>
struct subst_args {
  using type = A;
};
template <template <class...> class Tmpl, class... Args, class Pairs>
struct subst_args<Tmpl<Args...>, Pairs> {
  using type = Tmpl<typename subst_arg<Args, Pairs>::type...>;
};
template <class A>
struct subst_arg<A, tlist<>> {
  using type = A;
};
template <class A, class Old, class New, class... Rest>
struct subst_arg<A, tlist<subst_pair<Old, New>, Rest...>> {
  using type =
      std::conditional_t<std::is_same_v<A, Old>, New,
                         typename subst_args<A, tlist<subst_pair<Old, New>, Rest...>>::type>;
};

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
      if constexpr (rebound)
        return assemble_struct<R>(std::move(fields), std::index_sequence<I...>{});
      else
        return T0();
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
        return true;
      },
      ts...);
  switch (kind) {
    case NodeKind::None:
      return Out();
    case NodeKind::EmptyNode:
      return Out(empty_node);
    case NodeKind::Dict: {
      check_dict_keys(cx, t0.as_dict(), ts.as_dict()...);
      typename Out::dict_type out;
      const auto& d = t0.as_dict();
      for (std::size_t pos : d.sorted_positions()) {
        const auto& kv = *(d.begin() + static_cast<std::ptrdiff_t>(pos));
        out.insert_or_assign(kv.first, cx.child(KeyRef::dict(kv.first), [&] {
          return map_dynamic(call, cx, kv.second, ts.as_dict().find(kv.first)->second...);
        }));
      }
      return Out(std::move(out));
    }
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

template <class Range>
using range_leaf_t = std::remove_cvref_t<std::ranges::range_reference_t<Range>>;

template <class T, class Range>
T unflatten_impl(const TreeDef& def, Range&& leaves) {
  const std::size_t n = static_cast<std::size_t>(std::ranges::distance(leaves));
  if (n != def.num_leaves()) {
    throw ValueError(cat("tree_unflatten: the treedef has ", def.num_leaves(), " leaves, got ", n,
                         "; treedef: ", def.to_string()));
  }
  UnflattenCtx cx{def, 0, {}};
  constexpr bool move =
      !std::is_lvalue_reference_v<Range> &&
      !std::is_const_v<std::remove_reference_t<std::ranges::range_reference_t<Range>>>;
  LeafSource<std::ranges::iterator_t<Range>> src{std::ranges::begin(leaves), move};
  return build<T>(cx, src);
}

}  // namespace detail

// ================================================================================================
// Public API
// ================================================================================================

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

// Rebuilds a T from a structure and leaves (moved from when given an rvalue range). The
// treedef must describe a T: its kinds, sizes and names are checked; dict keys come from it.
// Without a target type (T = void) the result is a dynamic BasicTree of the leaves' type.
template <class T = void, class Range>
auto tree_unflatten(const TreeDef& treedef, Range&& leaves) {
  using Out = std::conditional_t<std::is_void_v<T>, BasicTree<detail::range_leaf_t<Range>>, T>;
  return detail::unflatten_impl<Out>(treedef, std::forward<Range>(leaves));
}
template <class T = void, class L>
auto tree_unflatten(const TreeDef& treedef, std::initializer_list<L> leaves) {
  return tree_unflatten<T>(treedef, std::vector<L>(leaves));
}

// f applied to each leaf of `tree`, with the corresponding leaves (or subtrees) of `rest`.
template <class F, class T, class... Rest>
auto tree_map(F&& f, const T& tree, const Rest&... rest) {
  detail::MapCtx cx{"tree_map", {}};
  detail::PlainCall<std::remove_reference_t<F>> call{f};
  return detail::map_rec(call, cx, tree, rest...);
}

// f(key_path, leaf, other leaves...).
template <class F, class T, class... Rest>
auto tree_map_with_path(F&& f, const T& tree, const Rest&... rest) {
  detail::MapCtx cx{"tree_map_with_path", {}};
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
