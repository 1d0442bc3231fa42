// Raw kernels without any transform: the conv of W2's first layer (NHWC 32x28x28x1 * HWIO
// 3x3x1x32, SAME), through linum's conv_general_dilated (im2col + sgemm).
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

}  // namespace
