// Shared pieces of the benchmark workloads (BENCH.md): every benchmark takes its BLAS thread
// count as the argument `threads` and measures wall time (BLAS works off the calling thread).
#pragma once

#include <benchmark/benchmark.h>

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

// Sets the BLAS threads from the benchmark's argument.
inline void set_threads(const benchmark::State& state) {
  linum::set_num_threads(static_cast<int>(state.range(0)));
}

}  // namespace linum::bench
