// The BLAS at run time: its threads, and which kernel set it runs on this CPU (which library runs
// float32 GEMMs and convolutions: backends.hpp).
#pragma once

#include <string>

namespace linum {

// Threads for BLAS and oneDNN (contractions, convolutions) and for linum's large kernels
// (elementwise ops of 128K elements and more, the optimizers' one-pass updates, im2col). All run
// on one OpenMP team when linum is built against an OpenMP BLAS (libopenblas-openmp-dev or
// libblis-openmp-dev); without it the kernels stay on one thread, so that no second pool fights
// BLAS's for the cores. The default is the BLAS's (OPENBLAS_NUM_THREADS, BLIS_NUM_THREADS or
// OMP_NUM_THREADS, else one per core).
void set_num_threads(int n);
int num_threads();

// The widest vector ISA of a CPU, or of a BLAS kernel set (unknown: a kernel set linum does not
// know, which it leaves alone).
enum class BlasIsa { unknown, sse, avx, avx2, avx512, avx512_bf16 };
const char* to_string(BlasIsa isa);

// What runs linum's GEMMs. OpenBLAS picks its kernels by CPU model; on a model newer than the
// library it may fall back to kernels far narrower than the CPU (Debian 12's 0.3.21 runs SSE3
// "Prescott" kernels on Sapphire Rapids, 4.6× slower). linum then moves it, before the first
// GEMM, to the widest kernels the CPU runs. A user's OPENBLAS_CORETYPE is always kept.
// Another BLAS than OpenBLAS reports itself where linum knows how to ask: BLIS as config "BLIS
// <version>", core its sub-configuration, chosen_by "BLIS"; any other leaves all three empty.
struct BlasInfo {
  std::string config;  // openblas_get_config(): version and build options
  std::string core;    // the kernel set in use (openblas_get_corename())
  BlasIsa cpu_isa = BlasIsa::unknown;
  std::string chosen_by;      // "OpenBLAS", "OPENBLAS_CORETYPE" (the user's) or "linum"
  std::string replaced_core;  // OpenBLAS's own pick, when linum replaced it
};
BlasInfo blas_info();

namespace detail {
BlasIsa blas_core_isa(const std::string& core);
// The kernel set to move to from `core` on a CPU of ISA `cpu`, or "" when `core` is not
// narrower than the CPU (or unknown).
std::string faster_blas_core(const std::string& core, BlasIsa cpu);
// Runs the check once per process (at load, and again before a GEMM for static builds).
void ensure_fast_blas_core();
}  // namespace detail

}  // namespace linum
