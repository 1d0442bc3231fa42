// Static struct fields (Flax's `struct.field(pytree_node=False)`): members of a Hana struct that
// are not leaves but travel with the structure. They are kept by tree_map and the transforms,
// recorded in the TreeDef (so structures differing only in them are unequal, as in JAX) and
// restored by tree_unflatten. Static<T> is a shared, assignable holder for values such as
// functions and optimizers that a struct must keep but that are not themselves assignable.
#pragma once

#include <concepts>
#include <cstddef>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include <boost/preprocessor/punctuation/comma_if.hpp>
#include <boost/preprocessor/seq/for_each_i.hpp>
#include <boost/preprocessor/stringize.hpp>
#include <boost/preprocessor/variadic/to_seq.hpp>

#include <linum/error.hpp>

// Declares members of a Hana struct static, after BOOST_HANA_DEFINE_STRUCT and the members:
//
//   struct Model {
//     BOOST_HANA_DEFINE_STRUCT(Model, (Array, w), (Array, b));  // the pytree fields
//     int num_layers = 2;                                        // static fields
//     linum::pytree::Static<Activation> act;
//     LINUM_PYTREE_STATIC_FIELDS(Model, num_layers, act);
//   };
//
// Static fields are compared with == (types without == compare equal when of the same type).
#define LINUM_PYTREE_STATIC_FIELDS(Type, ...)                                               \
  static constexpr auto linum_pytree_static_fields() {                                      \
    return std::make_tuple(BOOST_PP_SEQ_FOR_EACH_I(LINUM_PYTREE_STATIC_FIELD_, Type,        \
                                                   BOOST_PP_VARIADIC_TO_SEQ(__VA_ARGS__))); \
  }                                                                                         \
  static_assert(true, "")
// clang-format off
#define LINUM_PYTREE_STATIC_FIELD_(r, Type, i, name) \
  BOOST_PP_COMMA_IF(i) ::linum::pytree::detail::StaticField<decltype(&Type::name)>{BOOST_PP_STRINGIZE(name), &Type::name}
// clang-format on

namespace linum::pytree {

// An immutable value shared between copies: default-constructible and assignable whatever T
// is (a capturing lambda, a type-erased optimizer), so a struct holding one stays a value.
// Equal when it is the same object (Python's identity) or, for T with ==, an equal value.
template <class T>
class Static {
 public:
  using value_type = T;

  Static() = default;
  Static(T value) : p_(std::make_shared<const T>(std::move(value))) {}  // NOLINT: implicit

  bool has_value() const { return p_ != nullptr; }
  explicit operator bool() const { return has_value(); }
  const T& get() const {
    if (!p_) throw ValueError("pytree::Static::get: the static field holds no value");
    return *p_;
  }
  const T& operator*() const { return get(); }
  const T* operator->() const { return &get(); }

  // A static function field is called directly: state.apply_fn(params, x).
  template <class... A>
  requires std::invocable<const T&, A&&...>
  decltype(auto) operator()(A&&... args) const { return get()(std::forward<A>(args)...); }

  friend bool operator==(const Static& a, const Static& b) {
    if (a.p_ == b.p_) return true;
    if constexpr (std::equality_comparable<T>) {
      return a.p_ && b.p_ && static_cast<bool>(*a.p_ == *b.p_);
    } else {
      return false;
    }
  }

 private:
  std::shared_ptr<const T> p_;
};

namespace detail {

template <class M>
struct member_pointer_traits;
template <class C, class M>
struct member_pointer_traits<M C::*> {
  using value_type = M;
};

// One declared static field: its name and member pointer.
template <class MP>
struct StaticField {
  using value_type = typename member_pointer_traits<MP>::value_type;
  const char* name;
  MP ptr;
};

template <class T>
concept HasStaticFields = requires {
  T::linum_pytree_static_fields();
};

template <class T>
constexpr std::size_t static_field_count() {
  if constexpr (HasStaticFields<T>)
    return std::tuple_size_v<decltype(T::linum_pytree_static_fields())>;
  else
    return 0;
}

template <class T>
inline constexpr std::size_t static_size_v = static_field_count<T>();

template <std::size_t J, class T>
constexpr auto static_field() {
  return std::get<J>(T::linum_pytree_static_fields());
}

template <class T, std::size_t J>
using static_field_t = typename decltype(static_field<J, T>())::value_type;

// Equality of static values as a TreeDef compares them.
template <class V>
bool static_equal(const V& a, const V& b) {
  if constexpr (std::equality_comparable<V>)
    return static_cast<bool>(a == b);
  else
    return true;
}

}  // namespace detail
}  // namespace linum::pytree
