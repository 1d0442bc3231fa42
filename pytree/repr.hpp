// Python-style printing of pytree values: repr(x) prints like Python's repr of the equivalent
// Python value (ints, floats, 'strings', True, None, (tuples,), [lists], {'dicts': ...},
// Name(field=...)), and pformat(x) wraps like pprint.pformat. Leaf types choose how they
// print with a Repr<T> specialisation, else their operator<<.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <linum/pytree/traits.hpp>

namespace linum::pytree {

// Customisation point for how a leaf prints inside repr / pretty_repr / pformat:
//   template <> struct linum::pytree::Repr<Shape> {
//     static void print(std::ostream& os, const Shape& s) { os << repr_as_tuple(s.dims); }
//   };
// Without a specialisation a type prints with its operator<< (how autodiff's Array prints).
template <class T, class Enable = void>
struct Repr {};

template <class T>
std::string repr(const T& x);

// Python's repr of a float / str.
std::string float_repr(double x);
std::string float_repr(float x);
std::string str_repr(std::string_view s);

// Prints a range as a Python tuple: (1, 2, 3), (32,), ().
template <class Range>
std::string repr_as_tuple(const Range& r);

namespace detail {

template <class T>
void repr_into(std::string& out, const T& x);

template <class T>
concept HasRepr = requires(std::ostream& os, const T& x) {
  Repr<T>::print(os, x);
};
template <class T>
concept HasReprInto = requires(std::string& out, const T& x) {
  x.repr_into(out);
};
template <class T>
concept Streamable = requires(std::ostream& os, const T& x) {
  os << x;
};

template <class T>
inline constexpr bool is_string_like_v =
    std::is_convertible_v<const T&, std::string_view> && !std::is_arithmetic_v<T>;

template <class Tuple, std::size_t... I>
void repr_tuple_into(std::string& out, const Tuple& t, std::index_sequence<I...>) {
  out += '(';
  ((out += (I ? ", " : ""), repr_into(out, std::get<I>(t))), ...);
  out += sizeof...(I) == 1 ? ",)" : ")";
}

template <class Range>
void repr_seq_into(std::string& out, const Range& r, char open, char close, bool tuple) {
  out += open;
  std::size_t n = 0;
  for (const auto& e : r) {
    if (n++) out += ", ";
    repr_into(out, e);
  }
  if (tuple && n == 1) out += ',';
  out += close;
}

template <class K>
void repr_key_into(std::string& out, const K& k) {
  if constexpr (std::is_same_v<K, std::vector<std::string>>) {
    repr_seq_into(out, k, '(', ')', true);  // a tuple key, as flatten_dict produces
  } else {
    repr_into(out, k);
  }
}

// Entries of a string-keyed mapping in the order Python would print them: insertion order for
// Dict, sorted for std::map and std::unordered_map (which have no insertion order).
template <class M>
void repr_map_into(std::string& out, const M& m) {
  out += '{';
  std::vector<const typename M::value_type*> items;
  for (const auto& kv : m) items.push_back(&kv);
  if constexpr (!std::is_same_v<M, Dict<typename M::key_type, typename M::mapped_type>>) {
    std::sort(items.begin(), items.end(), [](auto* a, auto* b) { return a->first < b->first; });
  }
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) out += ", ";
    repr_key_into(out, items[i]->first);
    out += ": ";
    repr_into(out, items[i]->second);
  }
  out += '}';
}

template <class T, std::size_t... I>
void repr_struct_into(std::string& out, const T& x, std::index_sequence<I...>) {
  out += type_name<T>();
  out += '(';
  ((out += (I ? ", " : ""), out += struct_field_name<I, T>(), out += '=',
    repr_into(out, struct_field<I>(x))),
   ...);
  out += ')';
}

template <class T, std::size_t... I>
void repr_custom_into(std::string& out, const T& x, std::index_sequence<I...>) {
  auto children = node_traits<T>::children(x);
  out += type_name<T>();
  out += '(';
  auto one = [&](auto idx, const auto& child) {
    constexpr std::size_t i = decltype(idx)::value;
    if (i) out += ", ";
    if constexpr (custom_has_keys<T>()) {
      out += node_traits<T>::keys[i];
      out += '=';
    }
    repr_into(out, child);
  };
  (one(std::integral_constant<std::size_t, I>{}, std::get<I>(children)), ...);
  out += ')';
}

template <class T>
void repr_into(std::string& out, const T& x) {
  if constexpr (HasRepr<T>) {
    std::ostringstream os;
    Repr<T>::print(os, x);
    out += os.str();
  } else if constexpr (std::is_same_v<T, bool>) {
    out += x ? "True" : "False";
  } else if constexpr (std::is_integral_v<T>) {
    out += std::to_string(+x);
  } else if constexpr (std::is_floating_point_v<T>) {
    if constexpr (std::is_same_v<T, float>)
      out += float_repr(x);
    else
      out += float_repr(static_cast<double>(x));
  } else if constexpr (is_string_like_v<T>) {
    out += str_repr(std::string_view(x));
  } else if constexpr (std::is_same_v<T, std::nullopt_t>) {
    out += "None";
  } else if constexpr (std::is_same_v<T, std::vector<std::int64_t>>) {
    // linum's Shape: prints as a Python tuple, like jnp.shape.
    repr_seq_into(out, x, '(', ')', true);
  } else if constexpr (HasReprInto<T>) {
    x.repr_into(out);
  } else if constexpr (Streamable<T>) {
    std::ostringstream os;
    os << x;
    out += os.str();
  } else if constexpr (is_std_optional<T>::value) {
    if (x)
      repr_into(out, *x);
    else
      out += "None";
  } else if constexpr (is_std_tuple<T>::value) {
    repr_tuple_into(out, x, std::make_index_sequence<std::tuple_size_v<T>>{});
  } else if constexpr (is_std_vector<T>::value) {
    repr_seq_into(out, x, '[', ']', false);
  } else if constexpr (requires {
                         typename T::key_type;
                         typename T::mapped_type;
                         x.begin();
                       }) {
    repr_map_into(out, x);
  } else if constexpr (HanaStruct<T>) {
    repr_struct_into(out, x, std::make_index_sequence<struct_size_v<T>>{});
  } else if constexpr (CustomNode<T>) {
    repr_custom_into(out, x, std::make_index_sequence<custom_size_v<T>>{});
  } else {
    static_assert(sizeof(T) == 0,
                  "linum::pytree::repr: no way to print this type; give it an operator<< or "
                  "specialise linum::pytree::Repr<T>");
  }
}

// --- pformat ------------------------------------------------------------------------------------

// A value reduced to what pprint looks at: dicts, lists and tuples, with everything else an atom
// already printed by repr.
struct PNode {
  enum Kind { Atom, Dict, List, Tuple } kind = Atom;
  std::string text;               // the atom's repr
  std::vector<std::string> keys;  // repr of each dict key, sorted by key
  std::vector<PNode> items;
};

std::string pformat_node(const PNode& node, int width);

template <class T>
PNode to_pnode(const T& x);

template <class Range>
PNode seq_pnode(const Range& r, PNode::Kind kind) {
  PNode n;
  n.kind = kind;
  for (const auto& e : r) n.items.push_back(to_pnode(e));
  return n;
}

template <class T>
PNode to_pnode(const T& x) {
  if constexpr (is_basic_tree<T>::value) {
    return x.to_pnode();
  } else if constexpr (HasRepr<T> || std::is_same_v<T, std::vector<std::int64_t>>) {
    return PNode{PNode::Atom, repr(x), {}, {}};
  } else if constexpr (is_std_vector<T>::value) {
    return seq_pnode(x, PNode::List);
  } else if constexpr (is_std_tuple<T>::value) {
    PNode n;
    n.kind = PNode::Tuple;
    std::apply([&](const auto&... e) { (n.items.push_back(to_pnode(e)), ...); }, x);
    return n;
  } else if constexpr (requires {
                         typename T::key_type;
                         typename T::mapped_type;
                         x.begin();
                       } &&
                       !is_frozen_dict<T>::value) {
    std::vector<const typename T::value_type*> items;
    for (const auto& kv : x) items.push_back(&kv);
    std::sort(items.begin(), items.end(), [](auto* a, auto* b) { return a->first < b->first; });
    PNode n;
    n.kind = PNode::Dict;
    for (auto* kv : items) {
      std::string k;
      repr_key_into(k, kv->first);
      n.keys.push_back(std::move(k));
      n.items.push_back(to_pnode(kv->second));
    }
    return n;
  } else {
    return PNode{PNode::Atom, repr(x), {}, {}};
  }
}

}  // namespace detail

template <class T>
std::string repr(const T& x) {
  std::string out;
  detail::repr_into(out, x);
  return out;
}

template <class Range>
std::string repr_as_tuple(const Range& r) {
  std::string out;
  detail::repr_seq_into(out, r, '(', ')', true);
  return out;
}

// pprint.pformat(x, width=80): the one-line repr when it fits, else dicts, lists and tuples are
// broken one item per line (dict keys sorted, as pprint does).
template <class T>
std::string pformat(const T& x, int width = 80) {
  return detail::pformat_node(detail::to_pnode(x), width);
}

}  // namespace linum::pytree
