// jnp's tensor contractions: tensordot and vecdot become one lax.dot_general (whose rules give
// the derivatives, batching and jit), the others jnp's reshapes and products.
#include <numeric>

#include <linum/autodiff/ops/contraction.hpp>
#include <linum/autodiff/ops/kernel_util.hpp>

namespace linum {

using namespace detail;

Array tensordot(const Array& a, const Array& b, int axes) {
  check_valid(a, "tensordot");
  check_valid(b, "tensordot");
  if (axes < 0)
    throw ValueError("tensordot: the number of axes must be non-negative, got " +
                     std::to_string(axes));
  if (axes > std::min(a.ndim(), b.ndim()))
    throw TypeError("tensordot: number of axes (" + std::to_string(axes) +
                    ") exceeds input ranks (" + shape_str(a.shape()) + " and " +
                    shape_str(b.shape()) + ")");
  std::vector<int> ca(axes), cb(axes);
  std::iota(ca.begin(), ca.end(), a.ndim() - axes);
  std::iota(cb.begin(), cb.end(), 0);
  return tensordot(a, b, ca, cb);
}

Array tensordot(const Array& a, const Array& b, const std::vector<int>& axes_a,
                const std::vector<int>& axes_b) {
  check_valid(a, "tensordot");
  check_valid(b, "tensordot");
  if (axes_a.size() != axes_b.size())
    throw TypeError("tensordot: axes lists must have equal length, got " +
                    std::to_string(axes_a.size()) + " and " + std::to_string(axes_b.size()));
  std::vector<int> ca, cb;
  for (int d : axes_a) ca.push_back(normalize_axis(d, a.ndim(), "tensordot"));
  for (int d : axes_b) cb.push_back(normalize_axis(d, b.ndim(), "tensordot"));
  for (std::size_t i = 0; i < ca.size(); ++i)
    if (a.shape()[ca[i]] != b.shape()[cb[i]])
      throw ValueError("tensordot: shape mismatch along contracted axes: dim " +
                       std::to_string(ca[i]) + " of " + shape_str(a.shape()) + " and dim " +
                       std::to_string(cb[i]) + " of " + shape_str(b.shape()));
  return dot_general(a, b, {ca, cb, {}, {}});
}

Array inner(const Array& a, const Array& b) {
  check_valid(a, "inner");
  check_valid(b, "inner");
  if (a.ndim() == 0 || b.ndim() == 0) return a * b;
  return tensordot(a, b, {-1}, {-1});
}

Array outer(const Array& a, const Array& b) {
  check_valid(a, "outer");
  check_valid(b, "outer");
  return reshape(a, {-1, 1}) * reshape(b, {1, -1});
}

// a's dims interleaved with b's (a_i, b_i, ...), multiplied and merged pairwise.
Array kron(const Array& a, const Array& b) {
  check_valid(a, "kron");
  check_valid(b, "kron");
  const int nd = std::max(a.ndim(), b.ndim());
  Shape sa(nd - a.ndim(), 1), sb(nd - b.ndim(), 1);
  sa.insert(sa.end(), a.shape().begin(), a.shape().end());
  sb.insert(sb.end(), b.shape().begin(), b.shape().end());
  Shape ia, ib, out;
  for (int d = 0; d < nd; ++d) {
    ia.insert(ia.end(), {sa[d], 1});
    ib.insert(ib.end(), {1, sb[d]});
    out.push_back(sa[d] * sb[d]);
  }
  return reshape(reshape(a, ia) * reshape(b, ib), out);
}

Array vdot(const Array& a, const Array& b) {
  check_valid(a, "vdot");
  check_valid(b, "vdot");
  if (a.size() != b.size())
    throw ValueError("vdot: the operands must have the same number of elements, got shapes " +
                     shape_str(a.shape()) + " and " + shape_str(b.shape()));
  return dot(ravel(a), ravel(b));
}

Array matvec(const Array& x1, const Array& x2) {
  check_valid(x1, "matvec");
  check_valid(x2, "matvec");
  if (x1.ndim() < 2 || x2.ndim() < 1 || x1.shape(-1) != x2.shape(-1))
    throw ValueError("matvec: expected shapes (..., n, m) and (..., m), got " +
                     shape_str(x1.shape()) + " and " + shape_str(x2.shape()));
  return squeeze(matmul(x1, expand_dims(x2, -1)), -1);
}

Array vecmat(const Array& x1, const Array& x2) {
  check_valid(x1, "vecmat");
  check_valid(x2, "vecmat");
  if (x1.ndim() < 1 || x2.ndim() < 2 || x1.shape(-1) != x2.shape(-2))
    throw ValueError("vecmat: expected shapes (..., n) and (..., n, m), got " +
                     shape_str(x1.shape()) + " and " + shape_str(x2.shape()));
  return squeeze(matmul(expand_dims(x1, -2), x2), -2);
}

// Both operands with `axis` last, their other dims broadcast, then one batched dot_general.
Array vecdot(const Array& x1, const Array& x2, int axis) {
  check_valid(x1, "vecdot");
  check_valid(x2, "vecdot");
  const int a1 = normalize_axis(axis, x1.ndim(), "vecdot"),
            a2 = normalize_axis(axis, x2.ndim(), "vecdot");
  if (x1.shape()[a1] != x2.shape()[a2])
    throw ValueError("vecdot: axes must match; got shapes " + shape_str(x1.shape()) + " and " +
                     shape_str(x2.shape()) + " with axis=" + std::to_string(axis));
  Array u = moveaxis(x1, a1, -1), v = moveaxis(x2, a2, -1);
  const Shape bu(u.shape().begin(), u.shape().end() - 1),
      bv(v.shape().begin(), v.shape().end() - 1);
  Shape s = broadcast_shapes(bu, bv, "vecdot");
  const int nb = static_cast<int>(s.size());
  s.push_back(u.shape(-1));
  if (u.shape() != s) u = broadcast_to(u, s);
  if (v.shape() != s) v = broadcast_to(v, s);
  std::vector<int> batch(nb);
  std::iota(batch.begin(), batch.end(), 0);
  return dot_general(u, v, {{nb}, {nb}, batch, batch});
}

}  // namespace linum
