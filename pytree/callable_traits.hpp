// Introspection of a callable's parameter types (when it has a single non-template call
// operator), so tree_map and path_aware_map can pass a whole dynamic subtree to a function
// whose parameter is a Tree instead of requiring a leaf there.
#pragma once

#include <cstddef>
#include <type_traits>

#include <linum/pytree/traits.hpp>

namespace linum::pytree {
namespace detail {

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

}  // namespace detail

}  // namespace linum::pytree
