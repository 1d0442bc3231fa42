// describe(x): a value's top node in words ("a tuple of 2", "a dict with keys ['a']"), as
// tree_map's structure-mismatch errors print it.
#pragma once

#include <string>
#include <tuple>

#include <linum/pytree/flatten.hpp>
#include <linum/pytree/repr.hpp>
#include <linum/pytree/traits.hpp>
#include <linum/pytree/tree.hpp>

namespace linum::pytree {
namespace detail {

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
  } else if constexpr (c == Category::Dict || c == Category::Frozen || c == Category::TupleDict) {
    std::string s = c == Category::Frozen ? "a FrozenDict with keys [" : "a dict with keys [";
    std::size_t n = 0;
    for (auto* kv : sorted_entries(x)) {
      s += n++ ? ", " : "";
      if constexpr (c == Category::TupleDict)
        s += repr_as_tuple(kv->first);
      else
        s += str_repr(kv->first);
    }
    return s + "]";
  } else if constexpr (c == Category::Struct) {
    return cat("a namedtuple ", type_name<T>());
  } else if constexpr (c == Category::Custom) {
    return cat("a custom node ", type_name<T>());
  } else if constexpr (c == Category::Dynamic) {
    switch (x.kind()) {
      case NodeKind::Dict:
      case NodeKind::FrozenDict: {
        const bool frozen = x.is_frozen_dict();
        std::string s = frozen ? "a FrozenDict with keys [" : "a dict with keys [";
        std::size_t n = 0;
        for (auto* kv : sorted_entries(x.as_mapping())) {
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
      case NodeKind::Box:
        return cat("a ", x.box_metadata()->type_name(), " box");
      default:
        return "an empty_node";
    }
  } else {
    return "a value that is not a pytree";
  }
}

}  // namespace detail
}  // namespace linum::pytree
