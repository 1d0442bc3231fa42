// Named-axis collectives (jax.lax.psum, pmean, pmax, pmin, all_gather, axis_index): inside
// vmap(f, {.axis_name = "i"}) they reduce over, gather along, or index the batch of the vmap
// named "i" (the innermost one with that name); other vmaps pass them through.
#pragma once

#include <string>

#include <linum/autodiff/array.hpp>
#include <linum/autodiff/tree_bridge.hpp>

namespace linum {

Array psum(const Array& x, const std::string& axis_name);
Array pmean(const Array& x, const std::string& axis_name);
Array pmax(const Array& x, const std::string& axis_name);
Array pmin(const Array& x, const std::string& axis_name);
// Every example's x stacked along `axis` of the result (tiled: concatenated along it instead).
Array all_gather(const Array& x, const std::string& axis_name, int axis = 0, bool tiled = false);
// The position of the current example along the named axis (int32 scalar per example).
Array axis_index(const std::string& axis_name);

// The collectives over every leaf of a pytree, as JAX's accept pytrees.
template <class T>
T psum(const T& tree, const std::string& axis_name) {
  return detail::tree_apply(tree, [&](const Array& a) { return psum(a, axis_name); });
}
template <class T>
T pmean(const T& tree, const std::string& axis_name) {
  return detail::tree_apply(tree, [&](const Array& a) { return pmean(a, axis_name); });
}
template <class T>
T pmax(const T& tree, const std::string& axis_name) {
  return detail::tree_apply(tree, [&](const Array& a) { return pmax(a, axis_name); });
}
template <class T>
T pmin(const T& tree, const std::string& axis_name) {
  return detail::tree_apply(tree, [&](const Array& a) { return pmin(a, axis_name); });
}

}  // namespace linum
