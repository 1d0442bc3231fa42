// Which library runs linum's float32 GEMMs (dot_general, the dense layers) and convolutions
// (conv_general_dilated and its two transposes), and bfloat16 GEMMs natively where it can. oneDNN
// (libdnnl) is the default where linum is built with it (meson -Donednn): its AVX-512 kernels are
// chosen by the CPU's features, not its model, and were the fastest measured (README, Performance).
// The others stay selectable, for comparisons or where oneDNN is missing: `blas` is the BLAS linum
// links, `im2col` patches and that GEMM. float64 and integer products always run on BLAS / im2col.
// Every backend gives the same results within float rounding. LINUM_GEMM_BACKEND=blas|onednn and
// LINUM_CONV_BACKEND=im2col|onednn in the environment set the start values.
#pragma once

#include <string>

#include <linum/autodiff/dtype.hpp>
#include <linum/autodiff/ops/blas_runtime.hpp>

namespace linum {

enum class GemmBackend { blas, onednn };
enum class ConvBackend { im2col, onednn };
// Both throw ValueError when oneDNN is asked for in a build without it.
void set_gemm_backend(GemmBackend b);
GemmBackend gemm_backend();
void set_conv_backend(ConvBackend b);
ConvBackend conv_backend();
bool onednn_available();  // whether this build links oneDNN
// Whether dot_general (native_reduced_gemm) and conv_general_dilated (native_reduced_conv) take
// `dtype` operands (bfloat16, float16) natively, accumulating in float32 and rounding once: the
// onednn backend selected and a CPU with that type's products (AVX512_BF16 or AMX for bfloat16).
// Otherwise they are converted to float32, multiplied and rounded back: the same results up to
// the order of the float32 sums. Products small enough for linum's own GEMM kernel, and
// convolutions oneDNN does not run (conv_transpose's), take that path either way.
bool native_reduced_gemm(DType dtype);
bool native_reduced_conv(DType dtype);
const char* to_string(GemmBackend b);
const char* to_string(ConvBackend b);

namespace detail {
// Whether kernels of ISA `have` leave part of the CPU's vector width unused (unknown: no).
bool narrower_than_cpu(BlasIsa have, BlasIsa cpu);
// BLIS's sub-configurations (bli_arch_string spellings) by widest ISA; "generic" is scalar C.
BlasIsa blis_arch_isa(const std::string& arch);
}  // namespace detail

}  // namespace linum
