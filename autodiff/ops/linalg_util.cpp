// Matrix helpers of the linalg primitives (autodiff/ops/linalg_util.hpp).
#include <linum/autodiff/ops/linalg_util.hpp>

#include <linum/autodiff/ops/kernel_util.hpp>
#include <linum/autodiff/transforms.hpp>

namespace linum::detail {

Array mT(const Array& x) {
  std::vector<int> perm(static_cast<std::size_t>(x.ndim()));
  for (int i = 0; i < x.ndim(); ++i) perm[i] = i;
  std::swap(perm[x.ndim() - 2], perm[x.ndim() - 1]);
  return transpose(x, perm);
}

namespace {
// A (m, n) bool mask: j - i <= k (lower) or j - i >= k (upper).
Array band_mask(std::int64_t m, std::int64_t n, int k, bool lower) {
  std::vector<bool> v(static_cast<std::size_t>(m * n));
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) v[i * n + j] = lower ? j - i <= k : j - i >= k;
  return array(v, {m, n});
}
}  // namespace

Array tril_of(const Array& x, int k) {
  return where(band_mask(x.shape(-2), x.shape(-1), k, true), x, 0);
}
Array triu_of(const Array& x, int k) {
  return where(band_mask(x.shape(-2), x.shape(-1), k, false), x, 0);
}

Array diagonal_of(const Array& x) {
  const std::int64_t m = x.shape(-2), n = x.shape(-1);
  const Array on_diag = multiply(x, eye(m, n, 0, x.dtype()));
  return m <= n ? sum(on_diag, -1) : sum(on_diag, -2);
}

Array diag_matrix(const Array& v) {
  return multiply(expand_dims(v, -1), eye(v.shape(-1), -1, 0, v.dtype()));
}

Array block(const Array& x, std::int64_t r0, std::int64_t r1, std::int64_t c0, std::int64_t c1) {
  const int nd = x.ndim();
  std::vector<std::int64_t> start(static_cast<std::size_t>(nd), 0),
      limit(x.shape().begin(), x.shape().end());
  start[nd - 2] = r0;
  start[nd - 1] = c0;
  if (r1 >= 0) limit[nd - 2] = r1;
  if (c1 >= 0) limit[nd - 1] = c1;
  return lax_slice(x, start, limit);
}

Array trace_of(const Array& x) { return sum(diagonal_of(x), -1); }

Array batched_eye(const Shape& batch, std::int64_t n, DType dtype) {
  Shape s = batch;
  s.push_back(n);
  s.push_back(n);
  return broadcast_to(eye(n, -1, 0, dtype), s);
}

Array permute_rows(const Array& x, const Array& perm) {
  const std::int64_t m = x.shape(-2);
  const Array p = astype(
      equal(expand_dims(perm, -1), arange(std::int64_t(0), m, std::int64_t(1), int32)), x.dtype());
  return matmul(p, x);
}

Array check_matrix(const Array& x, const char* op, bool square) {
  check_valid(x, op);
  if (x.ndim() < 2)
    throw ValueError(std::string(op) + ": expected an array of at least two dimensions (..., " +
                     (square ? "n, n" : "m, n") + "), got shape " + shape_str(x.shape()));
  if (square && x.shape(-1) != x.shape(-2))
    throw ValueError(std::string(op) + ": expected a square matrix (..., n, n), got shape " +
                     shape_str(x.shape()));
  if (is_complex(x.dtype()))
    throw TypeError(std::string(op) + ": complex matrices are not supported, got " +
                    std::string(dtype_name(x.dtype())));
  return is_floating(x.dtype()) ? x : astype(x, float32);
}

std::int64_t batch_size(const Shape& s, int core) { return shape_size(batch_shape(s, core)); }

Shape batch_shape(const Shape& s, int core) { return Shape(s.begin(), s.end() - core); }

Arrays transpose_jvp(const Primitive& p, std::span<const Array> primals,
                     std::span<const Array> cotangents, std::span<const Array> outs) {
  Arrays result(primals.size());
  std::vector<std::size_t> ins, os;
  Arrays t0, ct;
  for (std::size_t i = 0; i < primals.size(); ++i)
    if (is_inexact(primals[i].dtype())) {
      ins.push_back(i);
      t0.push_back(zeros(primals[i].shape(), primals[i].dtype()));  // stand-ins have no value
    }
  for (std::size_t j = 0; j < outs.size(); ++j)
    if (cotangents[j].valid() && is_inexact(outs[j].dtype())) {
      os.push_back(j);
      ct.push_back(cotangents[j]);
    }
  if (ins.empty() || os.empty()) return result;
  const Arrays ps(primals.begin(), primals.end()), out_values(outs.begin(), outs.end());
  auto linear = [&](const Arrays& t) {
    Arrays tangents(ps.size());
    for (std::size_t k = 0; k < ins.size(); ++k) tangents[ins[k]] = t[k];
    const Arrays touts = p.jvp(ps, tangents, out_values);
    Arrays r;
    for (std::size_t j : os)
      r.push_back(touts[j].valid() ? touts[j]
                                   : zeros(out_values[j].shape(), out_values[j].dtype()));
    return r;
  };
  auto [y, pull] = vjp(linear, t0);
  const Arrays g = std::get<0>(pull(ct));
  for (std::size_t k = 0; k < ins.size(); ++k) result[ins[k]] = g[k];
  return result;
}

}  // namespace linum::detail
