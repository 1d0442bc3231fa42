// Single kernels: the conv of W2's first layer (NHWC 32x28x28x1 * HWIO 3x3x1x32, SAME) through
// conv_general_dilated (im2col + sgemm), relu's VJP, and the softmax cross-entropy's value and grad.
#include <vector>

#include "bench.hpp"

namespace {

void BM_conv_w2_first(benchmark::State& state) {
  linum::bench::set_threads(state);
  linum::Array x = linum::full({32, 28, 28, 1}, 0.5), w = linum::full({3, 3, 1, 32}, 0.1);
  linum::ConvOptions o;
  o.padding = "SAME";
  for (auto _ : state) benchmark::DoNotOptimize(linum::conv_general_dilated(x, w, o));
}
BENCHMARK(BM_conv_w2_first)->Name("conv_w2_first")->Apply(linum::bench::configure);

// relu's VJP on W2's first activation (32x28x28x32 float32).
void BM_relu_vjp(benchmark::State& state) {
  linum::bench::set_threads(state);
  const linum::Array x = linum::bench::normal({32, 28, 28, 32}, 1.0, 1);
  const linum::Array g = linum::bench::normal({32, 28, 28, 32}, 1.0, 2);
  auto [y, pull] = linum::vjp([](const linum::Array& a) { return linum::relu(a); }, x);
  for (auto _ : state) benchmark::DoNotOptimize(pull(g));
}
BENCHMARK(BM_relu_vjp)->Name("relu_vjp")->Apply(linum::bench::configure);

// value_and_grad of the mean softmax cross-entropy of 256x1000 float32 logits: the fused optax
// loss against the log_softmax composition it replaces.
template <bool kFused>
void BM_softmax_ce(benchmark::State& state) {
  linum::bench::set_threads(state);
  const linum::Array logits = linum::bench::normal({256, 1000}, 1.0, 3);
  std::vector<std::int32_t> k(256);
  for (int i = 0; i < 256; ++i) k[i] = (i * 37) % 1000;
  const linum::Array labels = linum::one_hot(linum::array(k), 1000);
  auto loss = [&](const linum::Array& x) {
    if constexpr (kFused) return linum::mean(linum::optim::softmax_cross_entropy(x, labels));
    else return -linum::mean(linum::sum(labels * linum::log_softmax(x), -1));
  };
  for (auto _ : state) benchmark::DoNotOptimize(linum::value_and_grad(loss)(logits));
}
BENCHMARK(BM_softmax_ce<true>)->Name("softmax_ce_fused")->Apply(linum::bench::configure);
BENCHMARK(BM_softmax_ce<false>)->Name("softmax_ce_composite")->Apply(linum::bench::configure);

}  // namespace
