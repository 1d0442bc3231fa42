// Shared pieces of the benchmark workloads (W1-W6 of README's Performance section): every
// benchmark takes its BLAS thread count as the argument `threads` and measures wall time (BLAS
// works off the calling thread).
#pragma once

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include <linum/autodiff/parallel.hpp>
#include <linum/linum.hpp>

namespace linum::bench {

// Runs each workload at 1 and 2 BLAS threads, median of repetitions, wall-clock time.
inline void configure(benchmark::internal::Benchmark* b) {
  b->ArgName("threads")
      ->Arg(1)
      ->Arg(2)
      ->UseRealTime()
      ->Repetitions(9)
      ->ReportAggregatesOnly(true)
      ->Unit(benchmark::kMillisecond);
}

// Sets the BLAS threads from the benchmark's argument. LINUM_BENCH_SERIAL_KERNELS=1 keeps the
// elementwise, optimizer and im2col kernels on the calling thread (before/after comparisons).
inline void set_threads(const benchmark::State& state) {
  linum::set_num_threads(static_cast<int>(state.range(0)));
  const char* serial = std::getenv("LINUM_BENCH_SERIAL_KERNELS");
  linum::detail::set_parallel_kernels(!(serial && std::string(serial) == "1"));
}

// An array of shape `s` drawn from N(0, scale^2) with a fixed seed: the workloads' inputs.
inline Array normal(const Shape& s, double scale, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd(0.0f, static_cast<float>(scale));
  std::vector<float> v(static_cast<std::size_t>(shape_size(s)));
  for (auto& e : v) e = nd(rng);
  return array(v, s);
}

}  // namespace linum::bench
