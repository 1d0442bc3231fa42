// Hostile bytes: every reader answers malformed input with a linum::Error that says what was
// wrong; never a crash, a hang, deep recursion or an allocation of a declared (unchecked) size.
#include <string>

#include "helpers.hpp"

namespace test_hostile {

namespace ser = linum::serialization;
namespace st = linum::safetensors;
using namespace ser_test;

namespace {

std::string valid_file() {
  return ser::to_bytes(Tree{{"params", Tree{{"w", linum::array({{1.0f, 2.0f}, {3.0f, 4.0f}})},
                                            {"b", linum::array({1, 2})}}},
                            {"step", Array(3)}});
}

Tree restore(const std::string& s) { return ser::msgpack_restore(s); }

std::string st_file(const std::string& header, const std::string& data) {
  return le64(header.size()) + header + data;
}

st::Tensors load(const std::string& s) { return st::load_safetensors(as_bytes(s)); }

}  // namespace

TEST_SUITE("serialization hostile msgpack") {
  TEST_CASE("every truncation of a valid file is an error, never a crash") {
    const std::string f = valid_file();
    for (std::size_t n = 0; n < f.size(); ++n) {
      INFO("prefix of " << n << " bytes");
      CHECK_THROWS_AS(restore(f.substr(0, n)), linum::Error);
    }
    check_error<linum::ValueError>([&] { restore(f.substr(0, f.size() - 1)); }, {"truncated"});
    check_error<linum::ValueError>([&] { restore(f + "x"); }, {"extra data"});
  }

  TEST_CASE("an unknown ext code is named") {
    Mp m;
    m.map(1).str("a").ext(7, "xyz");
    check_error<linum::ValueError>([&] { restore(m.b); }, {"unknown msgpack ext type 7", "/a"});
  }

  TEST_CASE("a shape whose element count overflows 64 bits") {
    Mp m;
    m.ext(1, Mp::ndarray({1ull << 40, 1ull << 40}, "float32", ""));
    check_error<linum::ValueError>([&] { restore(m.b); }, {"overflows"});
    Mp neg;  // a negative dimension (msgpack negative fixint -1)
    neg.ext(1, Mp().arr(3).arr(1).u8(0xff).str("float32").bin("").b);
    check_error<linum::ValueError>([&] { restore(neg.b); }, {"shape entry 0"});
  }

  TEST_CASE("a buffer shorter than shape x itemsize") {
    Mp m;
    m.map(1).str("w").ext(1, Mp::ndarray({2, 3}, "float32", std::string(20, '\0')));
    check_error<linum::ValueError>([&] { restore(m.b); }, {"needs 24 bytes", "has 20", "/w"});
  }

  TEST_CASE("an unsupported dtype name") {
    Mp m;
    m.ext(1, Mp::ndarray({1}, "complex64", std::string(8, '\0')));
    check_error<linum::NotImplementedError>([&] { restore(m.b); }, {"complex64", "not supported"});
  }

  TEST_CASE("deeply nested maps and arrays stop at MAX_DEPTH without recursion") {
    std::string maps;
    for (int i = 0; i < 100000; ++i) maps += std::string("\x81\xa1k", 3);
    maps += '\xc0';
    check_error<linum::ValueError>([&] { restore(maps); }, {"nesting deeper than 512"});
    std::string arrays(1000000, '\x91');
    arrays += '\xc0';
    check_error<linum::ValueError>([&] { restore(arrays); }, {"nesting deeper than 512"});
    // Within the limit, nesting works.
    std::string ok;
    for (int i = 0; i < 100; ++i) ok += std::string("\x81\xa1k", 3);
    ok += '\xc0';
    CHECK(restore(ok).is_dict());
  }

  TEST_CASE("huge declared lengths are checked against the input before anything is allocated") {
    Mp arr;  // array32 of 2^32-1 entries in 6 bytes
    arr.u8(0xdd).be(0xffffffffu, 4).u8(0xc0);
    check_error<linum::ValueError>([&] { restore(arr.b); }, {"declares 4294967295 entries"});
    Mp map;
    map.u8(0xdf).be(0xffffffffu, 4);
    check_error<linum::ValueError>([&] { restore(map.b); }, {"declares 4294967295 entries"});
    Mp bin;  // bin32 / ext32 of 4 GiB with no bytes behind them
    bin.u8(0xc6).be(0xfffffff0u, 4).raw("ab");
    check_error<linum::ValueError>([&] { restore(bin.b); }, {"truncated"});
    Mp ext;
    ext.u8(0xc9).be(0xfffffff0u, 4).u8(1).raw("ab");
    check_error<linum::ValueError>([&] { restore(ext.b); }, {"truncated"});
    // A chunked array whose shape claims more elements than its chunks hold.
    Mp ch;
    ch.map(3).str("__msgpack_chunked_array__").u8(0xc3);
    ch.str("shape").map(1).str("0").u8(0xce).be(0xffffffffu, 4);
    ch.str("chunks").map(1).str("0").ext(1, Mp::ndarray({1}, "float32", std::string(4, '\0')));
    check_error<linum::ValueError>([&] { restore(ch.b); }, {"chunks hold 1 elements"});
  }

  TEST_CASE("keys must be unique, valid UTF-8 strings") {
    Mp bad;
    bad.map(1).str("\xff\xfe").u8(0xc0);
    check_error<linum::ValueError>([&] { restore(bad.b); }, {"not valid UTF-8"});
    Mp overlong;  // 0xc0 0x80: an overlong encoding of NUL
    overlong.map(1).str("\xc0\x80").u8(0xc0);
    check_error<linum::ValueError>([&] { restore(overlong.b); }, {"not valid UTF-8"});
    Mp dup;
    dup.map(2).str("a").u8(0x01).str("a").u8(0x02);
    check_error<linum::ValueError>([&] { restore(dup.b); }, {"duplicate map key 'a'"});
    Mp intkey;
    intkey.map(1).u8(0x05).u8(0xc0);
    check_error<linum::TypeError>([&] { restore(intkey.b); }, {"map key", "not a string"});
    Mp strval;  // a string value is a str leaf; it must be valid UTF-8 too
    strval.map(1).str("a").str("\xff");
    check_error<linum::ValueError>([&] { restore(strval.b); }, {"string at /a", "not valid UTF-8"});
    CHECK(restore(Mp().map(1).str("h\xc3\xa9").u8(0xc0).b).contains("h\xc3\xa9"));
  }

  TEST_CASE("an invalid msgpack byte (0xc1) is named with its offset") {
    check_error<linum::ValueError>(
        [] {
          restore(
              std::string("\x81\xa1"
                          "a\xc1",
                          4));
        },
        {"invalid msgpack byte at offset 3"});
  }
}

TEST_SUITE("serialization hostile safetensors") {
  const std::string header = R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  const std::string data(8, '\0');

  TEST_CASE("every truncation of a valid file is an error") {
    const std::string f = st_file(header, data);
    CHECK(load(f).size() == 1);
    for (std::size_t n = 0; n < f.size(); ++n) {
      INFO("prefix of " << n << " bytes");
      CHECK_THROWS_AS(load(f.substr(0, n)), linum::Error);
    }
  }

  TEST_CASE("a declared header length beyond the limit or the file") {
    check_error<linum::ValueError>([] { load(le64(~0ull) + "{}"); }, {"more than the limit"});
    check_error<linum::ValueError>([] { load(le64(1000) + "{}"); }, {"truncated"});
  }

  TEST_CASE("malformed JSON, non-UTF-8, deep nesting and duplicate names") {
    check_error<linum::ValueError>([] { load(st_file("{\"w\":", "")); }, {"not valid UTF-8 JSON"});
    check_error<linum::ValueError>([] { load(st_file("[]", "")); }, {"start with '{'"});
    check_error<linum::ValueError>(
        [] {
          load(st_file("{\"\xff\":{\"dtype\":\"F32\",\"shape\":[],\"data_offsets\":[0,4]}}",
                       "1234"));
        },
        {"JSON"});
    std::string deep = "{\"a\":" + std::string(100000, '[') + std::string(100000, ']') + "}";
    check_error<linum::ValueError>([&] { load(st_file(deep, "")); }, {"nests deeper"});
    const std::string two = R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
                            R"("w":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})";
    check_error<linum::ValueError>([&] { load(st_file(two, data)); },
                                   {"duplicate tensor name 'w'"});
  }

  TEST_CASE("offsets that overlap, leave gaps, overrun or disagree with the shape") {
    const std::string overlap = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                                R"("b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})";
    check_error<linum::ValueError>([&] { load(st_file(overlap, data)); }, {"'b' starts at byte 4"});
    const std::string gap = R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})";
    check_error<linum::ValueError>([&] { load(st_file(gap, data)); }, {"expected 0"});
    const std::string over = R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})";
    check_error<linum::ValueError>([&] { load(st_file(over, data)); },
                                   {"cover 16 bytes", "holds 8"});
    const std::string shape = R"({"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})";
    check_error<linum::ValueError>([&] { load(st_file(shape, data)); }, {"needs 12 bytes", "'a'"});
    const std::string overflow =
        R"({"a":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,8]}})";
    check_error<linum::ValueError>([&] { load(st_file(overflow, data)); }, {"overflows"});
    const std::string neg = R"({"a":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})";
    check_error<linum::ValueError>([&] { load(st_file(neg, data)); }, {"non-negative"});
    const std::string back = R"({"a":{"dtype":"F32","shape":[0],"data_offsets":[8,0]}})";
    check_error<linum::ValueError>([&] { load(st_file(back, data)); }, {"begin after they end"});
  }

  TEST_CASE("an unsupported dtype is NotImplementedError naming it") {
    const std::string f8 = R"({"a":{"dtype":"F8_E4M3","shape":[8],"data_offsets":[0,8]}})";
    check_error<linum::NotImplementedError>([&] { load(st_file(f8, data)); }, {"F8_E4M3"});
  }
}

}  // namespace test_hostile
