// W4: tape overhead. A scalar function of 10,000 source ops, each line `x = sin(x)*1.0001 + 0.5*x`
// (one source op = one line = 4 primitives: sin, mul, mul, add), grad w.r.t. the input: forward
// recording plus the backward sweep. Reported per source op, as BENCH.md counts them.
#include "bench.hpp"

namespace {

constexpr int kOps = 10000;

void BM_W4(benchmark::State& state) {
  linum::bench::set_threads(state);
  auto f = [](const linum::Array& x0) {
    linum::Array x = x0;
    for (int i = 0; i < kOps; ++i) x = linum::sin(x) * 1.0001f + 0.5f * x;
    return x;
  };
  auto g = linum::grad(f);
  linum::Array x = linum::array(0.3f);
  for (auto _ : state) benchmark::DoNotOptimize(g(x));
  state.counters["ns_per_op"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * kOps,
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_W4)->Name("W4")->Apply(linum::bench::configure);

}  // namespace
