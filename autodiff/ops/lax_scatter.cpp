// lax.gather and the lax.scatter family: XLA's dimension numbers checked and mapped onto linum's
// gather / scatter primitives (index batch dims first, then the window), with JAX's modes for
// out-of-bounds indices.
#include <linum/autodiff/ops/scatter.hpp>

#include <limits>
#include <numeric>

#include <linum/autodiff/ops/index_util.hpp>

namespace linum {
namespace detail {
namespace {

bool contains(const std::vector<int>& v, int a) {
  return std::find(v.begin(), v.end(), a) != v.end();
}

// Checks the operand-side dims shared by gather and scatter (collapsed / inserted dims, the
// index map, operand batching dims) against operand and indices; throws naming `op`.
struct DimsChecker {
  const char* op;
  const Shape& xs;
  const Array& idx;
  [[noreturn]] void fail(const std::string& m) const {
    throw ValueError(std::string(op) + ": " + m);
  }
  void operand_axes(const std::vector<int>& v, const char* what, bool sorted) const {
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (v[i] < 0 || v[i] >= static_cast<int>(xs.size()))
        fail(std::string(what) + " " + ints_str(v) + " must be in the range [0, " +
             std::to_string(xs.size()) + ") of the operand's rank");
      if (sorted && i > 0 && v[i] <= v[i - 1])
        fail(std::string(what) + " " + ints_str(v) + " must be sorted and unique");
    }
    if (!sorted) {
      auto s = v;
      std::sort(s.begin(), s.end());
      if (std::adjacent_find(s.begin(), s.end()) != s.end())
        fail(std::string(what) + " " + ints_str(v) + " must not repeat an axis");
    }
  }
  void check(const std::vector<int>& collapsed, const char* collapsed_name,
             const std::vector<int>& index_map, const char* index_map_name,
             const std::vector<int>& operand_batching, const std::vector<int>& index_batching,
             const char* index_batching_name) const {
    check_valid(idx, op);
    if (!is_integer(idx.dtype()))
      throw TypeError(std::string(op) + ": indices must have an integer dtype, got " +
                      std::string(dtype_name(idx.dtype())));
    if (idx.ndim() < 1)
      fail(
          "indices must have at least one dimension (the index vector is the last axis), got "
          "a scalar");
    operand_axes(collapsed, collapsed_name, true);
    operand_axes(index_map, index_map_name, false);
    operand_axes(operand_batching, "operand_batching_dims", true);
    if (static_cast<std::int64_t>(index_map.size()) != idx.shape().back())
      fail(std::string(index_map_name) + " " + ints_str(index_map) +
           " must have one entry per index component: the last axis of indices " +
           shape_str(idx.shape()) + " has " + std::to_string(idx.shape().back()));
    for (int a : operand_batching)
      if (contains(collapsed, a) || contains(index_map, a))
        fail("operand_batching_dims " + ints_str(operand_batching) + " must be disjoint from " +
             collapsed_name + " and " + index_map_name);
    if (index_batching.size() != operand_batching.size())
      fail(std::string(index_batching_name) + " " + ints_str(index_batching) +
           " must have as many entries as operand_batching_dims " + ints_str(operand_batching));
    auto sorted = index_batching;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
      fail(std::string(index_batching_name) + " " + ints_str(index_batching) +
           " must not repeat an axis");
    for (std::size_t i = 0; i < index_batching.size(); ++i) {
      const int b = index_batching[i];
      if (b < 0 || b >= idx.ndim() - 1)
        fail(std::string(index_batching_name) + " " + ints_str(index_batching) +
             " must be axes of indices other than the last, for indices of shape " +
             shape_str(idx.shape()));
      if (idx.shape()[b] != xs[operand_batching[i]])
        fail("operand batching dim " + std::to_string(operand_batching[i]) + " (size " +
             std::to_string(xs[operand_batching[i]]) + ") and indices batching dim " +
             std::to_string(b) + " (size " + std::to_string(idx.shape()[b]) +
             ") must have the same size");
    }
  }
};

// Indices clamped so that each window fits (lax's clip, and what XLA's gather does for
// promise_in_bounds). Negative indices clamp to 0, as XLA's.
Array clamp_starts(const Array& idx, const Shape& xs, const GatherDims& d) {
  std::vector<std::int32_t> hi;
  for (int a : d.start_index_map)
    hi.push_back(static_cast<std::int32_t>(std::max<std::int64_t>(0, xs[a] - d.slice_sizes[a])));
  return clip(idx, zeros({}, idx.dtype()), astype(array(hi), idx.dtype()));
}

Array scatter_general(const char* op, ScatterOp kind, const Array& x, const Array& idx,
                      const Array& updates, const ScatterDimensionNumbers& dn,
                      const ScatterOptions& opts) {
  check_valid(x, op);
  check_valid(updates, op);
  const Shape& xs = x.shape();
  DimsChecker c{op, xs, idx};
  c.check(dn.inserted_window_dims, "inserted_window_dims", dn.scatter_dims_to_operand_dims,
          "scatter_dims_to_operand_dims", dn.operand_batching_dims,
          dn.scatter_indices_batching_dims, "scatter_indices_batching_dims");
  if (updates.dtype() != x.dtype())
    throw TypeError(std::string(op) + ": updates dtype " +
                    std::string(dtype_name(updates.dtype())) + " must match the operand dtype " +
                    std::string(dtype_name(x.dtype())));
  const Shape& us = updates.shape();
  const int nu = updates.ndim(), nb = idx.ndim() - 1;
  for (std::size_t i = 0; i < dn.update_window_dims.size(); ++i) {
    const int a = dn.update_window_dims[i];
    if (a < 0 || a >= nu || (i > 0 && a <= dn.update_window_dims[i - 1]))
      c.fail("update_window_dims " + ints_str(dn.update_window_dims) +
             " must be sorted, unique axes of updates of shape " + shape_str(us));
  }
  GatherDims d;
  d.collapsed = dn.inserted_window_dims;
  d.start_index_map = dn.scatter_dims_to_operand_dims;
  d.operand_batching = dn.operand_batching_dims;
  d.indices_batching = dn.scatter_indices_batching_dims;
  // The window sizes come from updates, in operand order over the axes that are not inserted.
  std::size_t w = 0;
  for (int a = 0; a < x.ndim(); ++a) {
    if (d.dropped(a)) {
      d.slice_sizes.push_back(1);
      continue;
    }
    if (w >= dn.update_window_dims.size())
      c.fail("update_window_dims " + ints_str(dn.update_window_dims) +
             " must name one axis of updates per operand axis that is neither inserted nor a "
             "batching dim");
    const std::int64_t s = us[dn.update_window_dims[w++]];
    if (s > xs[a])
      c.fail("the window of updates " + shape_str(us) + " is larger than operand " + shape_str(xs) +
             " along operand axis " + std::to_string(a));
    d.slice_sizes.push_back(s);
  }
  if (w != dn.update_window_dims.size() ||
      nu != nb + static_cast<int>(dn.update_window_dims.size()))
    c.fail("updates of shape " + shape_str(us) + " must have the " + std::to_string(nb) +
           " batch dims of indices " + shape_str(idx.shape()) + " and " +
           std::to_string(x.ndim() - d.collapsed.size() - d.operand_batching.size()) +
           " window dims");
  // Updates in linum's layout: the scatter (index batch) dims, then the window dims.
  std::vector<int> perm;
  for (int a = 0; a < nu; ++a)
    if (!contains(dn.update_window_dims, a)) perm.push_back(a);
  const Shape bshape(idx.shape().begin(), idx.shape().end() - 1);
  for (int i = 0; i < nb; ++i)
    if (us[perm[i]] != bshape[i])
      c.fail("the scatter dims of updates " + shape_str(us) +
             " must match the batch dims of "
             "indices " +
             shape_str(idx.shape()));
  perm.insert(perm.end(), dn.update_window_dims.begin(), dn.update_window_dims.end());
  const Array u = transpose(updates, perm);
  if (opts.mode == GatherScatterMode::clip)
    return scatter(x, clamp_starts(idx, xs, d), u, d, kind, WindowBounds::clamp,
                   opts.unique_indices);
  return scatter(x, idx, u, d, kind, WindowBounds::drop, opts.unique_indices);
}

}  // namespace
}  // namespace detail

using namespace detail;

Array gather(const Array& operand, const Array& start_indices, const GatherDimensionNumbers& dn,
             const Shape& slice_sizes, const GatherOptions& options) {
  const char* op = "gather";
  check_valid(operand, op);
  const Shape& xs = operand.shape();
  DimsChecker c{op, xs, start_indices};
  c.check(dn.collapsed_slice_dims, "collapsed_slice_dims", dn.start_index_map, "start_index_map",
          dn.operand_batching_dims, dn.start_indices_batching_dims, "start_indices_batching_dims");
  if (slice_sizes.size() != xs.size())
    c.fail("slice_sizes " + shape_str(slice_sizes) +
           " must have one entry per operand axis, "
           "for operand shape " +
           shape_str(xs));
  for (std::size_t a = 0; a < xs.size(); ++a)
    if (slice_sizes[a] < 0 || slice_sizes[a] > xs[a])
      c.fail("slice_sizes " + shape_str(slice_sizes) + " must be between zero and operand shape " +
             shape_str(xs));
  GatherDims d;
  d.collapsed = dn.collapsed_slice_dims;
  d.start_index_map = dn.start_index_map;
  d.operand_batching = dn.operand_batching_dims;
  d.indices_batching = dn.start_indices_batching_dims;
  d.slice_sizes = slice_sizes;
  for (int a : d.collapsed)
    if (slice_sizes[a] > 1)
      c.fail("collapsed_slice_dims " + ints_str(d.collapsed) +
             " must have slice size 0 or 1, "
             "got slice_sizes " +
             shape_str(slice_sizes));
  for (int a : d.operand_batching)
    if (slice_sizes[a] != 1)
      c.fail("operand_batching_dims " + ints_str(d.operand_batching) +
             " must have slice size 1, got slice_sizes " + shape_str(slice_sizes));
  const int nb = start_indices.ndim() - 1;
  const int nw = static_cast<int>(d.window_shape().size());
  const int rank = nb + nw;
  if (static_cast<int>(dn.offset_dims.size()) != nw)
    c.fail("offset_dims " + ints_str(dn.offset_dims) + " must have one entry per window dim (" +
           std::to_string(nw) + " for slice_sizes " + shape_str(slice_sizes) + ")");
  for (std::size_t i = 0; i < dn.offset_dims.size(); ++i)
    if (dn.offset_dims[i] < 0 || dn.offset_dims[i] >= rank ||
        (i > 0 && dn.offset_dims[i] <= dn.offset_dims[i - 1]))
      c.fail("offset_dims " + ints_str(dn.offset_dims) +
             " must be sorted, unique axes of the output of rank " + std::to_string(rank));
  Array idx = start_indices;
  if (options.mode != GatherScatterMode::fill_or_drop) idx = clamp_starts(start_indices, xs, d);
  Array g = detail::gather(operand, idx, d);  // (batch..., window...)
  if (options.mode == GatherScatterMode::fill_or_drop) {
    Shape ms(start_indices.shape().begin(), start_indices.shape().end() - 1);
    ms.resize(static_cast<std::size_t>(rank), 1);
    const Array fill = gather_fill_value(operand.dtype(), options.fill_value);
    g = where(reshape(window_fits(start_indices, xs, d), ms), g, fill);
  }
  // To JAX's layout: the window at offset_dims, the batch dims in order elsewhere.
  std::vector<int> perm(static_cast<std::size_t>(rank));
  int b = 0, w = 0;
  for (int p = 0; p < rank; ++p) perm[p] = contains(dn.offset_dims, p) ? nb + w++ : b++;
  return transpose(g, perm);
}

Array scatter(const Array& operand, const Array& scatter_indices, const Array& updates,
              const ScatterDimensionNumbers& dn, const ScatterOptions& options) {
  return scatter_general("scatter", ScatterOp::set, operand, scatter_indices, updates, dn, options);
}
Array scatter_add(const Array& operand, const Array& scatter_indices, const Array& updates,
                  const ScatterDimensionNumbers& dn, const ScatterOptions& options) {
  return scatter_general("scatter_add", ScatterOp::add, operand, scatter_indices, updates, dn,
                         options);
}
// x - u equals x + (-u) exactly in IEEE arithmetic (and in wrapping integers).
Array scatter_sub(const Array& operand, const Array& scatter_indices, const Array& updates,
                  const ScatterDimensionNumbers& dn, const ScatterOptions& options) {
  check_valid(updates, "scatter_sub");
  if (updates.dtype() == bool_) throw TypeError("scatter_sub: bool operands cannot be subtracted");
  return scatter_general("scatter_sub", ScatterOp::add, operand, scatter_indices, negative(updates),
                         dn, options);
}
Array scatter_mul(const Array& operand, const Array& scatter_indices, const Array& updates,
                  const ScatterDimensionNumbers& dn, const ScatterOptions& options) {
  return scatter_general("scatter_mul", ScatterOp::mul, operand, scatter_indices, updates, dn,
                         options);
}
Array scatter_min(const Array& operand, const Array& scatter_indices, const Array& updates,
                  const ScatterDimensionNumbers& dn, const ScatterOptions& options) {
  return scatter_general("scatter_min", ScatterOp::min, operand, scatter_indices, updates, dn,
                         options);
}
Array scatter_max(const Array& operand, const Array& scatter_indices, const Array& updates,
                  const ScatterDimensionNumbers& dn, const ScatterOptions& options) {
  return scatter_general("scatter_max", ScatterOp::max, operand, scatter_indices, updates, dn,
                         options);
}

}  // namespace linum
