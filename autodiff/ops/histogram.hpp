// Counting and binning (jax.numpy names): bincount, digitize, histograms in one, two and D
// dimensions, and piecewise-linear interpolation (interp), built from searchsorted and
// scatter-adds as JAX builds them. The counts are differentiable in the weights.
#pragma once

#include <cstdint>
#include <optional>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

#include <linum/autodiff/array.hpp>
#include <linum/autodiff/ops/sort.hpp>

namespace linum {

// jnp.bincount: out[i] = the number of entries of the 1-D integer x equal to i (or the sum of
// their weights), for i < length; negative entries count as 0, entries >= length are dropped.
// Without `length` (required under jit and vmap) it is max(minlength, max(x) + 1).
Array bincount(const Array& x, const std::optional<Array>& weights = std::nullopt,
               std::int64_t minlength = 0, std::optional<std::int64_t> length = std::nullopt);
// jnp.digitize: for each x, the index of the bin of the 1-D monotonic `bins` it falls in (bins
// increasing: bins[i-1] <= x < bins[i]; with right, bins[i-1] < x <= bins[i]; decreasing bins
// mirror this). int32.
Array digitize(const Array& x, const Array& bins, bool right = false,
               SearchMethod method = SearchMethod::scan);

// A histogram's bins along one dimension: a number of equal-width bins over the range, or the
// bin edges themselves (a 1-D increasing array).
class HistogramBins {
 public:
  HistogramBins(int count) : v_(std::int64_t{count}) {}  // NOLINT(google-explicit-constructor)
  HistogramBins(std::int64_t count) : v_(count) {}       // NOLINT(google-explicit-constructor)
  HistogramBins(Array edges) : v_(std::move(edges)) {}   // NOLINT(google-explicit-constructor)
  const std::variant<std::int64_t, Array>& value() const { return v_; }

 private:
  std::variant<std::int64_t, Array> v_;
};
// The (lower, upper) range of equal-width bins; nullopt: the data's minimum and maximum. A
// range of zero width is widened by 0.5 on each side.
using HistogramRange = std::optional<std::pair<double, double>>;

// jnp.histogram_bin_edges: the bin edges histogram uses, in a's inexact dtype (float32 for
// integers).
Array histogram_bin_edges(const Array& a, const HistogramBins& bins = 10,
                          HistogramRange range = std::nullopt);
// jnp.histogram: (counts, bin_edges) of the flattened a. The last bin includes its upper edge;
// values outside the edges are not counted. Counts are in a's inexact dtype (the sums of
// weights when given, of a's shape); density divides by the total and the bin widths.
std::pair<Array, Array> histogram(const Array& a, const HistogramBins& bins = 10,
                                  HistogramRange range = std::nullopt,
                                  const std::optional<Array>& weights = std::nullopt,
                                  bool density = false);
// jnp.histogramdd: the histogram of N points in D dimensions, sample (N, D): shape (bins_0,
// ..., bins_{D-1}), and the edges per dimension. bins and range: one for every dimension, or
// one per dimension (range empty: the data's). Without weights the counts are int32 (as JAX's).
std::pair<Array, Arrays> histogramdd(const Array& sample,
                                     const std::vector<HistogramBins>& bins = {10},
                                     const std::vector<HistogramRange>& range = {},
                                     const std::optional<Array>& weights = std::nullopt,
                                     bool density = false);
// jnp.histogram2d: histogramdd of the points (x, y): (hist, x_edges, y_edges).
std::tuple<Array, Array, Array> histogram2d(const Array& x, const Array& y,
                                            const std::vector<HistogramBins>& bins = {10},
                                            const std::vector<HistogramRange>& range = {},
                                            const std::optional<Array>& weights = std::nullopt,
                                            bool density = false);

// interp's left / right: the value below xp[0] / above xp[-1]. Default: fp[0] / fp[-1]; a value
// (an Array may be traced); or "extrapolate" along the end segment.
class InterpBound {
 public:
  InterpBound() = default;
  InterpBound(double value) : value_(Array(value)) {}     // NOLINT(google-explicit-constructor)
  InterpBound(Array value) : value_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  InterpBound(const char* mode);                          // NOLINT(google-explicit-constructor)
  const std::optional<Array>& value() const { return value_; }
  bool extrapolate() const { return extrapolate_; }

 private:
  std::optional<Array> value_;
  bool extrapolate_ = false;
};
// jnp.interp: the piecewise-linear interpolant through (xp, fp) (xp 1-D increasing) at x. With
// a period, xp and x are taken modulo it (and left / right do not apply).
Array interp(const Array& x, const Array& xp, const Array& fp, const InterpBound& left = {},
             const InterpBound& right = {}, std::optional<double> period = std::nullopt);

}  // namespace linum
