// Counts Array buffers through the caching allocator's statistics (linum::memory_stats): how
// eval_shape and lazy_init tests show that nothing input-sized was allocated. `buffer_count`
// reads the buffers handed out so far; `largest_buffer` the largest request since it was last
// set to 0 (which starts a new statistics period).
#pragma once

#include <cstddef>

#include <linum/autodiff/memory.hpp>

namespace linum::testing {

struct BufferCount {
  long load() const { return static_cast<long>(memory_stats().num_allocs); }
};
inline const BufferCount buffer_count{};

struct LargestBuffer {
  std::size_t load() const { return memory_stats().largest_alloc_size; }
  LargestBuffer& operator=(std::size_t) {
    reset_peak_memory_stats();
    return *this;
  }
};
inline LargestBuffer largest_buffer{};

}  // namespace linum::testing
