// Contractions (BLAS-backed), convolution and windowed reductions (lax / jnp names).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <linum/autodiff/array.hpp>
#include <linum/autodiff/ops/blas_runtime.hpp>

namespace linum {

Array dot(const Array& a, const Array& b);     // jnp.dot
Array matmul(const Array& a, const Array& b);  // jnp.matmul: batch dims broadcast

// lax.dot_general: ((lhs_contract, rhs_contract), (lhs_batch, rhs_batch)); the result holds the
// batch dims, then lhs free dims, then rhs free dims. preferred_element_type is the dtype to
// accumulate in and return (bfloat16 x bfloat16 -> float32 unrounded); as JAX, it must be of the
// operands' kind (or floating for integer operands) and no narrower than they are.
struct DotDimensionNumbers {
  std::vector<int> lhs_contract, rhs_contract, lhs_batch, rhs_batch;
};
Array dot_general(const Array& lhs, const Array& rhs, const DotDimensionNumbers& dims,
                  std::optional<DType> preferred_element_type = std::nullopt);

// jnp.einsum with one or two operands: explicit ("ij,jk->ik") or implicit ("ij,jk") output,
// `...` for broadcast dims; an index repeated within one operand (a diagonal) is an error.
Array einsum(const std::string& subscripts, const Array& a);
Array einsum(const std::string& subscripts, const Array& a, const Array& b);
Array einsum(const std::string& subscripts, const Arrays& operands);

// Padding for conv/reduce_window: "SAME", "VALID", or explicit (low, high) per spatial dim.
struct Padding {
  std::string mode;  // "SAME", "VALID", or empty for explicit
  std::vector<std::pair<std::int64_t, std::int64_t>> pads;
  Padding(const char* m) : mode(m) {}             // NOLINT(google-explicit-constructor)
  Padding(std::string m) : mode(std::move(m)) {}  // NOLINT(google-explicit-constructor)
  Padding(std::vector<std::pair<std::int64_t, std::int64_t>> p) : pads(std::move(p)) {}  // NOLINT
};

// lax.conv_general_dilated with Flax's layout: NHWC input, HWIO kernel, NHWC output (any number
// of spatial dims). feature_group_count splits input channels into groups.
struct ConvOptions {
  std::vector<std::int64_t> window_strides;  // default 1 per spatial dim
  Padding padding = "VALID";
  std::vector<std::int64_t> lhs_dilation;  // default 1
  std::vector<std::int64_t> rhs_dilation;  // default 1
  std::int64_t feature_group_count = 1;
};
Array conv_general_dilated(const Array& lhs, const Array& rhs, const ConvOptions& opts = {});
// lax.conv_transpose (NHWC x HWIO): conv_general_dilated of lhs dilated by `strides`; SAME gives
// in * stride outputs. transpose_kernel flips the window and swaps I/O, which makes it the VJP
// of a strided convolution with that kernel.
Array conv_transpose(const Array& lhs, const Array& rhs, const std::vector<std::int64_t>& strides,
                     const Padding& padding, const std::vector<std::int64_t>& rhs_dilation = {},
                     bool transpose_kernel = false);

// lax.reduce_window with the sum or max monoid (init value 0 / -inf).
enum class WindowReduce { sum, max };
Array reduce_window(const Array& x, WindowReduce op, const std::vector<std::int64_t>& window,
                    const std::vector<std::int64_t>& strides, const Padding& padding = "VALID");
// flax.linen.avg_pool / max_pool over the spatial dims of an N...C input. avg_pool divides by
// the window size (count_include_pad, Flax's default) or, with count_include_pad=false, by the
// number of input (non-padding) elements in each window.
Array avg_pool(const Array& x, const std::vector<std::int64_t>& window,
               std::vector<std::int64_t> strides = {}, const Padding& padding = "VALID",
               bool count_include_pad = true);
Array max_pool(const Array& x, const std::vector<std::int64_t>& window,
               std::vector<std::int64_t> strides = {}, const Padding& padding = "VALID");
// flax.linen.min_pool (float inputs) and flax.linen.pool with the sum or max monoid; pool's init
// must be that monoid's identity (padding reads init, so any other value would change windows).
Array min_pool(const Array& x, const std::vector<std::int64_t>& window,
               std::vector<std::int64_t> strides = {}, const Padding& padding = "VALID");
Array pool(const Array& x, double init, WindowReduce op, const std::vector<std::int64_t>& window,
           std::vector<std::int64_t> strides = {}, const Padding& padding = "VALID");

}  // namespace linum
