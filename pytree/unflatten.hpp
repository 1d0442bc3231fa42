// tree_unflatten: rebuilds a C++ type (or a dynamic BasicTree) from a TreeDef and leaves,
// walking the type and the TreeDef together; the TreeDef supplies only what the type leaves
// open (sizes, keys, None or not) and is checked against the rest.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <ranges>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <linum/error.hpp>
#include <linum/pytree/flatten.hpp>
#include <linum/pytree/frozen_dict.hpp>
#include <linum/pytree/key_path.hpp>
#include <linum/pytree/traits.hpp>
#include <linum/pytree/tree.hpp>
#include <linum/pytree/treedef.hpp>

namespace linum::pytree {
namespace detail {

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

struct UnflattenCtx : PathCtx {
  const TreeDef& def;
  std::size_t pos = 0;

  const TreeDef::Node& node() const { return def.nodes()[pos]; }

  [[noreturn]] void mismatch(const std::string& want) const {
    throw ValueError(cat("tree_unflatten: the treedef has ", describe_node(def, node()), " at ",
                         where(), " where the target type has ", want,
                         "; treedef: ", def.to_string()));
  }
  void expect(NodeKind kind, std::size_t arity, const char* what) const {
    if (node().kind != kind || (arity != std::size_t(-1) && node().arity != arity)) {
      mismatch(arity != std::size_t(-1) ? cat(what, " of ", arity) : std::string(what));
    }
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

template <std::size_t J, class T>
void restore_static(const UnflattenCtx& cx, const TreeDef::Node& node, T& out) {
  using F = static_field_t<T, J>;
  const auto* value = cx.def.static_value(node, J).template get<F>();
  if (!value) {
    throw TypeError(cat("tree_unflatten: the static field ", static_field<J, T>().name, " of ",
                        type_name<T>(), " at ", cx.where(),
                        " has another C++ type in the treedef than in the target type"));
  }
  out.*(static_field<J, T>().ptr) = *value;
}

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
    case NodeKind::Dict:
    case NodeKind::FrozenDict: {
      const NodeKind kind = n.kind;
      typename BasicTree<L>::dict_type d;
      for (std::uint32_t i = 0; i < n.arity; ++i) {
        const std::string_view key = cx.def.data(cx.def.nodes()[here], i);
        d.insert_or_assign(std::string(key),
                           cx.child(KeyRef::dict(key), [&] { return build_dynamic<L>(cx, src); }));
      }
      if (kind == NodeKind::FrozenDict) return BasicTree<L>(FrozenDict<L>(std::move(d)));
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
    case NodeKind::Box: {
      auto meta = cx.def.static_value(cx.def.nodes()[here], 0).template get<BoxRef>()->meta;
      return BasicTree<L>::box(std::move(meta), cx.child(KeyRef::attr("value"), [&] {
        return build_dynamic<L>(cx, src);
      }));
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
  } else if constexpr (c == Category::TupleDict) {
    cx.expect(NodeKind::TupleDict, std::size_t(-1), "a dict with tuple keys");
    const std::size_t here = cx.pos++;
    const std::size_t n = cx.def.nodes()[here].arity;
    T out;
    for (std::size_t i = 0; i < n; ++i) {
      const auto key = decode_tuple_key(cx.def.data(cx.def.nodes()[here], i));
      auto value = cx.child(KeyRef::tuple_dict(key),
                            [&] { return build<typename T::mapped_type>(cx, src); });
      out.insert_or_assign(key, std::move(value));
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
    constexpr std::size_t ns = static_size_v<T>;
    bool same = node.kind == NodeKind::NamedTuple && node.arity == n && node.statics_size == ns &&
                cx.def.data(node, 0) == type_name<T>();
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      same = same && ((cx.def.data(node, I + 1) == struct_field_name<I, T>()) && ...);
    }
    (std::make_index_sequence<n>{});
    [&]<std::size_t... J>(std::index_sequence<J...>) {
      same = same && ((cx.def.data(node, n + 1 + J) == static_field<J, T>().name) && ...);
    }
    (std::make_index_sequence<ns>{});
    if (!same) cx.mismatch(cat("a namedtuple ", type_name<T>()));
    ++cx.pos;
    auto fields = [&]<std::size_t... I>(std::index_sequence<I...>) {
      return std::tuple<struct_field_t<T, I>...>{
          cx.child(KeyRef::attr(struct_field_name<I, T>()),
                   [&] { return build<struct_field_t<T, I>>(cx, src); })...};
    }
    (std::make_index_sequence<n>{});
    T out = assemble_struct<T>(std::move(fields), std::make_index_sequence<n>{});
    // Static fields come back from the TreeDef, which holds them as JAX's aux data does.
    [&]<std::size_t... J>(std::index_sequence<J...>) { (restore_static<J>(cx, node, out), ...); }
    (std::make_index_sequence<ns>{});
    return out;
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

template <class Range>
using range_leaf_t = std::remove_cvref_t<std::ranges::range_reference_t<Range>>;

template <class T, class Range>
T unflatten_impl(const TreeDef& def, Range&& leaves) {
  const std::size_t n = static_cast<std::size_t>(std::ranges::distance(leaves));
  if (n != def.num_leaves()) {
    throw ValueError(cat("tree_unflatten: the treedef has ", def.num_leaves(), " leaves, got ", n,
                         "; treedef: ", def.to_string()));
  }
  UnflattenCtx cx{{}, def, 0};
  constexpr bool move =
      !std::is_lvalue_reference_v<Range> &&
      !std::is_const_v<std::remove_reference_t<std::ranges::range_reference_t<Range>>>;
  LeafSource<std::ranges::iterator_t<Range>> src{std::ranges::begin(leaves), move};
  return build<T>(cx, src);
}

}  // namespace detail

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

}  // namespace linum::pytree
