// The result types of a tree_map whose function changes the leaf type: a string-keyed map
// rebound to the new value type, a Hana struct template with its arguments substituted.
#pragma once

#include <map>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include <linum/pytree/dict.hpp>
#include <linum/pytree/traits.hpp>

namespace linum::pytree {
namespace detail {

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
template <class V, class C, class A, class R>
struct rebind_dict<std::map<std::vector<std::string>, V, C, A>, R> {
  using type = std::map<std::vector<std::string>, R>;
};
template <class V, class R>
struct rebind_dict<Dict<std::vector<std::string>, V>, R> {
  using type = Dict<std::vector<std::string>, R>;
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

}  // namespace detail
}  // namespace linum::pytree
