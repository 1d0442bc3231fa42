// Internal building blocks of the indexing primitives (.cpp only, never included by users): the
// strided walk behind slices and windows, XLA's gather dimension numbers in linum's layout, and
// the gather / scatter / slice primitives' constructors shared by indexing.cpp, scatter.cpp,
// pad.cpp and the ops built on them.
#pragma once

#include <algorithm>
#include <ostream>
#include <string>
#include <vector>

#include <linum/autodiff/ops/kernel_util.hpp>

namespace linum::detail {

inline std::string ints_str(const std::vector<std::int64_t>& v) {
  return shape_str(Shape(v.begin(), v.end()));
}
inline std::string ints_str(const std::vector<int>& v) {
  return shape_str(Shape(v.begin(), v.end()));
}

// A strided walk over `shape` with a stride per axis for a destination and a source buffer.
// Size-1 axes are dropped and contiguous neighbours merged so that the inner loop is long.
class StridedWalk {
 public:
  StridedWalk(const Shape& shape, const std::vector<std::int64_t>& dst_strides,
              const std::vector<std::int64_t>& src_strides) {
    for (std::size_t d = 0; d < shape.size(); ++d) {
      if (shape[d] == 0) empty_ = true;
      if (shape[d] == 1) continue;
      if (!shape_.empty() && ds_.back() == dst_strides[d] * shape[d] &&
          ss_.back() == src_strides[d] * shape[d]) {
        shape_.back() *= shape[d];
        ds_.back() = dst_strides[d];
        ss_.back() = src_strides[d];
      } else {
        shape_.push_back(shape[d]);
        ds_.push_back(dst_strides[d]);
        ss_.push_back(src_strides[d]);
      }
    }
    idx_.assign(shape_.size(), 0);
  }

  // f(dst[i], src[j]) for each element of the walk, in row-major order.
  template <class D, class S, class F>
  void run(D* dst, const S* src, F f) {
    if (empty_) return;
    const int nd = static_cast<int>(shape_.size());
    if (nd == 0) {
      f(dst[0], src[0]);
      return;
    }
    const std::int64_t len = shape_[nd - 1], dl = ds_[nd - 1], sl = ss_[nd - 1];
    std::fill(idx_.begin(), idx_.end(), 0);
    std::int64_t doff = 0, soff = 0;
    while (true) {
      if (dl == 1 && sl == 1)
        for (std::int64_t i = 0; i < len; ++i) f(dst[doff + i], src[soff + i]);
      else
        for (std::int64_t i = 0; i < len; ++i) f(dst[doff + i * dl], src[soff + i * sl]);
      int d = nd - 2;
      for (; d >= 0; --d) {  // odometer over the outer axes
        doff += ds_[d];
        soff += ss_[d];
        if (++idx_[d] < shape_[d]) break;
        doff -= ds_[d] * shape_[d];
        soff -= ss_[d] * shape_[d];
        idx_[d] = 0;
      }
      if (d < 0) return;
    }
  }

 private:
  Shape shape_;
  std::vector<std::int64_t> ds_, ss_, idx_;
  bool empty_ = false;
};

inline constexpr auto assign = [](auto& d, const auto& s) { d = s; };
inline constexpr auto accumulate = [](auto& d, const auto& s) {
  d = static_cast<std::decay_t<decltype(d)>>(d + s);
};

// XLA's gather dimension numbers, restricted to what linum needs. The indices array has shape
// (batch..., k): each batch entry gives k start indices, for operand axes start_index_map. The
// window of shape slice_sizes at that (clamped) start is gathered; the output is the index batch
// dims followed by the window dims that are neither collapsed nor operand batching dims. Operand
// batching dims (size-1 windows) take their start from the paired index batch dim, which is
// what makes vmap of a gather with batched operand and indices one gather.
struct GatherDims {
  std::vector<int> collapsed;         // operand axes with window size 1, dropped from the output
  std::vector<int> start_index_map;   // operand axis of each index component
  std::vector<int> operand_batching;  // operand axes paired with ...
  std::vector<int> indices_batching;  // ... these index batch axes
  Shape slice_sizes;

  bool dropped(int a) const {
    return std::count(collapsed.begin(), collapsed.end(), a) ||
           std::count(operand_batching.begin(), operand_batching.end(), a);
  }
  // Window shape without the dropped axes (the trailing dims of a gather's output).
  Shape window_shape() const {
    Shape w;
    for (int a = 0; a < static_cast<int>(slice_sizes.size()); ++a)
      if (!dropped(a)) w.push_back(slice_sizes[a]);
    return w;
  }
  Shape out_shape(const Shape& index_shape) const {
    Shape s(index_shape.begin(), index_shape.end() - 1);
    for (auto d : window_shape()) s.push_back(d);
    return s;
  }
  // The dims for an operand with a new leading axis 0: `whole` keeps it as a full window axis
  // (unbatched indices); otherwise it is paired with a new leading index batch axis 0.
  GatherDims with_batch_axis(std::int64_t n, bool whole) const {
    GatherDims r;
    auto shift = [](std::vector<int> v) {
      for (int& a : v) ++a;
      return v;
    };
    r.collapsed = shift(collapsed);
    r.start_index_map = shift(start_index_map);
    r.operand_batching = shift(operand_batching);
    r.indices_batching = whole ? indices_batching : shift(indices_batching);
    if (!whole) {
      r.operand_batching.insert(r.operand_batching.begin(), 0);
      r.indices_batching.insert(r.indices_batching.begin(), 0);
    }
    r.slice_sizes = slice_sizes;
    r.slice_sizes.insert(r.slice_sizes.begin(), whole ? n : 1);
    return r;
  }
  void print(std::ostream& os) const {
    os << "collapsed=" << ints_str(collapsed) << " start_index_map=" << ints_str(start_index_map)
       << " operand_batching=" << ints_str(operand_batching)
       << " indices_batching=" << ints_str(indices_batching)
       << " slice_sizes=" << shape_str(slice_sizes);
  }
};

// Calls f(b, offset) for each index batch entry b, with the operand offset of its window start.
// WindowBounds::clamp: starts are clamped so that the window fits (negative indices first count
// from the end), as XLA and JAX do for gathers and dynamic_slice. WindowBounds::drop: a window
// that does not fit is skipped, as XLA's scatter does (no wrapping of negative indices).
enum class WindowBounds { clamp, drop };
template <class F>
void for_each_window(const Shape& xs, const Array& idx, const GatherDims& d, F f,
                     WindowBounds bounds = WindowBounds::clamp) {
  const Shape& is = idx.shape();
  const int nb = static_cast<int>(is.size()) - 1;
  const std::int64_t k = is.back();
  const Shape bshape(is.begin(), is.end() - 1);
  const std::int64_t nbatch = shape_size(bshape);
  std::vector<std::int64_t> iv(static_cast<std::size_t>(idx.size()));
  dispatch(idx.dtype(), [&]<class I>() {
    const I* p = in_ptr<I>(idx);
    for (std::size_t i = 0; i < iv.size(); ++i) iv[i] = static_cast<std::int64_t>(p[i]);
  });
  const auto xst = strides_of(xs);
  std::vector<std::int64_t> bidx(static_cast<std::size_t>(nb), 0);
  for (std::int64_t b = 0; b < nbatch; ++b) {
    std::int64_t off = 0;
    bool fits = true;
    for (std::int64_t j = 0; j < k; ++j) {
      const int a = d.start_index_map[j];
      std::int64_t v = iv[b * k + j];
      const std::int64_t hi = xs[a] - d.slice_sizes[a];
      if (bounds == WindowBounds::drop) {
        fits = fits && v >= 0 && v <= hi;
      } else {
        if (v < 0) v += xs[a];
        v = std::clamp<std::int64_t>(v, 0, hi);
      }
      off += v * xst[a];
    }
    for (std::size_t p = 0; p < d.operand_batching.size(); ++p)
      off += bidx[d.indices_batching[p]] * xst[d.operand_batching[p]];
    if (fits) f(b, off);
    for (int q = nb - 1; q >= 0; --q) {
      if (++bidx[q] < bshape[q]) break;
      bidx[q] = 0;
    }
  }
}

// x[start + i * step] for i in out_shape (any non-zero steps), and its transpose: zeros of
// operand_shape with ct placed where the slice read from.
Array strided_slice(const Array& x, std::vector<std::int64_t> start, std::vector<std::int64_t> step,
                    Shape out_shape);
Array slice_transpose(const Array& ct, Shape operand_shape, std::vector<std::int64_t> start,
                      std::vector<std::int64_t> step);

// Python's slice.indices(n) for a Slice on an axis of n: the first index and the length.
std::pair<std::int64_t, std::int64_t> python_slice(const Slice& s, std::int64_t n);

// The windows of x at idx (clamped), shape d.out_shape(idx.shape()).
Array gather(const Array& x, const Array& idx, const GatherDims& d);

// How a scatter combines each update with the operand element it lands on (XLA's scatter
// computations: replace, add, multiply, min, max; min and max propagate NaN as lax.min/max).
enum class ScatterOp { set, add, mul, min, max };
// x with each window of `upd` (shape d.out_shape(idx.shape())) combined into it by `op`. Updates
// apply in index-batch order (so with repeated indices, `set` keeps the last one). `bounds`:
// clamp starts into range, or drop windows that do not fit (lax.scatter's semantics).
// unique_indices promises that no two windows overlap (lets `set` skip its winner masks).
Array scatter(const Array& x, const Array& idx, const Array& upd, const GatherDims& d, ScatterOp op,
              WindowBounds bounds = WindowBounds::clamp, bool unique_indices = false);

// x[start:stop:step] along one axis (Python's slice rules), lax.slice_in_dim.
Array slice_in_dim(const Array& x, std::optional<std::int64_t> start,
                   std::optional<std::int64_t> stop, int axis, std::int64_t step = 1);

// jnp.take / lax.gather's fill value for out-of-bounds reads: fill_value, else NaN for floats,
// the lowest int32, the largest uint32, true for bool.
Array gather_fill_value(DType d, std::optional<double> fill_value);

// A value that an op needs on the host (a result's size, static indices): its concrete value,
// or a ConcretizationTypeError naming `op` and saying why (`what`) under jit or vmap.
Array concrete_or_error(const Array& a, const char* op, const std::string& what);

// JAX's sort order on values read as double: -0.0 == 0.0, NaNs equal and after everything.
inline bool sort_less(double a, double b) { return a == a && (b != b || a < b); }
inline bool sort_equal(double a, double b) { return (a != a && b != b) || a == b; }

// a // n and a mod n (Python's floor division and modulo) of an integer array by a positive n.
Array index_floordiv(const Array& a, std::int64_t n);
Array index_mod(const Array& a, std::int64_t n);

// Whether each window start of idx fits in an operand of shape xs (bool, shape idx.shape()[:-1]),
// built from linum ops so that it traces and batches like its inputs.
Array window_fits(const Array& idx, const Shape& xs, const GatherDims& d);

}  // namespace linum::detail
