// sgemm of each GEMM library Debian 12 offers, called directly (no linum), on the product shapes
// of W1, W2, W5 and W6: OpenBLAS on the kernel set it picks for this CPU and on each wider set
// it has (switched in-process, as linum's kernel check does), BLIS on its pick, oneDNN's
// dnnl_sgemm. Rounds alternate the libraries and each cell is the best of 9 rounds (the project
// machine is shared: the minimum is the least disturbed). Prints one markdown table.
//   build-bench/bench/blas_libraries [threads]
// OpenBLAS's cblas.h before blis.h, which holds BLIS's CBLAS under the same include guard.
#include <cblas.h>

#include <blis.h>
#include <omp.h>
#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <string>
#include <vector>

extern "C" {
void gotoblas_dynamic_init(void);
void gotoblas_dynamic_quit(void);
}

namespace {

struct Shape {
  const char* workload;
  const char* name;
  bool ta, tb;
  int m, n, k;
};

// Every product of one step (W1: 784-512-512-10 MLP grad, batch 128; W2: the CNN's convolutions
// as im2col GEMMs and its dense layers, batch 32; W5: LSTM 128/64 step, batch 16; W6: Dense(512)
// at batch 2048).
const Shape kShapes[] = {
    {"W1", "x.w1", false, false, 128, 512, 784},
    {"W1", "h1.w2", false, false, 128, 512, 512},
    {"W1", "h2.w3", false, false, 128, 10, 512},
    {"W1", "h2T.g3", true, false, 512, 10, 128},
    {"W1", "g3.w3T", false, true, 128, 512, 10},
    {"W1", "h1T.g2", true, false, 512, 512, 128},
    {"W1", "g2.w2T", false, true, 128, 512, 512},
    {"W1", "xT.g1", true, false, 784, 512, 128},
    {"W2", "conv1", false, false, 25088, 32, 9},
    {"W2", "conv1 dW", true, false, 9, 32, 25088},
    {"W2", "conv2", false, false, 6272, 64, 288},
    {"W2", "conv2 dP", false, true, 6272, 288, 64},
    {"W2", "conv2 dW", true, false, 288, 64, 6272},
    {"W2", "dense1", false, false, 32, 256, 3136},
    {"W2", "dense1 dW", true, false, 3136, 256, 32},
    {"W2", "dense1 dx", false, true, 32, 3136, 256},
    {"W5", "x.Wx", false, false, 16, 256, 128},
    {"W5", "h.Wh", false, false, 16, 256, 64},
    {"W5", "dWh", true, false, 64, 256, 16},
    {"W6", "fwd", false, false, 2048, 512, 512},
    {"W6", "dW", true, false, 512, 512, 2048},
    {"W6", "dx", false, true, 2048, 512, 512},
};

using Clock = std::chrono::steady_clock;

// OpenBLAS's kernels switched to `core` (as linum's kernel check does).
void openblas_core(const std::string& core) {
  setenv("OPENBLAS_CORETYPE", core.c_str(), 1);
  gotoblas_dynamic_quit();
  gotoblas_dynamic_init();
  unsetenv("OPENBLAS_CORETYPE");
}

}  // namespace

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 1;
  openblas_set_num_threads(threads);
  bli_thread_set_num_threads(threads);
  omp_set_num_threads(threads);
  const std::string picked = openblas_get_corename();
  const char* pick = std::getenv("OPENBLAS_CORETYPE") ? " (OPENBLAS_CORETYPE)" : " (its pick)";
  // OpenBLAS's pick, then its AVX2 and AVX-512 sets (the same set twice is measured once).
  std::vector<std::string> cores{picked};
  for (const char* c : {"Haswell", "Zen", "SkylakeX", "Cooperlake"})
    if (c != picked) cores.push_back(c);
  const std::string blis_arch = bli_arch_string(bli_arch_query_id());
  std::vector<std::string> columns;
  for (const auto& c : cores)
    columns.push_back("OpenBLAS " + c + (c == picked ? pick : ""));
  columns.push_back("BLIS " + std::string(bli_info_get_version_str()) + " " + blis_arch);
  columns.push_back("oneDNN dnnl_sgemm");

  std::printf("threads %d; GFLOP/s per product, best of 9 alternating rounds\n\n| shape |",
              threads);
  for (const auto& c : columns) std::printf(" %s |", c.c_str());
  std::printf("\n|---|");
  for (std::size_t i = 0; i < columns.size(); ++i) std::printf("---|");
  std::printf("\n");
  std::map<std::string, std::vector<double>> per_workload;  // seconds per step, per column
  for (const Shape& s : kShapes) {
    std::vector<float> a(static_cast<std::size_t>(s.m) * s.k),
        b(static_cast<std::size_t>(s.k) * s.n), c(static_cast<std::size_t>(s.m) * s.n);
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 17) * 0.01f;
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i % 13) * 0.01f;
    const int lda = s.ta ? s.m : s.k, ldb = s.tb ? s.k : s.n, ldc = s.n;
    const double flop = 2.0 * s.m * s.n * s.k;
    std::vector<std::function<void()>> runs;
    for (std::size_t i = 0; i < cores.size(); ++i)
      runs.push_back([&] {
        cblas_sgemm(CblasRowMajor, s.ta ? CblasTrans : CblasNoTrans,
                    s.tb ? CblasTrans : CblasNoTrans, s.m, s.n, s.k, 1.0f, a.data(), lda, b.data(),
                    ldb, 0.0f, c.data(), ldc);
      });
    runs.push_back([&] {
      float one = 1, zero = 0;
      bli_sgemm(s.ta ? BLIS_TRANSPOSE : BLIS_NO_TRANSPOSE,
                s.tb ? BLIS_TRANSPOSE : BLIS_NO_TRANSPOSE, s.m, s.n, s.k, &one, a.data(), lda, 1,
                b.data(), ldb, 1, &zero, c.data(), ldc, 1);
    });
    runs.push_back([&] {
      dnnl_sgemm(s.ta ? 'T' : 'N', s.tb ? 'T' : 'N', s.m, s.n, s.k, 1.0f, a.data(), lda, b.data(),
                 ldb, 0.0f, c.data(), ldc);
    });
    const int reps = std::max(2, std::min(100, static_cast<int>(3e8 / flop)));
    std::vector<double> best(runs.size(), 1e30);
    for (int round = 0; round < 9; ++round)
      for (std::size_t i = 0; i < runs.size(); ++i) {
        if (i < cores.size()) openblas_core(cores[i]);
        runs[i]();  // warm
        const auto t0 = Clock::now();
        for (int r = 0; r < reps; ++r) runs[i]();
        best[i] =
            std::min(best[i], std::chrono::duration<double>(Clock::now() - t0).count() / reps);
      }
    std::printf("| %s %s (%s%d x %s%d x %d) |", s.workload, s.name, s.ta ? "T " : "", s.m,
                s.tb ? "T " : "", s.n, s.k);
    auto& w = per_workload[s.workload];
    w.resize(runs.size());
    for (std::size_t i = 0; i < runs.size(); ++i) {
      std::printf(" %.0f |", flop / best[i] / 1e9);
      w[i] += best[i];
    }
    std::printf("\n");
  }
  for (const auto& [name, secs] : per_workload) {
    std::printf("| **%s, all products (ms)** |", name.c_str());
    for (double t : secs) std::printf(" %.3f |", t * 1e3);
    std::printf("\n");
  }
  openblas_core(picked);
  return 0;
}
