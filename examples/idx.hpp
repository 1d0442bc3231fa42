// A reader for IDX files (the MNIST / Fashion-MNIST format), gzip-compressed or plain.
// Header: two zero bytes, a type code, the rank, then big-endian int32 dims; data is big-endian.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace linum::examples {

struct Idx {
  std::uint8_t type = 0;            // 0x08 u8, 0x09 i8, 0x0B i16, 0x0C i32, 0x0D f32, 0x0E f64
  std::vector<std::int64_t> dims;   // e.g. {60000, 28, 28}
  std::vector<std::uint8_t> bytes;  // the elements, in host byte order
  std::int64_t size() const;        // number of elements
  double at(std::int64_t i) const;  // element i, whatever the type
};

// Reads path (gzip or plain); a missing, truncated or corrupt file throws linum::ValueError
// whose message names the file and what was wrong.
Idx read_idx(const std::string& path);

}  // namespace linum::examples
