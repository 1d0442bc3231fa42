// Shared helpers of the serialization tests: element values as doubles, a hand-written msgpack
// byte builder (independent of the codec under test), and an exception-message check.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <doctest/doctest.h>

#include <linum/linum.hpp>
#include <linum/nn/safetensors.hpp>
#include <linum/nn/serialization.hpp>

#include "support/testing.hpp"
#include <linum/pytree/traverse_util.hpp>

namespace ser_test {

using linum::Array;
using linum::Tree;
using Vec = std::vector<double>;

inline Vec values(const Array& a) {
  Array c = linum::astype(a, linum::float64);
  const double* p = c.data<double>();
  return Vec(p, p + c.size());
}

// Raw msgpack by the spec (github.com/msgpack/msgpack/blob/master/spec.md), big-endian lengths.
struct Mp {
  std::string b;
  Mp& u8(unsigned v) {
    b.push_back(static_cast<char>(v));
    return *this;
  }
  Mp& be(std::uint64_t v, int n) {
    for (int i = n - 1; i >= 0; --i) u8((v >> (8 * i)) & 0xff);
    return *this;
  }
  Mp& raw(std::string_view s) {
    b.append(s);
    return *this;
  }
  Mp& str(std::string_view s) {
    if (s.size() < 32)
      u8(0xa0 | s.size());
    else
      u8(0xd9).u8(s.size());
    return raw(s);
  }
  Mp& bin(std::string_view s) { return u8(0xc4).u8(s.size()).raw(s); }
  Mp& map(unsigned n) { return u8(0x80 | n); }
  Mp& arr(unsigned n) { return u8(0x90 | n); }
  Mp& uint(std::uint64_t v) {
    if (v < 128) return u8(v);
    if (v < 256) return u8(0xcc).u8(v);
    if (v < 65536) return u8(0xcd).be(v, 2);
    if (v < (1ull << 32)) return u8(0xce).be(v, 4);
    return u8(0xcf).be(v, 8);
  }
  Mp& ext(int code, std::string_view payload) {
    if (payload.size() < 256)
      u8(0xc7).u8(payload.size());
    else
      u8(0xc8).be(payload.size(), 2);
    return u8(static_cast<unsigned>(code) & 0xff).raw(payload);
  }
  // Flax's ndarray payload: (shape, dtype name, bytes).
  static std::string ndarray(const std::vector<std::uint64_t>& shape, std::string_view dtype,
                             std::string_view bytes) {
    Mp p;
    p.arr(3).arr(static_cast<unsigned>(shape.size()));
    for (auto d : shape) p.uint(d);
    p.str(dtype).bin(bytes);
    return p.b;
  }
};

template <class T>
std::string le_bytes(const std::vector<T>& v) {
  std::string s(v.size() * sizeof(T), '\0');
  if (!v.empty()) std::memcpy(s.data(), v.data(), s.size());
  return s;
}

inline std::span<const std::byte> as_bytes(const std::string& s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

// The 8-byte little-endian length that starts a safetensors file.
inline std::string le64(std::uint64_t v) {
  std::string s;
  for (int i = 0; i < 8; ++i) s.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  return s;
}

using linum::testing::check_error;

}  // namespace ser_test
