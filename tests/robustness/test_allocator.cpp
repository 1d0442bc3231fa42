// The caching allocator behind Array buffers (autodiff/allocator.cpp): a freed block serves the
// next request of its size class without the OS, the cache limit holds, release gives the blocks
// back, blocks may be freed on any thread, and memory_stats counts what happened.
#include <doctest/doctest.h>

#include <atomic>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

#include <linum/autodiff/allocator.hpp>
#include <linum/autodiff/control_flow.hpp>
#include <linum/autodiff/memory.hpp>
#include <linum/autodiff/ops.hpp>
#include <linum/autodiff/transforms.hpp>

namespace test_allocator {

using namespace linum;

namespace {

// Each case starts and ends with empty caches and the default limit.
struct CleanCache {
  CleanCache() { reset(); }
  ~CleanCache() { reset(); }
  static void reset() {
    set_cached_memory_limit(kDefaultCachedMemoryLimit);
    release_cached_memory();
  }
};

const void* buffer_of(const Array& a) { return a.data<float>(); }

// Fills this thread's cache of small blocks (array records, control blocks), so that the
// array ops of a check need nothing new from the OS except what the check is about.
void warm_small_blocks() {
  std::vector<Array> v;
  for (int i = 0; i < 32; ++i) v.push_back(full({8}, 1.0, float32));
}

}  // namespace

TEST_CASE("a freed buffer serves the next request of its size class without the OS") {
  CleanCache clean;
  warm_small_blocks();
  const void* p = nullptr;
  {
    Array a = full({1250}, 7.0, float32);  // 5000 bytes: the 5120-byte class
    p = buffer_of(a);
  }
  const MemoryStats s0 = memory_stats();
  Array b = full({1280}, 2.0, float32);  // 5120 bytes: the same class
  CHECK(buffer_of(b) == p);
  CHECK(memory_stats().os_allocs == s0.os_allocs);
  CHECK(b.data<float>()[0] == 2.0f);
  CHECK(b.data<float>()[1279] == 2.0f);
  Array c = full({1281}, 3.0, float32);  // 5124 bytes: the next class, a new block
  CHECK(buffer_of(c) != p);
  CHECK(memory_stats().os_allocs == s0.os_allocs + 1);
}

TEST_CASE("the cache keeps at most its limit and gives the rest back to the OS") {
  CleanCache clean;
  constexpr std::size_t kLimit = std::size_t{1} << 20, kBlock = 65536;
  set_cached_memory_limit(kLimit);
  const MemoryStats s0 = memory_stats();
  {
    std::vector<Array> v;
    for (int i = 0; i < 40; ++i) v.push_back(zeros({kBlock / 4}));  // 40 x 64 KiB
  }
  const MemoryStats s1 = memory_stats();
  CHECK(s1.cache_limit == kLimit);
  CHECK(s1.bytes_cached <= kLimit);
  CHECK(s1.bytes_cached + kBlock > kLimit);  // filled up to the limit, not emptied
  CHECK(s1.os_frees - s0.os_frees >= 40 - kLimit / kBlock);

  set_cached_memory_limit(0);  // caching off: every freed block goes back at once
  CHECK(memory_stats().bytes_cached == 0);
  const MemoryStats s2 = memory_stats();
  { Array a = zeros({kBlock / 4}); }
  CHECK(memory_stats().bytes_cached == 0);
  CHECK(memory_stats().os_frees > s2.os_frees);
}

TEST_CASE("release_cached_memory gives every cached block back to the OS") {
  CleanCache clean;
  {
    std::vector<Array> v;
    for (int i = 0; i < 10; ++i) v.push_back(zeros({16384}));
  }
  const MemoryStats s1 = memory_stats();
  CHECK(s1.bytes_cached >= 10 * 65536);
  release_cached_memory();
  const MemoryStats s2 = memory_stats();
  CHECK(s2.bytes_cached == 0);
  CHECK(s2.os_frees - s1.os_frees >= 10);
  Array a = zeros({16384});  // nothing cached: from the OS again
  CHECK(memory_stats().os_allocs > s2.os_allocs);
}

TEST_CASE("a buffer may be freed on another thread than the one that allocated it") {
  CleanCache clean;
  // Made here, freed on a worker: the worker caches it and gives it back at its exit.
  Array a = full({4096}, 3.0, float32);
  const MemoryStats s0 = memory_stats();
  std::thread([moved = std::move(a)]() mutable {
    const float last = moved.data<float>()[4095];
    moved = Array();
    CHECK(last == 3.0f);
  }).join();
  CHECK(memory_stats().os_frees > s0.os_frees);

  // Made on a worker, freed here: the block joins this thread's cache and is reused here.
  Array b;
  std::thread([&b] { b = full({4096}, 5.0, float32); }).join();
  const void* p = buffer_of(b);
  CHECK(b.data<float>()[4095] == 5.0f);
  warm_small_blocks();
  b = Array();
  Array c = full({4096}, 1.0, float32);
  CHECK(buffer_of(c) == p);
  CHECK(c.data<float>()[4095] == 1.0f);
}

TEST_CASE("two threads exchanging arrays get correct values and lose no block") {
  CleanCache clean;
  const std::size_t in_use = memory_stats().bytes_in_use;
  std::mutex m;
  std::vector<Array> box;  // arrays made by one thread, checked and freed by the other
  auto work = [&](float base) {
    for (int i = 0; i < 300; ++i) {
      Array mine = full({257 + i}, base + static_cast<float>(i), float32) * 2.0f;
      Array theirs;
      {
        std::lock_guard<std::mutex> lock(m);
        box.push_back(mine);
        if (box.size() > 1) {
          theirs = box.front();
          box.erase(box.begin());
        }
      }
      if (theirs.valid()) {
        const float* d = theirs.data<float>();
        CHECK(d[0] == d[theirs.size() - 1]);
      }
    }
  };
  std::thread t1(work, 0.0f), t2(work, 1000.0f);
  t1.join();
  t2.join();
  box.clear();
  CHECK(memory_stats().bytes_in_use == in_use);  // every buffer of the exchange was freed
}

TEST_CASE("threads reusing blocks of the same classes at once never share a live block") {
  CleanCache clean;
  // Each thread keeps a window of live arrays filled with its own value and checks every element
  // of every one after each step: a block handed to both threads, or handed out while still
  // live, would show the other writer's value.
  std::atomic<int> bad{0};
  auto work = [&bad](float base) {
    std::vector<std::pair<Array, float>> live;
    for (int i = 0; i < 400; ++i) {
      const float v = base + static_cast<float>(i);
      live.emplace_back(full({200 + (i % 7) * 300}, v, float32), v);
      if (live.size() > 5) live.erase(live.begin() + (i % 5));
      for (const auto& [a, want] : live) {
        const float* d = a.data<float>();
        for (std::int64_t j = 0; j < a.size(); ++j)
          if (d[j] != want) ++bad;
      }
    }
  };
  const MemoryStats s0 = memory_stats();
  std::thread t1(work, 0.0f), t2(work, 100000.0f);
  t1.join();
  t2.join();
  CHECK(bad.load() == 0);
  // 800 buffers and their records, mostly from the threads' caches.
  CHECK(memory_stats().os_allocs - s0.os_allocs < 200);
}

TEST_CASE("LINUM_CACHED_MEMORY_LIMIT sets the start-up limit; a bad value keeps the default") {
  CHECK(detail::initial_cached_memory_limit(nullptr) == kDefaultCachedMemoryLimit);
  CHECK(detail::initial_cached_memory_limit("0") == 0);
  CHECK(detail::initial_cached_memory_limit("1048576") == 1048576);
  CHECK(detail::initial_cached_memory_limit("1e9") == kDefaultCachedMemoryLimit);
  CHECK(detail::initial_cached_memory_limit("-1") == kDefaultCachedMemoryLimit);
  CHECK(detail::initial_cached_memory_limit("") == kDefaultCachedMemoryLimit);
  CHECK(detail::initial_cached_memory_limit("99999999999999999999999") ==
        kDefaultCachedMemoryLimit);
}

#if defined(__SANITIZE_ADDRESS__)
TEST_CASE("under AddressSanitizer a cached block is poisoned until reused, and beyond the request") {
  CleanCache clean;
  warm_small_blocks();
  const char* p = nullptr;
  {
    Array a = full({1250}, 7.0, float32);  // 5000 bytes of a 5120-byte block
    p = static_cast<const char*>(buffer_of(a));
    CHECK(__asan_address_is_poisoned(p) == 0);
    CHECK(__asan_address_is_poisoned(p + 4999) == 0);
  }
  // Freed and cached: any access is a use-after-poison report.
  CHECK(__asan_address_is_poisoned(p) == 1);
  CHECK(__asan_address_is_poisoned(p + 5119) == 1);
  Array b = full({1200}, 1.0, float32);  // 4800 bytes: the same block, open up to 4800 only
  REQUIRE(static_cast<const char*>(buffer_of(b)) == p);
  CHECK(__asan_address_is_poisoned(p + 4799) == 0);
  CHECK(__asan_address_is_poisoned(p + 4800) == 1);
}
#endif

TEST_CASE("memory_stats counts Array buffers: allocations, bytes in use, peak, largest") {
  CleanCache clean;
  const MemoryStats s0 = memory_stats();
  reset_peak_memory_stats();
  {
    Array a = zeros({64, 64});  // 16 KiB
    const MemoryStats s1 = memory_stats();
    CHECK(s1.num_allocs == s0.num_allocs + 1);
    CHECK(s1.bytes_in_use == s0.bytes_in_use + 16384);
    CHECK(s1.largest_alloc_size == 16384);
  }
  const MemoryStats s2 = memory_stats();
  CHECK(s2.bytes_in_use == s0.bytes_in_use);
  CHECK(s2.peak_bytes_in_use == s0.bytes_in_use + 16384);
  Array tiny = zeros({2});  // inline in the array record: no buffer
  CHECK(memory_stats().num_allocs == s2.num_allocs);
}

TEST_CASE("a finished grad keeps no array alive: the tape's reused vectors are emptied") {
  const Array x = linum::full({256, 256}, 0.5);
  auto f = [](const Array& a) { return linum::sum(linum::tanh(a * a) * linum::exp(a)); };
  const std::size_t before = linum::memory_stats().bytes_in_use;
  for (int i = 0; i < 3; ++i) {
    Array g = linum::grad(f)(x);
    // Nested tapes (grad of grad) take and return reused vectors too.
    Array h = linum::grad([&](const Array& a) { return linum::sum(linum::grad(f)(a)); })(x);
    CHECK(g.shape() == x.shape());
    CHECK(h.shape() == x.shape());
  }
  CHECK(linum::memory_stats().bytes_in_use == before);
  // A tape reused after a larger one starts empty: the same gradient on every call.
  const double g0 = linum::grad([](const Array& a) { return linum::sum(a * a); })(Array(3.0)).item<double>();
  CHECK(g0 == 6.0);
}

TEST_CASE("the tape keeps only what backward reads: a Dense+tanh chain holds one activation per layer") {
  // 16 x (matmul + bias + tanh) on 256x128 float32: matmul's and add's outputs are read by no VJP
  // rule (tanh's reads its output), so the tape keeps one 128 KiB activation per layer, not three.
  constexpr int kLayers = 16;
  const std::size_t act = 256 * 128 * sizeof(float);
  std::vector<Array> ws, bs;
  for (int i = 0; i < kLayers; ++i) {
    ws.push_back(linum::full({128, 128}, 0.01f));
    bs.push_back(linum::full({128}, 0.1f));
  }
  const Array x = linum::full({256, 128}, 0.5f);
  auto f = [&](const Array& x0) {
    Array h = x0;
    for (int i = 0; i < kLayers; ++i) h = linum::tanh(linum::matmul(h, ws[i]) + bs[i]);
    return linum::sum(h);
  };
  Array g0 = linum::grad(f)(x);  // warm-up: the same buffers each time
  const std::size_t base = linum::memory_stats().bytes_in_use;
  linum::reset_peak_memory_stats();
  Array g = linum::grad(f)(x);
  const std::size_t extra = linum::memory_stats().peak_bytes_in_use - base;
  INFO("extra peak " << extra / 1024 << " KiB, one activation " << act / 1024 << " KiB");
  CHECK(extra <= (kLayers + 6) * act);
  CHECK(linum::max(linum::abs(g - g0)).item<float>() == 0.0f);
}

TEST_CASE(
    "grad of a scan over stacked params frees each layer's residuals once backward used them") {
  // 16 x (Dense(64) + tanh) on a 128x64 batch, scanned over W (16,64,64) and b (16,64). The tape
  // keeps one activation per layer; backward frees them as it passes, so they are not all alive
  // when the stacked cotangent of W is built (16 slices + the stacked result, 2 x 16 W's).
  constexpr int kLayers = 16, kWidth = 64, kBatch = 128;
  const std::size_t act = kBatch * kWidth * sizeof(float), w = kWidth * kWidth * sizeof(float);
  static_assert(2 * kWidth <= kBatch, "the stacked cotangent of W must fit in the activations");
  using Layer = std::pair<Array, Array>;
  const Array ws = linum::sin(linum::reshape(linum::arange(kLayers * kWidth * kWidth, float32),
                                             {kLayers, kWidth, kWidth})) *
                   0.1;
  const Array bs = linum::full({kLayers, kWidth}, 0.1f);
  const Array x =
      linum::cos(linum::reshape(linum::arange(kBatch * kWidth, float32), {kBatch, kWidth}));
  auto f = [&](const Layer& p) {
    auto step = [](const Array& h, const Layer& wb) {
      return std::make_pair(linum::tanh(linum::matmul(h, wb.first) + wb.second), std::nullopt);
    };
    return linum::sum(linum::scan(step, x, p).first);
  };
  Layer g0 = linum::grad(f)(Layer(ws, bs));  // warm-up: the same buffers each time
  const std::size_t base = linum::memory_stats().bytes_in_use;
  linum::reset_peak_memory_stats();
  Layer g = linum::grad(f)(Layer(ws, bs));
  const std::size_t extra = linum::memory_stats().peak_bytes_in_use - base;
  // Kept all through backward, the activations alone plus the stacking would be
  // kLayers * act + 2 * kLayers * w; freed as used, a few working activations remain at most.
  INFO("extra peak " << extra / 1024 << " KiB, one activation " << act / 1024 << " KiB, one W "
                     << w / 1024 << " KiB");
  CHECK(extra <= (kLayers + 4) * act);
  CHECK(extra < kLayers * act + 2 * kLayers * w);
  CHECK(linum::max(linum::abs(g.first - g0.first)).item<float>() == 0.0f);
  // Against the unrolled chain with one array per layer: the same products, so the same bits.
  std::vector<Array> wl, bl;
  for (int i = 0; i < kLayers; ++i) {
    wl.push_back(linum::reshape(linum::slice(ws, {{i, i + 1}}), {kWidth, kWidth}));
    bl.push_back(linum::reshape(linum::slice(bs, {{i, i + 1}}), {kWidth}));
  }
  auto unrolled = [&](const std::vector<Array>& wv, const std::vector<Array>& bv) {
    Array h = x;
    for (int i = 0; i < kLayers; ++i) h = linum::tanh(linum::matmul(h, wv[i]) + bv[i]);
    return linum::sum(h);
  };
  auto [gw, gb] = linum::grad(unrolled, linum::argnums<0, 1>)(wl, bl);
  CHECK(linum::max(linum::abs(g.first - linum::stack(gw))).item<float>() == 0.0f);
  CHECK(linum::max(linum::abs(g.second - linum::stack(gb))).item<float>() == 0.0f);
  // vjp's pullback may run again, so its tape keeps the residuals: twice the same gradient.
  auto [y, pull] = linum::vjp(f, Layer(ws, bs));
  for (int k = 0; k < 2; ++k)
    CHECK(linum::max(linum::abs(std::get<0>(pull(linum::ones_like(y))).first - g.first))
              .item<float>() == 0.0f);
}

}  // namespace test_allocator
