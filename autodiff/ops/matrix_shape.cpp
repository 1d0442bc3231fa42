// Triangles, diagonals and grids: tri / tril / triu (a static mask and a select), diagonal (a
// strided slice of the flattened matrices), diag / diagflat (a strided pad), trace, meshgrid and
// indices. Composed from linum ops, so their rules are those of their parts.
#include <linum/autodiff/ops/manipulation.hpp>

#include <linum/autodiff/ops/kernel_util.hpp>

namespace linum {

Array tri(std::int64_t N, std::optional<std::int64_t> M, std::int64_t k, DType dtype) {
  const std::int64_t m = M.value_or(N);
  if (N < 0 || m < 0)
    throw ValueError("tri: N and M must be non-negative, got N=" + std::to_string(N) +
                     " M=" + std::to_string(m));
  std::vector<std::uint8_t> v(static_cast<std::size_t>(detail::check_shape("tri", {N, m})));
  for (std::int64_t i = 0; i < N; ++i)
    for (std::int64_t j = 0; j < m; ++j) v[i * m + j] = j <= i + k;
  return detail::from_buffer(v.data(), {N, m}, bool_, dtype);
}

namespace {
Array triangle(const Array& m, std::int64_t k, bool lower, const char* op) {
  detail::check_valid(m, op);
  if (m.ndim() < 2)
    throw ValueError(std::string(op) + ": argument must be at least 2D, got shape " +
                     shape_str(m.shape()));
  const std::int64_t rows = m.shape(-2), cols = m.shape(-1);
  const Array mask = lower ? tri(rows, cols, k, bool_) : logical_not(tri(rows, cols, k - 1, bool_));
  return where(mask, m, zeros({}, m.dtype()));
}
}  // namespace

Array tril(const Array& m, std::int64_t k) { return triangle(m, k, true, "tril"); }
Array triu(const Array& m, std::int64_t k) { return triangle(m, k, false, "triu"); }

Array identity(std::int64_t n, DType dtype) {
  if (n < 0) throw ValueError("identity: n must be non-negative, got " + std::to_string(n));
  return eye(n, n, 0, dtype);
}

// Entry (i, i + offset) of an n x m matrix is at i * (m + 1) + offset of its flattening (and
// (i - offset, i) at i * (m + 1) - offset * m): one strided slice of the last axis.
Array diagonal(const Array& a, std::int64_t offset, int axis1, int axis2) {
  detail::check_valid(a, "diagonal");
  if (a.ndim() < 2)
    throw ValueError("diagonal: requires an array of at least two dimensions, got shape " +
                     shape_str(a.shape()));
  const int a1 = detail::normalize_axis(axis1, a.ndim(), "diagonal"),
            a2 = detail::normalize_axis(axis2, a.ndim(), "diagonal");
  if (a1 == a2)
    throw ValueError("diagonal: axis1 and axis2 cannot be the same (both " + std::to_string(a1) +
                     ")");
  std::vector<int> perm;
  for (int d = 0; d < a.ndim(); ++d)
    if (d != a1 && d != a2) perm.push_back(d);
  perm.push_back(a1);
  perm.push_back(a2);
  const Array x = transpose(a, perm);
  const std::int64_t n = a.shape()[a1], m = a.shape()[a2];
  const std::int64_t len = std::max<std::int64_t>(
      0, std::min(n + std::min<std::int64_t>(offset, 0), m - std::max<std::int64_t>(offset, 0)));
  Shape flat(x.shape().begin(), x.shape().end() - 2);
  flat.push_back(n * m);
  const Array f = reshape(x, flat);
  const std::size_t nd = flat.size();
  std::vector<std::int64_t> start(nd, 0), limit(flat.begin(), flat.end()), step(nd, 1);
  if (len == 0) {
    limit[nd - 1] = 0;
    return lax_slice(f, start, limit, step);
  }
  start[nd - 1] = offset >= 0 ? offset : -offset * m;
  step[nd - 1] = m + 1;
  limit[nd - 1] = start[nd - 1] + (len - 1) * (m + 1) + 1;
  return lax_slice(f, start, limit, step);
}

Array diagflat(const Array& v, std::int64_t k) {
  detail::check_valid(v, "diagflat");
  const Array f = ravel(v);
  const std::int64_t len = f.size(), n = len + std::abs(k);
  if (len == 0) return zeros({n, n}, v.dtype());
  // The flattened n x n result is f spread n + 1 apart from its first position: a strided pad.
  const std::int64_t first = k >= 0 ? k : -k * n;
  const std::int64_t last = first + (len - 1) * (n + 1);
  const Array flat = lax_pad(f, zeros({}, v.dtype()), {{first, n * n - 1 - last, n}});
  return reshape(flat, {n, n});
}

Array diag(const Array& v, std::int64_t k) {
  detail::check_valid(v, "diag");
  if (v.ndim() == 1) return diagflat(v, k);
  if (v.ndim() == 2) return diagonal(v, k);
  throw ValueError("diag: input must be 1d or 2d, got shape " + shape_str(v.shape()));
}

Array trace(const Array& a, std::int64_t offset, int axis1, int axis2, std::optional<DType> dtype) {
  detail::check_valid(a, "trace");
  Array d = diagonal(a, offset, axis1, axis2);
  const DType t = dtype.value_or(a.dtype() == bool_ ? int32 : a.dtype());
  return sum(astype(d, t), -1);
}

Arrays meshgrid(const Arrays& xi, MeshIndexing indexing, bool sparse) {
  for (const Array& x : xi) {
    detail::check_valid(x, "meshgrid");
    if (x.ndim() != 1)
      throw ValueError("meshgrid: arguments must be 1D, got shape " + shape_str(x.shape()));
  }
  const std::size_t n = xi.size();
  Shape full_shape;
  for (const Array& x : xi) full_shape.push_back(x.shape(0));
  if (indexing == MeshIndexing::xy && n > 1) std::swap(full_shape[0], full_shape[1]);
  Arrays out;
  for (std::size_t i = 0; i < n; ++i) {
    std::size_t pos = i;  // the output axis along which input i varies
    if (indexing == MeshIndexing::xy && n > 1 && i < 2) pos = 1 - i;
    Shape s(n, 1);
    s[pos] = xi[i].shape(0);
    const Array r = reshape(xi[i], s);
    out.push_back(sparse ? r : broadcast_to(r, full_shape));
  }
  return out;
}

Array indices(const Shape& dimensions, DType dtype) {
  const std::size_t n = dimensions.size();
  Arrays parts;
  for (std::size_t i = 0; i < n; ++i) {
    Shape s(n, 1);
    s[i] = dimensions[i];
    const Array r = reshape(arange(std::int64_t{0}, dimensions[i], std::int64_t{1}, dtype), s);
    parts.push_back(broadcast_to(r, dimensions));
  }
  if (parts.empty()) return zeros({0}, dtype);
  return stack(parts, 0);
}

}  // namespace linum
