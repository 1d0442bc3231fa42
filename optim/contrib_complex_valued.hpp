// optax.contrib.split_real_and_imaginary: runs a transformation on complex parameters as if each
// were the pair of its real and imaginary parts (two real parameters), and merges the pairs of
// its updates back into complex updates; SplitRealAndImaginaryState.
#pragma once

#include <type_traits>
#include <utility>

#include <linum/optim/base.hpp>

namespace linum::optim {

template <class S>
struct SplitRealAndImaginaryState {
  BOOST_HANA_DEFINE_STRUCT(SplitRealAndImaginaryState, (S, inner_state));
};

namespace detail {
// A complex leaf as the tuple (real, imaginary) (optax's SplitRealAndImaginaryArrays, which
// flattens to the same two leaves); a real leaf as itself.
Tree split_real_imag_leaf(const Array& x);
// The inverse: real + imaginary * 1j from such a tuple; a leaf as itself.
Array merge_real_imag_leaf(const Tree& t);
// Both over a dynamic Tree (its complex leaves become / come back from tuples); merge walks
// `like` (the tree that was split) beside the split one.
Tree split_real_imag_dynamic(const Tree& t);
Tree merge_real_imag_dynamic(const Tree& like, const Tree& split);

// A tree with every leaf split: Array and Tree give a Tree, other containers keep their type
// with Tree leaves.
template <class T>
auto split_real_imag(const T& t) {
  if constexpr (std::is_same_v<T, Array>)
    return split_real_imag_leaf(t);
  else if constexpr (std::is_same_v<T, Tree>)
    return split_real_imag_dynamic(t);
  else
    return pytree::tree_map([](const Array& x) { return split_real_imag_leaf(x); }, t);
}
template <class U, class V>
U merge_real_imag(const U& like, const V& split) {
  if constexpr (std::is_same_v<U, Array>)
    return merge_real_imag_leaf(split);
  else if constexpr (std::is_same_v<U, Tree>)
    return merge_real_imag_dynamic(like, split);
  else
    return pytree::tree_map([](const Array&, const Tree& s) { return merge_real_imag_leaf(s); },
                            like, split);
}
}  // namespace detail

template <class Inner>
struct SplitRealAndImaginary : Transformation<SplitRealAndImaginary<Inner>> {
  Inner inner;
  template <class P>
  auto init(const P& params) const {
    auto s = inner.init(detail::split_real_imag(params));
    return SplitRealAndImaginaryState<decltype(s)>{std::move(s)};
  }
  template <class U, class S, class Q>
  std::pair<U, S> update_impl(const U& updates, const S& state, const Q* params) const {
    auto split = detail::split_real_imag(updates);
    auto [u, s] = params ? inner.update(split, state.inner_state, detail::split_real_imag(*params))
                         : inner.update(split, state.inner_state);
    return {detail::merge_real_imag(updates, u), S{std::move(s)}};
  }
};

// optax.contrib.split_real_and_imaginary(inner): inner sees each complex parameter and update as
// the pair of its real and imaginary parts (real ones unchanged), so that an optimizer on complex
// parameters behaves as on the two real ones. JAX's gradients of a real loss in complex
// parameters are conjugated (jax.grad's convention): conjugate them (tree_conj) before update.
template <class Inner>
SplitRealAndImaginary<Inner> split_real_and_imaginary(Inner inner) {
  return SplitRealAndImaginary<Inner>{{}, std::move(inner)};
}

}  // namespace linum::optim
