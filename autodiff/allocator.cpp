// The caching allocator (allocator.hpp, memory.hpp): size classes, lock-free per-thread caches
// of free blocks bounded by one global limit, the OS side (malloc family, so that a refused
// request is a null pointer, also under AddressSanitizer) and the statistics.
#include <linum/autodiff/allocator.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <new>

#include <linum/autodiff/array.hpp>
#include <linum/autodiff/memory.hpp>

#if defined(__SANITIZE_ADDRESS__)
#define LINUM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LINUM_ASAN 1
#endif
#endif

#ifdef LINUM_ASAN
// Cached blocks are poisoned, so that a use after free is still reported while a block waits
// for reuse; a reused block is unpoisoned only up to the requested size.
#include <sanitizer/asan_interface.h>
#define LINUM_POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#define LINUM_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define LINUM_POISON(p, n) ((void)(p), (void)(n))
#define LINUM_UNPOISON(p, n) ((void)(p), (void)(n))
#endif

namespace linum {
namespace detail {

std::size_t initial_cached_memory_limit(const char* env) noexcept {
  if (!env) return kDefaultCachedMemoryLimit;
  char* end = nullptr;
  errno = 0;
  const unsigned long long n = std::strtoull(env, &end, 10);
  if (*env < '0' || *env > '9' || *end != '\0' || errno != 0) {
    // Read before main, where an exception would only terminate: a warning, and the default.
    std::fprintf(stderr, "linum: %s=\"%s\" is not a byte count; the cache limit stays %zu\n",
                 kLimitEnv, env, kDefaultCachedMemoryLimit);
    return kDefaultCachedMemoryLimit;
  }
  return static_cast<std::size_t>(n);
}

namespace {

constexpr std::size_t kAlign = 64;  // SIMD loads and BLAS stay on their fast paths

// Size classes: 128 B (every small object), powers of two up to 4 KiB, then four per octave (at
// most 25% rounding) up to 64 GiB. Larger blocks go straight to and from the OS.
constexpr int kMinLog = 7, kPow2Log = 12, kMaxLog = 36;
constexpr std::size_t kMinBytes = std::size_t{1} << kMinLog;
constexpr int kPow2Classes = kPow2Log - kMinLog + 1;
constexpr int kClasses = kPow2Classes + (kMaxLog - kPow2Log) * 4;
constexpr std::size_t kMaxClassBytes = std::size_t{1} << kMaxLog;

constexpr std::array<std::size_t, kClasses> kClassBytes = [] {
  std::array<std::size_t, kClasses> a{};
  for (int c = 0; c < kClasses; ++c) {
    if (c < kPow2Classes) {
      a[c] = std::size_t{1} << (kMinLog + c);
    } else {
      const int k = kPow2Log + (c - kPow2Classes) / 4, q = (c - kPow2Classes) % 4 + 1;
      a[c] = (std::size_t{1} << k) + static_cast<std::size_t>(q) * (std::size_t{1} << (k - 2));
    }
  }
  return a;
}();

// The smallest class holding `bytes` (bytes <= kMaxClassBytes).
inline int class_of(std::size_t bytes) {
  if (bytes <= kMinBytes) return 0;
  const int w = std::bit_width(bytes - 1);  // 2^(w-1) < bytes <= 2^w
  if (w <= kPow2Log) return w - kMinLog;
  const int k = w - 1;
  const std::size_t step = std::size_t{1} << (k - 2);
  const auto q = static_cast<int>((bytes - (std::size_t{1} << k) + step - 1) / step);  // 1..4
  return kPow2Classes + (k - kPow2Log) * 4 + q - 1;
}

std::atomic<std::uint64_t> g_os_allocs{0}, g_os_frees{0};

// The smallest class comes from malloc (16-byte aligned), which packs the array records and
// tracers of a long tape densely; posix_memalign would space them out. Larger blocks are
// 64-byte aligned.
void* os_alloc(std::size_t bytes) noexcept {
  void* p = nullptr;
  if (bytes <= kMinBytes) {
    p = std::malloc(bytes);
  } else if (posix_memalign(&p, kAlign, bytes) != 0) {
    p = nullptr;
  }
  if (p) g_os_allocs.fetch_add(1, std::memory_order_relaxed);
  return p;
}

void os_free(void* p) noexcept {
  std::free(p);
  g_os_frees.fetch_add(1, std::memory_order_relaxed);
}

// Bytes cached by all threads; each thread adds its changes in steps of kSlack (see MemoryStats).
std::atomic<std::int64_t> g_held{0};
constexpr std::int64_t kSlack = std::int64_t{1} << 20;
// Dynamically initialized from the environment; zero (caching off) until then.
std::atomic<std::size_t> g_limit{initial_cached_memory_limit(std::getenv(kLimitEnv))};
// Bumped by release_cached_memory: a thread that sees a new value empties its cache.
std::atomic<std::uint64_t> g_epoch{0};

struct FreeStack {
  void** items;
  std::uint32_t count, capacity;
};

// Trivially destructible and zero-initialized, so that one TLS access reaches it and it stays
// readable while the thread exits. The stacks hold pointers outside the blocks, so that a
// cached block can be poisoned whole.
struct ThreadCache {
  FreeStack stacks[kClasses];
  std::int64_t published;    // bytes of this cache counted in g_held
  std::int64_t unpublished;  // the rest (may be negative): cached bytes = published + unpublished
  std::int64_t room;         // limit - g_held when last read: a free within it needs no global load
  std::uint64_t epoch;
  bool owned;  // the owner below is registered to empty the cache at thread exit
  bool gone;   // the owner ran: later blocks go straight back to the OS
};
thread_local ThreadCache t_cache{};
// Its address in initial-exec TLS: one %fs-relative load per call instead of a __tls_get_addr
// call (the shared library's general model). A pointer fits the few bytes of static TLS that
// glibc keeps for libraries loaded with dlopen; the cache itself might not.
[[gnu::tls_model("initial-exec")]] thread_local ThreadCache* t_cache_ptr = nullptr;

inline ThreadCache& this_thread_cache() {
  ThreadCache* c = t_cache_ptr;
  if (!c) [[unlikely]] {
    c = &t_cache;
    asm("" : "+r"(c));  // one general-model lookup, the first on this thread
    t_cache_ptr = c;
  }
  return *c;
}

std::int64_t limit_bytes() {
  return static_cast<std::int64_t>(
      std::min<std::size_t>(g_limit.load(std::memory_order_relaxed), INT64_MAX));
}

[[gnu::noinline]] void publish(ThreadCache& c) {
  const std::int64_t held =
      g_held.fetch_add(c.unpublished, std::memory_order_relaxed) + c.unpublished;
  c.published += c.unpublished;
  c.unpublished = 0;
  c.room = limit_bytes() - held;
}

void drain(ThreadCache& c, bool free_stacks) {
  for (int k = 0; k < kClasses; ++k) {
    FreeStack& s = c.stacks[k];
    for (std::uint32_t i = 0; i < s.count; ++i) {
      LINUM_UNPOISON(s.items[i], kClassBytes[k]);
      os_free(s.items[i]);
    }
    s.count = 0;
    if (free_stacks) {
      std::free(s.items);
      s.items = nullptr;
      s.capacity = 0;
    }
  }
  g_held.fetch_sub(c.published, std::memory_order_relaxed);
  c.published = c.unpublished = c.room = 0;
}

// A release_cached_memory since this thread last looked empties its cache.
void sync_epoch(ThreadCache& c) {
  const std::uint64_t e = g_epoch.load(std::memory_order_relaxed);
  if (c.epoch != e) {
    c.epoch = e;
    drain(c, false);
  }
}

bool grow(FreeStack& s) {
  const std::uint32_t cap = s.capacity ? 2 * s.capacity : 16;
  void* items = std::realloc(s.items, cap * sizeof(void*));
  if (!items) return false;
  s.items = static_cast<void**>(items);
  s.capacity = cap;
  return true;
}

struct CacheOwner {
  bool armed = false;
  ~CacheOwner() {
    ThreadCache& c = this_thread_cache();
    c.gone = true;
    drain(c, true);
  }
};
thread_local CacheOwner t_cache_owner;

// cached_free's rare cases: a new epoch, the room used up, a full stack, the first block of
// the thread, the thread exiting.
[[gnu::noinline]] void free_slow(ThreadCache& c, void* p, int k) {
  if (c.gone) return os_free(p);
  sync_epoch(c);
  const auto size = static_cast<std::int64_t>(kClassBytes[k]);
  c.room = limit_bytes() - g_held.load(std::memory_order_relaxed);
  FreeStack& s = c.stacks[k];
  if (c.unpublished + size > c.room || (s.count == s.capacity && !grow(s))) return os_free(p);
  if (!c.owned) {
    t_cache_owner.armed = true;  // first use constructs it, registering its destructor
    c.owned = true;
  }
  LINUM_POISON(p, size);
  s.items[s.count++] = p;
  c.unpublished += size;
  if (c.unpublished >= kSlack) publish(c);
}

// Array buffer statistics (memory_stats).
std::atomic<std::int64_t> g_in_use{0}, g_peak{0};
std::atomic<std::size_t> g_largest{0};
std::atomic<std::uint64_t> g_num_allocs{0};

// A block of at least `bytes` bytes: a cached block of the size class when this thread holds
// one, else one from the OS; nullptr when the OS refuses. Inlined into the exported entry points
// (calls between exported functions of a shared library go through the PLT).
inline void* take(std::size_t bytes) noexcept {
  if (bytes > kMaxClassBytes) return os_alloc(bytes);
  const int k = class_of(bytes);
  ThreadCache& c = this_thread_cache();
  FreeStack& s = c.stacks[k];
  if (s.count == 0) return os_alloc(kClassBytes[k]);
  void* p = s.items[--s.count];
  // After a long tape's sweep the stack of 128-byte blocks (arrays, tracers) holds a whole
  // forward pass's, long out of cache. Fetch for writing the block taken kAhead allocations from
  // now (one allocation takes less time than a fetch from memory), so that building an array
  // and its reference count there does not stall; and the stack's own entries, walked down as
  // fast, a few lines ahead. (A big buffer's first lines are not worth it.)
  constexpr int kAhead = 4, kStackAhead = 32;
  if (k == 0 && s.count >= kStackAhead) {
    const auto* next = static_cast<const char*>(s.items[s.count - kAhead]);
    __builtin_prefetch(next, 1);
    __builtin_prefetch(next + 64, 1);
    __builtin_prefetch(&s.items[s.count - kStackAhead]);
  }
  c.unpublished -= static_cast<std::int64_t>(kClassBytes[k]);
  if (c.unpublished <= -kSlack) publish(c);
  LINUM_UNPOISON(p, bytes);
  return p;
}

// Takes back a block of take(bytes), from any thread.
inline void give_back(void* p, std::size_t bytes) noexcept {
  if (!p) return;
  if (bytes > kMaxClassBytes) return os_free(p);
  const int k = class_of(bytes);
  const auto size = static_cast<std::int64_t>(kClassBytes[k]);
  ThreadCache& c = this_thread_cache();
  FreeStack& s = c.stacks[k];
  // `room` is 0 until the first slow path and after a drain (so also once the thread exits).
  if (c.epoch != g_epoch.load(std::memory_order_relaxed) || c.unpublished + size > c.room ||
      s.count == s.capacity) [[unlikely]]
    return free_slow(c, p, k);
  LINUM_POISON(p, size);
  s.items[s.count++] = p;
  c.unpublished += size;
  if (c.unpublished >= kSlack) publish(c);
}

}  // namespace

void* alloc_buffer(std::size_t bytes) noexcept {
  void* p = take(bytes);
  if (!p) return nullptr;
  g_num_allocs.fetch_add(1, std::memory_order_relaxed);
  const auto n = static_cast<std::int64_t>(bytes);
  const std::int64_t live = g_in_use.fetch_add(n, std::memory_order_relaxed) + n;
  std::int64_t peak = g_peak.load(std::memory_order_relaxed);
  while (live > peak && !g_peak.compare_exchange_weak(peak, live, std::memory_order_relaxed)) {
  }
  std::size_t big = g_largest.load(std::memory_order_relaxed);
  while (bytes > big && !g_largest.compare_exchange_weak(big, bytes, std::memory_order_relaxed)) {
  }
  return p;
}

void free_buffer(void* p, std::size_t bytes) noexcept {
  if (!p) return;
  g_in_use.fetch_sub(static_cast<std::int64_t>(bytes), std::memory_order_relaxed);
  give_back(p, bytes);
}

// The small objects of array.hpp's SmallAllocator share the allocator (its 128-byte class).
void* small_alloc(std::size_t bytes) {
  if (void* p = take(bytes)) return p;
  throw std::bad_alloc();
}

void small_free(void* p, std::size_t bytes) noexcept { give_back(p, bytes); }

}  // namespace detail

MemoryStats memory_stats() {
  using namespace detail;
  auto nonneg = [](std::int64_t v) {
    return static_cast<std::size_t>(std::max<std::int64_t>(v, 0));
  };
  MemoryStats s;
  s.bytes_in_use = nonneg(g_in_use.load(std::memory_order_relaxed));
  s.peak_bytes_in_use = nonneg(g_peak.load(std::memory_order_relaxed));
  s.largest_alloc_size = g_largest.load(std::memory_order_relaxed);
  s.num_allocs = g_num_allocs.load(std::memory_order_relaxed);
  s.bytes_cached = nonneg(g_held.load(std::memory_order_relaxed) + t_cache.unpublished);
  s.cache_limit = g_limit.load(std::memory_order_relaxed);
  s.os_allocs = g_os_allocs.load(std::memory_order_relaxed);
  s.os_frees = g_os_frees.load(std::memory_order_relaxed);
  return s;
}

void reset_peak_memory_stats() {
  detail::g_peak.store(detail::g_in_use.load());
  detail::g_largest.store(0);
}

void release_cached_memory() {
  detail::g_epoch.fetch_add(1);
  detail::sync_epoch(detail::this_thread_cache());
}

void set_cached_memory_limit(std::size_t bytes) {
  if (bytes < detail::g_limit.exchange(bytes)) release_cached_memory();
}

}  // namespace linum
