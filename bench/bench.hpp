// Shared pieces of the benchmark workloads (W1-W6 of README's Performance section): every
// benchmark takes its BLAS thread count as the argument `threads` and measures wall time (BLAS
// works off the calling thread).
#pragma once

#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include <linum/autodiff/ops/backends.hpp>
#include <linum/autodiff/ops/blas_runtime.hpp>
#include <linum/autodiff/parallel.hpp>
#include <linum/linum.hpp>

namespace linum::bench {

// Positive integers from a comma-separated environment variable, or `fallback` when it is unset.
// Registration runs before main, so a bad value ends the program with a message.
inline std::vector<std::int64_t> env_counts(const char* var, std::vector<std::int64_t> fallback) {
  const char* env = std::getenv(var);
  if (!env || !*env) return fallback;
  std::vector<std::int64_t> out;
  for (const char* c = env; *c;) {
    char* end = nullptr;
    const long n = std::strtol(c, &end, 10);
    if (end == c || n < 1) {
      std::fprintf(stderr, "%s: expected positive counts like 1,2,4, got '%s'\n", var, env);
      std::exit(2);
    }
    out.push_back(n);
    c = *end == ',' ? end + 1 : end;
  }
  return out;
}

// Runs each workload at 1 and 2 BLAS threads (or the list in LINUM_BENCH_THREADS, e.g.
// "1,2,4,8,16" for scaling runs on a many-core machine), median of 9 repetitions (or
// LINUM_BENCH_REPETITIONS: the code's count wins over --benchmark_repetitions), wall-clock time.
inline void configure(benchmark::internal::Benchmark* b) {
  b->ArgName("threads");
  for (std::int64_t t : env_counts("LINUM_BENCH_THREADS", {1, 2})) b->Arg(t);
  const auto reps = env_counts("LINUM_BENCH_REPETITIONS", {9});
  b->UseRealTime()
      ->Repetitions(static_cast<int>(reps.front()))
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

// Which BLAS kernels and GEMM / conv backends run and how many threads by default, in the
// report's context (console and JSON): numbers from another machine then say what they measured.
inline void add_blas_context() {
  const BlasInfo blas = blas_info();
  benchmark::AddCustomContext("blas_core", blas.core);
  benchmark::AddCustomContext(
      "blas_core_chosen_by",
      blas.chosen_by +
          (blas.replaced_core.empty() ? "" : " (replaced " + blas.replaced_core + ")"));
  benchmark::AddCustomContext("cpu_isa", to_string(blas.cpu_isa));
  benchmark::AddCustomContext("blas_config", blas.config);
  benchmark::AddCustomContext("default_threads", std::to_string(num_threads()));
  benchmark::AddCustomContext("gemm_backend", to_string(gemm_backend()));
  benchmark::AddCustomContext("conv_backend", to_string(conv_backend()));
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
