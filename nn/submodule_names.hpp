// How setup-style children in containers are named (Flax's _get_suffix_value_pairs and str() of
// dict keys): which field types can hold modules, and the walk that names each module in one.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include <linum/pytree/traits.hpp>

namespace linum::nn {

class ModuleBase;

namespace detail {
// str(key) of a Python dict key, as Flax's state dict names a container's entries: strings as
// they are, integers in decimal, bools True/False, tuples (pairs) as Python prints them.
inline std::string dict_key_str(const std::string& k) { return k; }
inline std::string dict_key_str(const char* k) { return k; }
inline std::string dict_key_str(bool k) { return k ? "True" : "False"; }
template <class K>
requires std::is_integral_v<K> std::string dict_key_str(K k) { return std::to_string(k); }
// repr() of a key inside a tuple key: strings quoted, the rest as str().
std::string quoted_key(const std::string& k);
template <class K>
std::string tuple_key_item(const K& k) {
  if constexpr (std::is_convertible_v<const K&, std::string>)
    return quoted_key(k);
  else
    return dict_key_str(k);
}
template <class... K>
std::string dict_key_str(const std::tuple<K...>& k) {
  std::string out = "(";
  std::apply(
      [&](const auto&... e) {
        std::size_t i = 0;
        ((out += (i++ ? ", " : "") + tuple_key_item(e)), ...);
      },
      k);
  return out + (sizeof...(K) == 1 ? ",)" : ")");
}
template <class A, class B>
std::string dict_key_str(const std::pair<A, B>& k) {
  return dict_key_str(std::tuple<A, B>(k.first, k.second));
}

// pytree's traits for vectors, tuples/pairs (and std::array, tested first below) and optionals.
using pytree::detail::is_std_optional;
using pytree::detail::is_std_tuple;
using pytree::detail::is_std_vector;
template <class T>
struct is_std_array : std::false_type {};
template <class T, std::size_t N>
struct is_std_array<std::array<T, N>> : std::true_type {};
template <class T>
struct is_std_map : std::false_type {};
template <class K, class V, class C, class A>
struct is_std_map<std::map<K, V, C, A>> : std::true_type {};
template <class T>
struct is_std_variant : std::false_type {};
template <class... T>
struct is_std_variant<std::variant<T...>> : std::true_type {};

// Whether T is a module or a container that can hold one.
template <class T>
constexpr bool holds_modules() {
  if constexpr (std::is_base_of_v<ModuleBase, T>)
    return true;
  else if constexpr (is_std_vector<T>::value || is_std_array<T>::value || is_std_optional<T>::value)
    return holds_modules<typename T::value_type>();
  else if constexpr (is_std_map<T>::value)
    return holds_modules<typename T::mapped_type>();
  else if constexpr (is_std_tuple<T>::value)
    return []<std::size_t... I>(std::index_sequence<I...>) {
      return (holds_modules<std::tuple_element_t<I, T>>() || ...);
    }
  (std::make_index_sequence<std::tuple_size_v<T>>{});
  else if constexpr (is_std_variant<T>::value) return
      []<std::size_t... I>(std::index_sequence<I...>) {
    return (holds_modules<std::variant_alternative_t<I, T>>() || ...);
  }
  (std::make_index_sequence<std::variant_size_v<T>>{});
  else return false;
}

// Calls f(name + suffix, module) for each module in x, Flax's suffixes (see submodule()); a
// map's entries in the sorted order of their key texts, as Flax's _sorted_items.
template <class T, class F>
void for_each_submodule(const std::string& name, T& x, const F& f) {
  if constexpr (std::is_base_of_v<ModuleBase, T>) {
    f(name, static_cast<ModuleBase&>(x));
  } else if constexpr (is_std_vector<T>::value || is_std_array<T>::value) {
    for (std::size_t i = 0; i < x.size(); ++i)
      for_each_submodule(name + "_" + std::to_string(i), x[i], f);
  } else if constexpr (is_std_map<T>::value) {
    std::vector<std::pair<std::string, typename T::mapped_type*>> entries;
    for (auto& [k, v] : x) entries.emplace_back(dict_key_str(k), &v);
    std::stable_sort(entries.begin(), entries.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    for (auto& [k, v] : entries) for_each_submodule(name + "_" + k, *v, f);
  } else if constexpr (is_std_tuple<T>::value) {
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      (for_each_submodule(name + "_" + std::to_string(I), std::get<I>(x), f), ...);
    }
    (std::make_index_sequence<std::tuple_size_v<T>>{});
  } else if constexpr (is_std_optional<T>::value) {
    if (x) for_each_submodule(name, *x, f);
  } else if constexpr (is_std_variant<T>::value) {
    std::visit([&](auto& alt) { for_each_submodule(name, alt, f); }, x);
  }
  // Anything else (a function, a number) is not a module: Flax skips it.
}
}  // namespace detail

}  // namespace linum::nn
