// jax.tree_util for C++ types: tree_leaves, tree_flatten, tree_unflatten, tree_structure,
// tree_map (over several trees, leaf type may change), tree_map_with_path, tree_reduce,
// tree_all, over every pytree kind of traits.hpp (static containers, Hana structs, custom
// nodes, the dynamic BasicTree and FrozenDict). Order is JAX's: dicts by sorted key.
// The pieces live in flatten.hpp, unflatten.hpp, tree_map.hpp (with leaf_types.hpp and
// callable_traits.hpp); this header includes them all.
#pragma once

#include <linum/pytree/callable_traits.hpp>
#include <linum/pytree/describe.hpp>
#include <linum/pytree/flatten.hpp>
#include <linum/pytree/leaf_types.hpp>
#include <linum/pytree/retype.hpp>
#include <linum/pytree/tree_map.hpp>
#include <linum/pytree/unflatten.hpp>
