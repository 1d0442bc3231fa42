// jax.eval_shape: runs a function on ShapeDtype placeholders at the abstract level and returns
// the shapes and dtypes of its outputs, without allocating or computing any array data.
#pragma once

#include <cstdint>
#include <type_traits>
#include <utility>

#include <linum/autodiff/primitive.hpp>
#include <linum/autodiff/trace.hpp>
#include <linum/autodiff/tree_bridge.hpp>

namespace linum {

// The aval of an array (concrete or traced): what eval_shape reports for it.
inline ShapeDtype shape_dtype(const Array& a) { return {a.shape(), a.dtype(), a.weak_type()}; }

namespace detail {

// f applied to each leaf of t (t itself when it is a leaf); the leaf type may change.
template <class T, class F>
auto map_leaves(const T& t, F&& f) {
  if constexpr (pytree::is_leaf_v<T>)
    return f(t);
  else
    return pytree::tree_map(std::forward<F>(f), t);
}

// An abstract tracer for a ShapeDtype or Array leaf of eval_shape's arguments; other leaves
// (Python-like scalars) pass through as static values.
template <class L>
auto to_abstract_leaf(AbstractTrace& trace, const L& leaf) {
  if constexpr (std::is_same_v<L, ShapeDtype>)
    return trace.wrap(leaf);
  else if constexpr (std::is_same_v<L, Array>)
    return trace.wrap(shape_dtype(leaf));
  else
    return leaf;
}

// Runs f at a fresh abstract level on its operands made abstract: what f would return, with
// no data computed (cond/switch's untaken branches).
template <class F, class... Ops>
auto abstract_call(F&& f, const Ops&... ops) {
  AbstractTrace trace;
  TraceScope scope(trace);
  [[maybe_unused]] auto leaf_in = [&](const auto& leaf) { return to_abstract_leaf(trace, leaf); };
  return std::forward<F>(f)(map_leaves(ops, leaf_in)...);
}

// The first abstract leaf of a or b (nullptr when every leaf has a value).
const Array* first_abstract(const Arrays& a, const Arrays& b = {});
// Tracers of `trace` with the leaves' avals, minus their leading axis when drop_leading.
Arrays abstract_leaves(AbstractTrace& trace, const Arrays& leaves, bool drop_leading = false);
// Tracers of ref's abstract level with the leaves' avals, plus a leading axis `lead` if >= 0.
Arrays rewrap_abstract(const Array& ref, const Arrays& leaves, std::int64_t lead = -1);

}  // namespace detail

// jax.eval_shape(f, *args): args are pytrees whose leaves are ShapeDtype (or Arrays, used only
// for their shape and dtype); f sees them as Arrays with no value. Returns f's output tree with
// ShapeDtype leaves. Reading a value inside f (item(), concrete(), a Python-style `if`) throws
// ConcretizationTypeError, as in JAX.
template <class F, class... Args>
auto eval_shape(F&& f, const Args&... args) {
  detail::AbstractTrace trace;
  detail::TraceScope scope(trace);
  auto leaf_in = [&](const auto& leaf) { return detail::to_abstract_leaf(trace, leaf); };
  auto out = std::forward<F>(f)(detail::map_leaves(args, leaf_in)...);
  return detail::map_leaves(out, [](const auto& leaf) {
    if constexpr (std::is_same_v<std::decay_t<decltype(leaf)>, Array>)
      return shape_dtype(leaf);
    else
      return leaf;
  });
}

}  // namespace linum
