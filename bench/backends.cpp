// The GEMM and convolution backends (blas_runtime.hpp) on the workloads' shapes, one case per
// backend so that one run compares them:
//   gemm/<shape>/<backend>: detail::gemm<float> (the GEMM every contraction runs) at W1's, W2's
//     and W6's product shapes (W5's are small_gemm's whatever the backend);
//   conv_w2/<layer>/<product>/<backend>: W2's two convolutions (NHWC batch 32, 3x3 SAME):
//     the forward product and each VJP alone (the other operand held constant).
#include <string>
#include <vector>

#include <linum/autodiff/ops/backends.hpp>
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

enum class Product { forward, grad_lhs, grad_rhs };

void run_conv(benchmark::State& state, bool second, Product product, linum::ConvBackend b) {
  linum::bench::set_threads(state);
  const linum::ConvBackend saved = linum::conv_backend();
  linum::set_conv_backend(b);
  const Array x = second ? linum::bench::normal({32, 14, 14, 32}, 1.0, 1)
                         : linum::bench::normal({32, 28, 28, 1}, 1.0, 1);
  const Array w = second ? linum::bench::normal({3, 3, 32, 64}, 0.1, 2)
                         : linum::bench::normal({3, 3, 1, 32}, 0.1, 2);
  linum::ConvOptions o;
  o.padding = "SAME";
  const Array ct = linum::bench::normal(linum::conv_general_dilated(x, w, o).shape(), 1.0, 3);
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
  const std::pair<const char*, Product> products[] = {
      {"fwd", Product::forward}, {"grad_lhs", Product::grad_lhs}, {"grad_rhs", Product::grad_rhs}};
  for (bool second : {false, true})
    for (const auto& [pname, product] : products)
      for (linum::ConvBackend b : convs)
        benchmark::RegisterBenchmark((std::string("conv_w2/") + (second ? "second/" : "first/") +
                                      pname + "/" + linum::to_string(b))
                                         .c_str(),
                                     [second, product = product, b](benchmark::State& st) {
                                       run_conv(st, second, product, b);
                                     })
            ->Apply(linum::bench::configure);
  return true;
}();

}  // namespace
