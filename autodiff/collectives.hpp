// Named-axis collectives (jax.lax.psum, pmean, pmax, pmin, all_gather, axis_index): inside
// vmap(f, {.axis_name = "i"}) they reduce over, gather along, or index the batch of the vmap
// named "i" (the innermost one with that name); other vmaps pass them through. A name that no
// enclosing vmap owns may be served by an AxisProvider (distributed::pmap's process axis). A list
// of names, psum(x, {"devices", "batch"}), reduces over all of them, as JAX's tuple axis_name.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

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

// Over several named axes at once (JAX's tuple axis_name): the reduction over all of them.
Array psum(const Array& x, const std::vector<std::string>& axis_names);
Array pmean(const Array& x, const std::vector<std::string>& axis_names);
Array pmax(const Array& x, const std::vector<std::string>& axis_names);
Array pmin(const Array& x, const std::vector<std::string>& axis_names);
// Braces pick these (an initializer_list beats std::string's iterator-pair constructor).
inline Array psum(const Array& x, std::initializer_list<std::string> axis_names) {
  return psum(x, std::vector<std::string>(axis_names));
}
inline Array pmean(const Array& x, std::initializer_list<std::string> axis_names) {
  return pmean(x, std::vector<std::string>(axis_names));
}
inline Array pmax(const Array& x, std::initializer_list<std::string> axis_names) {
  return pmax(x, std::vector<std::string>(axis_names));
}
inline Array pmin(const Array& x, std::initializer_list<std::string> axis_names) {
  return pmin(x, std::vector<std::string>(axis_names));
}

namespace detail {

// A named axis served by something other than vmap: distributed::pmap's axis, one member per
// process. Its collectives are its own primitives; autodiff only routes names to it (no MPI here).
class AxisProvider {
 public:
  virtual ~AxisProvider() = default;
  virtual std::int64_t axis_size() const = 0;
  virtual Array psum(const Array& x) const = 0;
  virtual Array pmax(const Array& x) const = 0;
  virtual Array pmin(const Array& x) const = 0;
  // Every member's x stacked at `axis` of the result (ndim + 1 dimensions).
  virtual Array all_gather(const Array& x, int axis) const = 0;
  virtual Array axis_index() const = 0;  // int32 scalar: this member's position
};

// Binds `name` to `provider` on this thread while alive (scopes nest; the innermost wins). A vmap
// with the same name still takes precedence over it.
class AxisProviderScope {
 public:
  AxisProviderScope(std::string name, std::shared_ptr<const AxisProvider> provider);
  ~AxisProviderScope();
  AxisProviderScope(const AxisProviderScope&) = delete;
  AxisProviderScope& operator=(const AxisProviderScope&) = delete;
};
// The innermost provider bound to `name` on this thread, or nullptr.
const AxisProvider* find_axis_provider(const std::string& name);

}  // namespace detail

// The collectives over every leaf of a pytree, as JAX's accept pytrees.
template <class T>
T psum(const T& tree, const std::string& axis_name) {
  return detail::tree_apply(tree, [&](const Array& a) { return psum(a, axis_name); });
}
template <class T>
T psum(const T& tree, std::initializer_list<std::string> axis_names) {
  const std::vector<std::string> names(axis_names);
  return detail::tree_apply(tree, [&](const Array& a) { return psum(a, names); });
}
template <class T>
T pmean(const T& tree, const std::string& axis_name) {
  return detail::tree_apply(tree, [&](const Array& a) { return pmean(a, axis_name); });
}
template <class T>
T pmean(const T& tree, std::initializer_list<std::string> axis_names) {
  const std::vector<std::string> names(axis_names);
  return detail::tree_apply(tree, [&](const Array& a) { return pmean(a, names); });
}
template <class T>
T pmax(const T& tree, const std::string& axis_name) {
  return detail::tree_apply(tree, [&](const Array& a) { return pmax(a, axis_name); });
}
template <class T>
T pmax(const T& tree, std::initializer_list<std::string> axis_names) {
  const std::vector<std::string> names(axis_names);
  return detail::tree_apply(tree, [&](const Array& a) { return pmax(a, names); });
}
template <class T>
T pmin(const T& tree, const std::string& axis_name) {
  return detail::tree_apply(tree, [&](const Array& a) { return pmin(a, axis_name); });
}
template <class T>
T pmin(const T& tree, std::initializer_list<std::string> axis_names) {
  const std::vector<std::string> names(axis_names);
  return detail::tree_apply(tree, [&](const Array& a) { return pmin(a, names); });
}

}  // namespace linum
