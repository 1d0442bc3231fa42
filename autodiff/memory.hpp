// Memory of Array buffers: statistics (named as jax's Device.memory_stats keys) and control of
// the caching allocator that keeps freed buffers for reuse, so that a training step in steady
// state takes no memory from the OS.
#pragma once

#include <cstddef>
#include <cstdint>

namespace linum {

struct MemoryStats {
  std::size_t bytes_in_use = 0;        // Array buffers alive now (requested sizes)
  std::size_t peak_bytes_in_use = 0;   // since the start or reset_peak_memory_stats()
  std::size_t largest_alloc_size = 0;  // largest buffer request, same period
  std::uint64_t num_allocs = 0;        // Array buffers handed out, from the cache or the OS
  // Free blocks kept for reuse by all threads; exact for one thread, otherwise within 1 MiB per
  // other thread (threads publish their count in steps, to keep atomics off the fast path).
  std::size_t bytes_cached = 0;
  std::size_t cache_limit = 0;  // set_cached_memory_limit
  // Blocks taken from / given back to the OS (malloc family): buffers and small objects.
  std::uint64_t os_allocs = 0;
  std::uint64_t os_frees = 0;
};

MemoryStats memory_stats();
// Starts a new period for peak_bytes_in_use (from bytes_in_use now) and largest_alloc_size.
void reset_peak_memory_stats();

// Gives every cached free block back to the OS: the calling thread's at once, each other
// thread's when it next frees a block (a thread's cache is lock-free, so only it touches it).
// Threads release their cache when they exit.
void release_cached_memory();

// The most memory all threads together keep cached for reuse (default 1 GiB); a freed block that
// would go over it goes back to the OS. Lowering the limit releases the caches first. 0 turns
// caching off. The environment variable LINUM_CACHED_MEMORY_LIMIT=<bytes> sets the limit at
// start-up (LINUM_CACHED_MEMORY_LIMIT=0: every buffer from and back to the OS, as without it).
void set_cached_memory_limit(std::size_t bytes);
inline constexpr std::size_t kDefaultCachedMemoryLimit = std::size_t{1} << 30;

}  // namespace linum
