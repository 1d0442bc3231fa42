// W4: tape overhead. A scalar function of 10,000 source ops, each line `x = sin(x)*1.0001 + 0.5*x`
// (one source op = one line = 4 primitives: sin, mul, mul, add), grad w.r.t. the input: forward
// recording plus the backward sweep. Reported per source op, as README's Performance table
// counts them.
#include <chrono>

#include "bench.hpp"

namespace {

constexpr int kOps = 10000;

linum::Array source(const linum::Array& x0) {
  linum::Array x = x0;
  for (int i = 0; i < kOps; ++i) x = linum::sin(x) * 1.0001f + 0.5f * x;
  return x;
}

void BM_W4(benchmark::State& state) {
  linum::bench::set_threads(state);
  auto g = linum::grad(source);
  linum::Array x = linum::array(0.3f);
  for (auto _ : state) benchmark::DoNotOptimize(g(x));
  state.counters["ns_per_op"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * kOps,
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_W4)->Name("W4")->Apply(linum::bench::configure);

// The same gradient under jit: the first call traces forward and backward into one program
// (its cost is the trace_ms counter); the timed calls replay it.
void BM_W4_jit(benchmark::State& state) {
  linum::bench::set_threads(state);
  auto g = linum::jit(linum::grad(source));
  linum::Array x = linum::array(0.3f);
  const auto t0 = std::chrono::steady_clock::now();
  benchmark::DoNotOptimize(g(x));
  const std::chrono::duration<double, std::milli> trace = std::chrono::steady_clock::now() - t0;
  for (auto _ : state) benchmark::DoNotOptimize(g(x));
  state.counters["trace_ms"] = trace.count();
  state.counters["ns_per_op"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * kOps,
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_W4_jit)->Name("W4_jit")->Apply(linum::bench::configure);

}  // namespace
