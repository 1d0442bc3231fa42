// jax.flatten_util.ravel_pytree for optim: a pytree of Arrays as one flat vector and back, which
// optax uses to treat a whole tree as one vector (projection_simplex, the second-order helpers).
#pragma once

#include <linum/autodiff/array.hpp>
#include <linum/autodiff/tree_bridge.hpp>

namespace linum::optim::detail {

// Every non-empty leaf raveled and concatenated, in the leaves' common dtype (JAX's result_type,
// weak types included: a weak scalar leaf takes a float32 leaf's dtype); a float32 vector of
// size 0 when there are none.
Array ravel_leaves(const Arrays& leaves);
// The inverse: flat (a vector with as many elements as the leaves) cut into the leaves' shapes
// and cast back to their dtypes; empty leaves stay empty. As JAX's unravel, a flat of another
// shape is a ValueError and one of another dtype than ravel_leaves gives is a TypeError, both
// naming `fn`.
Arrays unravel_leaves(const Array& flat, const Arrays& like, const char* fn);

template <class T>
Array ravel_tree(const T& tree) {
  return ravel_leaves(linum::detail::tree_arrays(tree));
}
template <class T>
T unravel_like(const T& like, const Array& flat, const char* fn) {
  return linum::detail::tree_rebuild(like,
                                     unravel_leaves(flat, linum::detail::tree_arrays(like), fn));
}

}  // namespace linum::optim::detail
