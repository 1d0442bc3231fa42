// Indexing primitives: static strided slices and their transpose (pad), and one general gather
// with its scatter / scatter-add transposes, on which dynamic_slice, dynamic_update_slice, take
// and take_along_axis are all built (so one batching rule serves them all).
#include <linum/autodiff/ops/index_util.hpp>

#include <algorithm>
#include <limits>
#include <sstream>

namespace linum {
namespace detail {
namespace {

// ---- static slices --------------------------------------------------------------------------

// Per-example slice parameters with a whole leading batch axis of size n prepended.
void prepend_whole_axis(std::vector<std::int64_t>& start, std::vector<std::int64_t>& step, Shape& s,
                        std::int64_t n) {
  start.insert(start.begin(), 0);
  step.insert(step.begin(), 1);
  s.insert(s.begin(), n);
}

// x[start_0 + i_0 * step_0, ...] for i in out_shape: a strided slice with any non-zero steps (a
// negative step walks backwards, so Python's reversed slices need no separate `rev`).
struct StridedSlice final : Primitive {
  std::vector<std::int64_t> start, step;
  Shape out_shape;
  StridedSlice(std::vector<std::int64_t> a, std::vector<std::int64_t> s, Shape o)
      : start(std::move(a)), step(std::move(s)), out_shape(std::move(o)) {}
  const char* name() const override { return "slice"; }
  bool handles_reduced_floats() const override { return true; }  // moves bits only
  Avals abstract_eval(std::span<const ShapeDtype> in) const override {
    return {{out_shape, in[0].dtype}};
  }
  void print_params(std::ostream& os) const override {
    os << "start=" << ints_str(start) << " step=" << ints_str(step)
       << " shape=" << shape_str(out_shape);
  }
  Arrays eval(std::span<const Array> in) const override {
    const Array& x = in[0];
    Array out = empty(out_shape, x.dtype());
    const auto xst = strides_of(x.shape());
    std::vector<std::int64_t> ss(xst.size());
    std::int64_t base = 0;
    for (std::size_t d = 0; d < xst.size(); ++d) {
      ss[d] = step[d] * xst[d];
      base += start[d] * xst[d];
    }
    StridedWalk walk(out_shape, strides_of(out_shape), ss);
    dispatch_with_complex(x.dtype(),
                          [&]<class T>() { walk.run(out_ptr<T>(out), in_ptr<T>(x) + base, assign); });
    return {out};
  }
  Arrays jvp(std::span<const Array>, std::span<const Array> t,
             std::span<const Array>) const override {
    return {strided_slice(t[0], start, step, out_shape)};
  }
  Arrays vjp(std::span<const Array> p, std::span<const Array> ct,
             std::span<const Array>) const override {
    return {slice_transpose(ct[0], p[0].shape(), start, step)};
  }
  Batched vmap(std::span<const Array> in, std::span<const int> bdims) const override {
    Array x = move_bdim(in[0], bdims[0], 0, 0);
    auto a = start, st = step;
    Shape s = out_shape;
    prepend_whole_axis(a, st, s, x.shape(0));
    return {{strided_slice(x, a, st, s)}, {0}};
  }
};

// The transpose of StridedSlice: zeros of the operand's shape with ct placed where the slice
// read from (lax.pad with interior padding, generalised to negative steps).
struct SliceTranspose final : Primitive {
  Shape operand_shape;
  std::vector<std::int64_t> start, step;
  SliceTranspose(Shape s, std::vector<std::int64_t> a, std::vector<std::int64_t> st)
      : operand_shape(std::move(s)), start(std::move(a)), step(std::move(st)) {}
  const char* name() const override { return "pad"; }
  bool handles_reduced_floats() const override { return true; }  // moves bits only
  Avals abstract_eval(std::span<const ShapeDtype> in) const override {
    return {{operand_shape, in[0].dtype}};
  }
  void print_params(std::ostream& os) const override {
    os << "operand_shape=" << shape_str(operand_shape) << " start=" << ints_str(start)
       << " step=" << ints_str(step);
  }
  Arrays eval(std::span<const Array> in) const override {
    const Array& ct = in[0];
    Array out = zeros(operand_shape, ct.dtype());
    const auto ost = strides_of(operand_shape);
    std::vector<std::int64_t> ds(ost.size());
    std::int64_t base = 0;
    for (std::size_t d = 0; d < ost.size(); ++d) {
      ds[d] = step[d] * ost[d];
      base += start[d] * ost[d];
    }
    StridedWalk walk(ct.shape(), ds, strides_of(ct.shape()));
    dispatch_with_complex(
        ct.dtype(), [&]<class T>() { walk.run(out_ptr<T>(out) + base, in_ptr<T>(ct), assign); });
    return {out};
  }
  Arrays jvp(std::span<const Array>, std::span<const Array> t,
             std::span<const Array>) const override {
    return {slice_transpose(t[0], operand_shape, start, step)};
  }
  Arrays vjp(std::span<const Array> p, std::span<const Array> ct,
             std::span<const Array>) const override {
    return {strided_slice(ct[0], start, step, p[0].shape())};
  }
  Batched vmap(std::span<const Array> in, std::span<const int> bdims) const override {
    Array x = move_bdim(in[0], bdims[0], 0, 0);
    auto a = start, st = step;
    Shape s = operand_shape;
    prepend_whole_axis(a, st, s, x.shape(0));
    return {{slice_transpose(x, s, a, st)}, {0}};
  }
};

}  // namespace

Array strided_slice(const Array& x, std::vector<std::int64_t> start, std::vector<std::int64_t> step,
                    Shape out_shape) {
  if (!x.valid()) return Array();  // a symbolic zero tangent stays zero
  return bind1(
      std::make_shared<const StridedSlice>(std::move(start), std::move(step), std::move(out_shape)),
      {x});
}

Array slice_transpose(const Array& ct, Shape operand_shape, std::vector<std::int64_t> start,
                      std::vector<std::int64_t> step) {
  if (!ct.valid()) return Array();
  return bind1(std::make_shared<const SliceTranspose>(std::move(operand_shape), std::move(start),
                                                      std::move(step)),
               {ct});
}

namespace {

// ---- gather / scatter ---------------------------------------------------------------------------

struct Gather final : Primitive {
  GatherDims dims;
  explicit Gather(GatherDims d) : dims(std::move(d)) {}
  const char* name() const override { return "gather"; }
  bool handles_reduced_floats() const override { return true; }  // moves bits only
  Avals abstract_eval(std::span<const ShapeDtype> in) const override {
    return {{dims.out_shape(in[1].shape), in[0].dtype}};
  }
  void print_params(std::ostream& os) const override { dims.print(os); }
  Arrays eval(std::span<const Array> in) const override {
    const Array &x = in[0], &idx = in[1];
    Array out = empty(dims.out_shape(idx.shape()), x.dtype());
    const std::int64_t w = shape_size(dims.slice_sizes);
    StridedWalk walk(dims.slice_sizes, strides_of(dims.slice_sizes), strides_of(x.shape()));
    dispatch_with_complex(x.dtype(), [&]<class T>() {
      const T* a = in_ptr<T>(x);
      T* o = out_ptr<T>(out);
      if (w == 1)
        for_each_window(x.shape(), idx, dims,
                        [&](std::int64_t b, std::int64_t off) { o[b] = a[off]; });
      else
        for_each_window(x.shape(), idx, dims, [&](std::int64_t b, std::int64_t off) {
          walk.run(o + b * w, a + off, assign);
        });
    });
    return {out};
  }
  Arrays jvp(std::span<const Array> p, std::span<const Array> t,
             std::span<const Array>) const override {
    return {t[0].valid() ? gather(t[0], p[1], dims) : Array()};
  }
  Arrays vjp(std::span<const Array> p, std::span<const Array> ct,
             std::span<const Array>) const override {
    if (!ct[0].valid()) return {Array(), Array()};
    return {scatter(zeros_like(p[0]), p[1], ct[0], dims, ScatterOp::add), Array()};
  }
  Batched vmap(std::span<const Array> in, std::span<const int> bdims) const override {
    const int bx = bdims[0], bi = bdims[1];
    if (bi < 0) {  // batched operand, shared indices: the batch axis is one more window axis
      Array x = move_bdim(in[0], bx, 0, 0);
      return {{gather(x, in[1], dims.with_batch_axis(x.shape(0), true))}, {in[1].ndim() - 1}};
    }
    Array idx = move_bdim(in[1], bi, 0, 0);
    if (bx < 0) {  // shared operand, batched indices: one more index batch axis
      GatherDims d = dims;
      for (int& a : d.indices_batching) ++a;
      return {{gather(in[0], idx, d)}, {0}};
    }
    Array x = move_bdim(in[0], bx, 0, 0);
    return {{gather(x, idx, dims.with_batch_axis(x.shape(0), false))}, {0}};
  }
};

}  // namespace

Array gather(const Array& x, const Array& idx, const GatherDims& d) {
  return bind1(std::make_shared<const Gather>(d), {x, idx});
}

namespace {

void check_index_dtype(const Array& idx, const char* op, const char* what) {
  if (!is_integer(idx.dtype()))
    throw TypeError(std::string(op) + ": " + what + " must be integers, got dtype " +
                    std::string(dtype_name(idx.dtype())));
}

}  // namespace

// Python's slice.indices(n): the first index and the length of start:stop:step on an axis of n.
std::pair<std::int64_t, std::int64_t> python_slice(const Slice& s, std::int64_t n) {
  const std::int64_t step = s.step;
  auto fix = [&](std::optional<std::int64_t> v, std::int64_t dflt) {
    if (!v) return dflt;
    std::int64_t i = *v;
    if (i < 0) {
      i += n;
      if (i < 0) i = step < 0 ? -1 : 0;
    } else if (i >= n) {
      i = step < 0 ? n - 1 : n;
    }
    return i;
  };
  const std::int64_t start = fix(s.start, step < 0 ? n - 1 : 0);
  const std::int64_t stop = fix(s.stop, step < 0 ? -1 : n);
  std::int64_t len = 0;
  if (step > 0 && start < stop) len = (stop - start - 1) / step + 1;
  if (step < 0 && stop < start) len = (start - stop - 1) / (-step) + 1;
  return {start, len};
}

namespace {

// The whole-axis slice parameters of x (start 0, step 1, full shape).
struct SliceParams {
  std::vector<std::int64_t> start, step;
  Shape shape;
  explicit SliceParams(const Shape& s) : start(s.size(), 0), step(s.size(), 1), shape(s) {}
};

Array apply_slice(const Array& x, const SliceParams& p) {
  bool identity = true;
  for (std::size_t d = 0; d < p.shape.size(); ++d)
    identity &= p.start[d] == 0 && p.step[d] == 1 && p.shape[d] == x.shape()[d];
  if (identity) return x;
  return strided_slice(x, p.start, p.step, p.shape);
}

// A rank-1 int32 array of the start indices given as scalar arrays (stacked with linum ops so
// that batched or traced indices stay batched or traced).
Array start_vector(const Array& x, const Arrays& start, const char* op) {
  if (static_cast<int>(start.size()) != x.ndim())
    throw ValueError(std::string(op) +
                     ": start_indices must have length equal to the number of dimensions of the "
                     "operand, got " +
                     std::to_string(start.size()) + " indices for operand shape " +
                     shape_str(x.shape()));
  bool concrete = true;
  for (const auto& s : start) {
    check_valid(s, op);
    if (s.ndim() != 0)
      throw TypeError(std::string(op) + ": start_indices must be scalars, got an index of shape " +
                      shape_str(s.shape()));
    check_index_dtype(s, op, "start_indices");
    concrete &= !s.is_tracer();
  }
  if (concrete) {
    std::vector<std::int32_t> v;
    for (const auto& s : start) v.push_back(s.item<std::int32_t>());
    return array(v, Shape{static_cast<std::int64_t>(v.size())});
  }
  Arrays parts;
  for (const auto& s : start) parts.push_back(reshape(astype(s, int32), {1}));
  return concatenate(parts, 0);
}

GatherDims window_dims(int ndim, Shape sizes) {
  GatherDims d;
  for (int a = 0; a < ndim; ++a) d.start_index_map.push_back(a);
  d.slice_sizes = std::move(sizes);
  return d;
}

}  // namespace
}  // namespace detail

using namespace detail;

Array slice(const Array& x, const std::vector<Slice>& slices) {
  check_valid(x, "slice");
  if (static_cast<int>(slices.size()) > x.ndim())
    throw IndexError("slice: too many indices for array: array is " + std::to_string(x.ndim()) +
                     "-dimensional, but " + std::to_string(slices.size()) + " were indexed");
  SliceParams p(x.shape());
  for (std::size_t d = 0; d < slices.size(); ++d) {
    if (slices[d].step == 0) throw ValueError("slice: slice step cannot be zero");
    auto [start, len] = python_slice(slices[d], x.shape()[d]);
    p.start[d] = len > 0 ? start : 0;
    p.step[d] = slices[d].step;
    p.shape[d] = len;
  }
  return apply_slice(x, p);
}

Array lax_slice(const Array& x, const std::vector<std::int64_t>& start,
                const std::vector<std::int64_t>& limit, std::vector<std::int64_t> strides) {
  check_valid(x, "lax_slice");
  const auto nd = static_cast<std::size_t>(x.ndim());
  const Shape& xs = x.shape();
  if (strides.empty()) strides.assign(nd, 1);
  auto fail = [](const std::string& m) { throw ValueError("lax_slice: " + m); };
  if (start.size() != nd)
    fail(
        "start_indices must have length equal to the number of dimensions of the operand, got "
        "indices " +
        ints_str(start) + " for operand shape " + shape_str(xs));
  if (limit.size() != nd)
    fail("limit_indices must have the same length as start_indices, got start_indices " +
         ints_str(start) + " and limit_indices " + ints_str(limit));
  if (strides.size() != nd)
    fail("strides must have length equal to the number of dimensions of the operand, got strides " +
         ints_str(strides) + " for operand shape " + shape_str(xs));
  SliceParams p(xs);
  for (std::size_t d = 0; d < nd; ++d) {
    if (start[d] < 0)
      fail("start_indices must be greater than or equal to zero, got start_indices " +
           ints_str(start));
    if (limit[d] > xs[d])
      fail("limit_indices must be less than or equal to operand shape, got limit_indices " +
           ints_str(limit) + " for operand shape " + shape_str(xs));
    if (limit[d] < start[d])
      fail("limit_indices must be greater than or equal to start_indices, got start_indices " +
           ints_str(start) + " and limit_indices " + ints_str(limit));
    if (strides[d] <= 0) fail("strides must be positive, got " + ints_str(strides));
    p.start[d] = start[d];
    p.step[d] = strides[d];
    p.shape[d] = (limit[d] - start[d] + strides[d] - 1) / strides[d];
  }
  return apply_slice(x, p);
}

Array dynamic_slice(const Array& x, const Arrays& start, const std::vector<std::int64_t>& sizes) {
  check_valid(x, "dynamic_slice");
  Array idx = start_vector(x, start, "dynamic_slice");
  if (sizes.size() != start.size())
    throw ValueError(
        "dynamic_slice: slice_sizes must have the same length as start_indices, got "
        "start_indices length " +
        std::to_string(start.size()) + " and slice_sizes " + ints_str(sizes));
  for (std::size_t d = 0; d < sizes.size(); ++d)
    if (sizes[d] < 0 || sizes[d] > x.shape()[d])
      throw ValueError(
          "dynamic_slice: slice_sizes must be between zero and the operand shape, got "
          "slice_sizes " +
          ints_str(sizes) + " for operand shape " + shape_str(x.shape()));
  if (x.ndim() == 0) return x;
  return gather(x, idx, window_dims(x.ndim(), Shape(sizes.begin(), sizes.end())));
}

Array dynamic_slice(const Array& x, const std::vector<std::int64_t>& start,
                    const std::vector<std::int64_t>& sizes) {
  Arrays s;
  for (auto v : start) s.push_back(Array(static_cast<std::int32_t>(v)));
  return dynamic_slice(x, s, sizes);
}

Array dynamic_slice(const Array& x, std::initializer_list<std::int64_t> start,
                    const std::vector<std::int64_t>& sizes) {
  return dynamic_slice(x, std::vector<std::int64_t>(start), sizes);
}

Array dynamic_update_slice(const Array& x, const Array& update, const Arrays& start) {
  check_valid(x, "dynamic_update_slice");
  check_valid(update, "dynamic_update_slice");
  Array idx = start_vector(x, start, "dynamic_update_slice");
  if (update.dtype() != x.dtype())
    throw TypeError("dynamic_update_slice: update dtype " +
                    std::string(dtype_name(update.dtype())) + " does not match operand dtype " +
                    std::string(dtype_name(x.dtype())));
  bool fits = update.ndim() == x.ndim();
  for (int d = 0; fits && d < x.ndim(); ++d) fits = update.shape()[d] <= x.shape()[d];
  if (!fits)
    throw ValueError("dynamic_update_slice: update shape " + shape_str(update.shape()) +
                     " must have the operand's rank and fit in operand shape " +
                     shape_str(x.shape()));
  if (x.ndim() == 0) return update;
  return scatter(x, idx, update, window_dims(x.ndim(), update.shape()), ScatterOp::set,
                 WindowBounds::clamp, true);
}

Array dynamic_update_slice(const Array& x, const Array& update,
                           const std::vector<std::int64_t>& start) {
  Arrays s;
  for (auto v : start) s.push_back(Array(static_cast<std::int32_t>(v)));
  return dynamic_update_slice(x, update, s);
}

Array dynamic_update_slice(const Array& x, const Array& update,
                           std::initializer_list<std::int64_t> start) {
  return dynamic_update_slice(x, update, std::vector<std::int64_t>(start));
}

namespace detail {
// In float64, where int32 and uint32 values are exact; the quotient's rounding is corrected
// from the remainder.
Array index_floordiv(const Array& a, std::int64_t n) {
  const Array x = astype(a, float64), nn = full({}, static_cast<double>(n), float64);
  Array q = floor(divide(x, nn));
  const Array r = subtract(x, multiply(q, nn));
  q = where(less(r, zeros({}, float64)), subtract(q, 1.0),
            where(greater_equal(r, nn), add(q, 1.0), q));
  return astype(q, a.dtype());
}
Array index_mod(const Array& a, std::int64_t n) {
  const Array q = astype(index_floordiv(a, n), float64);
  return astype(subtract(astype(a, float64), multiply(q, static_cast<double>(n))), a.dtype());
}

Array gather_fill_value(DType d, std::optional<double> fill_value) {
  if (fill_value) return full({}, *fill_value, d);
  if (is_floating(d)) return full({}, std::numeric_limits<double>::quiet_NaN(), d);
  if (d == int32) return full({}, std::numeric_limits<std::int32_t>::min(), d);
  if (d == uint32) return full({}, std::numeric_limits<std::uint32_t>::max(), d);
  return full({}, 1, d);
}

Array slice_in_dim(const Array& x, std::optional<std::int64_t> start,
                   std::optional<std::int64_t> stop, int axis, std::int64_t step) {
  std::vector<Slice> s(static_cast<std::size_t>(axis), Slice{});
  s.push_back(Slice{start, stop, step});
  return slice(x, s);
}

Array concrete_or_error(const Array& a, const char* op, const std::string& what) {
  try {
    return a.concrete();
  } catch (const Error& e) {
    throw ConcretizationTypeError(std::string(op) + ": " + what + " (" + e.what() + ")");
  }
}
}  // namespace detail

namespace {
// FILL_OR_DROP: negative indices count from the end (jnp.take wraps them before the gather).
Array wrap_negative(const Array& idx, std::int64_t n) {
  if (idx.dtype() == uint32) return idx;
  return where(less(idx, full({}, 0, idx.dtype())),
               add(idx, full({}, static_cast<double>(n), idx.dtype())), idx);
}
// CLIP: the raw index clamped into [0, n - 1] (negative indices do not wrap).
Array clamp_index(const Array& idx, std::int64_t n) {
  return minimum(maximum(idx, full({}, 0, idx.dtype())),
                 full({}, static_cast<double>(n - 1), idx.dtype()));
}
Array mode_index(const Array& idx, std::int64_t n, GatherMode mode) {
  if (mode == GatherMode::wrap) return index_mod(idx, n);
  return mode == GatherMode::fill ? wrap_negative(idx, n) : clamp_index(idx, n);
}
Array in_bounds(const Array& idx, std::int64_t n) {
  return logical_and(greater_equal(idx, full({}, 0, idx.dtype())),
                     less(idx, full({}, static_cast<double>(n), idx.dtype())));
}
}  // namespace

Array take(const Array& x, const Array& indices, std::optional<int> axis, GatherMode mode,
           std::optional<double> fill_value) {
  check_valid(x, "take");
  check_valid(indices, "take");
  check_index_dtype(indices, "take", "indices");
  if (!axis) return take(ravel(x), indices, 0, mode, fill_value);
  const int ax = normalize_axis(*axis, x.ndim(), "take");
  if (x.shape()[ax] == 0 && indices.size() > 0)
    throw IndexError("take: cannot take from axis " + std::to_string(ax) +
                     " of size 0 (operand shape " + shape_str(x.shape()) + ")");
  GatherDims d;
  d.collapsed = {ax};
  d.start_index_map = {ax};
  d.slice_sizes = x.shape();
  d.slice_sizes[ax] = 1;
  const std::int64_t n = x.shape()[ax];
  const Array idx = mode_index(indices, n, mode);
  Shape is = indices.shape();
  is.push_back(1);
  Array g = gather(x, reshape(idx, is), d);  // (indices..., x dims without ax)
  if (mode == GatherMode::fill) {
    Shape ms = indices.shape();
    ms.resize(ms.size() + static_cast<std::size_t>(x.ndim() - 1), 1);
    g = where(reshape(in_bounds(idx, n), ms), g, gather_fill_value(g.dtype(), fill_value));
  }
  if (ax == 0) return g;
  const int ni = indices.ndim();
  std::vector<int> perm;  // to (x dims before ax, indices..., x dims after ax)
  for (int i = 0; i < ax; ++i) perm.push_back(ni + i);
  for (int i = 0; i < ni; ++i) perm.push_back(i);
  for (int i = ni + ax; i < g.ndim(); ++i) perm.push_back(i);
  return transpose(g, perm);
}

Array take_along_axis(const Array& x, const Array& indices, int axis, GatherMode mode,
                      std::optional<double> fill_value) {
  check_valid(x, "take_along_axis");
  check_valid(indices, "take_along_axis");
  check_index_dtype(indices, "take_along_axis", "indices");
  if (indices.ndim() != x.ndim())
    throw ValueError(
        "take_along_axis: indices and arr must have the same number of dimensions, got "
        "shapes " +
        shape_str(indices.shape()) + " and " + shape_str(x.shape()));
  const int ax = normalize_axis(axis, x.ndim(), "take_along_axis");
  if (x.shape()[ax] == 0 && indices.size() > 0)
    throw IndexError("take_along_axis: cannot take from axis " + std::to_string(ax) +
                     " of size 0 (operand shape " + shape_str(x.shape()) + ")");
  // The other axes broadcast against each other, as in jnp.take_along_axis.
  Shape xs = x.shape(), is = indices.shape();
  xs[ax] = is[ax] = 1;
  Shape b;
  try {
    b = broadcast_shapes(xs, is, "take_along_axis");
  } catch (const ValueError&) {
    throw ValueError("take_along_axis: shapes " + shape_str(x.shape()) + " (arr) and " +
                     shape_str(indices.shape()) + " (indices) do not broadcast outside axis " +
                     std::to_string(ax));
  }
  Shape bx = b, bi = b;
  bx[ax] = x.shape()[ax];
  bi[ax] = indices.shape()[ax];
  Array xb = broadcast_to(x, bx);
  GatherDims d;
  d.collapsed = {ax};
  d.start_index_map = {ax};
  d.slice_sizes = Shape(b.size(), 1);
  for (int a = 0; a < x.ndim(); ++a)
    if (a != ax) {
      d.operand_batching.push_back(a);
      d.indices_batching.push_back(a);
    }
  const std::int64_t n = x.shape()[ax];
  const Array idx = broadcast_to(mode_index(indices, n, mode), bi);
  Shape ie = bi;
  ie.push_back(1);
  Array g = gather(xb, reshape(idx, ie), d);
  if (mode != GatherMode::fill) return g;
  return where(in_bounds(idx, n), g, gather_fill_value(g.dtype(), fill_value));
}

// ---- x[i] -------------------------------------------------------------------------------------

namespace {
// JAX's NDIndexer checks for one index on the leading axis.
void check_leading_index(const Array& x) {
  check_valid(x, "Array::operator[]");
  if (x.ndim() == 0)
    throw IndexError(
        "Array::operator[]: too many indices: array is 0-dimensional, but 1 were "
        "indexed");
  if (x.shape()[0] == 0)
    throw IndexError("Array::operator[]: index is out of bounds for axis 0 with size 0 (shape " +
                     shape_str(x.shape()) + ")");
}
}  // namespace

// JAX's static-int path: the index is normalized, clamped into range and sliced statically.
Array Array::operator[](std::int64_t i) const {
  check_leading_index(*this);
  const std::int64_t n = shape()[0];
  if (i < 0) i += n;
  i = std::clamp<std::int64_t>(i, 0, n - 1);
  return linum::reshape(slice(*this, {Slice{i, i + 1}}), Shape(shape().begin() + 1, shape().end()));
}

// JAX's array-index path: negative indices count from the end, then the gather clamps.
Array Array::operator[](const Array& i) const {
  check_leading_index(*this);
  check_valid(i, "Array::operator[]");
  check_index_dtype(i, "Array::operator[]", "Array indices");
  return take(*this, wrap_negative(i, shape()[0]), 0, GatherMode::clip);
}

}  // namespace linum
