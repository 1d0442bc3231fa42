// The differentiation rules every named-axis reduction shares, whichever level implements the
// axis (a vmap's batch in collectives.cpp, distributed::pmap's processes in process_axis.cpp),
// as JAX's: psum is linear and its own transpose; pmax/pmin send the tangent or cotangent to
// the members holding the extreme, ties sharing it. C is the collective primitive: a `kind`
// enum with psum, pmax and pmin, and rebind(x) / rebind(x, kind, axis) binding it again.
#pragma once

#include <linum/autodiff/ops.hpp>

namespace linum::detail {

// 1 where this member holds the extreme of a pmax/pmin, divided by how many members do.
template <class C>
Array extreme_weights(const C& c, const Array& x, const Array& out) {
  using K = decltype(c.kind);
  Array hit = astype(equal(x, out), x.dtype());
  return divide(hit, c.rebind(hit, K::psum, 0));
}

// The tangent of any collective: the collective of the tangent, weighted for pmax/pmin.
template <class C>
Array collective_jvp(const C& c, const Array& x, const Array& t, const Array& out) {
  using K = decltype(c.kind);
  if (c.kind == K::pmax || c.kind == K::pmin)
    return c.rebind(multiply(extreme_weights(c, x, out), t), K::psum, 0);
  return c.rebind(t);
}

// The cotangent of a psum, pmax or pmin (the gathers' transposes are the caller's).
template <class C>
Array reduction_vjp(const C& c, const Array& x, const Array& ct, const Array& out) {
  using K = decltype(c.kind);
  if (c.kind == K::psum) return c.rebind(ct);
  return multiply(extreme_weights(c, x, out), c.rebind(ct, K::psum, 0));
}

}  // namespace linum::detail
