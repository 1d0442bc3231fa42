// W1: grad of mean softmax cross-entropy of a 784-512-512-10 ReLU MLP, batch 128, w.r.t. all
// params, float32; and its GEMM floor: the same eight GEMMs done directly with cblas_sgemm
// (W1_gemm_floor), and through linum's gemm<float>, on the GEMM backend in use
// (W1_gemm_floor_backend: oneDNN by default where built in).
// W1_bf16 is the same gradient with bfloat16 compute and float32 params, as Flax's mixed
// precision (Dense(dtype=bfloat16): inputs and params cast to bfloat16 per layer, the logits back
// to float32 for the loss); W1_gemm_floor_bf16 its eight GEMMs on oneDNN's native bfloat16
// matmul (registered where native_reduced_gemm(bfloat16) holds). W1_fma_peak (x86 only): what
// one core's float32 fused multiply-adds can do at most, the ceiling the floor is measured
// against.
#include <cblas.h>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <random>
#include <vector>

#include <linum/autodiff/ops/dnnl_backend.hpp>
#include <linum/autodiff/ops/kernel_util.hpp>

#include "bench.hpp"

namespace {

using linum::Array;
using linum::Arrays;

constexpr int kBatch = 128, kIn = 784, kHidden = 512, kOut = 10;

using linum::bench::normal;

struct W1Data {
  Arrays params;  // w1, b1, w2, b2, w3, b3
  Array x, labels;
  W1Data() {
    params = {normal({kIn, kHidden}, 1 / std::sqrt(kIn), 1),         linum::zeros({kHidden}),
              normal({kHidden, kHidden}, 1 / std::sqrt(kHidden), 2), linum::zeros({kHidden}),
              normal({kHidden, kOut}, 1 / std::sqrt(kHidden), 3),    linum::zeros({kOut})};
    x = normal({kBatch, kIn}, 1.0, 4);
    std::vector<std::int32_t> l(kBatch);
    for (int i = 0; i < kBatch; ++i) l[i] = (i * 7) % kOut;
    labels = linum::array(l);
  }
};

// The MLP with every layer computing in `dtype` (its input, kernel and bias cast to it).
template <linum::DType dtype>
Array loss(const Arrays& p, const Array& x, const Array& labels) {
  auto dense = [](const Array& in, const Array& w, const Array& b) {
    return linum::matmul(in.astype(dtype), w.astype(dtype)) + b.astype(dtype);
  };
  Array h = linum::relu(dense(x, p[0], p[1]));
  h = linum::relu(dense(h, p[2], p[3]));
  Array logits = dense(h, p[4], p[5]).astype(linum::float32);
  return -linum::mean(linum::sum(linum::one_hot(labels, kOut) * linum::log_softmax(logits), -1));
}

template <linum::DType dtype>
void BM_W1(benchmark::State& state) {
  linum::bench::set_threads(state);
  W1Data d;
  auto g = linum::grad(loss<dtype>);
  for (auto _ : state) {
    Arrays grads = g(d.params, d.x, d.labels);
    benchmark::DoNotOptimize(grads);
  }
}
BENCHMARK(BM_W1<linum::float32>)->Name("W1")->Apply(linum::bench::configure);
BENCHMARK(BM_W1<linum::bfloat16>)->Name("W1_bf16")->Apply(linum::bench::configure);

// C (m x n) = op(A) op(B), row-major, as W1's forward and backward need them.
void cblas(bool ta, bool tb, int m, int n, int k, const float* a, const float* b, float* c) {
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n,
              k, 1.0f, a, ta ? m : k, b, tb ? k : n, 0.0f, c, n);
}
void backend(bool ta, bool tb, int m, int n, int k, const float* a, const float* b, float* c) {
  linum::detail::gemm<float>(ta, tb, m, n, k, a, ta ? m : k, b, tb ? k : n, c, n, false);
}
// bfloat16 in and out, float32 accumulation.
void bf16(bool ta, bool tb, int m, int n, int k, const linum::BFloat16* a, const linum::BFloat16* b,
          linum::BFloat16* c) {
  linum::detail::onednn_gemm_reduced(linum::bfloat16, linum::bfloat16, ta, tb, m, n, k, a,
                                     ta ? m : k, b, tb ? k : n, c, n);
}

template <class T, auto sgemm>
void BM_W1_gemm_floor(benchmark::State& state) {
  linum::bench::set_threads(state);
  auto buf = [](std::size_t n) { return std::vector<T>(n, T(0.01f)); };
  auto x = buf(kBatch * kIn), w1 = buf(kIn * kHidden), w2 = buf(kHidden * kHidden),
       w3 = buf(kHidden * kOut);
  auto h1 = buf(kBatch * kHidden), h2 = buf(kBatch * kHidden), lo = buf(kBatch * kOut);
  auto g2 = buf(kBatch * kHidden), g1 = buf(kBatch * kHidden);
  auto dw1 = buf(kIn * kHidden), dw2 = buf(kHidden * kHidden), dw3 = buf(kHidden * kOut);
  for (auto _ : state) {
    sgemm(false, false, kBatch, kHidden, kIn, x.data(), w1.data(), h1.data());       // x w1
    sgemm(false, false, kBatch, kHidden, kHidden, h1.data(), w2.data(), h2.data());  // h1 w2
    sgemm(false, false, kBatch, kOut, kHidden, h2.data(), w3.data(), lo.data());     // h2 w3
    sgemm(true, false, kHidden, kOut, kBatch, h2.data(), lo.data(), dw3.data());     // h2^T g3
    sgemm(false, true, kBatch, kHidden, kOut, lo.data(), w3.data(), g2.data());      // g3 w3^T
    sgemm(true, false, kHidden, kHidden, kBatch, h1.data(), g2.data(), dw2.data());  // h1^T g2
    sgemm(false, true, kBatch, kHidden, kHidden, g2.data(), w2.data(), g1.data());   // g2 w2^T
    sgemm(true, false, kIn, kHidden, kBatch, x.data(), g1.data(), dw1.data());       // x^T g1
    benchmark::ClobberMemory();
  }
}
BENCHMARK(BM_W1_gemm_floor<float, cblas>)->Name("W1_gemm_floor")->Apply(linum::bench::configure);
BENCHMARK(BM_W1_gemm_floor<float, backend>)
    ->Name("W1_gemm_floor_backend")
    ->Apply(linum::bench::configure);
#if defined(__x86_64__) || defined(__i386__)
// 16 independent chains of FMAs, enough to keep every FMA pipe busy, on the widest vectors the
// CPU has, AVX-512 or AVX2, chosen at run time as oneDNN chooses its kernels; GFLOP/s in the
// counter. The operands come from memory so that the compiler cannot fold the chains. One body
// per instruction set: intrinsics need their target on the function that holds them.
constexpr int kFmaChains = 16, kFmaSteps = 4096;
[[gnu::target("avx512f")]] void fma_chains_avx512(float* acc, const float* ab) {
  __m512 r[kFmaChains];
  for (int i = 0; i < kFmaChains; ++i) r[i] = _mm512_loadu_ps(acc + 16 * i);
  const __m512 a = _mm512_loadu_ps(ab), b = _mm512_loadu_ps(ab + 16);
  for (int it = 0; it < kFmaSteps; ++it)
#pragma GCC unroll 16
    for (int i = 0; i < kFmaChains; ++i) r[i] = _mm512_fmadd_ps(r[i], a, b);
  for (int i = 0; i < kFmaChains; ++i) _mm512_storeu_ps(acc + 16 * i, r[i]);
}
[[gnu::target("avx2,fma")]] void fma_chains_avx2(float* acc, const float* ab) {
  __m256 r[kFmaChains];
  for (int i = 0; i < kFmaChains; ++i) r[i] = _mm256_loadu_ps(acc + 8 * i);
  const __m256 a = _mm256_loadu_ps(ab), b = _mm256_loadu_ps(ab + 16);
  for (int it = 0; it < kFmaSteps; ++it)
#pragma GCC unroll 16
    for (int i = 0; i < kFmaChains; ++i) r[i] = _mm256_fmadd_ps(r[i], a, b);
  for (int i = 0; i < kFmaChains; ++i) _mm256_storeu_ps(acc + 8 * i, r[i]);
}
void BM_W1_fma_peak(benchmark::State& state) {
  const bool avx512 = __builtin_cpu_supports("avx512f");
  if (!avx512 && !(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))) {
    state.SkipWithError("this CPU has no AVX2 FMA");
    return;
  }
  std::vector<float> acc(16 * kFmaChains, 0.001f), ab(32, 1e-5f);
  std::fill(ab.begin(), ab.begin() + 16, 0.9999f);
  for (auto _ : state) {
    if (avx512) fma_chains_avx512(acc.data(), ab.data());
    else fma_chains_avx2(acc.data(), ab.data());
    benchmark::DoNotOptimize(acc.data());
    benchmark::ClobberMemory();
  }
  const double flops = 2.0 * kFmaChains * kFmaSteps * (avx512 ? 16 : 8);
  state.counters["GFLOPs"] = benchmark::Counter(
      flops * static_cast<double>(state.iterations()) / 1e9, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_W1_fma_peak)
    ->Name("W1_fma_peak")
    ->UseRealTime()
    ->Repetitions(9)
    ->ReportAggregatesOnly(true)
    ->Unit(benchmark::kMicrosecond);
#endif

[[maybe_unused]] const bool bf16_floor_registered = [] {
  if (linum::native_reduced_gemm(linum::bfloat16))
    benchmark::RegisterBenchmark("W1_gemm_floor_bf16", BM_W1_gemm_floor<linum::BFloat16, bf16>)
        ->Apply(linum::bench::configure);
  return true;
}();

}  // namespace
