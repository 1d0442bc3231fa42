// The BLAS kernel check: which OpenBLAS kernel sets and BLIS sub-configurations count as too
// narrow for a CPU, and that the set running this test is not one of them (Debian 12's OpenBLAS
// falls back to SSE3 kernels on CPUs newer than it, 4.6× slower; to AVX2 ones on AMD Zen 5, 1.9×;
// its BLIS to scalar C ones on Zen 5, 6×). Then the GEMM backends: oneDNN and BLAS give the same
// products within float rounding.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <linum/autodiff/ops/backends.hpp>
#include <linum/autodiff/ops/kernel_util.hpp>
#include <linum/linum.hpp>

namespace test_blas_runtime {

using linum::BlasIsa;
using linum::detail::blis_arch_isa;
using linum::detail::faster_blas_core;
using linum::detail::narrower_than_cpu;

TEST_CASE("faster_blas_core: a kernel set narrower than the CPU moves to the CPU's widest") {
  CHECK(faster_blas_core("Prescott", BlasIsa::avx512_bf16) == "Cooperlake");
  CHECK(faster_blas_core("Haswell", BlasIsa::avx512_bf16) == "Cooperlake");  // AMD Zen 5's CPU
  CHECK(faster_blas_core("Zen", BlasIsa::avx512_bf16) == "Cooperlake");
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

TEST_CASE("BLIS sub-configurations: generic is scalar, and narrower than any vector CPU") {
  CHECK(blis_arch_isa("generic") == BlasIsa::sse);
  CHECK(blis_arch_isa("zen3") == BlasIsa::avx2);
  CHECK(blis_arch_isa("skx") == BlasIsa::avx512);
  CHECK(blis_arch_isa("a64fx") == BlasIsa::unknown);
  CHECK(narrower_than_cpu(blis_arch_isa("generic"), BlasIsa::avx512_bf16));
  CHECK(narrower_than_cpu(blis_arch_isa("zen3"), BlasIsa::avx512));
  CHECK(!narrower_than_cpu(blis_arch_isa("skx"), BlasIsa::avx512_bf16));
  CHECK(!narrower_than_cpu(blis_arch_isa("haswell"), BlasIsa::avx2));
  CHECK(!narrower_than_cpu(BlasIsa::unknown, BlasIsa::avx512));
}

TEST_CASE("blas_info: the kernels running here are not a known-slow fallback for this CPU") {
  const linum::BlasInfo info = linum::blas_info();
  INFO("BLAS " << info.config << ", core " << info.core << " (chosen by " << info.chosen_by
               << (info.replaced_core.empty() ? "" : ", replacing " + info.replaced_core)
               << "), CPU " << std::string(linum::to_string(info.cpu_isa)));
  const bool openblas = info.config.rfind("OpenBLAS", 0) == 0;
  // A narrower set the user chose is kept, and said (the GEMMs then run on the oneDNN backend
  // where built in, unaffected).
  if (openblas && info.chosen_by == "OPENBLAS_CORETYPE" &&
      !faster_blas_core(info.core, info.cpu_isa).empty())
    MESSAGE("OPENBLAS_CORETYPE=" << info.core << " keeps OpenBLAS on kernels narrower than this "
                                 << "CPU's (" << std::string(linum::to_string(info.cpu_isa))
                                 << ")");
  if (openblas && info.chosen_by != "OPENBLAS_CORETYPE") {
    REQUIRE(!info.core.empty());
    CHECK(!narrower_than_cpu(linum::detail::blas_core_isa(info.core), info.cpu_isa));
    CHECK(faster_blas_core(info.core, info.cpu_isa) == "");
    if (!info.replaced_core.empty()) {
      CHECK(info.chosen_by == "linum");
      CHECK(faster_blas_core(info.replaced_core, info.cpu_isa) == info.core);
    }
  } else if (info.chosen_by == "BLIS") {
    // BLIS has no switch linum could use: a fallback here is reported, for -Dblas=openblas.
    CHECK(!narrower_than_cpu(blis_arch_isa(info.core), info.cpu_isa));
  }
  // And the GEMM on those kernels is right: a product with a closed form.
  linum::Array a = linum::ones({64, 48}), b = linum::full({48, 32}, 0.5);
  linum::Array c = linum::matmul(a, b);
  CHECK(static_cast<bool>(linum::all(linum::equal(c, linum::full({64, 32}, 24.0)))));
}

namespace {

// Sets the GEMM backend for a scope.
struct GemmBackendScope {
  linum::GemmBackend saved = linum::gemm_backend();
  explicit GemmBackendScope(linum::GemmBackend b) { linum::set_gemm_backend(b); }
  ~GemmBackendScope() { linum::set_gemm_backend(saved); }
};

}  // namespace

TEST_CASE("GEMM backends: every transpose, leading dimension and accumulate within rounding") {
  std::vector<linum::GemmBackend> backends{linum::GemmBackend::blas};
  if (linum::onednn_available()) backends.push_back(linum::GemmBackend::onednn);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1, 1);
  struct Shape3 {
    std::int64_t m, n, k;
  };
  // Past small_gemm's sizes (the products BLAS or oneDNN serve), and W1's shapes.
  for (Shape3 s :
       {Shape3{128, 512, 784}, Shape3{512, 10, 128}, Shape3{37, 300, 129}, Shape3{300, 33, 517}})
    for (int t = 0; t < 8; ++t) {
      const bool ta = t & 1, tb = t & 2, acc = t & 4;
      const std::int64_t lda = (ta ? s.m : s.k) + 3, ldb = (tb ? s.k : s.n) + 5, ldc = s.n + 2;
      std::vector<float> a((ta ? s.k : s.m) * lda), b((tb ? s.n : s.k) * ldb), c0(s.m * ldc);
      for (auto* v : {&a, &b, &c0})
        for (float& e : *v) e = u(rng);
      auto A = [&](std::int64_t i, std::int64_t p) { return ta ? a[p * lda + i] : a[i * lda + p]; };
      auto B = [&](std::int64_t p, std::int64_t j) { return tb ? b[j * ldb + p] : b[p * ldb + j]; };
      for (linum::GemmBackend be : backends) {
        INFO("m n k " << s.m << " " << s.n << " " << s.k << " ta " << ta << " tb " << tb << " acc "
                      << acc << " on " << linum::to_string(be));
        GemmBackendScope scope(be);
        // Without accumulate, C's old contents (NaN here) must not reach the result.
        std::vector<float> c = acc ? c0 : std::vector<float>(c0.size(), NAN);
        linum::detail::gemm<float>(ta, tb, s.m, s.n, s.k, a.data(), lda, b.data(), ldb, c.data(),
                                   ldc, acc);
        int bad = 0;
        const double bound = 2.0 * (s.k + 1) * std::ldexp(1.0, -24);
        for (std::int64_t i = 0; i < s.m; ++i)
          for (std::int64_t j = 0; j < s.n; ++j) {
            double exact = acc ? c0[i * ldc + j] : 0.0, mag = acc ? std::abs(c0[i * ldc + j]) : 0.0;
            for (std::int64_t p = 0; p < s.k; ++p) {
              exact += double(A(i, p)) * B(p, j);
              mag += std::abs(double(A(i, p)) * B(p, j));
            }
            if (!(std::abs(c[i * ldc + j] - exact) <= bound * mag)) ++bad;
          }
        CHECK(bad == 0);
      }
    }
}

TEST_CASE("GEMM backends: set_gemm_backend round-trips and names its backends") {
  GemmBackendScope scope(linum::GemmBackend::blas);
  CHECK(linum::gemm_backend() == linum::GemmBackend::blas);
  CHECK(std::string(linum::to_string(linum::GemmBackend::blas)) == "blas");
  CHECK(std::string(linum::to_string(linum::GemmBackend::onednn)) == "onednn");
  if (linum::onednn_available()) {
    linum::set_gemm_backend(linum::GemmBackend::onednn);
    CHECK(linum::gemm_backend() == linum::GemmBackend::onednn);
  } else {
    CHECK_THROWS_AS(linum::set_gemm_backend(linum::GemmBackend::onednn), linum::ValueError);
  }
}

}  // namespace test_blas_runtime
