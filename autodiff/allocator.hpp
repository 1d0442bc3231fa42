// The caching allocator behind Array buffers and the small objects of every op (array records,
// tracers): blocks in size classes (64-byte aligned above 128 bytes), kept after free in
// per-thread caches.
// Private to the library; memory.hpp is the public side (stats, limit, release).
#pragma once

#include <cstddef>

namespace linum::detail {

// A block of at least `bytes` bytes for an Array buffer, 64-byte aligned (16 up to 128 bytes):
// a cached block of its size class when this thread holds one, else one from the OS; nullptr
// when the OS refuses. Counted in memory_stats(). Any thread may free it (with the same bytes).
void* alloc_buffer(std::size_t bytes) noexcept;
void free_buffer(void* p, std::size_t bytes) noexcept;

// The cache limit at start-up from the value of LINUM_CACHED_MEMORY_LIMIT (memory.hpp): a byte
// count; unset or not a byte count (with a warning on stderr) is the default.
inline constexpr const char* kLimitEnv = "LINUM_CACHED_MEMORY_LIMIT";
std::size_t initial_cached_memory_limit(const char* env) noexcept;

}  // namespace linum::detail
