// Shape rules shared by the ops: broadcasting, axis normalisation, unbroadcasting for VJPs and
// batch-axis alignment for batching rules.
#include <linum/autodiff/ops/kernel_util.hpp>

#include <algorithm>

namespace linum::detail {

namespace {
thread_local Arrays t_spare_storage;
// Its address in initial-exec TLS, as the allocator's cache: one %fs-relative load per call
// where the vector itself (destroyed at thread exit, so guarded) costs a __tls_get_addr.
[[gnu::tls_model("initial-exec")]] thread_local Arrays* t_spare = nullptr;
Arrays& spare() {
  Arrays* s = t_spare;
  if (!s) [[unlikely]]
    s = t_spare = &t_spare_storage;
  return *s;
}
}  // namespace

Arrays spare_arrays() {
  Arrays v;
  v.swap(spare());
  return v;
}

void give_back_arrays(Arrays&& v) {
  constexpr std::size_t kMaxKept = 64;  // a concatenate's thousands of cotangents: not kept
  v.clear();
  if (v.capacity() <= kMaxKept && v.capacity() > spare().capacity()) spare() = std::move(v);
}

void throw_complex_unsupported(DType d) {
  throw TypeError(std::string(current_op()) + ": " + std::string(dtype_name(d)) +
                  " inputs are not supported; complex arrays support arithmetic (add, subtract, "
                  "multiply, divide, negative), sum, real, imag, conj, abs, angle, shape ops and "
                  "linum::fft");
}

void throw_reduced_float_unsupported(DType d) {
  throw TypeError(std::string(current_op()) + ": no " + std::string(dtype_name(d)) +
                  " kernel; convert with astype(float32) first");
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  if (a == b) return a;
  const std::size_t n = std::max(a.size(), b.size());
  Shape r(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const std::int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da != db && da != 1 && db != 1)
      throw ValueError(std::string(op) + ": shapes " + shape_str(a) + " and " + shape_str(b) +
                       " are incompatible for broadcasting");
    r[i] = da == 1 ? db : da;
  }
  return r;
}

int normalize_axis(int axis, int ndim, const char* op) {
  if (axis < -ndim || axis >= std::max(ndim, 0) || (ndim == 0))
    throw IndexError(std::string(op) + ": axis " + std::to_string(axis) +
                     " is out of bounds for an array of rank " + std::to_string(ndim));
  return axis < 0 ? axis + ndim : axis;
}

std::vector<int> normalize_axes(const Axes& ax, int ndim, const char* op) {
  std::vector<int> r;
  if (ax.all) {
    for (int i = 0; i < ndim; ++i) r.push_back(i);
    return r;
  }
  for (int a : ax.axes) r.push_back(normalize_axis(a, ndim, op));
  std::sort(r.begin(), r.end());
  if (std::adjacent_find(r.begin(), r.end()) != r.end())
    throw ValueError(std::string(op) + ": repeated axis in the axis argument");
  return r;
}

void check_valid(const Array& x, const char* op) {
  if (!x.valid()) throw ValueError(std::string(op) + ": got an empty Array handle (default-constructed)");
}

Array sum_to_shape(const Array& ct, const Shape& shape) {
  const Shape& cs = ct.shape();
  if (cs == shape) return ct;
  const int lead = static_cast<int>(cs.size() - shape.size());
  std::vector<int> axes;
  for (int i = 0; i < lead; ++i) axes.push_back(i);
  for (std::size_t i = 0; i < shape.size(); ++i)
    if (shape[i] == 1 && cs[lead + i] != 1) axes.push_back(lead + static_cast<int>(i));
  Array r = axes.empty() ? ct : sum(ct, Axes(axes));
  return r.shape() == shape ? r : reshape(r, shape);
}

Array move_bdim(const Array& x, int bdim, int to, std::int64_t size) {
  if (bdim < 0) {
    Shape s = x.shape();
    s.insert(s.begin() + to, size);
    return broadcast_to(expand_dims(x, to), s);
  }
  return bdim == to ? x : moveaxis(x, bdim, to);
}

Arrays align_batched(std::span<const Array> in, std::span<const int> bdims) {
  int rank = 0;
  for (std::size_t i = 0; i < in.size(); ++i)
    rank = std::max(rank, in[i].ndim() - (bdims[i] >= 0 ? 1 : 0));
  Arrays out;
  out.reserve(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (bdims[i] < 0) {
      out.push_back(in[i]);
      continue;
    }
    Array x = bdims[i] == 0 ? in[i] : moveaxis(in[i], bdims[i], 0);
    const int pad = rank - (x.ndim() - 1);
    if (pad > 0) {
      Shape s = x.shape();
      s.insert(s.begin() + 1, static_cast<std::size_t>(pad), 1);
      x = reshape(x, s);
    }
    out.push_back(x);
  }
  return out;
}

}  // namespace linum::detail
