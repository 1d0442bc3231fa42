// .npy reading and writing on images built by hand from the format's description: every dtype
// and byte order, Fortran order, header versions, and hostile files, whose errors name the
// source and the byte offset. (numpy_interop.py checks the same against numpy itself.)
#include <cstring>

#include "data_testing.hpp"

namespace test_npy {

namespace data = linum::data;
using namespace data_test;
using linum::DType;

namespace {

std::span<const std::byte> span_of(const std::string& s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

Array decode(const std::string& image) { return data::decode_npy(span_of(image), "img"); }

std::string header(const std::string& descr, const std::string& shape, bool fortran = false) {
  return "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") +
         ", 'shape': " + shape + ", }";
}

template <class T>
std::string raw(std::initializer_list<T> v) {
  std::string s(v.size() * sizeof(T), '\0');
  std::memcpy(s.data(), std::data(v), s.size());
  return s;
}

// The bytes of `s` reversed in groups of n: a little-endian buffer made big-endian.
std::string swap_bytes(std::string s, std::size_t n) {
  for (std::size_t i = 0; i < s.size(); i += n) std::reverse(s.begin() + i, s.begin() + i + n);
  return s;
}

}  // namespace

TEST_CASE("encode_npy: numpy's layout (magic, version 1.0, padded dict header, raw data)") {
  Array a = linum::array<float>({{1, 2, 3}, {4, 5, 6}});
  const std::string b = data::encode_npy(a);
  // numpy 1.24's _write_array_header: the dict, then 21 - len("2") spaces of room to grow the
  // first axis, then spaces and '\n' up to a multiple of 64 bytes; 10 + 118 = 128.
  const std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  REQUIRE(b.size() == 128 + 24);
  CHECK(b.substr(0, 8) == std::string("\x93NUMPY\x01\x00", 8));
  CHECK(b.substr(8, 2) == le(118, 2));
  CHECK(b.substr(10, dict.size()) == dict);
  CHECK(b.substr(10 + dict.size(), 127 - 10 - dict.size()) ==
        std::string(127 - 10 - dict.size(), ' '));
  CHECK(b[127] == '\n');
  CHECK(b.substr(128) == raw<float>({1, 2, 3, 4, 5, 6}));
  // A scalar has shape () and no growth room; a 1-D shape prints as '(3,)'.
  CHECK(data::encode_npy(Array(2.5)).find("'shape': (), }") != std::string::npos);
  CHECK(data::encode_npy(linum::array<std::int32_t>({1, 2, 3}))
            .find("'<i4', 'fortran_order': False, 'shape': (3,), }") != std::string::npos);
  CHECK(data::encode_npy(linum::array<std::uint32_t>({1})).find("'<u4'") != std::string::npos);
  // Rank 14, shape (1, 10, 10, 1, ...): 10 + 50 + len("(1, 10, 10, 1, ..., 1)") 44 + 3 + 20 + 1
  // = 128 bytes before padding, and numpy then pads a whole block of 64 (never 0): data at 192.
  linum::Shape wide = {1, 10, 10};
  wide.resize(14, 1);
  const std::string w = data::encode_npy(linum::zeros(wide));
  CHECK(w.size() == 192 + 400);
  CHECK(w.substr(8, 2) == le(182, 2));
  CHECK(data::encode_npy(linum::array<bool>({true})).find("'|b1'") != std::string::npos);
  CHECK(data::encode_npy(linum::array<double>({1})).find("'<f8'") != std::string::npos);
}

TEST_CASE("decode_npy(encode_npy(a)) gives a back for every dtype and shape") {
  const std::vector<Array> arrays = {
      linum::array<float>({{1.5f, -2.25f, 3}, {4, 5, 6e-8f}}),
      linum::array<double>({1e300, -0.0, 3.25}),
      linum::reshape(linum::arange(24, linum::int32) - 12, {2, 3, 4}),
      linum::array<std::uint32_t>({0u, 4000000000u, 7u}),
      linum::array<bool>({true, false, true}),
      Array(2.5f),
      linum::zeros({0}),
      linum::zeros({0, 3}, linum::int32),
  };
  for (const Array& a : arrays) {
    CAPTURE(linum::repr(a));
    Array b = decode(data::encode_npy(a));
    CHECK(b.dtype() == a.dtype());
    CHECK(b.shape() == a.shape());
    CHECK(values(b) == values(a));
  }
}

TEST_CASE("decode_npy: byte orders, narrow and wide dtypes convert exactly to linum's") {
  // Big-endian float32 and float64.
  CHECK(values(decode(npy_image(header(">f4", "(3,)"), swap_bytes(raw<float>({1.5f, -2, 0.25f}),
                                                                  4)))) == Vec{1.5, -2, 0.25});
  CHECK(values(decode(npy_image(header(">f8", "(2,)"), swap_bytes(raw<double>({1e-300, 7}), 8)))) ==
        Vec{1e-300, 7});
  // float16 (1.5 is 0x3E00, -2 is 0xC000) stays float16; '=' is the native order.
  Array h = decode(npy_image(header("<f2", "(2,)"), raw<std::uint16_t>({0x3E00, 0xC000})));
  CHECK(h.dtype() == linum::float16);
  CHECK(values(h) == Vec{1.5, -2});
  CHECK(values(decode(npy_image(header("=i2", "(2,)"), raw<std::int16_t>({-300, 300})))) ==
        Vec{-300, 300});
  // 8- and 16-bit integers widen: int8 -> int32, uint8 / big-endian uint16 -> uint32.
  Array i8 = decode(npy_image(header("|i1", "(2,)"), raw<std::int8_t>({-5, 7})));
  CHECK(i8.dtype() == linum::int32);
  CHECK(values(i8) == Vec{-5, 7});
  Array u8 = decode(npy_image(header("|u1", "(2,)"), raw<std::uint8_t>({255, 3})));
  CHECK(u8.dtype() == linum::uint32);
  CHECK(values(u8) == Vec{255, 3});
  CHECK(values(decode(npy_image(header(">u2", "(1,)"), std::string("\x12\x34", 2)))) ==
        Vec{0x1234});
  // int64 -> int32 when every value fits (big-endian here); uint64 -> uint32 likewise.
  Array i64 =
      decode(npy_image(header(">i8", "(2,)"), swap_bytes(raw<std::int64_t>({-7, 1 << 30}), 8)));
  CHECK(i64.dtype() == linum::int32);
  CHECK(values(i64) == Vec{-7, 1 << 30});
  CHECK(values(decode(npy_image(header("<u8", "(1,)"), raw<std::uint64_t>({4000000000u})))) ==
        Vec{4000000000.0});
  // bool: any nonzero byte is True, as numpy reads it.
  Array b = decode(npy_image(header("|b1", "(3,)"), std::string("\x00\x02\x01", 3)));
  CHECK(b.dtype() == linum::bool_);
  CHECK(values(b) == Vec{0, 1, 1});
  // An int64 value outside int32 is an error naming the element and the data's offset.
  check_error<linum::ValueError>(
      [&] {
        decode(npy_image(header("<i8", "(2,)"), raw<std::int64_t>({1, std::int64_t{1} << 40})));
      },
      {"decode_npy: img: at byte 128", "element 1", "1099511627776", "does not fit"});
}

TEST_CASE("decode_npy: Fortran order is transposed into C order, also with a byte swap") {
  // x = [[0, 1, 2], [3, 4, 5]] stored column by column: 0 3 1 4 2 5.
  Array x = decode(npy_image(header("<i4", "(2, 3)", true), raw<std::int32_t>({0, 3, 1, 4, 2, 5})));
  CHECK(x.shape() == linum::Shape{2, 3});
  CHECK(values(x) == Vec{0, 1, 2, 3, 4, 5});
  // 3-D, big-endian float64: element (i, j, k) = 100 i + 10 j + k, Fortran index i + 2 j + 6 k.
  std::vector<double> column_major(2 * 3 * 4);
  Vec row_major;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) {
        column_major[i + 2 * j + 6 * k] = 100 * i + 10 * j + k;
        row_major.push_back(100 * i + 10 * j + k);
      }
  std::string bytes(column_major.size() * 8, '\0');
  std::memcpy(bytes.data(), column_major.data(), bytes.size());
  Array y = decode(npy_image(header(">f8", "(2, 3, 4)", true), swap_bytes(bytes, 8)));
  CHECK(y.shape() == linum::Shape{2, 3, 4});
  CHECK(values(y) == row_major);
  // A 1-D Fortran array is its C array.
  CHECK(values(decode(npy_image(header("<f4", "(2,)", true), raw<float>({1, 2})))) == Vec{1, 2});
}

TEST_CASE("decode_npy: header versions 2.0 and 3.0, and the dict literal's variations") {
  for (int major : {2, 3}) {
    Array a = decode(npy_image(header("<f4", "(2,)"), raw<float>({1, 2}), major));
    CHECK(values(a) == Vec{1, 2});
  }
  // Any key order, double quotes, no trailing comma, extra spaces, Python 2's 3L.
  CHECK(values(decode(npy_image("{ \"shape\" : (2L,) , 'fortran_order':False,'descr':\"<i4\"}",
                                raw<std::int32_t>({5, 6})))) == Vec{5, 6});
  CHECK(decode(npy_image(header("<f4", "()"), raw<float>({3}))).shape() == linum::Shape{});
  CHECK(decode(npy_image(header("<f4", "(0, 5)"), "")).shape() == linum::Shape{0, 5});
}

TEST_CASE("decode_npy: truncated, wrong magic and corrupt headers name the source and offset") {
  const std::string good = npy_image(header("<f4", "(2, 3)"), raw<float>({1, 2, 3, 4, 5, 6}));
  // Every prefix of a valid file is an error naming the source and a byte offset.
  for (std::size_t n = 0; n < good.size(); ++n) {
    CAPTURE(n);
    check_error<linum::ValueError>([&] { decode(good.substr(0, n)); },
                                   {"decode_npy: img: at byte ", "truncated"});
  }
  check_error<linum::ValueError>(
      [&] { decode(good.substr(0, 100)); },
      {"at byte 100", "header of 118 bytes from byte 10 runs past the end"});
  check_error<linum::ValueError>(
      [&] { decode(good.substr(0, 140)); },
      {"at byte 140", "needs 24 data bytes from byte 128, only 12 follow"});
  check_error<linum::ValueError>([&] { decode(good + "xy"); },
                                 {"at byte 152", "2 bytes after the 24 data bytes"});
  std::string magic = good;
  magic[1] = 'M';
  check_error<linum::ValueError>([&] { decode(magic); },
                                 {"at byte 0", "not a .npy file", "\\x93MUMPY"});
  std::string version = good;
  version[6] = 4;
  check_error<linum::ValueError>([&] { decode(version); },
                                 {"at byte 6", "unsupported .npy format version 4.0"});

  struct Bad {
    std::string header, part;
  };
  const std::vector<Bad> bad = {
      {"['descr']", "at byte 10: bad .npy header: expected '{'"},
      {"{'descr': '<f4', 'shape': (6,)}", "the key 'fortran_order' is missing"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (6,), 'x': 1}",
       "at byte 66: bad .npy header: unexpected key 'x'"},
      {"{'descr': '<f4', 'descr': '<f4'}", "the key 'descr' appears twice"},
      {header("<f4", "(6)"), "the shape must be a tuple"},
      {header("<f4", "(-6,)"), "negative dimension"},
      {header("<f4", "(6, x)"), "expected a dimension"},
      {"{'descr': '<f4', 'fortran_order': 0, 'shape': (6,)}", "must be True or False"},
      {header("<f4", "(6,)") + "x", "unexpected 'x  "},
      {"{'descr': '<f4", "unterminated string"},
      {"{'descr': '<f\\x34'}", "escape sequences"},
      {header("<f4", "(99999999999999999999,)"), "does not fit in 64 bits"},
      {header("<f4", "(4294967296, 4294967296)"), "needs more than 2^64 bytes"},
      // Empty, but numpy refuses it too ("array is too big"), and as int32 it would not read back.
      {header("<i2", "(7766279631493345150, 0, 200)"), "needs more than 2^64 bytes"},
      {header("<f4", "(6,)").substr(0, 50), "expected"},
  };
  for (const Bad& b : bad) {
    CAPTURE(b.header);
    const std::string msg = message_of<linum::ValueError>([&] {
      decode(npy_image(b.header, raw<float>({1, 2, 3, 4, 5, 6})));
    });
    CHECK(msg.find("decode_npy: img: at byte ") == 0);
    CHECK(msg.find(b.part) != std::string::npos);
  }
  std::string rank = "(";
  for (int i = 0; i < 65; ++i) rank += "1, ";
  check_error<linum::ValueError>([&] { decode(npy_image(header("<f4", rank + ")"), "")); },
                                 {"more than 64 dimensions"});
}

TEST_CASE("decode_npy: dtypes linum cannot hold are NotImplementedErrors naming the dtype") {
  struct Case {
    std::string descr, what;
  };
  for (const Case& c : std::vector<Case>{{"<U3", "Unicode strings"},
                                         {"|S4", "byte strings"},
                                         {"|O", "Python objects"},
                                         {"<c8", "complex numbers"},
                                         {"|V2", "raw void bytes"},
                                         {"<M8[ns]", "datetime64"},
                                         {"<f16", "extended precision"},
                                         {"<i3", "not a numpy dtype string"},
                                         {"float32", "not a numpy dtype string"}}) {
    CAPTURE(c.descr);
    check_error<linum::NotImplementedError>(
        [&] { decode(npy_image(header(c.descr, "(1,)"), std::string(16, '\0'))); },
        {"decode_npy: img: at byte 20", "dtype '" + c.descr + "'", c.what, "float32"});
  }
  check_error<linum::NotImplementedError>(
      [&] {
        decode(npy_image("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,)}",
                         raw<float>({1})));
      },
      {"at byte 20", "structured dtypes"});
}

TEST_CASE("save_npy / load_npy on files; errors name the file; load_npy checks a dtype") {
  const std::string p = temp_path("a.npy");
  Array a = linum::reshape(linum::arange(6, linum::float32) / 4.0f, {3, 2});
  data::save_npy(p, a);
  CHECK(read_bytes(p) == data::encode_npy(a));
  Array b = data::load_npy(p);
  CHECK(b.dtype() == linum::float32);
  CHECK(b.shape() == linum::Shape{3, 2});
  CHECK(values(b) == values(a));
  CHECK(values(data::load_npy(p, linum::float32)) == values(a));
  check_error<linum::TypeError>([&] { data::load_npy(p, linum::int32); },
                                {"load_npy: " + p + ": at byte 20: the file holds '<f4'",
                                 "load as float32", "not the expected int32"});
  // Complex arrays are refused as the readers refuse '<c8', never written with a bad descr.
  check_error<linum::TypeError>([&] { data::encode_npy(linum::astype(a, linum::complex64)); },
                                {"encode_npy / save_npy", "complex arrays", "complex64"});
  write_bytes(p, npy_image(header("<i8", "(1,)"), raw<std::int64_t>({3})));
  check_error<linum::TypeError>([&] { data::load_npy(p, linum::float32); },
                                {"'<i8'", "load as int32", "float32"});
  write_bytes(p, "garbage");
  check_error<linum::ValueError>([&] { data::load_npy(p); },
                                 {"load_npy: " + p + ": at byte 7", "truncated"});
  std::filesystem::remove(p);
  check_error<linum::ValueError>([&] { data::load_npy(p); }, {"load_npy: " + p, "cannot open"});
  check_error<linum::ValueError>([&] { data::save_npy("/nonexistent-dir/x.npy", a); },
                                 {"save_npy: /nonexistent-dir/x.npy", "cannot open"});
  check_error<linum::ValueError>([&] { data::encode_npy(Array()); }, {"encode_npy", "empty"});
}

}  // namespace test_npy
