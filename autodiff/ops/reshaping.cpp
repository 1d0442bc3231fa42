// broadcast_shapes / broadcast_arrays, rollaxis, unstack, resize, trim_zeros and block, as
// jax.numpy composes them from reshapes, broadcasts, slices and concatenation.
#include <linum/autodiff/ops/reshaping.hpp>

#include <algorithm>
#include <cctype>

#include <linum/autodiff/ops/index_util.hpp>
#include <linum/autodiff/ops/manipulation.hpp>

namespace linum {
namespace detail {
namespace {

// Leading 1s up to rank n (JAX's _atleast_nd).
Array atleast_nd(const Array& x, int n) {
  if (x.ndim() >= n) return x;
  Shape s(static_cast<std::size_t>(n - x.ndim()), 1);
  s.insert(s.end(), x.shape().begin(), x.shape().end());
  return reshape(x, s);
}

// One level of jnp.block: parts (each built from lists of depth `depth` - 1) joined along
// axis -depth after raising them to a common rank of at least `depth`.
Array block_level(const Arrays& parts, int depth) {
  if (parts.empty()) throw ValueError("block: empty lists are not allowed (as jax.numpy.block)");
  int rank = depth;
  for (const Array& p : parts) {
    check_valid(p, "block");
    rank = std::max(rank, p.ndim());
  }
  Arrays xs;
  for (const Array& p : parts) xs.push_back(atleast_nd(p, rank));
  return concatenate(xs, rank - depth);
}

}  // namespace
}  // namespace detail

using namespace detail;

Shape broadcast_shapes(const std::vector<Shape>& shapes) {
  Shape r;
  for (const Shape& s : shapes) {
    for (auto d : s)
      if (d < 0)
        throw ValueError("broadcast_shapes: dimensions must be non-negative, got " + shape_str(s));
    r = detail::broadcast_shapes(r, s, "broadcast_shapes");
  }
  return r;
}

Arrays broadcast_arrays(const Arrays& args) {
  std::vector<Shape> shapes;
  for (const Array& a : args) {
    check_valid(a, "broadcast_arrays");
    shapes.push_back(a.shape());
  }
  const Shape s = broadcast_shapes(shapes);
  Arrays out;
  for (const Array& a : args) out.push_back(a.shape() == s ? a : broadcast_to(a, s));
  return out;
}

Array rollaxis(const Array& a, int axis, int start) {
  check_valid(a, "rollaxis");
  const int n = a.ndim();
  const int ax = normalize_axis(axis, n, "rollaxis");
  if (start < -n || start > n)
    throw ValueError("rollaxis: start=" + std::to_string(start) + " must satisfy " +
                     std::to_string(-n) + "<=start<=" + std::to_string(n));
  if (start < 0) start += n;
  if (start > ax) start -= 1;
  return moveaxis(a, ax, start);
}

Arrays unstack(const Array& x, int axis) {
  check_valid(x, "unstack");
  const int ax = normalize_axis(axis, x.ndim(), "unstack");
  Arrays out;
  for (std::int64_t i = 0; i < x.shape()[ax]; ++i)
    out.push_back(squeeze(slice_in_dim(x, i, i + 1, ax), ax));
  return out;
}

Array resize(const Array& a, const Shape& new_shape) {
  check_valid(a, "resize");
  for (auto d : new_shape)
    if (d < 0)
      throw ValueError("resize: all elements of new_shape must be non-negative, got " +
                       shape_str(new_shape));
  const std::int64_t n = shape_size(new_shape);
  if (a.size() == 0 || n == 0) return zeros(new_shape, a.dtype());
  const Array flat = ravel(a);
  const std::int64_t repeats = (n + flat.size() - 1) / flat.size();
  return reshape(slice(tile(flat, {repeats}), {Slice{0, n}}), new_shape);
}

Array trim_zeros(const Array& filt, const std::string& trim, const Axes& axis) {
  check_valid(filt, "trim_zeros");
  const Array x = concrete_or_error(
      filt, "trim_zeros", "filt needs a concrete value (the result's shape depends on it)");
  const std::vector<int> axes = normalize_axes(axis, x.ndim(), "trim_zeros");
  auto has = [&](char c) {
    return std::any_of(trim.begin(), trim.end(), [c](char t) { return std::tolower(t) == c; });
  };
  const bool front = has('f'), back = has('b');
  if (axes.empty() || (!front && !back)) return filt;
  std::vector<Slice> slices(static_cast<std::size_t>(x.ndim()));
  for (int ax : axes) {
    std::vector<int> others;
    for (int d = 0; d < x.ndim(); ++d)
      if (d != ax) others.push_back(d);
    const Array nz = not_equal(x, zeros({}, x.dtype()));
    const Array mask = others.empty() ? nz : any(nz, others);
    if (!any(mask).item<bool>()) {
      slices[ax] = Slice{0, 0};
      continue;
    }
    const std::int64_t n = x.shape()[ax];
    if (front) slices[ax].start = argmax(mask).item<std::int64_t>();
    if (back) slices[ax].stop = n - argmax(flip(mask)).item<std::int64_t>();
  }
  return slice(filt, slices);
}

Array block(const Arrays& arrays) { return block_level(arrays, 1); }

Array block(const std::vector<Arrays>& arrays) {
  Arrays rows;
  for (const Arrays& r : arrays) rows.push_back(block_level(r, 1));
  return block_level(rows, 2);
}

Array block(const std::vector<std::vector<Arrays>>& arrays) {
  Arrays planes;
  for (const auto& p : arrays) planes.push_back(block(p));
  return block_level(planes, 3);
}

}  // namespace linum
