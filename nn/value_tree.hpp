// A method's arguments and results as the Python values Flax sees (detail::ValueTree): what
// method interceptors, call recorders (nn::tabulate) and capture_intermediates read and write.
#pragma once

#include <cstddef>
#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <linum/autodiff/tree_bridge.hpp>

namespace linum::nn {

namespace detail {

// A method's argument or result as the Python value Flax sees: an Array or a Tree as itself, a
// pair or tuple as a tuple, a vector as a list, an empty optional as None. Other types
// (configuration structs, numbers, functions) have no Tree form.
template <class T>
struct ValueTree : std::false_type {};
// `from` rebuilds the C++ value from a Tree of that form (what an interceptor returns), or throws
// a TypeError saying what it expected.
[[noreturn]] void bad_value_tree(const Tree& got, const char* expected);
const Tree::seq_type& value_tree_items(const Tree& t, std::size_t n, const char* expected);
template <>
struct ValueTree<Array> : std::true_type {
  static Tree make(const Array& a) { return Tree(a); }
  static Array from(const Tree& t) {
    if (!t.is_leaf()) bad_value_tree(t, "an Array");
    return t.leaf();
  }
};
template <>
struct ValueTree<Tree> : std::true_type {
  static Tree make(const Tree& t) { return t; }
  static Tree from(const Tree& t) { return t; }
};
template <class T>
constexpr bool has_value_tree_v = ValueTree<std::remove_cvref_t<T>>::value;
template <class T>
Tree value_tree(const T& v) {
  return ValueTree<std::remove_cvref_t<T>>::make(v);
}
template <class T>
T from_value_tree(const Tree& t) {
  return ValueTree<T>::from(t);
}
template <class... T>
struct ValueTree<std::tuple<T...>> : std::bool_constant<(has_value_tree_v<T> && ...)> {
  static Tree make(const std::tuple<T...>& t) {
    return std::apply([](const auto&... e) { return Tree::tuple({value_tree(e)...}); }, t);
  }
  static std::tuple<T...> from(const Tree& t) {
    const auto& items = value_tree_items(t, sizeof...(T), "a tuple");
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      return std::tuple<T...>(from_value_tree<T>(items[I])...);
    }
    (std::index_sequence_for<T...>{});
  }
};
template <class A, class B>
struct ValueTree<std::pair<A, B>> : std::bool_constant<has_value_tree_v<A> && has_value_tree_v<B>> {
  static Tree make(const std::pair<A, B>& p) {
    return Tree::tuple({value_tree(p.first), value_tree(p.second)});
  }
  static std::pair<A, B> from(const Tree& t) {
    const auto& items = value_tree_items(t, 2, "a pair");
    return {from_value_tree<A>(items[0]), from_value_tree<B>(items[1])};
  }
};
template <class T>
struct ValueTree<std::optional<T>> : std::bool_constant<has_value_tree_v<T>> {
  static Tree make(const std::optional<T>& o) { return o ? value_tree(*o) : Tree::none(); }
  static std::optional<T> from(const Tree& t) {
    if (t.is_none()) return std::nullopt;
    return from_value_tree<T>(t);
  }
};
template <class T>
struct ValueTree<std::vector<T>> : std::bool_constant<has_value_tree_v<T>> {
  static Tree make(const std::vector<T>& v) {
    Tree out = Tree::list();
    for (const auto& e : v) out.items().push_back(value_tree(e));
    return out;
  }
  static std::vector<T> from(const Tree& t) {
    if (!t.is_list() && !t.is_tuple()) bad_value_tree(t, "a list");
    std::vector<T> out;
    for (const auto& e : t.items()) out.push_back(from_value_tree<T>(e));
    return out;
  }
};

// Flax's _process_inputs over positional arguments: one as itself, several as a tuple.
template <class... A>
Tree inputs_tree(const A&... args) {
  Tree::seq_type items;
  [[maybe_unused]] auto add = [&](const auto& a) {  // unused for a call without arguments
    if constexpr (has_value_tree_v<decltype(a)>) items.push_back(value_tree(a));
  };
  (add(args), ...);
  if (items.size() == 1) return items.front();
  return Tree::tuple(std::move(items));
}
// The arguments of a call that records none (a named method's body takes no arguments).
struct NoInputs {
  Tree operator()() const { return Tree::tuple(); }
};
}  // namespace detail

}  // namespace linum::nn
