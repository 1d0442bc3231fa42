// flax.linen.BatchApply: runs f with the leading num_dims axes of its array inputs merged into one
// and splits the leading axis of every output back into those dims, e.g. a per-example layer over
// a (time, batch, ...) array. Like Flax it is a plain callable wrapper, not a Module: a module
// passed as f keeps its own place in the parameter tree.
#pragma once

#include <optional>
#include <stdexcept>
#include <tuple>
#include <type_traits>
#include <utility>

#include <linum/autodiff/array.hpp>
#include <linum/autodiff/tree_bridge.hpp>
#include <linum/error.hpp>

namespace linum::nn {

namespace detail {
// x with its leading num_dims axes merged into one (x unchanged when it has fewer axes).
Array merge_leading_dims(const Array& x, int num_dims);
// x reshaped to to_dim + x.shape[1:]; a size mismatch is BatchApply's ValueError.
Array split_leading_dim(const Array& x, const Shape& to_dim);
[[noreturn]] void throw_no_mergeable_input(int num_dims);
void check_batch_apply_num_dims(int num_dims);

// Arguments BatchApply reshapes: Arrays and pytrees of Arrays (Tree, vectors, tuples, ...).
// Anything else (numbers, options structs) passes through as it is.
template <class A>
constexpr bool is_array_tree() {
  if constexpr (std::is_same_v<A, Array>)
    return true;
  else if constexpr (!pytree::detail::is_pytree_v<A> || pytree::is_leaf_v<A>)
    return false;
  else
    return linum::detail::leaves_hold_arrays<decltype(pytree::detail::leaf_types_of<A>())>::value;
}
}  // namespace detail

// F is a callable; an Array there means `nn::BatchApply(f)(x);` was read as a declaration of a
// variable f initialised with x (C++'s most vexing parse): write `auto y = nn::BatchApply(f)(x);`.
template <class F>
requires(!std::is_same_v<F, Array>) class BatchApply {
 public:
  // num_dims: how many leading axes to merge (Flax's default 2).
  explicit BatchApply(F f, int num_dims = 2) : num_dims(num_dims), f_(std::move(f)) {
    detail::check_batch_apply_num_dims(num_dims);
  }
  int num_dims;

  // f(merged args...) with every output leaf's leading axis split into the leading num_dims axes
  // of the first array input (in argument order, leaves in pytree order) that has at least
  // num_dims axes; arrays with fewer axes go to f unmerged. Flax's ValueError when no input has
  // num_dims axes.
  template <class... Args>
  auto operator()(const Args&... args) {
    std::optional<Shape> example;
    auto find = [&](const auto& a) {
      using A = std::remove_cvref_t<decltype(a)>;
      if constexpr (detail::is_array_tree<A>()) {
        for (const Array& leaf : linum::detail::tree_arrays(a)) {
          if (example) break;
          if (leaf.ndim() >= num_dims)
            example = Shape(leaf.shape().begin(), leaf.shape().begin() + num_dims);
        }
      }
    };
    (find(args), ...);
    if (!example) detail::throw_no_mergeable_input(num_dims);
    std::tuple<decltype(merge(args))...> merged{merge(args)...};
    using Out = std::remove_cvref_t<decltype(std::apply(f_, merged))>;
    static_assert(detail::is_array_tree<Out>(),
                  "nn::BatchApply: f must return an Array or a pytree of Arrays (its leaves' "
                  "leading axes are split)");
    return linum::detail::tree_apply(std::apply(f_, merged), [&](const Array& y) {
      return detail::split_leading_dim(y, *example);
    });
  }

 private:
  F f_;

  template <class A>
  decltype(auto) merge(const A& a) const {
    if constexpr (detail::is_array_tree<A>())
      return linum::detail::tree_apply(
          a, [&](const Array& x) { return detail::merge_leading_dims(x, num_dims); });
    else
      return (a);  // passed through by reference
  }
};

}  // namespace linum::nn
