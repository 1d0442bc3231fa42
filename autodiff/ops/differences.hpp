// Differences and derivatives of sampled data (jax.numpy names): diff, ediff1d, gradient,
// unwrap, and the cross product of 2- and 3-vectors. All are differentiable compositions.
#pragma once

#include <optional>
#include <vector>

#include <linum/autodiff/array.hpp>
#include <linum/autodiff/ops/axes.hpp>

namespace linum {

// jnp.diff: the n-th forward difference along `axis` (out[i] = a[i + 1] - a[i], n times; bools
// use !=). prepend / append (scalars broadcast to one slice) are joined to `a` first.
Array diff(const Array& a, int n = 1, int axis = -1,
           const std::optional<Array>& prepend = std::nullopt,
           const std::optional<Array>& append = std::nullopt);
// jnp.ediff1d: the differences of the flattened array, with to_begin / to_end (flattened, cast
// to its dtype) joined around them.
Array ediff1d(const Array& ary, const std::optional<Array>& to_end = std::nullopt,
              const std::optional<Array>& to_begin = std::nullopt);
// jnp.gradient: second-order central differences inside, first-order ones at the edges, along
// each of `axis` (all axes by default). Spacing: none (1), one value for every axis, or one per
// axis; each a scalar step or a 1-D array of coordinates. JAX's edge_order is not supported.
// One array per axis (a single axis gives a list of one).
Arrays gradient(const Array& f, const Arrays& spacing = {}, const Axes& axis = {});
// jnp.unwrap: p with every jump between neighbours along `axis` larger than `discont` (default
// period / 2) replaced by its equivalent modulo `period`.
Array unwrap(const Array& p, std::optional<double> discont = std::nullopt, int axis = -1,
             double period = 6.283185307179586);
// jnp.cross: the cross product of the vectors of a (along axisa) and b (along axisb), each of
// length 2 or 3 (a 2-vector has z = 0); the result's vectors lie along axisc, except that two
// 2-vectors give the scalar z component. `axis` overrides all three.
Array cross(const Array& a, const Array& b, int axisa = -1, int axisb = -1, int axisc = -1,
            std::optional<int> axis = std::nullopt);

}  // namespace linum
