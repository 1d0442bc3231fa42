// The oneDNN (libdnnl) kernels behind float32 GEMMs and convolutions, and the native bfloat16 /
// float16 ones, when the backend (backends.hpp) selects them. Included only by the library's .cpp
// files. Each entry point returns false, having written nothing, where oneDNN has no kernel (or the
// build has no oneDNN), so the caller runs its own path instead.
#pragma once

#include <cstdint>
#include <vector>

#include <linum/autodiff/dtype.hpp>

namespace linum::detail {

// Whether this build links oneDNN (meson -Donednn).
bool onednn_built();

// C = op(A)·op(B) (+ C when accumulate), row-major with leading dimensions, as gemm<float>.
bool onednn_sgemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k,
                  const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float* c,
                  std::int64_t ldc, bool accumulate);

// C = op(A)·op(B) of 2-byte float operands of dtype `in` (bfloat16 or float16), accumulated in
// float32 and written once as `out` (float32, or `in` rounded to nearest even), row-major with
// leading dimensions. False where oneDNN has no native kernel for it (onednn_native_reduced).
bool onednn_gemm_reduced(DType in, DType out, bool trans_a, bool trans_b, std::int64_t m,
                         std::int64_t n, std::int64_t k, const void* a, std::int64_t lda,
                         const void* b, std::int64_t ldb, void* c, std::int64_t ldc);
// Whether oneDNN multiplies `in` operands natively on this CPU: an instruction set with that
// type's products (AVX512_BF16 or AMX for bfloat16). Elsewhere it would emulate them, slower than
// converting to float32.
bool onednn_native_reduced(DType in);

// Which product of a convolution: out = conv(x, w); the lhs transpose x_bar = T(ct, w); the rhs
// transpose w_bar = T(x, ct).
enum class ConvKernel { forward, grad_lhs, grad_rhs };

// One convolution as conv_general_dilated sees it: lhs (N, in..., C) x rhs (k..., C/G, O) ->
// (N, out..., O), every spatial list of the same length, without lhs dilation. Operands and result
// are all of `dtype`: float32, or a 2-byte float (float32 accumulation, one rounding) where
// onednn_native_reduced says oneDNN has native kernels for it.
struct ConvShape {
  std::int64_t N = 0, C = 0, O = 0, G = 1;
  std::vector<std::int64_t> in, k, out, strides, rhs_dilation, pad_lo, pad_hi;
  DType dtype = float32;
};

// The product `kernel` of convolution `s` with the operands conv.cpp's primitives take (forward:
// x, w; grad_lhs: ct, w; grad_rhs: x, ct), written whole into `out`.
bool onednn_conv(ConvKernel kernel, const ConvShape& s, const void* a, const void* b, void* out);

}  // namespace linum::detail
