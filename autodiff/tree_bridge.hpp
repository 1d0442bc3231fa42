// How the transforms see their arguments and results: flatten a value to its Array leaves and
// rebuild the same C++ type from new leaves. This is the single place that decides what a
// "tree" of Arrays is for grad/vjp/jvp/vmap; it follows linum::pytree's traits.
#pragma once

#include <array>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <linum/autodiff/array.hpp>

namespace linum::detail {

template <class T, class = void>
struct ArgTree;  // a value type the transforms cannot traverse fails to compile here

template <>
struct ArgTree<Array> {
  static void flatten(const Array& a, Arrays& out) { out.push_back(a); }
  template <class It>
  static Array rebuild(const Array&, It& it) { return *it++; }
};

template <class... Ts>
struct ArgTree<std::tuple<Ts...>> {
  static void flatten(const std::tuple<Ts...>& t, Arrays& out) {
    std::apply([&](const auto&... e) { (ArgTree<std::decay_t<decltype(e)>>::flatten(e, out), ...); }, t);
  }
  template <class It>
  static std::tuple<Ts...> rebuild(const std::tuple<Ts...>& like, It& it) {
    return std::apply(
        [&](const auto&... e) { return std::tuple<Ts...>{ArgTree<std::decay_t<decltype(e)>>::rebuild(e, it)...}; },
        like);
  }
};

template <class A, class B>
struct ArgTree<std::pair<A, B>> {
  static void flatten(const std::pair<A, B>& p, Arrays& out) {
    ArgTree<A>::flatten(p.first, out);
    ArgTree<B>::flatten(p.second, out);
  }
  template <class It>
  static std::pair<A, B> rebuild(const std::pair<A, B>& like, It& it) {
    A a = ArgTree<A>::rebuild(like.first, it);
    B b = ArgTree<B>::rebuild(like.second, it);
    return {std::move(a), std::move(b)};
  }
};

template <class T>
struct ArgTree<std::vector<T>> {
  static void flatten(const std::vector<T>& v, Arrays& out) {
    for (const auto& e : v) ArgTree<T>::flatten(e, out);
  }
  template <class It>
  static std::vector<T> rebuild(const std::vector<T>& like, It& it) {
    std::vector<T> r;
    r.reserve(like.size());
    for (const auto& e : like) r.push_back(ArgTree<T>::rebuild(e, it));
    return r;
  }
};

template <class T, std::size_t N>
struct ArgTree<std::array<T, N>> {
  static void flatten(const std::array<T, N>& v, Arrays& out) {
    for (const auto& e : v) ArgTree<T>::flatten(e, out);
  }
  template <class It>
  static std::array<T, N> rebuild(const std::array<T, N>& like, It& it) {
    std::array<T, N> r;
    for (std::size_t i = 0; i < N; ++i) r[i] = ArgTree<T>::rebuild(like[i], it);
    return r;
  }
};

template <class T>
struct ArgTree<std::map<std::string, T>> {
  static void flatten(const std::map<std::string, T>& m, Arrays& out) {
    for (const auto& [k, v] : m) ArgTree<T>::flatten(v, out);
  }
  template <class It>
  static std::map<std::string, T> rebuild(const std::map<std::string, T>& like, It& it) {
    std::map<std::string, T> r;
    for (const auto& [k, v] : like) r.emplace(k, ArgTree<T>::rebuild(v, it));
    return r;
  }
};

template <class T>
Arrays tree_arrays(const T& t) {
  Arrays out;
  ArgTree<T>::flatten(t, out);
  return out;
}

// A value of T's type and structure whose leaves are `leaves`, in flattening order.
template <class T>
T tree_rebuild(const T& like, const Arrays& leaves) {
  auto it = leaves.begin();
  return ArgTree<T>::rebuild(like, it);
}

// Applies f to every leaf, keeping the structure.
template <class T, class F>
T tree_apply(const T& t, F&& f) {
  Arrays leaves = tree_arrays(t);
  for (auto& l : leaves) l = f(l);
  return tree_rebuild(t, leaves);
}

}  // namespace linum::detail
