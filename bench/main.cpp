// Runs the benchmarks (Google Benchmark flags apply) and then prints a one-line-per-result
// summary of the medians, with each workload beside its floor.
#include <cstdio>
#include <map>
#include <string>

#include "bench.hpp"

namespace {

// Console output as usual, plus the median wall time (ms) of each "name/threads:N".
class SummaryReporter : public benchmark::ConsoleReporter {
 public:
  std::map<std::string, double> median_ms;
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const auto& r : runs)
      if (r.run_type == Run::RT_Aggregate && r.aggregate_name == "median")
        median_ms[r.run_name.function_name + "/" + r.run_name.args] =
            r.GetAdjustedRealTime() * benchmark::GetTimeUnitMultiplier(benchmark::kMillisecond) /
            benchmark::GetTimeUnitMultiplier(r.time_unit);
    ConsoleReporter::ReportRuns(runs);
  }
};

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  linum::bench::add_blas_context();
  SummaryReporter rep;
  benchmark::RunSpecifiedBenchmarks(&rep);
  benchmark::Shutdown();
  auto get = [&](const std::string& k) {
    auto it = rep.median_ms.find(k);
    return it == rep.median_ms.end() ? -1.0 : it->second;
  };
  std::printf(
      "\nSummary (median wall time of 9 repetitions; BLAS threads set by "
      "linum::set_num_threads):\n");
  for (int t : {1, 2}) {
    const std::string a = "/threads:" + std::to_string(t);
    if (double w1 = get("W1" + a), fl = get("W1_gemm_floor" + a); w1 > 0 && fl > 0)
      std::printf("W1 %dthr: %.2f ms (GEMM floor %.2f ms, ratio %.2f)\n", t, w1, fl, w1 / fl);
    if (double fl = get("W1_gemm_floor" + a); fl > 0)
      std::printf("sgemm %dthr: %.2f ms for W1's 8 GEMMs (%.0f GFLOP/s)\n", t, fl,
                  2.0 * 128 * (784 * 512 * 2 + 512 * 512 * 3 + 512 * 10 * 3) / (fl * 1e6));
    if (double w2 = get("W2" + a); w2 > 0)
      std::printf("W2 %dthr: %.2f ms per train step (value_and_grad + adam)\n", t, w2);
    if (double w4 = get("W4" + a); w4 > 0)
      std::printf(
          "W4 %dthr: %.1f ns/op (op = one source line x = sin(x)*1.0001 + 0.5*x, i.e. 4 "
          "primitives; forward + backward)\n",
          t, w4 * 1e6 / 10000);
    if (double w4 = get("W4_jit" + a); w4 > 0)
      std::printf("W4 under jit %dthr: %.1f ns/op (replay of the traced forward + backward)\n", t,
                  w4 * 1e6 / 10000);
    if (double c = get("conv_w2_first" + a); c > 0)
      std::printf("conv %dthr: %.3f ms (W2's first conv: 32x28x28x1 * 3x3x1x32, SAME)\n", t, c);
  }
  return 0;
}
