// optax.projections over the leaves of a pytree: each is optax's formula in linum ops, so the
// projections differentiate, batch and trace as optax's do under JAX.
#include <string>

#include <linum/autodiff/control_flow.hpp>
#include <linum/autodiff/ops.hpp>
#include <linum/optim/projections.hpp>
#include <linum/optim/ravel.hpp>

namespace linum::optim::projections {

namespace detail {

namespace {

// f on every non-empty leaf; empty leaves stay empty.
template <class F>
Arrays map_leaves(const Arrays& xs, F f) {
  Arrays out;
  out.reserve(xs.size());
  for (const Array& x : xs) out.push_back(x.valid() ? f(x) : Array());
  return out;
}
template <class F>
Arrays map_leaves(const Arrays& xs, const Arrays& ys, F f) {
  Arrays out;
  out.reserve(xs.size());
  for (std::size_t i = 0; i < xs.size(); ++i)
    out.push_back(xs[i].valid() ? f(xs[i], ys[i]) : Array());
  return out;
}

// The scale / offset arguments optax documents as scalars.
void check_scalar(const char* fn, const char* what, const Array& s) {
  if (!s.valid()) throw ValueError(std::string(fn) + ": " + what + " is an empty Array");
  if (s.ndim() != 0)
    throw ValueError(std::string(fn) + ": " + what + " must be a scalar, got an array of shape " +
                     shape_str(s.shape()));
}

// optax.tree.vdot: sum over leaves of tensordot(conj(x), a, x.ndim), leaf shapes equal.
Array tree_vdot(const Arrays& x, const Arrays& a, const char* fn) {
  Array acc;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (!x[i].valid()) continue;
    if (x[i].shape() != a[i].shape())
      throw ValueError(std::string(fn) + ": leaf " + std::to_string(i) + " of x has shape " +
                       shape_str(x[i].shape()) + " but that of a has shape " +
                       shape_str(a[i].shape()) + " (they must be equal)");
    const Array v = tensordot(conj(x[i]), a[i], static_cast<int>(x[i].ndim()));
    acc = acc.valid() ? acc + v : v;
  }
  return acc.valid() ? acc : Array(0);
}

// optax.tree.norm(ord=2, squared=true): the sum over leaves of |x|^2.
Array tree_squared_norm(const Arrays& xs) {
  Array acc;
  for (const Array& x : xs) {
    if (!x.valid()) continue;
    const Array s = is_complex(x.dtype()) ? sum(square(real(x)) + square(imag(x))) : sum(square(x));
    acc = acc.valid() ? acc + s : s;
  }
  return acc.valid() ? acc : Array(0);
}

Arrays scale_leaves(const Array& factor, const Arrays& xs) {
  return map_leaves(xs, [&](const Array& x) { return factor * x; });
}

// optax's _projection_unit_simplex on a vector: with u = values sorted decreasingly and c its
// cumulative sum, k = #{i : 1/i + u_i - c_i/i > 0}, the projection is relu(1/k + values -
// c_k/k). The primal is computed without gradient; its derivative is optax's custom JVP
// (S v - (<S, v> / |S|) S, S the support) added as a term that is zero in value, so JVP, VJP
// and higher orders all follow it. The term reads v only on the support, so infinite values
// off the support (optax's [0, 0, -inf] case) do not poison the result with NaN.
Array unit_simplex(const Array& values) {
  const Array x = stop_gradient(values);
  const std::int64_t n = x.shape()[0];
  const DType dt = x.dtype();
  const Array u = flip(sort(x), {0});
  const Array cumsum_u = cumsum(u);
  const Array ind = astype(arange(1, n + 1), dt);
  const Array idx = count_nonzero(1.0 / ind + (u - cumsum_u / ind) > 0.0);
  const Array k = astype(idx, dt);
  const Array primal = relu(1.0 / k + (x - take(cumsum_u, idx - 1) / k));
  const Array supp = primal > 0.0;
  const Array supp_f = astype(supp, dt);
  const Array on_supp = where(supp, values - x, zeros_like(x));  // zero, with derivative I
  const Array tangent = on_supp - (sum(on_supp) / sum(supp_f)) * supp_f;
  return primal + tangent;
}

}  // namespace

void check_structure(const char* fn, const char* what, const pytree::TreeDef& tree,
                     const pytree::TreeDef& other) {
  if (!(tree == other))
    throw ValueError(std::string(fn) + ": " + what + " must have the structure of the tree, " +
                     tree.to_string() + ", but has " + other.to_string());
}

Arrays non_negative(const Arrays& tree) { return map_leaves(tree, relu); }

Arrays box(const Arrays& tree, const Arrays& lower, const Arrays& upper) {
  Arrays out;
  out.reserve(tree.size());
  for (std::size_t i = 0; i < tree.size(); ++i)
    out.push_back(tree[i].valid() ? clip(tree[i], lower[i], upper[i]) : Array());
  return out;
}

Arrays simplex(const Arrays& tree, const Array& scale) {
  check_scalar("projection_simplex", "scale", scale);
  const Array values = optim::detail::ravel_leaves(tree);
  if (values.size() == 0) return tree;
  const Array projected = scale * unit_simplex(values / scale);
  return optim::detail::unravel_leaves(projected, tree, "projection_simplex");
}

Arrays l1_sphere(const Arrays& tree, const Array& scale) {
  check_scalar("projection_l1_sphere", "scale", scale);
  const Arrays abs_proj = simplex(map_leaves(tree, [](const Array& x) { return abs(x); }), scale);
  return map_leaves(tree, abs_proj, [](const Array& x, const Array& p) { return sign(x) * p; });
}

Arrays l1_ball(const Arrays& tree, const Array& scale) {
  check_scalar("projection_l1_ball", "scale", scale);
  Arrays present;
  for (const Array& x : tree)
    if (x.valid()) present.push_back(x);
  Array l1_norm;
  for (const Array& x : present) l1_norm = l1_norm.valid() ? l1_norm + sum(abs(x)) : sum(abs(x));
  if (!l1_norm.valid()) return tree;
  const Arrays projected = cond(
      l1_norm <= scale, [](const Arrays& t, const Array&) { return t; },
      [](const Arrays& t, const Array& s) { return l1_sphere(t, s); }, present, scale);
  Arrays out = tree;
  for (std::size_t i = 0, j = 0; i < out.size(); ++i)
    if (out[i].valid()) out[i] = projected[j++];
  return out;
}

Arrays l2_sphere(const Arrays& tree, const Array& scale) {
  check_scalar("projection_l2_sphere", "scale", scale);
  return scale_leaves(scale / sqrt(tree_squared_norm(tree)), tree);
}

Arrays l2_ball(const Arrays& tree, const Array& scale) {
  check_scalar("projection_l2_ball", "scale", scale);
  const Array factor = scale / sqrt(maximum(tree_squared_norm(tree), square(scale)));
  return scale_leaves(factor, tree);
}

Arrays linf_ball(const Arrays& tree, const Array& scale) {
  check_scalar("projection_linf_ball", "scale", scale);
  return map_leaves(tree, [&](const Array& x) {
    const Array hi = broadcast_to(astype(scale, x.dtype()), x.shape());
    const Array lo = broadcast_to(astype(-scale, x.dtype()), x.shape());
    return clip(x, lo, hi);
  });
}

Arrays vector(const Arrays& x, const Arrays& a) {
  const Array scalar = tree_vdot(x, a, "projection_vector") / tree_vdot(a, a, "projection_vector");
  return scale_leaves(scalar, a);
}

Arrays hyperplane(const Arrays& x, const Arrays& a, const Array& b) {
  check_scalar("projection_hyperplane", "b", b);
  const Array scalar =
      (b - tree_vdot(x, a, "projection_hyperplane")) / tree_vdot(a, a, "projection_hyperplane");
  return map_leaves(x, a, [&](const Array& xi, const Array& ai) { return xi + scalar * ai; });
}

Arrays halfspace(const Arrays& x, const Arrays& a, const Array& b) {
  check_scalar("projection_halfspace", "b", b);
  Array scalar =
      (b - tree_vdot(x, a, "projection_halfspace")) / tree_vdot(a, a, "projection_halfspace");
  scalar = minimum(0.0, scalar);  // jnp.clip(scalar, max=0)
  return map_leaves(x, a, [&](const Array& xi, const Array& ai) { return xi + scalar * ai; });
}

}  // namespace detail

Array projection_hypercube(const Array& tree, const Array& scale) {
  return detail::box({tree}, {Array(0)}, {scale})[0];
}

}  // namespace linum::optim::projections
