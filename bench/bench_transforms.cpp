// Workloads W3, W5, W6 (README's Performance section): per-example gradients with vmap(grad), an
// LSTM scanned over 100 steps, and a 64-layer tanh stack differentiated without remat, with
// checkpoint per layer and with remat_scan's √N segments. W6 also reports the extra peak memory of
// Array buffers (linum::memory_stats: requested bytes of live buffers, whether cached blocks or new
// ones).
#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <string>

#include "bench.hpp"

namespace {

using linum::Array;
using linum::Arrays;
using Params = std::map<std::string, Array>;
constexpr int kNone = linum::VmapOptions::kNone;

using linum::bench::normal;

// ---- W3: per-example gradients of a 32-64-64-1 tanh MLP, squared loss, batch 64 ----------------

struct W3Data {
  Params p;
  Array x, y;
  W3Data() {
    p = {{"w1", normal({32, 64}, 1 / std::sqrt(32.0), 1)}, {"b1", linum::zeros({64})},
         {"w2", normal({64, 64}, 1 / std::sqrt(64.0), 2)}, {"b2", linum::zeros({64})},
         {"w3", normal({64, 1}, 1 / std::sqrt(64.0), 3)},  {"b3", linum::zeros({1})}};
    x = normal({64, 32}, 1.0, 4);
    y = normal({64, 1}, 1.0, 5);
  }
};

// One example (x: (32,), y: (1,)) or a batch (x: (B, 32), y: (B, 1)): the sum of squared errors.
Array w3_loss(const Params& p, const Array& x, const Array& y) {
  Array h = linum::tanh(linum::matmul(x, p.at("w1")) + p.at("b1"));
  h = linum::tanh(linum::matmul(h, p.at("w2")) + p.at("b2"));
  Array e = linum::matmul(h, p.at("w3")) + p.at("b3") - y;
  return linum::sum(e * e);
}

void BM_W3_vmap_grad(benchmark::State& state) {
  linum::bench::set_threads(state);
  W3Data d;
  auto per_example = linum::vmap(linum::grad(w3_loss), {{kNone, 0, 0}});
  for (auto _ : state) {
    Params g = per_example(d.p, d.x, d.y);
    benchmark::DoNotOptimize(g);
  }
}
BENCHMARK(BM_W3_vmap_grad)->Name("W3_vmap_grad")->Apply(linum::bench::configure);

void BM_W3_loop(benchmark::State& state) {
  linum::bench::set_threads(state);
  W3Data d;
  Arrays xs = linum::split(d.x, 64, 0), ys = linum::split(d.y, 64, 0);
  for (auto& e : xs) e = linum::reshape(e, {32});
  for (auto& e : ys) e = linum::reshape(e, {1});
  auto g = linum::grad(w3_loss);
  for (auto _ : state) {
    std::vector<Params> out;
    out.reserve(64);
    for (int i = 0; i < 64; ++i) out.push_back(g(d.p, xs[i], ys[i]));
    benchmark::DoNotOptimize(out);
  }
}
BENCHMARK(BM_W3_loop)->Name("W3_loop")->Apply(linum::bench::configure);

// Lower bound: the gradient of the summed loss of the whole batch (one set of GEMMs).
void BM_W3_batched(benchmark::State& state) {
  linum::bench::set_threads(state);
  W3Data d;
  auto g = linum::grad(w3_loss);
  for (auto _ : state) {
    Params out = g(d.p, d.x, d.y);
    benchmark::DoNotOptimize(out);
  }
}
BENCHMARK(BM_W3_batched)->Name("W3_batched")->Apply(linum::bench::configure);

// ---- W5: LSTM cell (hidden 128, input 64) scanned over 100 steps, batch 16 --------------------

struct W5Data {
  Params p;
  Array xs;
  W5Data() {
    p = {{"wx", normal({64, 512}, 1 / std::sqrt(64.0), 6)},
         {"wh", normal({128, 512}, 1 / std::sqrt(128.0), 7)},
         {"b", linum::zeros({512})}};
    xs = normal({100, 16, 64}, 1.0, 8);
  }
};

Array w5_loss(const Params& p, const Array& xs) {
  using Carry = std::pair<Array, Array>;  // (h, c)
  auto cell = [&](const Carry& hc, const Array& x) {
    Array z = linum::matmul(x, p.at("wx")) + linum::matmul(hc.first, p.at("wh")) + p.at("b");
    Arrays g = linum::split(z, 4, -1);
    Array c = linum::sigmoid(g[1]) * hc.second + linum::sigmoid(g[0]) * linum::tanh(g[2]);
    Array h = linum::sigmoid(g[3]) * linum::tanh(c);
    return std::make_pair(Carry(h, c), std::nullopt);
  };
  Carry init(linum::zeros({16, 128}), linum::zeros({16, 128}));
  return linum::sum(linum::scan(cell, init, xs).first.first);
}

void BM_W5(benchmark::State& state) {
  linum::bench::set_threads(state);
  W5Data d;
  auto g = linum::grad(w5_loss);
  for (auto _ : state) {
    Params out = g(d.p, d.xs);
    benchmark::DoNotOptimize(out);
  }
}
BENCHMARK(BM_W5)->Name("W5_lstm_scan")->Apply(linum::bench::configure);

// W5 under jit: the 100 scan steps and their backward traced once into one program, replayed.
void BM_W5_jit(benchmark::State& state) {
  linum::bench::set_threads(state);
  W5Data d;
  auto g = linum::jit(linum::grad(w5_loss));
  benchmark::DoNotOptimize(g(d.p, d.xs));  // the trace
  for (auto _ : state) {
    Params out = g(d.p, d.xs);
    benchmark::DoNotOptimize(out);
  }
}
BENCHMARK(BM_W5_jit)->Name("W5_lstm_scan_jit")->Apply(linum::bench::configure);

// ---- W6: 64 x (Dense(512) + tanh), batch 2048: no remat / checkpoint per layer / √N segments --

constexpr int kLayers = 64, kWidth = 512, kBatch6 = 2048;
using Layer = std::pair<Array, Array>;  // (W, b), stacked over layers

Array dense_tanh(const Array& h, const Layer& wb) {
  return linum::tanh(linum::matmul(h, wb.first) + wb.second);
}

Array w6_loss(const Layer& stacked, const Array& x, int mode) {
  auto step = [](const Array& h, const Layer& wb) {
    return std::make_pair(dense_tanh(h, wb), std::nullopt);
  };
  if (mode == 0) return linum::sum(linum::scan(step, x, stacked).first);
  if (mode == 1) {
    auto layer = linum::checkpoint(dense_tanh);
    return linum::sum(
        linum::scan([&](const Array& h,
                        const Layer& wb) { return std::make_pair(layer(h, wb), std::nullopt); },
                    x, stacked)
            .first);
  }
  return linum::sum(linum::remat_scan(dense_tanh, x, stacked, {8, 8}));
}

void BM_W6(benchmark::State& state) {
  linum::bench::set_threads(state);
  const int mode = static_cast<int>(state.range(1));
  Layer stacked(normal({kLayers, kWidth, kWidth}, 1 / std::sqrt(double(kWidth)), 9),
                linum::zeros({kLayers, kWidth}));
  Array x = normal({kBatch6, kWidth}, 1.0, 10);
  auto g = linum::grad([mode](const Layer& p, const Array& xx) { return w6_loss(p, xx, mode); });
  double extra = 0;
  for (auto _ : state) {
    const std::size_t base = linum::memory_stats().bytes_in_use;
    linum::reset_peak_memory_stats();
    Layer out = g(stacked, x);
    benchmark::DoNotOptimize(out);
    extra = std::max(extra, static_cast<double>(linum::memory_stats().peak_bytes_in_use - base));
  }
  state.counters["extra_MB"] = extra / (1 << 20);
}
BENCHMARK(BM_W6)
    ->Name("W6")
    ->ArgNames({"threads", "remat"})
    ->ArgsProduct({{1, 2}, {0, 1, 2}})
    ->UseRealTime()
    ->Repetitions(3)
    ->ReportAggregatesOnly(true)
    ->Unit(benchmark::kMillisecond);

// Console output plus the medians (ms) and W6's extra memory, for the summary lines.
class Summary : public benchmark::ConsoleReporter {
 public:
  std::map<std::string, double> ms, mb;
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const auto& r : runs)
      if (r.run_type == Run::RT_Aggregate && r.aggregate_name == "median") {
        const std::string k = r.run_name.function_name + "/" + r.run_name.args;
        ms[k] = r.GetAdjustedRealTime() *
                benchmark::GetTimeUnitMultiplier(benchmark::kMillisecond) /
                benchmark::GetTimeUnitMultiplier(r.time_unit);
        if (auto it = r.counters.find("extra_MB"); it != r.counters.end()) mb[k] = it->second;
      }
    ConsoleReporter::ReportRuns(runs);
  }
};

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  linum::bench::add_blas_context();
  Summary rep;
  benchmark::RunSpecifiedBenchmarks(&rep);
  benchmark::Shutdown();
  auto get = [](const std::map<std::string, double>& m, const std::string& k) {
    auto it = m.find(k);
    return it == m.end() ? -1.0 : it->second;
  };
  std::printf("\nSummary (median wall time; BLAS threads set by linum::set_num_threads):\n");
  for (int t : {1, 2}) {
    const std::string a = "threads:" + std::to_string(t);
    const double v = get(rep.ms, "W3_vmap_grad/" + a), l = get(rep.ms, "W3_loop/" + a),
                 b = get(rep.ms, "W3_batched/" + a);
    if (v > 0 && b > 0)
      std::printf(
          "W3 %dthr: vmap(grad) %.3f ms, loop %.3f ms, batched lower bound %.3f ms: "
          "vmap/batched %.2f (goal <= 2)\n",
          t, v, l, b, v / b);
    if (double w5 = get(rep.ms, "W5_lstm_scan/" + a); w5 > 0)
      std::printf("W5 %dthr: %.2f ms (LibTorch 32-35 ms; goal <= 11.7 ms)\n", t, w5);
    const std::string k = "W6/" + a + "/remat:";
    const double n0 = get(rep.mb, k + "0"), n2 = get(rep.mb, k + "2");
    if (n0 > 0)
      std::printf(
          "W6 %dthr: no remat %.0f ms / %.0f MB extra; checkpoint per layer %.0f ms / %.0f MB; "
          "sqrt(N) segments %.0f ms / %.0f MB: memory ratio %.2f (goal <= 0.4), time ratio "
          "%.2f (goal <= 1.35)\n",
          t, get(rep.ms, k + "0"), n0, get(rep.ms, k + "1"), get(rep.mb, k + "1"),
          get(rep.ms, k + "2"), n2, n2 / n0, get(rep.ms, k + "2") / get(rep.ms, k + "0"));
  }
  return 0;
}
