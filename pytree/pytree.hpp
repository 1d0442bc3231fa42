// linum's pytrees in one include: traits, the dynamic Tree, FrozenDict, tree_util algorithms,
// printing, and traverse_util. The common names are also available directly in `linum::`.
//
// What is a pytree (traits.hpp): leaves are arithmetic types and types declared with
// `template <> struct linum::pytree::is_leaf<T> : std::true_type {};`; nodes are std::tuple,
// std::pair, std::array (tuples), std::vector (lists), std::map / std::unordered_map / Dict with
// std::string keys (dicts, flattened in sorted-key order), std::optional (None when empty),
// Hana structs (namedtuples: named children; LINUM_PYTREE_STATIC_FIELDS marks members static,
// Flax's pytree_node=False, static_field.hpp), node_traits<T> specialisations (custom nodes),
// FrozenDict<L>, the dynamic BasicTree<L> (which may hold FrozenDict nodes), and std::map / Dict
// with std::vector<std::string> keys (flatten_dict's tuple-keyed dicts, sorted-key order).
//
// linum::pytree (tree_util.hpp, treedef.hpp, key_path.hpp):
//   tree_leaves<L>(t), tree_flatten<L>(t) -> (leaves, TreeDef), tree_unflatten<T>(def, leaves),
//   tree_unflatten(def, leaves) -> BasicTree, tree_unflatten_like(t, leaves), tree_structure(t),
//   tree_map(f, t, rest...), tree_map_with_path(f, t, rest...), tree_flatten_with_path,
//   tree_leaves_with_path, tree_reduce(f, t[, init]), tree_all(t[, pred]), keystr(path).
// linum::pytree (frozen_dict.hpp): FrozenDict<L>, freeze, unfreeze, copy, pop, pretty_repr.
// linum::pytree (repr.hpp): repr(x), pformat(x), the Repr<T> printing customisation point.
// linum::traverse_util (traverse_util.hpp): flatten_dict, unflatten_dict, path_aware_map,
//   empty_node, ModelParamTraversal.
#pragma once

#include <linum/error.hpp>
#include <linum/pytree/dict.hpp>
#include <linum/pytree/frozen_dict.hpp>
#include <linum/pytree/key_path.hpp>
#include <linum/pytree/repr.hpp>
#include <linum/pytree/traits.hpp>
#include <linum/pytree/traverse_util.hpp>
#include <linum/pytree/tree.hpp>
#include <linum/pytree/tree_util.hpp>
#include <linum/pytree/treedef.hpp>

namespace linum {

using pytree::BasicTree;
using pytree::FrozenDict;
using pytree::TreeDef;

using pytree::freeze;
using pytree::keystr;
using pytree::pretty_repr;
using pytree::tree_all;
using pytree::tree_flatten;
using pytree::tree_flatten_with_path;
using pytree::tree_leaves;
using pytree::tree_leaves_with_path;
using pytree::tree_map;
using pytree::tree_map_with_path;
using pytree::tree_reduce;
using pytree::tree_structure;
using pytree::tree_unflatten;
using pytree::unfreeze;

}  // namespace linum
