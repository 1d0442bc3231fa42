// diff, ediff1d, gradient, unwrap and cross as jax.numpy composes them from slices, so that
// their derivatives, batching and tracing are those of the slices and arithmetic.
#include <linum/autodiff/ops/differences.hpp>

#include <linum/autodiff/ops/cumulative.hpp>
#include <linum/autodiff/ops/index_util.hpp>

namespace linum {
namespace detail {
namespace {

// x[start:stop] along `axis`.
Array along(const Array& x, int axis, std::optional<std::int64_t> start,
            std::optional<std::int64_t> stop) {
  return slice_in_dim(x, start, stop, axis < 0 ? axis + x.ndim() : axis);
}

// A scalar prepend/append broadcast to one slice of `a` along axis.
Array as_slice(const Array& v, const Array& a, int axis) {
  if (v.ndim() != 0) return v;
  Shape s = a.shape();
  s[axis] = 1;
  return broadcast_to(v, s);
}

}  // namespace
}  // namespace detail

using namespace detail;

Array diff(const Array& a, int n, int axis, const std::optional<Array>& prepend,
           const std::optional<Array>& append) {
  check_valid(a, "diff");
  if (n < 0) throw ValueError("diff: order must be non-negative but got " + std::to_string(n));
  if (n == 0) return a;
  if (a.ndim() == 0)
    throw ValueError("diff: requires input that is at least one dimensional; got a scalar");
  const int ax = normalize_axis(axis, a.ndim(), "diff");
  Arrays parts;
  if (prepend) parts.push_back(as_slice(*prepend, a, ax));
  parts.push_back(a);
  if (append) parts.push_back(as_slice(*append, a, ax));
  Array r = parts.size() > 1 ? concatenate(parts, ax) : a;
  for (int k = 0; k < n; ++k) {
    const Array hi = along(r, ax, 1, std::nullopt), lo = along(r, ax, 0, -1);
    r = r.dtype() == bool_ ? not_equal(hi, lo) : subtract(hi, lo);
  }
  return r;
}

Array ediff1d(const Array& ary, const std::optional<Array>& to_end,
              const std::optional<Array>& to_begin) {
  check_valid(ary, "ediff1d");
  const Array flat = ravel(ary);
  Arrays parts;
  if (to_begin) parts.push_back(ravel(astype(*to_begin, flat.dtype())));
  parts.push_back(subtract(along(flat, 0, 1, std::nullopt), along(flat, 0, 0, -1)));
  if (to_end) parts.push_back(ravel(astype(*to_end, flat.dtype())));
  return parts.size() > 1 ? concatenate(parts, 0) : parts[0];
}

Arrays gradient(const Array& f, const Arrays& spacing, const Axes& axis) {
  check_valid(f, "gradient");
  for (const Array& h : spacing) check_valid(h, "gradient");
  // promote_dtypes_inexact(f, *spacing): one inexact dtype for all.
  ResultType t{f.dtype(), f.weak_type()};
  for (const Array& h : spacing) t = result_type(t.dtype, t.weak_type, h.dtype(), h.weak_type());
  if (!is_inexact(t.dtype)) t = {float32, false};
  const Array a = promote_to(f, t);
  const std::vector<int> axes = normalize_axes(axis, a.ndim(), "gradient");
  if (axes.empty()) return {};
  for (int ax : axes)
    if (a.shape()[ax] < 2)
      throw ValueError(
          "gradient: shape of array too small to calculate a numerical gradient, at least 2 "
          "elements are required, got shape " +
          shape_str(a.shape()));
  if (spacing.size() > 1 && spacing.size() != axes.size())
    throw TypeError("gradient: invalid number of spacing arguments " +
                    std::to_string(spacing.size()) + " for " + std::to_string(axes.size()) +
                    " axes");
  Arrays out;
  for (std::size_t i = 0; i < axes.size(); ++i) {
    const int ax = axes[i];
    const Array h = spacing.empty() ? full({}, 1.0, t.dtype)
                                    : promote_to(spacing[spacing.size() == 1 ? 0 : i], t);
    auto sl = [&](const Array& x, std::optional<std::int64_t> b, std::optional<std::int64_t> e) {
      return along(x, ax, b, e);
    };
    Array upper = sl(a, 1, 2) - sl(a, 0, 1), lower = sl(a, -1, std::nullopt) - sl(a, -2, -1), inner;
    if (h.ndim() == 0) {
      inner = (sl(a, 2, std::nullopt) - sl(a, std::nullopt, -2)) * 0.5 / h;
      upper = upper / h;
      lower = lower / h;
    } else if (h.ndim() == 1) {
      if (h.shape(0) != a.shape()[ax])
        throw ValueError(
            "gradient: spacing arrays must have the same length as the dimension along which "
            "the gradient is calculated, got " +
            std::to_string(h.shape(0)) + " coordinates for an axis of " +
            std::to_string(a.shape()[ax]));
      Shape hs(static_cast<std::size_t>(a.ndim()), 1);
      hs[ax] = h.shape(0);
      const Array x = reshape(h, hs);
      upper = upper / (sl(x, 1, 2) - sl(x, 0, 1));
      lower = lower / (sl(x, -1, std::nullopt) - sl(x, -2, -1));
      // Second-order differences on a non-uniform grid (numpy's formula).
      const Array dx1 = sl(x, 1, -1) - sl(x, 0, -2), dx2 = sl(x, 2, std::nullopt) - sl(x, 1, -1);
      const Array ca = -dx2 / (dx1 * (dx1 + dx2)), cb = (dx2 - dx1) / (dx1 * dx2),
                  cc = dx1 / (dx2 * (dx1 + dx2));
      inner = ca * sl(a, 0, -2) + cb * sl(a, 1, -1) + cc * sl(a, 2, std::nullopt);
    } else {
      throw ValueError("gradient: spacing arrays must be 1D arrays or scalars, got shape " +
                       shape_str(h.shape()));
    }
    out.push_back(concatenate({upper, inner, lower}, ax));
  }
  return out;
}

Array unwrap(const Array& p, std::optional<double> discont, int axis, double period) {
  check_valid(p, "unwrap");
  if (is_complex(p.dtype())) throw ValueError("unwrap: complex inputs are not supported");
  if (p.ndim() == 0) throw ValueError("unwrap: expected an array of at least one dimension");
  const int ax = normalize_axis(axis, p.ndim(), "unwrap");
  // promote_dtypes(p, period): a weak float period makes integer input float32.
  const Array x = is_integer(p.dtype()) || p.dtype() == bool_ ? astype(p, float32) : p;
  if (x.shape()[ax] == 0) return x;
  const Array per = full({}, period, x.dtype());
  const Array interval = per / 2.0;
  const Array dd = diff(x, 1, ax);
  Array ddmod = remainder(dd + interval, per) - interval;
  ddmod = where(logical_and(equal(ddmod, -interval), dd > 0.0), interval, ddmod);
  const Array correction = where(abs(dd) < full({}, discont.value_or(period / 2), x.dtype()),
                                 zeros({}, x.dtype()), ddmod - dd);
  return concatenate({along(x, ax, 0, 1), along(x, ax, 1, std::nullopt) + cumsum(correction, ax)},
                     ax);
}

Array cross(const Array& a, const Array& b, int axisa, int axisb, int axisc,
            std::optional<int> axis) {
  check_valid(a, "cross");
  check_valid(b, "cross");
  if (axis) axisa = axisb = axisc = *axis;
  if (a.ndim() == 0 || b.ndim() == 0)
    throw ValueError("cross: inputs must be arrays of vectors, got shapes " + shape_str(a.shape()) +
                     " and " + shape_str(b.shape()));
  const Array u = moveaxis(a, normalize_axis(axisa, a.ndim(), "cross"), -1);
  const Array v = moveaxis(b, normalize_axis(axisb, b.ndim(), "cross"), -1);
  const std::int64_t nu = u.shape().back(), nv = v.shape().back();
  if ((nu != 2 && nu != 3) || (nv != 2 && nv != 3))
    throw ValueError("cross: dimension must be either 2 or 3 for cross product, got vectors of " +
                     std::to_string(nu) + " and " + std::to_string(nv));
  auto c = [](const Array& w, std::int64_t i) { return squeeze(along(w, -1, i, i + 1), -1); };
  if (nu == 2 && nv == 2) return c(u, 0) * c(v, 1) - c(u, 1) * c(v, 0);
  const Array u0 = c(u, 0), u1 = c(u, 1), u2 = nu == 3 ? c(u, 2) : zeros_like(u0);
  const Array v0 = c(v, 0), v1 = c(v, 1), v2 = nv == 3 ? c(v, 2) : zeros_like(v0);
  const Array r = stack({u1 * v2 - u2 * v1, u2 * v0 - u0 * v2, u0 * v1 - u1 * v0}, 0);
  return moveaxis(r, 0, normalize_axis(axisc, r.ndim(), "cross"));
}

}  // namespace linum
