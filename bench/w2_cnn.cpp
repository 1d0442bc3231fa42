// W2: one train step of Flax's guide CNN (examples/seed_models.hpp: Conv(32,3x3,SAME) relu
// avg_pool2 Conv(64,3x3,SAME) relu avg_pool2 flatten Dense(256) relu Dense(10) log_softmax), NHWC
// 28x28x1, batch 32, float32: value_and_grad of the mean cross-entropy plus an optim::adam update.
// `W2_b128` is the same step at batch 128, where the GEMMs, convs and elementwise passes are large
// enough to show how the kernels scale with threads.
// `W2` writes the network with linum ops on a map of params; `W2_modules` is the same step through
// that nn::Module CNN (init/apply on a Tree), so the two medians give the module layer's cost.
// Counters per step: minor page faults (getrusage), blocks taken from the OS and Array buffers
// handed out (memory_stats); W2_uncached runs the step with the buffer cache off.
// `W2_bf16` is the step with bfloat16 compute and float32 params (Flax's mixed precision:
// Conv/Dense(dtype=bfloat16) cast input, kernel and bias per layer; log_softmax on the logits
// back in float32), the optimizer on float32.
#include <sys/resource.h>

#include <map>
#include <random>
#include <string>

#include <linum/autodiff/random/random.hpp>

#include "../examples/seed_models.hpp"
#include "bench.hpp"

namespace {

using linum::Array;
using Params = std::map<std::string, Array>;

constexpr int kBatch = 32, kLargeBatch = 128, kClasses = 10;

using linum::bench::normal;

// lecun_normal-scaled kernels and zero biases, as nn::Conv / nn::Dense initialize them.
Params init_params() {
  return {{"conv1_w", normal({3, 3, 1, 32}, 1 / std::sqrt(9.0), 1)},
          {"conv1_b", linum::zeros({32})},
          {"conv2_w", normal({3, 3, 32, 64}, 1 / std::sqrt(9.0 * 32), 2)},
          {"conv2_b", linum::zeros({64})},
          {"dense1_w", normal({7 * 7 * 64, 256}, 1 / std::sqrt(7.0 * 7 * 64), 3)},
          {"dense1_b", linum::zeros({256})},
          {"dense2_w", normal({256, kClasses}, 1 / std::sqrt(256.0), 4)},
          {"dense2_b", linum::zeros({kClasses})}};
}

// The CNN with every layer computing in `dtype` (a no-op cast for float32).
Array cnn(const Params& p, const Array& x, linum::DType dtype = linum::float32) {
  linum::ConvOptions same;
  same.padding = "SAME";
  auto at = [&](const char* name) { return p.at(name).astype(dtype); };
  auto conv = [&](const Array& in, const char* w, const char* b) {
    return linum::relu(linum::conv_general_dilated(in.astype(dtype), at(w), same) + at(b));
  };
  auto dense = [&](const Array& in, const char* w, const char* b) {
    return linum::matmul(in.astype(dtype), at(w)) + at(b);
  };
  Array h = linum::avg_pool(conv(x, "conv1_w", "conv1_b"), {2, 2}, {2, 2});
  h = linum::avg_pool(conv(h, "conv2_w", "conv2_b"), {2, 2}, {2, 2});
  h = h.reshape({h.shape(0), -1});
  h = linum::relu(dense(h, "dense1_w", "dense1_b"));
  return linum::log_softmax(dense(h, "dense2_w", "dense2_b").astype(linum::float32));
}

long minor_faults() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

// The batch and its one-hot labels, the same for both versions of the step.
struct W2Batch {
  Array x, labels;
  explicit W2Batch(int batch = kBatch) : x(normal({batch, 28, 28, 1}, 1.0, 5)) {
    std::vector<std::int32_t> l(batch);
    for (int i = 0; i < batch; ++i) l[i] = (i * 7) % kClasses;
    labels = linum::one_hot(linum::array(l), kClasses);
  }
};

// Times train steps (value_and_grad of `loss` + adam) on `params`, any pytree, after one warm-up
// step, and sets the memory counters.
template <class P, class Loss>
void run_train_steps(benchmark::State& state, P params, const Loss& loss) {
  auto tx = linum::optim::adam(1e-3);
  auto opt_state = tx.init(params);
  auto step = [&] {
    auto [value, grads] = linum::value_and_grad(loss)(params);
    auto [updates, new_state] = tx.update(grads, opt_state, params);
    opt_state = new_state;
    params = linum::optim::apply_updates(params, updates);
    benchmark::DoNotOptimize(value);
  };
  step();  // warm-up: the first step's memory is not steady state
  const long faults0 = minor_faults();
  const linum::MemoryStats m0 = linum::memory_stats();
  for (auto _ : state) step();
  const linum::MemoryStats m1 = linum::memory_stats();
  auto per_step = [](double v) {
    return benchmark::Counter(v, benchmark::Counter::kAvgIterations);
  };
  state.counters["minflt/step"] = per_step(static_cast<double>(minor_faults() - faults0));
  state.counters["os_allocs/step"] = per_step(static_cast<double>(m1.os_allocs - m0.os_allocs));
  state.counters["buffers/step"] = per_step(static_cast<double>(m1.num_allocs - m0.num_allocs));
}

void run_w2(benchmark::State& state, int batch, linum::DType dtype = linum::float32) {
  linum::bench::set_threads(state);
  const W2Batch b(batch);
  run_train_steps(state, init_params(), [&](const Params& p) {
    return -linum::mean(linum::sum(b.labels * cnn(p, b.x, dtype), 1));
  });
}

void BM_W2(benchmark::State& state) { run_w2(state, kBatch); }
BENCHMARK(BM_W2)->Name("W2")->Apply(linum::bench::configure);

void BM_W2_bf16(benchmark::State& state) { run_w2(state, kBatch, linum::bfloat16); }
BENCHMARK(BM_W2_bf16)->Name("W2_bf16")->Apply(linum::bench::configure);

void BM_W2_b128(benchmark::State& state) { run_w2(state, kLargeBatch); }
BENCHMARK(BM_W2_b128)->Name("W2_b128")->Apply(linum::bench::configure);

// The same step under jit: value_and_grad + adam traced once into one program and replayed
// (the optimizer's one-pass leaf kernels are for concrete leaves, so the replay runs its ops).
void BM_W2_jit(benchmark::State& state) {
  linum::bench::set_threads(state);
  const W2Batch b;
  auto tx = linum::optim::adam(1e-3);
  Params params = init_params();
  auto opt_state = tx.init(params);
  using State = decltype(opt_state);
  auto step = linum::jit([&tx](const Params& p, const State& s, const Array& x, const Array& y) {
    auto [value, grads] = linum::value_and_grad(
        [&](const Params& q) { return -linum::mean(linum::sum(y * cnn(q, x), 1)); })(p);
    auto [updates, next] = tx.update(grads, s, p);
    return std::make_tuple(linum::optim::apply_updates(p, updates), next, value);
  });
  auto run = [&] {
    auto [p, s, value] = step(params, opt_state, b.x, b.labels);
    params = p;
    opt_state = s;
    benchmark::DoNotOptimize(value);
  };
  run();  // the trace
  for (auto _ : state) run();
}
BENCHMARK(BM_W2_jit)->Name("W2_jit")->Apply(linum::bench::configure);

// The same step with the buffer cache off (limit 0, as LINUM_CACHED_MEMORY_LIMIT=0 sets it for
// a whole run): every block comes from the OS (malloc), as before the caching allocator.
void BM_W2_uncached(benchmark::State& state) {
  const std::size_t limit = linum::memory_stats().cache_limit;
  linum::set_cached_memory_limit(0);
  BM_W2(state);
  linum::set_cached_memory_limit(limit);
}
BENCHMARK(BM_W2_uncached)->Name("W2_uncached")->Apply(linum::bench::configure);

// The same step with examples/seed_models.hpp's CNN module: params from CNN().init, the forward
// pass through CNN().apply inside value_and_grad, as examples/fashion_mnist.cpp trains it.
void BM_W2_modules(benchmark::State& state) {
  linum::bench::set_threads(state);
  const W2Batch b;
  const seed_models::CNN model;
  linum::Tree params = model.init(linum::random::PRNGKey(0), b.x)["params"];
  run_train_steps(state, params, [&](const linum::Tree& p) {
    return -linum::mean(linum::sum(b.labels * model.apply(linum::Tree{{"params", p}}, b.x), 1));
  });
}
BENCHMARK(BM_W2_modules)->Name("W2_modules")->Apply(linum::bench::configure);

}  // namespace
