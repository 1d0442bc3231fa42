// Data-parallel scaling of the W2 train step (examples/seed_models.hpp's CNN, value_and_grad +
// adam) and the cost of the gradient allreduce, run under
// `mpirun -n P bench_distributed [--threads T] [--steps N] [--allreduce-only]` (the last skips the
// W2 steps):
// - strong scaling: a global batch of 32 split over the P processes (each takes 32 / P rows),
//   grads psum'd over "devices"; median step time and examples/s;
// - weak scaling: 32 rows per process (global 32 P);
// - the allreduce alone: linum's psum over "devices" of the W2 gradient tree (8 leaves) and of
//   single arrays from 4 KiB to 16 MiB, against MPI_Allreduce on the same bytes, and against
//   MPI_Iallreduce polled with MPI_Test (the other way to time a collective out, not taken).
// Process 0 prints one table; the numbers are medians over the steps, and for the allreduce of
// single arrays also the fastest step (on a loaded machine a step can wait a whole scheduler
// time slice for the other process, and the median with it).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <linum/autodiff/random/random.hpp>
#include <linum/distributed/distributed.hpp>
#include <linum/linum.hpp>

#include "../examples/seed_models.hpp"

namespace {

using linum::Array;
using linum::Tree;
namespace dist = linum::distributed;
using clock_type = std::chrono::steady_clock;

struct Timing {
  double median, best;  // ms
};

// Times f `reps` times after one warm-up, every process starting together; ms, the slowest
// process's time per repetition.
template <class F>
Timing time_ms(int reps, F&& f) {
  f();
  std::vector<double> ms;
  for (int i = 0; i < reps; ++i) {
    MPI_Barrier(MPI_COMM_WORLD);
    const auto t0 = clock_type::now();
    f();
    double t = std::chrono::duration<double, std::milli>(clock_type::now() - t0).count(), slowest;
    MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    ms.push_back(slowest);
  }
  std::sort(ms.begin(), ms.end());
  return {ms[ms.size() / 2], ms.front()};
}

// One data-parallel W2 step on `rows` local rows; returns the median step time.
double w2_step_ms(std::int64_t rows, int steps, bool distributed) {
  Tree params =
      seed_models::CNN().init(linum::random::PRNGKey(0), linum::zeros({1, 28, 28, 1}))["params"];
  auto tx = linum::optim::adam(1e-3);
  auto opt_state = tx.init(params);
  Array x =
      linum::random::normal(linum::random::PRNGKey(1 + dist::process_index()), {rows, 28, 28, 1});
  std::vector<std::int32_t> l(static_cast<std::size_t>(rows));
  for (std::int64_t i = 0; i < rows; ++i) l[i] = static_cast<std::int32_t>((i * 7) % 10);
  Array labels = linum::one_hot(linum::array(l), 10);
  auto loss_fn = [&](const Tree& p) {
    return -linum::mean(linum::sum(labels * seed_models::CNN().apply(Tree{{"params", p}}, x), 1));
  };
  auto grads_fn = [&](const Tree& p) {
    auto [v, g] = linum::value_and_grad(loss_fn)(p);
    if (!distributed) return g;
    return linum::pmean(g, "devices");
  };
  return time_ms(steps,
                 [&] {
                   Tree g = distributed ? dist::pmap(grads_fn)(params) : grads_fn(params);
                   auto [updates, new_state] = tx.update(g, opt_state, params);
                   opt_state = new_state;
                   params = linum::optim::apply_updates(params, updates);
                 })
      .median;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 1, steps = 20;
  bool allreduce_only = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--allreduce-only")
      allreduce_only = true;
    else if (a == "--threads" && i + 1 < argc)
      threads = std::atoi(argv[++i]);
    else if (a == "--steps" && i + 1 < argc)
      steps = std::atoi(argv[++i]);
  }
  dist::initialize();  // with the default collective timeout (its watchdog)
  linum::set_num_threads(threads);
  const int p = dist::process_count();
  const bool lead = dist::process_index() == 0;
  if (lead)
    std::printf("bench_distributed: %d process%s, %d BLAS thread%s each, median of %d steps\n", p,
                p == 1 ? "" : "es", threads, threads == 1 ? "" : "s", steps);

  // W2 scaling.
  if (!allreduce_only) {
    const double alone = w2_step_ms(32, steps, false);
    const double strong = w2_step_ms(32 / p, steps, true);
    const double weak = w2_step_ms(32, steps, true);
    if (lead) {
      std::printf(
          "W2 step, batch 32 on this process alone (no allreduce): %8.2f ms  %7.0f examples/s\n",
          alone, 32 / alone * 1e3);
      std::printf(
          "W2 strong: global 32, %2d rows/process:             %8.2f ms  %7.0f examples/s\n",
          32 / p, strong, 32 / strong * 1e3);
      std::printf(
          "W2 weak:   32 rows/process, global %3d:             %8.2f ms  %7.0f examples/s\n",
          32 * p, weak, 32.0 * p / weak * 1e3);
    }
  }

  // The gradient allreduce: the W2 gradient tree through linum, one buffer through MPI.
  Tree grads =
      seed_models::CNN().init(linum::random::PRNGKey(0), linum::zeros({1, 28, 28, 1}))["params"];
  std::int64_t count = 0;
  for (const Array& a : linum::detail::tree_arrays(grads)) count += a.size();
  auto psum_tree = dist::pmap([](const Tree& g) { return linum::psum(g, "devices"); });
  const double tree_ms = time_ms(steps, [&] { Tree s = psum_tree(grads); }).median;
  std::vector<float> buf(static_cast<std::size_t>(count), 1.0f), out(buf.size());
  const double mpi_ms = time_ms(steps, [&] {
                          MPI_Allreduce(buf.data(), out.data(), static_cast<int>(count), MPI_FLOAT,
                                        MPI_SUM, MPI_COMM_WORLD);
                        }).median;
  if (lead)
    std::printf(
        "W2 grads allreduce (%lld floats, %.2f MB): linum psum of the tree %.3f ms, "
        "MPI_Allreduce of one buffer %.3f ms\n",
        static_cast<long long>(count), count * 4e-6, tree_ms, mpi_ms);

  // Single arrays: algorithm bandwidth (bytes / time) of linum's psum and of MPI alone.
  if (lead)
    std::printf("%10s %16s %16s %20s   (GB/s: bytes / time, median / fastest step)\n", "bytes",
                "linum psum", "MPI_Allreduce", "MPI_Iallreduce+Test");
  for (std::int64_t bytes = 4096; bytes <= (std::int64_t(16) << 20); bytes *= 4) {
    const std::int64_t n = bytes / 4;
    Array a = linum::ones({n});
    auto ps = dist::pmap([](const Array& v) { return linum::psum(v, "devices"); });
    const Timing t_linum = time_ms(steps, [&] { Array s = ps(a); });
    std::vector<float> in(static_cast<std::size_t>(n), 1.0f), o(in.size());
    const Timing t_mpi = time_ms(steps, [&] {
      MPI_Allreduce(in.data(), o.data(), static_cast<int>(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    });
    const Timing t_nb = time_ms(steps, [&] {
      MPI_Request r;
      MPI_Iallreduce(in.data(), o.data(), static_cast<int>(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD,
                     &r);
      int done = 0;
      while (!done) MPI_Test(&r, &done, MPI_STATUS_IGNORE);
    });
    auto gbs = [&](const Timing& t) {
      char cell[32];
      std::snprintf(cell, sizeof cell, "%.2f / %.2f", bytes / (t.median * 1e-3) / 1e9,
                    bytes / (t.best * 1e-3) / 1e9);
      return std::string(cell);
    };
    if (lead)
      std::printf("%10lld %16s %16s %20s\n", static_cast<long long>(bytes), gbs(t_linum).c_str(),
                  gbs(t_mpi).c_str(), gbs(t_nb).c_str());
  }
  dist::finalize();
  return 0;
}
