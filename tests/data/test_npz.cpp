// .npz reading and writing: round trips, archives built by hand from PKWARE's APPNOTE (stored and
// deflated members, Zip64 records as numpy and large archives write them), and hostile archives,
// whose errors name the source, the member and the byte offset.
#include <zlib.h>

#include <cstring>

#include "data_testing.hpp"

namespace test_npz {

namespace data = linum::data;
using namespace data_test;

namespace {

std::span<const std::byte> span_of(const std::string& s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}

std::map<std::string, Array> decode(const std::string& zip) {
  return data::decode_npz(span_of(zip), "z.npz");
}

std::uint32_t crc_of(const std::string& s) {
  return static_cast<std::uint32_t>(
      crc32(0, reinterpret_cast<const Bytef*>(s.data()), static_cast<uInt>(s.size())));
}

std::string raw_deflate(const std::string& s) {
  z_stream zs{};
  REQUIRE(deflateInit2(&zs, 9, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY) == Z_OK);
  std::string out(deflateBound(&zs, s.size()), '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(s.data()));
  zs.avail_in = static_cast<uInt>(s.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  REQUIRE(deflate(&zs, Z_FINISH) == Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

// One member of a hand-built archive; the fields default to a valid stored member.
struct Member {
  Member(std::string n, std::string d, bool z = false)
      : name(std::move(n)), data(std::move(d)), deflate(z) {}
  std::string name, data;
  bool deflate = false;
  std::optional<std::uint32_t> crc;  // default: the data's
  std::uint16_t flags = 0, method_override = 0xFFFF;
  bool zip64_local = false, zip64_central = false;  // sizes in a Zip64 extra field
  std::optional<std::string> local_name;
};

// An archive by the APPNOTE: local headers and data, the central directory, and the end record
// (preceded by a Zip64 end record and locator when zip64_end).
std::string build_zip(const std::vector<Member>& members, bool zip64_end = false) {
  std::string out, central;
  for (const Member& m : members) {
    const std::string packed = m.deflate ? raw_deflate(m.data) : m.data;
    const std::uint32_t crc = m.crc.value_or(crc_of(m.data));
    const std::uint16_t method =
        m.method_override != 0xFFFF ? m.method_override : (m.deflate ? 8 : 0);
    const std::uint64_t local = out.size();
    const std::string lname = m.local_name.value_or(m.name);
    const std::string local_extra =
        m.zip64_local ? le(1, 2) + le(16, 2) + le(m.data.size(), 8) + le(packed.size(), 8) : "";
    out += le(0x04034b50, 4) + le(20, 2) + le(m.flags, 2) + le(method, 2) + le(0, 2) + le(0x21, 2) +
           le(crc, 4) + le(m.zip64_local ? 0xFFFFFFFF : packed.size(), 4) +
           le(m.zip64_local ? 0xFFFFFFFF : m.data.size(), 4) + le(lname.size(), 2) +
           le(local_extra.size(), 2) + lname + local_extra + packed;
    const std::string central_extra =
        m.zip64_central
            ? le(1, 2) + le(24, 2) + le(m.data.size(), 8) + le(packed.size(), 8) + le(local, 8)
            : "";
    const std::uint64_t big = 0xFFFFFFFF;
    central += le(0x02014b50, 4) + le(0x0314, 2) + le(20, 2) + le(m.flags, 2) + le(method, 2) +
               le(0, 2) + le(0x21, 2) + le(crc, 4) + le(m.zip64_central ? big : packed.size(), 4) +
               le(m.zip64_central ? big : m.data.size(), 4) + le(m.name.size(), 2) +
               le(central_extra.size(), 2) + le(0, 2) + le(0, 2) + le(0, 2) + le(0, 4) +
               le(m.zip64_central ? big : local, 4) + m.name + central_extra;
  }
  const std::uint64_t cd = out.size();
  out += central;
  if (zip64_end) {
    const std::uint64_t end64 = out.size();
    out += le(0x06064b50, 4) + le(44, 8) + le(45, 2) + le(45, 2) + le(0, 4) + le(0, 4) +
           le(members.size(), 8) + le(members.size(), 8) + le(central.size(), 8) + le(cd, 8);
    out += le(0x07064b50, 4) + le(0, 4) + le(end64, 8) + le(1, 4);
    out += le(0x06054b50, 4) + le(0, 2) + le(0, 2) + le(0xFFFF, 2) + le(0xFFFF, 2) +
           le(0xFFFFFFFF, 4) + le(0xFFFFFFFF, 4) + le(0, 2);
  } else {
    out += le(0x06054b50, 4) + le(0, 2) + le(0, 2) + le(members.size(), 2) + le(members.size(), 2) +
           le(central.size(), 4) + le(cd, 4) + le(0, 2);
  }
  return out;
}

// The .npy image of a float32 vector, by hand (see data_testing.hpp).
std::string f32_npy(std::initializer_list<float> v) {
  std::string d(v.size() * 4, '\0');
  std::memcpy(d.data(), std::data(v), d.size());
  return npy_image(
      "{'descr': '<f4', 'fortran_order': False, 'shape': (" + std::to_string(v.size()) + ",), }",
      d);
}

}  // namespace

TEST_CASE("encode_npz / decode_npz round trip, stored and deflated") {
  const std::map<std::string, Array> arrays = {
      {"images", linum::reshape(linum::arange(24, linum::float32) / 8.0f, {2, 3, 4})},
      {"labels", linum::array<std::int32_t>({3, -1})},
      {"mask", linum::array<bool>({true, false})},
      {"scalar", Array(2.5)},
      {"empty", linum::zeros({0, 2}, linum::uint32)},
  };
  for (bool compressed : {false, true}) {
    CAPTURE(compressed);
    const std::string zip = data::encode_npz(arrays, compressed);
    CHECK(zip.substr(0, 4) == std::string("PK\x03\x04", 4));
    const auto back = decode(zip);
    REQUIRE(back.size() == arrays.size());
    for (const auto& [name, a] : arrays) {
      CAPTURE(name);
      REQUIRE(back.count(name));
      CHECK(back.at(name).dtype() == a.dtype());
      CHECK(back.at(name).shape() == a.shape());
      CHECK(values(back.at(name)) == values(a));
    }
  }
  // Deflate shrinks this regular data; the members are named "<key>.npy" as numpy names them.
  const std::map<std::string, Array> zeros = {{"z", linum::zeros({1000})}};
  CHECK(data::encode_npz(zeros, true).size() < data::encode_npz(zeros, false).size() / 10);
  CHECK(data::encode_npz(zeros).substr(30, 5) == "z.npy");
  CHECK(decode(data::encode_npz({})).empty());
  check_error<linum::ValueError>(
      [] {
        data::encode_npz({{"", Array(1.0f)}});
      },
      {"encode_npz", "empty"});
}

TEST_CASE("decode_npz reads hand-built archives: deflated members and Zip64 records") {
  const std::string a = f32_npy({1, 2, 3}), b = f32_npy({-4});
  auto check = [&](const std::string& zip) {
    const auto m = decode(zip);
    REQUIRE(m.size() == 2);
    CHECK(values(m.at("a")) == Vec{1, 2, 3});
    CHECK(values(m.at("b")) == Vec{-4});
  };
  check(build_zip({{"a.npy", a}, {"b.npy", b, true}}));
  // numpy writes Zip64 extra fields in every local header (force_zip64=True).
  Member la{"a.npy", a};
  la.zip64_local = true;
  Member lb{"b.npy", b, true};
  lb.zip64_local = true;
  check(build_zip({la, lb}));
  // Archives past 4 GiB keep sizes and offsets in the central Zip64 extra field and the Zip64
  // end record; the same layout on small data.
  Member ca{"a.npy", a};
  ca.zip64_central = true;
  Member cb{"b.npy", b, true};
  cb.zip64_central = true;
  check(build_zip({ca, cb}, true));
}

TEST_CASE("decode_npz: hostile archives are errors naming the source, member and offset") {
  const std::string a = f32_npy({1, 2, 3});
  const std::string good = build_zip({{"a.npy", a}, {"b.npy", f32_npy({5}), true}});
  // Every prefix of the archive, and every single flipped byte, is an error or a correct read.
  for (std::size_t n = 0; n < good.size(); ++n) {
    CAPTURE(n);
    CHECK(message_of<linum::Error>([&] {
            decode(good.substr(0, n));
          }).find("decode_npz: z.npz: ") == 0);
  }
  for (std::size_t i = 0; i < good.size(); ++i) {
    CAPTURE(i);
    std::string bad = good;
    bad[i] ^= 0x5A;
    try {
      const auto m = decode(bad);
      // Bytes no reader checks (times, versions, attributes) may change without an error.
      CHECK(values(m.at("a")) == Vec{1, 2, 3});
    } catch (const linum::Error& e) {
      CHECK(std::string(e.what()).find("decode_npz: z.npz: ") == 0);
    }
  }
  check_error<linum::ValueError>([] { decode(std::string(100, 'x')); },
                                 {"decode_npz: z.npz: at byte 0", "not a zip archive"});
  // A flipped data byte of a stored member: the CRC catches it (at the member's data offset).
  std::string flipped = good;
  flipped[30 + 5 + 70] ^= 1;
  check_error<linum::ValueError>([&] { decode(flipped); },
                                 {"at byte 35", "member 'a.npy': CRC-32 mismatch"});
  Member crc{"a.npy", a};
  crc.crc = 0x12345678;
  check_error<linum::ValueError>([&] { decode(build_zip({crc})); }, {"records 0x12345678"});

  // An error inside a stored member counts file bytes; inside a deflated one, inflated bytes.
  const std::string short_npy = a.substr(0, a.size() - 1);
  check_error<linum::ValueError>(
      [&] {
        decode(build_zip({{"a.npy", short_npy}}));
      },
      {"member 'a.npy': at byte 174", "needs 12 data bytes from byte 163"});
  check_error<linum::ValueError>(
      [&] {
        decode(build_zip({{"a.npy", short_npy, true}}));
      },
      {"member 'a.npy': at byte 139 of the decompressed data", "from byte 128"});

  check_error<linum::ValueError>(
      [&] {
        decode(build_zip({{"a.npy", a}, {"a.npy", a}}));
      },
      {"member 'a.npy' appears twice"});
  check_error<linum::ValueError>(
      [&] {
        decode(build_zip({{"notes.txt", "hi"}}));
      },
      {"member 'notes.txt' is not a .npy array"});
  Member renamed{"a.npy", a};
  renamed.local_name = "b.npy";
  check_error<linum::ValueError>([&] { decode(build_zip({renamed})); },
                                 {"the local header names it 'b.npy'"});
  Member encrypted{"a.npy", a};
  encrypted.flags = 1;
  check_error<linum::NotImplementedError>([&] { decode(build_zip({encrypted})); },
                                          {"'a.npy' is encrypted"});
  Member bzip{"a.npy", a};
  bzip.method_override = 12;
  check_error<linum::NotImplementedError>([&] { decode(build_zip({bzip})); },
                                          {"compression method 12"});

  // A deflated member claiming far more than its compressed bytes can hold is refused before
  // anything is allocated; corrupt deflate data is an error too.
  std::string bomb = build_zip({{"a.npy", a, true}});
  const std::size_t cd = bomb.rfind(std::string("PK\x01\x02", 4));
  bomb.replace(cd + 24, 4, le(0xF0000000, 4));
  check_error<linum::ValueError>([&] { decode(bomb); },
                                 {"claims 4026531840 bytes", "more than deflate can expand"});
  std::string corrupt = build_zip({{"a.npy", a, true}});
  corrupt[30 + 5] = static_cast<char>(0xFF);  // an invalid deflate block type
  check_error<linum::ValueError>([&] { decode(corrupt); }, {"member 'a.npy'", "deflate"});

  // Offsets and sizes outside the archive.
  std::string offset = good;
  const std::size_t end = offset.size() - 22;
  offset.replace(end + 16, 4, le(0x7FFFFFFF, 4));
  check_error<linum::ValueError>([&] { decode(offset); }, {"does not fit before the end record"});
  std::string count = good;
  count.replace(end + 8, 2, le(900, 2));
  count.replace(end + 10, 2, le(900, 2));
  check_error<linum::ValueError>([&] { decode(count); }, {"900 members cannot fit"});
  std::string local = good;
  local.replace(good.rfind(std::string("PK\x01\x02", 4)) + 42, 4, le(7, 4));
  check_error<linum::ValueError>([&] { decode(local); },
                                 {"member 'b.npy': no local header at byte 7"});
}

TEST_CASE("savez / savez_compressed / load_npz on files; errors name the file") {
  const std::string p = temp_path("a.npz");
  const std::map<std::string, Array> arrays = {{"x", linum::array<float>({1, 2})},
                                               {"y", linum::array<std::int32_t>({7})}};
  data::savez(p, arrays);
  CHECK(read_bytes(p) == data::encode_npz(arrays));
  auto m = data::load_npz(p);
  CHECK(values(m.at("x")) == Vec{1, 2});
  CHECK(values(m.at("y")) == Vec{7});
  data::savez_compressed(p, arrays);
  CHECK(read_bytes(p) == data::encode_npz(arrays, true));
  CHECK(values(data::load_npz(p).at("x")) == Vec{1, 2});
  write_bytes(p, "PK");
  check_error<linum::ValueError>([&] { data::load_npz(p); },
                                 {"load_npz: " + p + ": at byte 2", "truncated"});
  std::filesystem::remove(p);
  check_error<linum::ValueError>([&] { data::load_npz(p); }, {"load_npz: " + p, "cannot open"});
}

}  // namespace test_npz
