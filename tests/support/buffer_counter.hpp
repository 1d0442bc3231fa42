// Array buffers are the library's only aligned heap allocations (autodiff/array.cpp), so replacing
// the aligned operator new counts them and records the largest request: how eval_shape and
// lazy_init tests show that nothing input-sized was allocated. Include it in exactly one
// translation unit of a test executable (it defines the replacement operators).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>

namespace linum::testing {
inline std::atomic<long> buffer_count{0};
inline std::atomic<std::size_t> largest_buffer{0};
}  // namespace linum::testing

void* operator new(std::size_t n, std::align_val_t al) {
  linum::testing::buffer_count.fetch_add(1, std::memory_order_relaxed);
  std::size_t prev = linum::testing::largest_buffer.load();
  while (n > prev && !linum::testing::largest_buffer.compare_exchange_weak(prev, n)) {
  }
  const auto a = static_cast<std::size_t>(al);
  void* p = std::aligned_alloc(a, (n + a - 1) / a * a);
  if (!p) throw std::bad_alloc();
  return p;
}
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
