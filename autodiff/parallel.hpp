// Large elementwise kernels, the optimizers' one-pass updates and im2col on the threads set by
// linum::set_num_threads: OpenMP's team, which OpenBLAS's OpenMP build shares (parallel.cpp).
#pragma once

#include <cstdint>
#include <type_traits>

namespace linum::detail {

// A non-owning reference to a callable `void(std::int64_t begin, std::int64_t end)`.
class RangeFn {
 public:
  template <class F, class = std::enable_if_t<!std::is_same_v<std::decay_t<F>, RangeFn>>>
  RangeFn(F& f)  // NOLINT(google-explicit-constructor): only ever a parameter
      : obj_(const_cast<void*>(static_cast<const void*>(&f))),
        call_([](void* o, std::int64_t b, std::int64_t e) { (*static_cast<F*>(o))(b, e); }) {}
  void operator()(std::int64_t b, std::int64_t e) const { call_(obj_, b, e); }

 private:
  void* obj_;
  void (*call_)(void*, std::int64_t, std::int64_t);
};

// Elements below which a kernel runs on one thread: starting the team costs more than a short
// pass saves.
inline constexpr std::int64_t kParallelGrain = std::int64_t{1} << 16;

// Runs fn over [0, n) cut into contiguous chunks of at least `grain` elements (about four per
// thread of linum::num_threads()), chunk boundaries multiples of `align`, so that SIMD bodies
// and scalar tails cover the same elements as one serial pass: results are bitwise those of
// fn(0, n). Returns when every chunk ran; the first exception from a chunk is rethrown here.
// Runs fn(0, n) inline when one chunk suffices, when called from inside a chunk, or while
// another thread's parallel_for has the team.
void parallel_for(std::int64_t n, std::int64_t grain, std::int64_t align, RangeFn fn);

template <class F>
void parallel_for(std::int64_t n, F&& f, std::int64_t grain = kParallelGrain,
                  std::int64_t align = 64) {
  if (n < 2 * grain) {  // the common small case pays one comparison
    if (n > 0) f(std::int64_t{0}, n);
    return;
  }
  parallel_for(n, grain, align, RangeFn(f));
}

// The number of threads parallel_for splits over now (linum::num_threads(), at least 1).
int parallel_threads();

// Off: every kernel runs on the calling thread while BLAS keeps its threads. Benchmarks and
// tests compare the two paths with it; it is not a tuning knob.
void set_parallel_kernels(bool on);
// Jobs split over the team since the process started (tests check that the threaded path ran).
std::uint64_t parallel_jobs();

}  // namespace linum::detail
