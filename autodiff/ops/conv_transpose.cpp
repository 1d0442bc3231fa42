// lax.conv_transpose: a convolution of the input dilated by `strides`, padded as JAX pads it
// (jax/_src/lax/convolution.py), so SAME gives in * stride outputs.
#include <linum/autodiff/ops/linalg.hpp>
#include <linum/autodiff/ops/shape.hpp>
#include <linum/autodiff/ops/window_util.hpp>

namespace linum {

namespace {

using namespace detail::window_util;

// JAX's _conv_transpose_padding for one spatial dim: k is the dilated kernel size, s the stride.
std::pair<i64, i64> transpose_padding(i64 k, i64 s, bool same) {
  const i64 pad_len = k + s - 2 + (same ? 0 : std::max<i64>(k - s, 0));
  const i64 pad_a = same && s <= k - 1 ? (pad_len + 1) / 2 : k - 1;
  return {pad_a, pad_len - pad_a};
}

}  // namespace

Array conv_transpose(const Array& lhs, const Array& rhs, const std::vector<std::int64_t>& strides,
                     const Padding& padding, const std::vector<std::int64_t>& rhs_dilation,
                     bool transpose_kernel) {
  constexpr const char* op = "conv_transpose";
  if (lhs.ndim() < 3 || rhs.ndim() != lhs.ndim())
    throw ValueError(std::string(op) + ": expected lhs (N, spatial..., C) and rhs (spatial..., " +
                     "I, O) of the same rank >= 3, got lhs " + shape_str(lhs.shape()) +
                     " and rhs " + shape_str(rhs.shape()));
  const auto ns = static_cast<std::size_t>(lhs.ndim() - 2);
  const Vec s = per_dim(strides, ns, "strides", op);
  const Vec dil = per_dim(rhs_dilation, ns, "rhs_dilation", op);
  Array kernel = rhs;
  if (transpose_kernel) {  // flip the window and swap I and O: the exact transpose of a conv
    kernel = slice(kernel, std::vector<Slice>(ns, Slice{std::nullopt, std::nullopt, -1}));
    std::vector<int> perm(ns + 2);
    for (std::size_t d = 0; d < ns + 2; ++d) perm[d] = static_cast<int>(d);
    std::swap(perm[ns], perm[ns + 1]);
    kernel = transpose(kernel, perm);
  }
  if (kernel.shape(-2) != lhs.shape(-1))
    throw ValueError(std::string(op) + ": lhs feature dimension " + std::to_string(lhs.shape(-1)) +
                     " must equal the rhs input feature " + "dimension (axis " +
                     (transpose_kernel ? "-1 with transpose_kernel" : "-2") + "), got lhs " +
                     shape_str(lhs.shape()) + " and rhs " + shape_str(rhs.shape()));
  Padding pads = padding;
  if (!padding.mode.empty()) {
    if (padding.mode != "SAME" && padding.mode != "VALID")
      throw ValueError(std::string(op) + ": padding must be 'SAME', 'VALID' or (low, high) " +
                       "pairs, got '" + padding.mode + "'");
    Pads p;
    for (std::size_t d = 0; d < ns; ++d) {
      if (kernel.shape()[d] < 1)
        throw ValueError(std::string(op) + ": rhs spatial dimensions must be positive, got rhs " +
                         shape_str(rhs.shape()));
      p.push_back(transpose_padding(checked_dilate(op, kernel.shape()[d], dil[d]), s[d],
                                    padding.mode == "SAME"));
    }
    pads = Padding(std::move(p));
  }
  return conv_general_dilated(
      lhs, kernel, {.window_strides = {}, .padding = pads, .lhs_dilation = s, .rhs_dilation = dil});
}

}  // namespace linum
