// parallel_for on OpenMP's thread team, the one OpenBLAS's OpenMP build runs its GEMMs on: one
// set of threads takes turns between BLAS calls and kernels instead of two pools spinning
// against each other on the same cores. Without OpenMP the parts run one after another.
#include <linum/autodiff/parallel.hpp>

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>

#include <linum/autodiff/ops/linalg.hpp>

namespace linum::detail {
namespace {

thread_local bool t_in_part = false;  // inside a part: a nested parallel_for runs inline
std::mutex g_busy;                    // one job at a time: another caller runs inline
std::atomic<bool> g_enabled{true};
std::atomic<std::uint64_t> g_jobs{0};

}  // namespace

void set_parallel_kernels(bool on) { g_enabled.store(on, std::memory_order_relaxed); }
std::uint64_t parallel_jobs() { return g_jobs.load(std::memory_order_relaxed); }
int parallel_threads() { return std::max(1, linum::num_threads()); }

void parallel_for(std::int64_t n, std::int64_t grain, std::int64_t align, RangeFn fn) {
  const std::int64_t threads = parallel_threads();
  grain = std::max<std::int64_t>(grain, 1);
  align = std::max<std::int64_t>(align, 1);
  std::unique_lock<std::mutex> lock(g_busy, std::defer_lock);
  if (threads < 2 || n < 2 * grain || t_in_part || !g_enabled.load(std::memory_order_relaxed) ||
      !lock.try_lock()) {
    if (n > 0) fn(0, n);
    return;
  }
  // A few chunks per thread, taken in turn (a thread that starts late takes fewer), none below
  // the grain, boundaries on multiples of `align`.
  const std::int64_t want = std::max(grain, (n + 4 * threads - 1) / (4 * threads));
  const std::int64_t chunk = (want + align - 1) / align * align, chunks = (n + chunk - 1) / chunk;
  g_jobs.fetch_add(1, std::memory_order_relaxed);
  std::exception_ptr error;
  std::mutex error_mutex;
#pragma omp parallel for schedule(dynamic, 1) num_threads(static_cast<int>(threads))
  for (std::int64_t i = 0; i < chunks; ++i) {
    t_in_part = true;
    try {
      fn(i * chunk, std::min(n, (i + 1) * chunk));
    } catch (...) {  // an exception must not leave an OpenMP region: rethrown below
      std::lock_guard<std::mutex> guard(error_mutex);
      if (!error) error = std::current_exception();
    }
    t_in_part = false;
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace linum::detail
