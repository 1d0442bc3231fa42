// The IDX reader (data/idx.hpp) on small files the tests write: gzip and plain, every element
// type, and clear errors naming the file and offset for missing, truncated and corrupt input.
#include <zlib.h>

#include <cstdint>
#include <string>
#include <vector>

#include "data_testing.hpp"

namespace test_idx {

using data_test::temp_path;
using data_test::values;
using Vec = std::vector<double>;
using Bytes = std::vector<std::uint8_t>;

namespace {

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
  return data_test::message_of<linum::ValueError>([&] { linum::data::load_idx(path); });
}

}  // namespace

TEST_CASE("load_idx: a gzip uint8 file gives a uint32 array of its dims and values in order") {
  const std::string p = temp_path("u8.gz");
  Bytes b = header(0x08, {2, 3, 4});
  Vec want;
  for (int i = 0; i < 24; ++i) {
    b.push_back(static_cast<std::uint8_t>(10 * i + 3));
    want.push_back(10 * i + 3);
  }
  write_gz(p, b);
  linum::Array a = linum::data::load_idx(p);
  CHECK(a.dtype() == linum::uint32);
  CHECK(a.shape() == linum::Shape{2, 3, 4});
  CHECK(values(a) == want);
  std::filesystem::remove(p);
}

TEST_CASE(
    "load_idx: big-endian int32, int16, int8, float32 and float64 elements; plain files too") {
  using linum::data::load_idx;
  const std::string p = temp_path("i32");
  Bytes b = header(0x0C, {3});
  for (Bytes e : {Bytes{0, 0, 1, 2}, Bytes{0xFF, 0xFF, 0xFF, 0xFE}, Bytes{0x7F, 0, 0, 0}})
    b.insert(b.end(), e.begin(), e.end());
  write_plain(p, b);  // uncompressed: gzread reads it transparently
  linum::Array a = load_idx(p);
  CHECK(a.dtype() == linum::int32);
  CHECK(a.shape() == linum::Shape{3});
  CHECK(values(a) == Vec{258, -2, 2130706432.0});

  Bytes s = header(0x0B, {2});
  s.insert(s.end(), {0x01, 0x00, 0xFF, 0xFF});
  write_gz(p, s);
  CHECK(load_idx(p).dtype() == linum::int32);
  CHECK(values(load_idx(p)) == Vec{256, -1});

  Bytes c = header(0x09, {1});
  c.push_back(0xFB);
  write_gz(p, c);
  CHECK(values(load_idx(p)) == Vec{-5});

  Bytes f = header(0x0D, {1, 1});
  f.insert(f.end(), {0x3F, 0xC0, 0x00, 0x00});  // 1.5f
  write_gz(p, f);
  CHECK(load_idx(p).dtype() == linum::float32);
  CHECK(load_idx(p).shape() == linum::Shape{1, 1});
  CHECK(values(load_idx(p)) == Vec{1.5});

  Bytes d = header(0x0E, {1});
  d.insert(d.end(), {0xC0, 0x09, 0x21, 0xFB, 0x54, 0x44, 0x2D, 0x18});  // -pi as float64
  write_plain(p, d);
  CHECK(load_idx(p).dtype() == linum::float64);
  CHECK(values(load_idx(p)) == Vec{-3.141592653589793});
  std::filesystem::remove(p);
}

TEST_CASE(
    "load_idx: missing, truncated, trailing and corrupt files throw ValueError naming the file and "
    "offset") {
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
  CHECK(msg.find("at byte 17 of the decompressed data: truncated: shape (2, 3) needs 6 data bytes, "
                 "the file has 5") != std::string::npos);

  // A header cut inside the dims.
  write_gz(p, Bytes{0, 0, 8, 3, 0, 0, 0, 2, 0, 0});
  CHECK(
      error_of(p).find("at byte 10 of the decompressed data: truncated: the header of rank 3 ends "
                       "inside dimension 1") != std::string::npos);

  // More bytes than the dims promise; in a plain file, offsets are the file's.
  b.insert(b.end(), {6, 7});
  write_plain(p, b);
  CHECK(error_of(p).find("load_idx: " + p + ": at byte 18: trailing bytes") != std::string::npos);

  // Wrong magic (an unknown type code).
  write_gz(p, Bytes{0, 0, 0x42, 1, 0, 0, 0, 0});
  msg = error_of(p);
  CHECK(msg.find(p) != std::string::npos);
  CHECK(msg.find("at byte 0 of the decompressed data: not an IDX file") != std::string::npos);

  // A header whose dims multiply past any real dataset.
  write_gz(p, Bytes{0, 0, 8, 2, 0x7F, 0xFF, 0xFF, 0xFF, 0x7F, 0xFF, 0xFF, 0xFF});
  CHECK(error_of(p).find("too large to be real") != std::string::npos);

  // A gzip stream cut in half, and one with a flipped byte in the deflate data.
  Bytes big = header(0x08, {4000});
  for (int i = 0; i < 4000; ++i) big.push_back(static_cast<std::uint8_t>((i * 7919) >> 3));
  write_gz(p, big);
  Bytes gz = read_plain(p);
  write_plain(p, Bytes(gz.begin(), gz.begin() + gz.size() / 2));
  msg = error_of(p);
  CHECK(msg.find(p) != std::string::npos);
  CHECK(msg.find("load_idx") != std::string::npos);
  Bytes flipped = gz;
  flipped[gz.size() / 2] ^= 0xFF;
  write_plain(p, flipped);
  msg = error_of(p);
  CHECK(msg.find(p) != std::string::npos);
  CHECK(msg.find("gzip") != std::string::npos);
  std::filesystem::remove(p);
}

}  // namespace test_idx
