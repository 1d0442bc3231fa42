// The oneDNN (libdnnl) kernels behind float32 GEMMs and convolutions when the backend
// (backends.hpp) selects them. Included only by the library's .cpp files. Each entry point
// returns false, having written nothing, where oneDNN has no kernel (or the build has no oneDNN),
// so the caller runs its own path instead.
#pragma once

#include <cstdint>
#include <vector>

namespace linum::detail {

// Whether this build links oneDNN (meson -Donednn).
bool onednn_built();

// C = op(A)·op(B) (+ C when accumulate), row-major with leading dimensions, as gemm<float>.
bool onednn_sgemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k,
                  const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float* c,
                  std::int64_t ldc, bool accumulate);

// Which product of a convolution: out = conv(x, w); the lhs transpose x_bar = T(ct, w); the rhs
// transpose w_bar = T(x, ct).
enum class ConvKernel { forward, grad_lhs, grad_rhs };

// One convolution as conv_general_dilated sees it: lhs (N, in..., C) x rhs (k..., C/G, O) ->
// (N, out..., O), every spatial list of the same length, without lhs dilation.
struct ConvShape {
  std::int64_t N = 0, C = 0, O = 0, G = 1;
  std::vector<std::int64_t> in, k, out, strides, rhs_dilation, pad_lo, pad_hi;
};

// The product `kernel` of convolution `s` with the operands conv.cpp's primitives take (forward:
// x, w; grad_lhs: ct, w; grad_rhs: x, ct), written whole into `out`.
bool onednn_conv(ConvKernel kernel, const ConvShape& s, const float* a, const float* b, float* out);

}  // namespace linum::detail
