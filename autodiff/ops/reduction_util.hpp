// Internal helpers of the reduction primitives (.cpp only, never included by users): the shapes
// a reduction over sorted, unique axes produces, the batching rule of its axes, and the loops
// behind reduce_sum/prod/max/min/and/or (reduction_kernels.cpp), shared by reduction.cpp and
// arg_reduction.cpp.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <linum/autodiff/ops/kernel_util.hpp>

namespace linum::detail {

inline std::string axes_str(const std::vector<int>& axes) {
  Shape s(axes.begin(), axes.end());
  return shape_str(s);
}

// Output shape of reducing `axes` (sorted, unique) away.
inline Shape reduced_shape(const Shape& s, const std::vector<int>& axes) {
  Shape r;
  for (int i = 0, j = 0; i < static_cast<int>(s.size()); ++i) {
    if (j < static_cast<int>(axes.size()) && axes[j] == i)
      ++j;
    else
      r.push_back(s[i]);
  }
  return r;
}

// The shape with reduced axes kept as 1, for broadcasting a reduced value back.
inline Shape kept_shape(const Shape& s, const std::vector<int>& axes) {
  Shape r = s;
  for (int a : axes) r[a] = 1;
  return r;
}

inline std::int64_t reduced_count(const Shape& s, const std::vector<int>& axes) {
  std::int64_t n = 1;
  for (int a : axes) n *= s[a];
  return n;
}

// Batching rule shared by reductions: per-example axes shift past the batch axis.
inline std::pair<std::vector<int>, int> batch_axes(const std::vector<int>& axes, int bdim) {
  std::vector<int> r;
  int out_bdim = bdim;
  for (int a : axes) {
    r.push_back(a >= bdim ? a + 1 : a);
    if (a < bdim) --out_bdim;
  }
  return {r, out_bdim};
}

// The monoids the reduction kernels fold with.
enum class ReduceOp { sum, prod, max, min, all, any };

// A new array of x reduced over `axes` (sorted, unique, non-negative) with op, in x's dtype.
// Integer sums and products wrap; max and min propagate NaN, as XLA's reductions.
Array reduce_loop(ReduceOp op, const Array& x, const std::vector<int>& axes);

}  // namespace linum::detail
