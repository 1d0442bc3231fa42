// The GEMM and convolution backends (blas_runtime.hpp) on the workloads' shapes, one case per
// backend so that one run compares them:
//   gemm/<shape>/<backend>: detail::gemm<float> (the GEMM every contraction runs) at W1's, W2's
//     and W6's product shapes (W5's are small_gemm's whatever the backend);
//   gemm/<shape>/bf16_<path>: the same product of bfloat16 operands: oneDNN's native matmul
//     (float32 accumulation) with a bfloat16 result (bf16_onednn, what dot_general runs) or a
//     float32 one (bf16_onednn_f32out, preferred_element_type=float32); the converting path
//     (bf16_convert: operands widened, gemm<float> on the default backend, result rounded); and
//     OpenBLAS's cblas_sbgemm (bf16_sbgemm) where the loaded OpenBLAS has it (built with
//     BUILD_BFLOAT16; Debian 12's is not);
//   conv_w2/<layer>/<product>/<backend>: W2's two convolutions (NHWC batch 32, 3x3 SAME):
//     the forward product and each VJP alone (the other operand held constant); bf16_<backend>
//     the same on bfloat16 operands (oneDNN's native kernels; im2col's widen to float32).
#include <dlfcn.h>

#include <cstdint>
#include <string>
#include <vector>

#include <linum/autodiff/ops/backends.hpp>
#include <linum/autodiff/ops/dnnl_backend.hpp>
#include <linum/autodiff/ops/kernel_util.hpp>

#include "bench.hpp"

namespace {

using linum::Array;

struct GemmShape {
  const char* name;
  bool ta, tb;
  int m, n, k;
};

// W1's forward and backward products (784-512-512-10, batch 128), W2's dense and im2col ones
// (batch 32), W6's Dense(512) at batch 2048.
const GemmShape kGemms[] = {
    {"W1_x.w1", false, false, 128, 512, 784},       {"W1_h.w2", false, false, 128, 512, 512},
    {"W1_hT.g", true, false, 512, 512, 128},        {"W1_g.w2T", false, true, 128, 512, 512},
    {"W1_xT.g", true, false, 784, 512, 128},        {"W2_conv2_fwd", false, false, 6272, 64, 288},
    {"W2_conv2_dP", false, true, 6272, 288, 64},    {"W2_conv2_dW", true, false, 288, 64, 6272},
    {"W2_dense1_fwd", false, false, 32, 256, 3136}, {"W2_dense1_dW", true, false, 3136, 256, 32},
    {"W6_fwd", false, false, 2048, 512, 512},       {"W6_dW", true, false, 512, 512, 2048},
};

void run_gemm(benchmark::State& state, GemmShape s, linum::GemmBackend b) {
  linum::bench::set_threads(state);
  const linum::GemmBackend saved = linum::gemm_backend();
  linum::set_gemm_backend(b);
  std::vector<float> a(static_cast<std::size_t>(s.m) * s.k, 0.01f),
      bm(static_cast<std::size_t>(s.k) * s.n, 0.02f), c(static_cast<std::size_t>(s.m) * s.n);
  for (auto _ : state) {
    linum::detail::gemm<float>(s.ta, s.tb, s.m, s.n, s.k, a.data(), s.ta ? s.m : s.k, bm.data(),
                               s.tb ? s.k : s.n, c.data(), s.n, false);
    benchmark::ClobberMemory();
  }
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * s.m * s.n * s.k, benchmark::Counter::kIsIterationInvariantRate,
                         benchmark::Counter::kIs1000);
  linum::set_gemm_backend(saved);
}

// The bfloat16 products: how each path runs C = op(A) op(B) on 2-byte operands.
enum class Bf16Path { onednn, onednn_f32out, convert, sbgemm };
const char* to_string(Bf16Path p) {
  switch (p) {
    case Bf16Path::onednn: return "bf16_onednn";
    case Bf16Path::onednn_f32out: return "bf16_onednn_f32out";
    case Bf16Path::convert: return "bf16_convert";
    default: return "bf16_sbgemm";
  }
}

// OpenBLAS's bfloat16 GEMM (cblas.h's signature, enums as their int values), looked up at run
// time: Debian's headers declare it but its library is built without it.
using Sbgemm = void (*)(int, int, int, int, int, int, float, const std::uint16_t*, int,
                        const std::uint16_t*, int, float, float*, int);
Sbgemm openblas_sbgemm() {
  static const auto f = reinterpret_cast<Sbgemm>(dlsym(RTLD_DEFAULT, "cblas_sbgemm"));
  return f;
}

void run_gemm_bf16(benchmark::State& state, GemmShape s, Bf16Path path) {
  using linum::bfloat16, linum::float32;
  linum::bench::set_threads(state);
  const Array a = linum::full({s.m, s.k}, 0.01, bfloat16),
              b = linum::full({s.k, s.n}, 0.02, bfloat16);
  Array c = linum::empty({s.m, s.n}, path == Bf16Path::onednn ? bfloat16 : float32);
  const auto* pa = linum::detail::in_ptr<std::uint8_t>(a);
  const auto* pb = linum::detail::in_ptr<std::uint8_t>(b);
  const int lda = s.ta ? s.m : s.k, ldb = s.tb ? s.k : s.n;
  for (auto _ : state) {
    if (path == Bf16Path::convert) {  // as dot_general without a native kernel
      const Array fa = linum::detail::from_buffer(pa, a.shape(), bfloat16, float32);
      const Array fb = linum::detail::from_buffer(pb, b.shape(), bfloat16, float32);
      linum::detail::gemm<float>(s.ta, s.tb, s.m, s.n, s.k, linum::detail::in_ptr<float>(fa), lda,
                                 linum::detail::in_ptr<float>(fb), ldb,
                                 linum::detail::out_ptr<float>(c), s.n, false);
      benchmark::DoNotOptimize(linum::detail::from_buffer(linum::detail::in_ptr<float>(c),
                                                          c.shape(), float32, bfloat16));
    } else if (path == Bf16Path::sbgemm) {
      openblas_sbgemm()(101, s.ta ? 112 : 111, s.tb ? 112 : 111, s.m, s.n, s.k, 1.0f,
                        reinterpret_cast<const std::uint16_t*>(pa), lda,
                        reinterpret_cast<const std::uint16_t*>(pb), ldb, 0.0f,
                        linum::detail::out_ptr<float>(c), s.n);
    } else if (!linum::detail::onednn_gemm_reduced(bfloat16, c.dtype(), s.ta, s.tb, s.m, s.n, s.k,
                                                   pa, lda, pb, ldb,
                                                   linum::detail::out_ptr<std::uint8_t>(c), s.n)) {
      state.SkipWithError("oneDNN has no native bfloat16 kernel on this CPU");
      break;
    }
    benchmark::ClobberMemory();
  }
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * s.m * s.n * s.k, benchmark::Counter::kIsIterationInvariantRate,
                         benchmark::Counter::kIs1000);
}

enum class Product { forward, grad_lhs, grad_rhs };

void run_conv(benchmark::State& state, bool second, Product product, linum::ConvBackend b,
              linum::DType dtype) {
  linum::bench::set_threads(state);
  const linum::ConvBackend saved = linum::conv_backend();
  linum::set_conv_backend(b);
  const Array x = (second ? linum::bench::normal({32, 14, 14, 32}, 1.0, 1)
                          : linum::bench::normal({32, 28, 28, 1}, 1.0, 1))
                      .astype(dtype);
  const Array w = (second ? linum::bench::normal({3, 3, 32, 64}, 0.1, 2)
                          : linum::bench::normal({3, 3, 1, 32}, 0.1, 2))
                      .astype(dtype);
  linum::ConvOptions o;
  o.padding = "SAME";
  const Array ct =
      linum::bench::normal(linum::conv_general_dilated(x, w, o).shape(), 1.0, 3).astype(dtype);
  auto [y1, pull_x] =
      linum::vjp([&](const Array& a) { return linum::conv_general_dilated(a, w, o); }, x);
  auto [y2, pull_w] =
      linum::vjp([&](const Array& k) { return linum::conv_general_dilated(x, k, o); }, w);
  for (auto _ : state) {
    if (product == Product::forward)
      benchmark::DoNotOptimize(linum::conv_general_dilated(x, w, o));
    else
      benchmark::DoNotOptimize(product == Product::grad_lhs ? pull_x(ct) : pull_w(ct));
  }
  linum::set_conv_backend(saved);
}

// Registers every shape and product for each backend this build has.
[[maybe_unused]] const bool registered = [] {
  std::vector<linum::GemmBackend> gemms{linum::GemmBackend::blas};
  std::vector<linum::ConvBackend> convs{linum::ConvBackend::im2col};
  if (linum::onednn_available()) {
    gemms.push_back(linum::GemmBackend::onednn);
    convs.push_back(linum::ConvBackend::onednn);
  }
  for (const GemmShape& s : kGemms)
    for (linum::GemmBackend b : gemms)
      benchmark::RegisterBenchmark(
          ("gemm/" + std::string(s.name) + "/" + linum::to_string(b)).c_str(),
          [s, b](benchmark::State& st) { run_gemm(st, s, b); })
          ->Apply(linum::bench::configure);
  std::vector<Bf16Path> bf16_paths{Bf16Path::convert};
  if (linum::native_reduced_gemm(linum::bfloat16))
    bf16_paths.insert(bf16_paths.begin(), {Bf16Path::onednn, Bf16Path::onednn_f32out});
  if (openblas_sbgemm()) bf16_paths.push_back(Bf16Path::sbgemm);
  for (const GemmShape& s : kGemms)
    for (Bf16Path p : bf16_paths)
      benchmark::RegisterBenchmark(("gemm/" + std::string(s.name) + "/" + to_string(p)).c_str(),
                                   [s, p](benchmark::State& st) { run_gemm_bf16(st, s, p); })
          ->Apply(linum::bench::configure);
  const std::pair<const char*, Product> products[] = {
      {"fwd", Product::forward}, {"grad_lhs", Product::grad_lhs}, {"grad_rhs", Product::grad_rhs}};
  for (bool second : {false, true})
    for (const auto& [pname, product] : products)
      for (linum::DType dtype : {linum::float32, linum::bfloat16})
        for (linum::ConvBackend b : convs)
          benchmark::RegisterBenchmark(
              (std::string("conv_w2/") + (second ? "second/" : "first/") + pname + "/" +
               (dtype == linum::bfloat16 ? "bf16_" : "") + linum::to_string(b))
                  .c_str(),
              [second, product = product, b, dtype](benchmark::State& st) {
                run_conv(st, second, product, b, dtype);
              })
              ->Apply(linum::bench::configure);
  return true;
}();

}  // namespace
