// Window geometry shared by convolution (conv.cpp) and the windowed reductions
// (reduce_window.cpp): padding resolution as lax.padtype_to_pads, dilation, per-dimension
// options and the index tables of a sweep, each checked for overflow.
#pragma once

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <linum/autodiff/ops/kernel_util.hpp>

namespace linum::detail::window_util {

using i64 = std::int64_t;
using Vec = std::vector<i64>;
using Pads = std::vector<std::pair<i64, i64>>;

inline std::string vec_str(const Vec& v) { return shape_str(v); }

inline std::string pads_str(const Pads& p) {
  std::string s = "(";
  for (std::size_t i = 0; i < p.size(); ++i)
    s += (i ? ", (" : "(") + std::to_string(p[i].first) + ", " + std::to_string(p[i].second) + ")";
  return s + (p.size() == 1 ? ",)" : ")");
}

inline i64 dilate(i64 d, i64 dil) { return d == 0 ? 0 : (d - 1) * dil + 1; }

// dilate() and the padded length, checked for overflow before any unchecked arithmetic runs.
inline i64 checked_dilate(const char* op, i64 d, i64 dil) {
  return d == 0 ? 0 : checked_add(op, checked_mul(op, d - 1, dil), 1);
}
inline i64 checked_padded(const char* op, i64 in, i64 dil, std::pair<i64, i64> pad) {
  return checked_add(op, checked_add(op, checked_dilate(op, in, dil), pad.first), pad.second);
}

// Output length of a window sweep over a (base-dilated, padded) axis, as XLA computes it.
inline i64 sweep_size(i64 in, i64 k, i64 stride, std::pair<i64, i64> pad, i64 ldil, i64 rdil) {
  const i64 padded = dilate(in, ldil) + pad.first + pad.second, dk = dilate(k, rdil);
  return padded < dk ? 0 : (padded - dk) / stride + 1;
}

// lax.padtype_to_pads: SAME pads so that out = ceil(in / stride), the odd pixel at the end
// (SAME_LOWER: at the start); VALID pads nothing; explicit pads are checked for their count.
inline Pads resolve_padding(const Padding& p, const Vec& in, const Vec& window, const Vec& strides,
                            const char* op) {
  const std::size_t n = in.size();
  Pads r;
  if (p.mode.empty()) {
    if (p.pads.size() != n)
      throw ValueError(std::string(op) + ": explicit padding must have one (low, high) pair per " +
                       "window dimension (" + std::to_string(n) + "), got " + pads_str(p.pads));
    return p.pads;
  }
  if (p.mode == "VALID") return Pads(n, {0, 0});
  if (p.mode != "SAME" && p.mode != "SAME_LOWER")
    throw ValueError(std::string(op) + ": unknown padding '" + p.mode +
                     "' (expected 'SAME', 'SAME_LOWER', 'VALID' or (low, high) pairs)");
  for (std::size_t i = 0; i < n; ++i) {
    const i64 out = (in[i] + strides[i] - 1) / strides[i];
    const i64 pad = std::max<i64>(0, (out - 1) * strides[i] + window[i] - in[i]);
    const i64 small = pad / 2, big = pad - small;
    r.emplace_back(p.mode == "SAME" ? small : big, p.mode == "SAME" ? big : small);
  }
  return r;
}

// A per-spatial-dim option: empty means all 1; otherwise one positive entry per spatial dim.
inline Vec per_dim(const Vec& v, std::size_t n, const char* what, const char* op) {
  if (v.empty()) return Vec(n, 1);
  if (v.size() != n)
    throw ValueError(std::string(op) + ": " + what + " " + vec_str(v) + " must have " +
                     std::to_string(n) + " entries, one per window dimension");
  for (i64 s : v)
    if (s < 1)
      throw ValueError(std::string(op) + ": " + what + " must be positive, got " + vec_str(v));
  return v;
}

// For each axis: idx[o * k + j] = input index read by output o at window offset j, -1 where it
// falls on padding or a hole of the base dilation.
inline std::vector<i64> axis_table(i64 in, i64 out, i64 k, i64 stride, i64 pad_lo, i64 ldil,
                                   i64 rdil) {
  std::vector<i64> t(static_cast<std::size_t>(out * k));
  for (i64 o = 0; o < out; ++o)
    for (i64 j = 0; j < k; ++j) {
      const i64 pos = o * stride + j * rdil - pad_lo;
      t[o * k + j] = (pos >= 0 && pos % ldil == 0 && pos / ldil < in) ? pos / ldil : -1;
    }
  return t;
}

}  // namespace linum::detail::window_util
