// linum's pytrees in one include: traits, the dynamic Tree, FrozenDict, tree_util algorithms,
// printing, and traverse_util. The common names are also available directly in `linum::`.
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
