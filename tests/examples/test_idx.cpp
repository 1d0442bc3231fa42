// The IDX reader (examples/idx.hpp) on small files the tests write: gzip and plain, every
// element type, and clear errors naming the file for missing, truncated and corrupt input.
#include <doctest/doctest.h>
#include <zlib.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <linum/error.hpp>

#include "idx.hpp"

using linum::examples::Idx;
using linum::examples::read_idx;
using Bytes = std::vector<std::uint8_t>;

namespace {

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("linum_test_idx_" + name)).string();
}

void write_gz(const std::string& path, const Bytes& b) {
  gzFile f = gzopen(path.c_str(), "wb");
  REQUIRE(f != nullptr);
  REQUIRE(gzwrite(f, b.data(), static_cast<unsigned>(b.size())) == static_cast<int>(b.size()));
  REQUIRE(gzclose(f) == Z_OK);
}

void write_plain(const std::string& path, const Bytes& b) {
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(b.data()), b.size());
}

Bytes read_plain(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), {});
}

// An IDX header: 0 0 type rank, then big-endian dims.
Bytes header(std::uint8_t type, const std::vector<std::uint32_t>& dims) {
  Bytes b{0, 0, type, static_cast<std::uint8_t>(dims.size())};
  for (auto d : dims)
    for (int s = 24; s >= 0; s -= 8) b.push_back(static_cast<std::uint8_t>(d >> s));
  return b;
}

std::string error_of(const std::string& path) {
  try {
    read_idx(path);
  } catch (const linum::ValueError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("read_idx: a gzip u8 file gives its type, dims and values in order") {
  const std::string p = temp_path("u8.gz");
  Bytes b = header(0x08, {2, 3, 4});
  for (int i = 0; i < 24; ++i) b.push_back(static_cast<std::uint8_t>(10 * i + 3));
  write_gz(p, b);
  Idx idx = read_idx(p);
  CHECK(idx.type == 0x08);
  CHECK(idx.dims == std::vector<std::int64_t>{2, 3, 4});
  CHECK(idx.size() == 24);
  REQUIRE(idx.bytes.size() == 24);
  for (int i = 0; i < 24; ++i) CHECK(idx.at(i) == 10 * i + 3);
  CHECK(idx.bytes[23] == 233);
  std::filesystem::remove(p);
}

TEST_CASE("read_idx: big-endian int32, int16, int8 and float32 elements; plain files too") {
  const std::string p = temp_path("i32");
  Bytes b = header(0x0C, {3});
  for (Bytes e : {Bytes{0, 0, 1, 2}, Bytes{0xFF, 0xFF, 0xFF, 0xFE}, Bytes{0x7F, 0, 0, 0}})
    b.insert(b.end(), e.begin(), e.end());
  write_plain(p, b);  // uncompressed: gzread reads it transparently
  Idx idx = read_idx(p);
  CHECK(idx.dims == std::vector<std::int64_t>{3});
  CHECK(idx.at(0) == 258);
  CHECK(idx.at(1) == -2);
  CHECK(idx.at(2) == 2130706432.0);

  Bytes s = header(0x0B, {2});
  s.insert(s.end(), {0x01, 0x00, 0xFF, 0xFF});
  write_gz(p, s);
  CHECK(read_idx(p).at(0) == 256);
  CHECK(read_idx(p).at(1) == -1);

  Bytes c = header(0x09, {1});
  c.push_back(0xFB);
  write_gz(p, c);
  CHECK(read_idx(p).at(0) == -5);

  Bytes f = header(0x0D, {1, 1});
  f.insert(f.end(), {0x3F, 0xC0, 0x00, 0x00});  // 1.5f
  write_gz(p, f);
  CHECK(read_idx(p).at(0) == 1.5);
  std::filesystem::remove(p);
}

TEST_CASE(
    "read_idx: missing, truncated, trailing and corrupt files throw ValueError naming the file") {
  const std::string p = temp_path("bad.gz");
  std::filesystem::remove(p);
  std::string msg = error_of(p);
  CHECK(msg.find(p) != std::string::npos);
  CHECK(msg.find("cannot open") != std::string::npos);

  // Fewer data bytes than the dims promise.
  Bytes b = header(0x08, {2, 3});
  b.insert(b.end(), {1, 2, 3, 4, 5});
  write_gz(p, b);
  msg = error_of(p);
  CHECK(msg.find(p) != std::string::npos);
  CHECK(msg.find("truncated: expected 6 data bytes, got 5") != std::string::npos);

  // A header cut inside the dims.
  write_gz(p, Bytes{0, 0, 8, 3, 0, 0, 0, 2, 0, 0});
  CHECK(error_of(p).find("truncated: header of rank 3 ends at dim 1") != std::string::npos);

  // More bytes than the dims promise.
  b.insert(b.end(), {6, 7});
  write_gz(p, b);
  CHECK(error_of(p).find("trailing bytes") != std::string::npos);

  // Wrong magic (an unknown type code).
  write_gz(p, Bytes{0, 0, 0x42, 1, 0, 0, 0, 0});
  msg = error_of(p);
  CHECK(msg.find(p) != std::string::npos);
  CHECK(msg.find("not an IDX file") != std::string::npos);

  // A gzip stream cut in half, and one with a flipped byte in the deflate data.
  Bytes big = header(0x08, {4000});
  for (int i = 0; i < 4000; ++i) big.push_back(static_cast<std::uint8_t>((i * 7919) >> 3));
  write_gz(p, big);
  Bytes gz = read_plain(p);
  write_plain(p, Bytes(gz.begin(), gz.begin() + gz.size() / 2));
  msg = error_of(p);
  CHECK(msg.find(p) != std::string::npos);
  CHECK(msg.find("read_idx") != std::string::npos);
  Bytes flipped = gz;
  flipped[gz.size() / 2] ^= 0xFF;
  write_plain(p, flipped);
  msg = error_of(p);
  CHECK(msg.find(p) != std::string::npos);
  CHECK(msg.find("gzip") != std::string::npos);
  std::filesystem::remove(p);
}
