// The BLAS kernel check: which OpenBLAS kernel sets count as too narrow for a CPU, and that the
// set running this test is not one of them (Debian 12's OpenBLAS falls back to SSE3 kernels on
// CPUs newer than it, 4.6× slower).
#include <doctest/doctest.h>

#include <cstdlib>
#include <string>

#include <linum/linum.hpp>

using linum::BlasIsa;
using linum::detail::faster_blas_core;

TEST_CASE("faster_blas_core: a kernel set narrower than the CPU moves to the CPU's widest") {
  CHECK(faster_blas_core("Prescott", BlasIsa::avx512_bf16) == "Cooperlake");
  CHECK(faster_blas_core("Nehalem", BlasIsa::avx512) == "SkylakeX");
  CHECK(faster_blas_core("Haswell", BlasIsa::avx512) == "SkylakeX");
  CHECK(faster_blas_core("Sandybridge", BlasIsa::avx2) == "Haswell");
  CHECK(faster_blas_core("Core2", BlasIsa::avx) == "Sandybridge");
}

TEST_CASE("faster_blas_core: kernels as wide as the CPU, and unknown ones, stay") {
  CHECK(faster_blas_core("SkylakeX", BlasIsa::avx512_bf16) == "");  // same float kernels
  CHECK(faster_blas_core("Cooperlake", BlasIsa::avx512_bf16) == "");
  CHECK(faster_blas_core("Haswell", BlasIsa::avx2) == "");
  CHECK(faster_blas_core("Zen", BlasIsa::avx2) == "");
  CHECK(faster_blas_core("Prescott", BlasIsa::sse) == "");
  CHECK(faster_blas_core("SomeFutureCore", BlasIsa::avx512) == "");
}

TEST_CASE("blas_info: the kernels running here are not a known-slow fallback for this CPU") {
  const linum::BlasInfo info = linum::blas_info();
  INFO("BLAS " << info.config << ", core " << info.core << " (chosen by " << info.chosen_by
               << (info.replaced_core.empty() ? "" : ", replacing " + info.replaced_core)
               << "), CPU " << linum::to_string(info.cpu_isa));
  REQUIRE(!info.core.empty());
  if (info.chosen_by == "OPENBLAS_CORETYPE") return;  // the user's choice, kept on purpose
  CHECK(faster_blas_core(info.core, info.cpu_isa) == "");
  if (!info.replaced_core.empty()) {
    CHECK(info.chosen_by == "linum");
    CHECK(faster_blas_core(info.replaced_core, info.cpu_isa) == info.core);
  }
  // And the GEMM on those kernels is right: a product with a closed form.
  linum::Array a = linum::ones({64, 48}), b = linum::full({48, 32}, 0.5);
  linum::Array c = linum::matmul(a, b);
  CHECK(static_cast<bool>(linum::all(linum::equal(c, linum::full({64, 32}, 24.0)))));
}
