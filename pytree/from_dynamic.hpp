// from_dynamic: the one walk from the dynamic BasicTree<L> back to a typed pytree, the inverse
// of to_dynamic. It builds a T node by node from t, alongside a target of type T when there is
// one (flax.serialization.from_state_dict: the target's structure, its values replaced, what is
// not pytree data kept) or none (an optimizer state read back, optim/erased.hpp). What differs
// between uses goes through a Style: how a leaf is read, how a node's children are found in t
// and checked, and how a place is named in errors (nn/serialization.hpp, optim/erased.hpp).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <linum/error.hpp>
#include <linum/pytree/to_dynamic.hpp>
#include <linum/pytree/traits.hpp>
#include <linum/pytree/tree.hpp>

namespace linum::pytree {

// The child of a typed node that from_dynamic reads next: the parent's category (Tuple, List,
// Dict, Struct or Custom), the child's position there and its name (a dict key, a field's name,
// a custom node's key, else the position as text). Valid during the Style::child call only.
struct ChildKey {
  detail::Category parent;
  std::size_t index;
  std::string_view name;
};

namespace detail {

// A copy of the target, which keeps what is not pytree data (a TrainState's apply_fn and tx),
// else T's default value.
template <class T>
T target_or_default(const T* target) {
  if constexpr (std::is_default_constructible_v<T>) {
    return target ? *target : T{};
  } else {
    if (!target) {
      throw TypeError(cat("from_dynamic: ", type_name<T>(),
                          " has no default value, so it can only be read into a target"));
    }
    return *target;
  }
}

}  // namespace detail

// A Style provides, for t the tree being read and target the value read into (nullptr when
// there is none; an empty optional in the target has none below it either):
//   T leaf(const T* target, const BasicTree<L>& t)     for an arithmetic leaf or a declared one
//   T dynamic(const T* target, const BasicTree<L>& t)  for a BasicTree or a FrozenDict
//   std::size_t node<T>(const BasicTree<L>& t, std::size_t size, KeyOf key)  for a tuple,
//       vector, struct or custom node of `size` children (a vector: the target's size, 0 without
//       one) named key(i): checks that t holds such a node and returns how many children to read
//   std::vector<std::string> dict(const BasicTree<L>& t, std::vector<std::string> target_keys)
//       checks that t holds a dict and returns the keys to read
//   R child(const BasicTree<L>& t, const ChildKey& key, Read read)  finds the child in t and
//       returns read(its tree), naming the child in the places its errors give meanwhile.
template <class T, class L, class Style>
T from_dynamic(const T* target, const BasicTree<L>& t, Style& style) {
  using Tree = BasicTree<L>;
  using detail::Category;
  constexpr Category c = detail::category_v<T>;
  detail::check_pytree<T>();
  // Child i of this node, named `name`, read into its own type (of child_target, maybe null).
  auto read = [&](const auto* child_target, std::size_t i, std::string_view name) {
    using C = std::remove_cvref_t<decltype(*child_target)>;
    return style.child(t, ChildKey{c, i, name},
                       [&](const Tree& x) { return from_dynamic<C>(child_target, x, style); });
  };
  auto named = [&](const auto* child_target, std::size_t i) {
    return read(child_target, i, detail::child_name<T>(i));
  };
  if constexpr (c == Category::Leaf) {
    return style.leaf(target, t);
  } else if constexpr (c == Category::Dynamic || c == Category::Frozen) {
    return style.dynamic(target, t);
  } else if constexpr (c == Category::Optional) {
    if (t.is_none()) return T();
    return T(
        from_dynamic<typename T::value_type>(target && *target ? &**target : nullptr, t, style));
  } else if constexpr (c == Category::Tuple) {
    constexpr std::size_t n = std::tuple_size_v<T>;
    style.template node<T>(t, n, detail::child_name<T>);
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      return T{named(target ? &std::get<I>(*target) : nullptr, I)...};
    }
    (std::make_index_sequence<n>{});
  } else if constexpr (c == Category::List) {
    const std::size_t n =
        style.template node<T>(t, target ? target->size() : 0, detail::child_name<T>);
    T out;
    out.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
      out.push_back(named(target && i < target->size() ? &(*target)[i] : nullptr, i));
    }
    return out;
  } else if constexpr (c == Category::Dict) {
    std::vector<std::string> target_keys;
    if (target) {
      for (const auto& kv : *target) target_keys.push_back(kv.first);
    }
    const std::vector<std::string> keys = style.dict(t, std::move(target_keys));
    T out;
    for (std::size_t i = 0; i < keys.size(); ++i) {
      const typename T::mapped_type* v = nullptr;
      if (target) {
        if (auto it = target->find(keys[i]); it != target->end()) v = &it->second;
      }
      out.insert_or_assign(keys[i], read(v, i, keys[i]));
    }
    return out;
  } else if constexpr (c == Category::Struct) {
    style.template node<T>(t, detail::struct_size_v<T>, detail::child_name<T>);
    T out = detail::target_or_default(target);
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      ((detail::struct_field<I>(out) =
            named(target ? &detail::struct_field<I>(*target) : nullptr, I)),
       ...);
    }
    (std::make_index_sequence<detail::struct_size_v<T>>{});
    return out;
  } else {
    static_assert(c == Category::Custom,
                  "from_dynamic: a dict with tuple keys has no dynamic form");
    constexpr std::size_t n = detail::custom_size_v<T>;
    style.template node<T>(t, n, detail::child_name<T>);
    std::optional<detail::custom_children_t<T>> children;
    if (target) children.emplace(node_traits<T>::children(*target));
    // Read into a tuple first: a braced list is evaluated left to right, call arguments not.
    auto read_children = [&]<std::size_t... I>(std::index_sequence<I...>) {
      return std::tuple<detail::custom_child_t<T, I>...>{
          named(children ? &std::get<I>(*children) : nullptr, I)...};
    };
    return std::apply([](auto&&... x) { return node_traits<T>::from_children(std::move(x)...); },
                      read_children(std::make_index_sequence<n>{}));
  }
}

}  // namespace linum::pytree
