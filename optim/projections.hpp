// optax.projections: Euclidean projections of a pytree of Arrays onto convex sets (box,
// hypercube, non-negative orthant, simplex, l1 / l2 / l-infinity balls and spheres, vector,
// hyperplane, halfspace). Each treats the whole tree as one vector, as optax's do, and is built
// from linum ops, so it differentiates, vmaps and jits like optax's under JAX. Empty Array()
// leaves (optax's MaskedNode) pass through untouched.
#pragma once

#include <type_traits>

#include <linum/autodiff/array.hpp>
#include <linum/autodiff/tree_bridge.hpp>

namespace linum::optim::projections {

namespace detail {
// The leaf-level projections (projections.cpp), over the leaves in flattening order.
Arrays non_negative(const Arrays& tree);
Arrays box(const Arrays& tree, const Arrays& lower, const Arrays& upper);
Arrays simplex(const Arrays& tree, const Array& scale);
Arrays l1_sphere(const Arrays& tree, const Array& scale);
Arrays l1_ball(const Arrays& tree, const Array& scale);
Arrays l2_sphere(const Arrays& tree, const Array& scale);
Arrays l2_ball(const Arrays& tree, const Array& scale);
Arrays linf_ball(const Arrays& tree, const Array& scale);
Arrays vector(const Arrays& x, const Arrays& a);
Arrays hyperplane(const Arrays& x, const Arrays& a, const Array& b);
Arrays halfspace(const Arrays& x, const Arrays& a, const Array& b);
// ValueError naming fn unless `other` (called `what`) has the structure of `tree`.
void check_structure(const char* fn, const char* what, const pytree::TreeDef& tree,
                     const pytree::TreeDef& other);

template <class T>
void check_same_structure(const char* fn, const char* what, const T& tree, const T& other) {
  if constexpr (!std::is_same_v<T, Array>)
    check_structure(fn, what, pytree::tree_structure(tree), pytree::tree_structure(other));
}
template <class T>
Arrays leaves(const T& t) {
  return linum::detail::tree_arrays(t);
}
}  // namespace detail

// optax.projections.projection_non_negative(tree): relu of every leaf.
template <class T>
T projection_non_negative(const T& tree) {
  return linum::detail::tree_rebuild(tree, detail::non_negative(detail::leaves(tree)));
}

// optax.projections.projection_box(tree, lower, upper): jnp.clip(leaf, lower, upper) leafwise.
// The bounds have the tree's structure (their leaves broadcast against its leaves); for a single
// Array they may be scalars. optax maps jnp.clip over (tree, lower, upper), so, as there,
// scalar bounds for a tree of several leaves do not type-check.
template <class T>
T projection_box(const T& tree, const std::type_identity_t<T>& lower,
                 const std::type_identity_t<T>& upper) {
  detail::check_same_structure("projection_box", "lower", tree, lower);
  detail::check_same_structure("projection_box", "upper", tree, upper);
  return linum::detail::tree_rebuild(
      tree, detail::box(detail::leaves(tree), detail::leaves(lower), detail::leaves(upper)));
}

// optax.projections.projection_hypercube(tree, scale=1): projection_box(tree, 0, scale). optax's
// lower bound is the scalar 0, which jax.tree.map pairs with a single array only, so this takes
// one Array; scale is a scalar or an Array broadcasting against it.
Array projection_hypercube(const Array& tree, const Array& scale = 1.0);

// optax.projections.projection_simplex(tree, scale=1): the nearest point p >= 0 with sum(p) =
// scale, over the whole tree raveled into one vector (jax.flatten_util.ravel_pytree) by the
// sort-based algorithm. Differentiable as optax's custom JVP: with S the support (p > 0) and
// |S| its size, the JVP of v is S*v - (<S, v> / |S|) S (and the second derivative is zero).
// scale is a rank-0 Array (it may be traced, batched or differentiated).
template <class T>
T projection_simplex(const T& tree, const Array& scale = 1.0) {
  return linum::detail::tree_rebuild(tree, detail::simplex(detail::leaves(tree), scale));
}

// optax.projections.projection_l1_sphere(tree, scale=1): sign(tree) * projection_simplex(|tree|,
// scale), the nearest point with l1 norm scale.
template <class T>
T projection_l1_sphere(const T& tree, const Array& scale = 1.0) {
  return linum::detail::tree_rebuild(tree, detail::l1_sphere(detail::leaves(tree), scale));
}

// optax.projections.projection_l1_ball(tree, scale=1): tree itself if its l1 norm is <= scale,
// else projection_l1_sphere (a lax.cond: only the branch taken is differentiated).
template <class T>
T projection_l1_ball(const T& tree, const Array& scale = 1.0) {
  return linum::detail::tree_rebuild(tree, detail::l1_ball(detail::leaves(tree), scale));
}

// optax.projections.projection_l2_sphere(tree, scale=1): (scale / ||tree||_2) * tree.
template <class T>
T projection_l2_sphere(const T& tree, const Array& scale = 1.0) {
  return linum::detail::tree_rebuild(tree, detail::l2_sphere(detail::leaves(tree), scale));
}

// optax.projections.projection_l2_ball(tree, scale=1): (scale / sqrt(max(||tree||^2, scale^2)))
// * tree (the gradient at 0 is the identity, not NaN).
template <class T>
T projection_l2_ball(const T& tree, const Array& scale = 1.0) {
  return linum::detail::tree_rebuild(tree, detail::l2_ball(detail::leaves(tree), scale));
}

// optax.projections.projection_linf_ball(tree, scale=1): projection_box with bounds -scale and
// scale filled like each leaf (in its dtype).
template <class T>
T projection_linf_ball(const T& tree, const Array& scale = 1.0) {
  return linum::detail::tree_rebuild(tree, detail::linf_ball(detail::leaves(tree), scale));
}

// optax.projections.projection_vector(x, a): (<x, a> / <a, a>) a. a has x's structure and
// leaf shapes (ValueError otherwise); the result has a's.
template <class T>
T projection_vector(const T& x, const std::type_identity_t<T>& a) {
  detail::check_same_structure("projection_vector", "a", x, a);
  return linum::detail::tree_rebuild(a, detail::vector(detail::leaves(x), detail::leaves(a)));
}

// optax.projections.projection_hyperplane(x, a, b): x + ((b - <x, a>) / <a, a>) a, the nearest
// point y with <a, y> = b. a has x's structure and leaf shapes; b is a rank-0 Array.
template <class T>
T projection_hyperplane(const T& x, const std::type_identity_t<T>& a, const Array& b) {
  detail::check_same_structure("projection_hyperplane", "a", x, a);
  return linum::detail::tree_rebuild(x,
                                     detail::hyperplane(detail::leaves(x), detail::leaves(a), b));
}

// optax.projections.projection_halfspace(x, a, b): as projection_hyperplane with the step
// clipped to <= 0, the nearest point y with <a, y> <= b (x itself when it already is one).
template <class T>
T projection_halfspace(const T& x, const std::type_identity_t<T>& a, const Array& b) {
  detail::check_same_structure("projection_halfspace", "a", x, a);
  return linum::detail::tree_rebuild(x, detail::halfspace(detail::leaves(x), detail::leaves(a), b));
}

}  // namespace linum::optim::projections
