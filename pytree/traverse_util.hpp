// flax.traverse_util in namespace linum::traverse_util: flatten_dict (tuple keys or a `sep`
// string, keep_empty_nodes, is_leaf), unflatten_dict, empty_node, path_aware_map, and the
// (deprecated upstream) ModelParamTraversal, over the dynamic Tree and FrozenDict.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <linum/error.hpp>
#include <linum/pytree/dict.hpp>
#include <linum/pytree/frozen_dict.hpp>
#include <linum/pytree/tree.hpp>
#include <linum/pytree/tree_util.hpp>

namespace linum::traverse_util {

using pytree::BasicTree;
using pytree::Dict;
using pytree::empty_node;
using pytree::EmptyNode;
using pytree::FrozenDict;
using pytree::Path;

template <class L>
struct FlattenDictOptions {
  // Keep empty sub-dicts, as empty_node entries (Flax's keep_empty_nodes).
  bool keep_empty_nodes = false;
  // is_leaf(path, subtree): stop descending into this dict (consulted for dicts only, root too).
  std::function<bool(const Path&, const BasicTree<L>&)> is_leaf = {};
};

namespace detail {

std::string join(const Path& path, std::string_view sep);
// Python's str.split(sep): "" -> [""], "a//b" -> ["a", "", "b"]; ValueError for an empty sep.
Path split(std::string_view key, std::string_view sep);
std::string path_repr(const Path& path);

template <class Key, class L, class KeyFn>
void flatten_into(Dict<Key, BasicTree<L>>& result, const typename BasicTree<L>::dict_type& xs,
                  Path& prefix, const FlattenDictOptions<L>& opts, const KeyFn& key) {
  bool is_empty = true;
  for (const auto& [k, v] : xs) {
    is_empty = false;
    prefix.push_back(k);
    // Flax descends into dicts and FrozenDicts alike.
    if (!(v.is_dict() || v.is_frozen_dict()) || (opts.is_leaf && opts.is_leaf(prefix, v))) {
      result.insert_or_assign(key(prefix), v);
    } else {
      flatten_into(result, v.as_mapping(), prefix, opts, key);
    }
    prefix.pop_back();
  }
  // An empty input flattens to {} even when keeping empty nodes (Flax's special case).
  if (opts.keep_empty_nodes && is_empty && !prefix.empty()) {
    result.insert_or_assign(key(prefix), BasicTree<L>(empty_node));
  }
}

template <class Key, class L, class KeyFn>
Dict<Key, BasicTree<L>> flatten_root(const typename BasicTree<L>::dict_type& xs,
                                     const FlattenDictOptions<L>& opts, const KeyFn& key) {
  Dict<Key, BasicTree<L>> result;
  Path prefix;
  if (opts.is_leaf && opts.is_leaf(prefix, BasicTree<L>(xs))) {
    result.insert_or_assign(key(prefix), BasicTree<L>(xs));
    return result;
  }
  flatten_into(result, xs, prefix, opts, key);
  return result;
}

template <class L>
const typename BasicTree<L>::dict_type& expect_dict(const BasicTree<L>& xs, const char* fn) {
  if (xs.is_frozen_dict()) return xs.as_frozen_dict().dict();
  if (!xs.is_dict()) {
    throw TypeError(std::string(fn) + ": expected (frozen)dict; got " +
                    std::string(pytree::kind_name(xs.kind())));
  }
  return xs.as_dict();
}

template <class V>
struct flat_leaf {
  using type = V;
};
template <class L>
struct flat_leaf<BasicTree<L>> {
  using type = L;
};

template <class L, class Flat, class PathOf>
BasicTree<L> unflatten(const Flat& xs, const PathOf& path_of) {
  BasicTree<L> result = BasicTree<L>::dict();
  for (const auto& [flat_key, flat_value] : xs) {
    const Path path = path_of(flat_key);
    if (path.empty()) {
      throw ValueError("unflatten_dict: the empty key path () names no entry");
    }
    BasicTree<L>* cursor = &result;
    for (std::size_t i = 0; i + 1 < path.size(); ++i) {
      auto& d = cursor->as_dict();
      auto it = d.find(path[i]);
      if (it == d.end()) {
        cursor = &d[path[i]];
        *cursor = BasicTree<L>::dict();
      } else if (!it->second.is_dict()) {
        const Path head(path.begin(), path.begin() + static_cast<std::ptrdiff_t>(i) + 1);
        throw ValueError(pytree::detail::cat(
            "unflatten_dict: key ", path_repr(path), " needs a dict at ", path_repr(head),
            ", but an earlier key put a ", pytree::kind_name(it->second.kind()), " there"));
      } else {
        cursor = &it->second;
      }
    }
    BasicTree<L> value(flat_value);
    if (value.is_empty_node()) value = BasicTree<L>::dict();
    // A later key replaces whatever an earlier one put at the same place (Flax's behaviour).
    cursor->as_dict().insert_or_assign(path.back(), std::move(value));
  }
  return result;
}

}  // namespace detail

// flatten_dict(xs): {('a', 'b'): leaf, ...} in depth-first insertion order; empty dicts vanish
// unless keep_empty_nodes. TypeError when xs is not a dict.
template <class L>
Dict<Path, BasicTree<L>> flatten_dict(const BasicTree<L>& xs,
                                      const FlattenDictOptions<L>& opts = {}) {
  return detail::flatten_root<Path>(detail::expect_dict(xs, "flatten_dict"), opts,
                                    [](const Path& p) { return p; });
}
template <class L>
Dict<Path, BasicTree<L>> flatten_dict(const FrozenDict<L>& xs,
                                      const FlattenDictOptions<L>& opts = {}) {
  return detail::flatten_root<Path>(xs.dict(), opts, [](const Path& p) { return p; });
}

// flatten_dict(xs, sep="/"): {'a/b': leaf, ...}.
template <class L>
Dict<std::string, BasicTree<L>> flatten_dict(const BasicTree<L>& xs, std::string_view sep,
                                             const FlattenDictOptions<L>& opts = {}) {
  return detail::flatten_root<std::string>(detail::expect_dict(xs, "flatten_dict"), opts,
                                           [sep](const Path& p) { return detail::join(p, sep); });
}
template <class L>
Dict<std::string, BasicTree<L>> flatten_dict(const FrozenDict<L>& xs, std::string_view sep,
                                             const FlattenDictOptions<L>& opts = {}) {
  return detail::flatten_root<std::string>(xs.dict(), opts,
                                           [sep](const Path& p) { return detail::join(p, sep); });
}

// unflatten_dict(flat): nested plain dicts from {path tuple: value}; empty_node values become
// {}; a later path replaces an earlier value at the same place; a path through an existing
// non-dict value is a ValueError. Values may be Trees or leaves (any mapping or range of pairs).
template <class Flat>
auto unflatten_dict(const Flat& xs) {
  using Entry = std::remove_cvref_t<decltype(*std::begin(xs))>;
  using Key = std::remove_cvref_t<typename Entry::first_type>;
  using L = typename detail::flat_leaf<std::remove_cvref_t<typename Entry::second_type>>::type;
  static_assert(std::is_same_v<Key, Path>,
                "unflatten_dict: string keys need a separator: unflatten_dict(flat, \"/\")");
  return detail::unflatten<L>(xs, [](const Path& p) -> const Path& { return p; });
}

// unflatten_dict(flat, sep): keys are split on sep.
template <class Flat>
auto unflatten_dict(const Flat& xs, std::string_view sep) {
  using Entry = std::remove_cvref_t<decltype(*std::begin(xs))>;
  using L = typename detail::flat_leaf<std::remove_cvref_t<typename Entry::second_type>>::type;
  if (sep.empty()) throw ValueError("unflatten_dict: empty separator");
  return detail::unflatten<L>(xs, [sep](std::string_view k) { return detail::split(k, sep); });
}

// path_aware_map(f, xs): f(path, leaf) on every leaf, empty dicts kept; the result is a plain
// dict tree. f's second parameter may be a Tree to receive non-leaf values (tuples, lists).
template <class F, class L>
auto path_aware_map(F&& f, const BasicTree<L>& xs) {
  constexpr bool wants_tree = pytree::detail::param_wants_tree<F, 1>();
  using Arg = std::conditional_t<wants_tree, const BasicTree<L>&, const L&>;
  using R = std::remove_cvref_t<std::invoke_result_t<F&, const Path&, Arg>>;
  using Out = std::conditional_t<pytree::detail::is_basic_tree<R>::value, R, BasicTree<R>>;
  using OutLeaf = typename Out::leaf_type;
  Dict<Path, Out> mapped;
  for (const auto& [path, v] : flatten_dict(xs, {.keep_empty_nodes = true})) {
    if (v.is_empty_node()) {
      mapped.insert_or_assign(path, Out(empty_node));
    } else if constexpr (wants_tree) {
      mapped.insert_or_assign(path, Out(f(path, v)));
    } else {
      if (!v.is_leaf()) {
        throw TypeError(pytree::detail::cat(
            "path_aware_map: the value at ", detail::path_repr(path), " is a ",
            pytree::kind_name(v.kind()), "; take a Tree parameter to receive non-leaf values"));
      }
      mapped.insert_or_assign(path, Out(f(path, v.leaf())));
    }
  }
  return detail::unflatten<OutLeaf>(mapped, [](const Path& p) -> const Path& { return p; });
}
template <class F, class L>
auto path_aware_map(F&& f, const FrozenDict<L>& xs) {
  return path_aware_map(std::forward<F>(f), xs.unfreeze());
}

// flax.traverse_util.ModelParamTraversal: selects params whose '/'-joined path ('/x/kernel')
// and value pass filter(path, value).
template <class Filter>
class ModelParamTraversal {
 public:
  explicit ModelParamTraversal(Filter filter) : filter_(std::move(filter)) {}

  // The selected values in sorted-path order. ValueError unless inputs is a dict.
  template <class L>
  std::vector<BasicTree<L>> iterate(const BasicTree<L>& inputs) const {
    std::vector<BasicTree<L>> out;
    for (const auto& [key, value] : sorted_flat(params_dict(inputs), false)) {
      if (filter_(name(key), value)) out.push_back(value);
    }
    return out;
  }
  template <class L>
  std::vector<BasicTree<L>> iterate(const FrozenDict<L>& inputs) const {
    return iterate(inputs.unfreeze());
  }

  // fn applied to the selected leaves; empty sub-dicts survive; a FrozenDict stays frozen.
  template <class Fn, class L>
  BasicTree<L> update(Fn&& fn, const BasicTree<L>& inputs) const {
    Dict<Path, BasicTree<L>> updated;
    for (const auto& [key, value] : sorted_flat(params_dict(inputs), true)) {
      if (!value.is_empty_node() && filter_(name(key), value)) {
        updated.insert_or_assign(key, BasicTree<L>(fn(value.leaf())));
      } else {
        updated.insert_or_assign(key, value);
      }
    }
    return unflatten_dict(updated);
  }
  template <class Fn, class L>
  FrozenDict<L> update(Fn&& fn, const FrozenDict<L>& inputs) const {
    return FrozenDict<L>(update(std::forward<Fn>(fn), inputs.unfreeze()));
  }

 private:
  template <class L>
  static const BasicTree<L>& params_dict(const BasicTree<L>& inputs) {
    if (!inputs.is_dict()) {
      throw ValueError(pytree::detail::cat(
          "ModelParamTraversal: Can only traverse a flax Model instance or a nested dict, not ",
          pytree::kind_name(inputs.kind())));
    }
    return inputs;
  }
  template <class L>
  static std::vector<std::pair<Path, BasicTree<L>>> sorted_flat(const BasicTree<L>& params,
                                                                bool keep_empty_nodes) {
    auto flat = flatten_dict(params, {.keep_empty_nodes = keep_empty_nodes});
    std::vector<std::pair<Path, BasicTree<L>>> items(flat.begin(), flat.end());
    std::sort(items.begin(), items.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    return items;
  }
  static std::string name(const Path& key) {
    return pytree::detail::cat("/", detail::join(key, "/"));
  }

  Filter filter_;
};

}  // namespace linum::traverse_util
