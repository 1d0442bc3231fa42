// Statistics over axes (axis=None reduces everything): standard deviation, range, weighted
// average, counts, the NaN-ignoring reductions and the order statistics (median, quantile,
// percentile), as jax.numpy computes them.
#pragma once

#include <optional>
#include <string>

#include <linum/autodiff/array.hpp>
#include <linum/autodiff/ops/axes.hpp>

namespace linum {

// jnp.std: sqrt(var); NaN where N - ddof <= 0. Spelled linum::std (as torch::std): inside
// `using namespace linum` the bare name would be ambiguous with namespace std.
Array std(const Array& x, const Axes& axis = {}, bool keepdims = false, int ddof = 0);
Array ptp(const Array& x, const Axes& axis = {}, bool keepdims = false);   // max - min
Array amax(const Array& x, const Axes& axis = {}, bool keepdims = false);  // = max
Array amin(const Array& x, const Axes& axis = {}, bool keepdims = false);  // = min
// Σ w x / Σ w over `axis`; weights of x's shape, or of the shape of x's `axis` dims (then
// `axis` is required). No weights: the mean.
Array average(const Array& x, const Axes& axis = {}, const Array& weights = Array(),
              bool keepdims = false);
Array count_nonzero(const Array& x, const Axes& axis = {}, bool keepdims = false);  // int32

// The covariance matrix of the variables in m's rows (columns when rowvar is false), y's
// variables appended; normalized by N - ddof (ddof defaults to 1, or 0 with bias). A single
// variable gives a scalar. Frequency / analytic weights are not implemented.
Array cov(const Array& m, const Array& y = Array(), bool rowvar = true, bool bias = false,
          std::optional<int> ddof = std::nullopt);
// Pearson correlation coefficients: cov normalized by the standard deviations, clipped to [-1, 1].
Array corrcoef(const Array& x, const Array& y = Array(), bool rowvar = true);
// The integral of y along `axis` by the trapezoidal rule, at sample points x (1-D, or y's
// shape) or with spacing dx.
Array trapezoid(const Array& y, const Array& x = Array(), double dx = 1.0, int axis = -1);

// ---- reductions that ignore NaN (NaN only where a slice is all NaN, as numpy) -------------------
Array nansum(const Array& x, const Axes& axis = {}, bool keepdims = false);
Array nanprod(const Array& x, const Axes& axis = {}, bool keepdims = false);
Array nanmax(const Array& x, const Axes& axis = {}, bool keepdims = false);
Array nanmin(const Array& x, const Axes& axis = {}, bool keepdims = false);
Array nanmean(const Array& x, const Axes& axis = {}, bool keepdims = false);
Array nanvar(const Array& x, const Axes& axis = {}, bool keepdims = false, int ddof = 0);
Array nanstd(const Array& x, const Axes& axis = {}, bool keepdims = false, int ddof = 0);
// Index of the extreme non-NaN element; -1 for an all-NaN slice.
Array nanargmax(const Array& x, std::optional<int> axis = std::nullopt, bool keepdims = false);
Array nanargmin(const Array& x, std::optional<int> axis = std::nullopt, bool keepdims = false);

// ---- order statistics ---------------------------------------------------------------------------
// The q-th quantiles (q a scalar or a 1-D array in [0, 1]) over `axis`; the result has q's shape
// in front. method: "linear" (interpolate), "lower", "higher", "nearest" (ties to lower),
// "midpoint". A NaN in a slice makes its quantiles NaN; the nan* forms skip NaNs instead.
Array quantile(const Array& x, const Array& q, const Axes& axis = {},
               const std::string& method = "linear", bool keepdims = false);
Array nanquantile(const Array& x, const Array& q, const Axes& axis = {},
                  const std::string& method = "linear", bool keepdims = false);
Array percentile(const Array& x, const Array& q, const Axes& axis = {},  // q in [0, 100]
                 const std::string& method = "linear", bool keepdims = false);
Array nanpercentile(const Array& x, const Array& q, const Axes& axis = {},
                    const std::string& method = "linear", bool keepdims = false);
Array median(const Array& x, const Axes& axis = {}, bool keepdims = false);
Array nanmedian(const Array& x, const Axes& axis = {}, bool keepdims = false);

}  // namespace linum
