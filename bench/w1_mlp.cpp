// W1: grad of mean softmax cross-entropy of a 784-512-512-10 ReLU MLP, batch 128, w.r.t. all
// params, float32; and its GEMM floor: the same eight GEMMs done directly with cblas_sgemm
// (W1_gemm_floor), and through linum's gemm<float>, on the GEMM backend in use
// (W1_gemm_floor_backend: oneDNN by default where built in).
#include <cblas.h>

#include <random>

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

Array loss(const Arrays& p, const Array& x, const Array& labels) {
  Array h = linum::relu(linum::matmul(x, p[0]) + p[1]);
  h = linum::relu(linum::matmul(h, p[2]) + p[3]);
  Array logits = linum::matmul(h, p[4]) + p[5];
  return -linum::mean(linum::sum(linum::one_hot(labels, kOut) * linum::log_softmax(logits), -1));
}

void BM_W1(benchmark::State& state) {
  linum::bench::set_threads(state);
  W1Data d;
  auto g = linum::grad(loss);
  for (auto _ : state) {
    Arrays grads = g(d.params, d.x, d.labels);
    benchmark::DoNotOptimize(grads);
  }
}
BENCHMARK(BM_W1)->Name("W1")->Apply(linum::bench::configure);

// C (m x n) = op(A) op(B), row-major, as W1's forward and backward need them.
void cblas(bool ta, bool tb, int m, int n, int k, const float* a, const float* b, float* c) {
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n,
              k, 1.0f, a, ta ? m : k, b, tb ? k : n, 0.0f, c, n);
}
void backend(bool ta, bool tb, int m, int n, int k, const float* a, const float* b, float* c) {
  linum::detail::gemm<float>(ta, tb, m, n, k, a, ta ? m : k, b, tb ? k : n, c, n, false);
}

template <auto sgemm>
void BM_W1_gemm_floor(benchmark::State& state) {
  linum::bench::set_threads(state);
  auto buf = [](std::size_t n) { return std::vector<float>(n, 0.01f); };
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
BENCHMARK(BM_W1_gemm_floor<cblas>)->Name("W1_gemm_floor")->Apply(linum::bench::configure);
BENCHMARK(BM_W1_gemm_floor<backend>)->Name("W1_gemm_floor_backend")->Apply(linum::bench::configure);

}  // namespace
