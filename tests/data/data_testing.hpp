// Shared helpers of the data tests: scratch files, and .npy images built by hand from the format's
// description (numpy/lib/format.py), independent of the writer under test.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include <doctest/doctest.h>

#include <linum/data/data.hpp>
#include <linum/linum.hpp>

#include "support/testing.hpp"

namespace data_test {

using linum::Array;
using linum::testing::check_error;
using linum::testing::message_of;
using linum::testing::values;
using Vec = std::vector<double>;

inline std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("linum_test_data_" + name)).string();
}

inline void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  REQUIRE(f.good());
}

inline std::string read_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  REQUIRE(f.good());
  return std::string(std::istreambuf_iterator<char>(f), {});
}

// Little-endian integer bytes.
inline std::string le(std::uint64_t v, int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += static_cast<char>((v >> (8 * i)) & 0xFF);
  return s;
}

// A .npy image: magic, version (major, 0), header length, then `header` padded with spaces and a
// newline to a multiple of 64 bytes (as numpy pads), then `data`.
inline std::string npy_image(const std::string& header, const std::string& data, int major = 1) {
  const std::size_t len_bytes = major == 1 ? 2 : 4, prefix = 8 + len_bytes;
  std::string h = header;
  while ((prefix + h.size() + 1) % 64 != 0) h += ' ';
  h += '\n';
  return std::string("\x93NUMPY", 6) + static_cast<char>(major) + '\0' +
         le(h.size(), static_cast<int>(len_bytes)) + h + data;
}

}  // namespace data_test
