// Zip archives for .npz: the end-of-central-directory record (and its Zip64 form) locates the
// central directory, whose entries locate each member's local header and data. Every size and
// offset is checked against the archive before it is used: hostile archives get an error, never
// a read outside the buffer or an allocation their size does not justify.
#include "zip.hpp"

#include <zlib.h>

#include <algorithm>
#include <limits>

namespace linum::data::detail {
namespace {

constexpr std::uint32_t kLocalSig = 0x04034b50, kCentralSig = 0x02014b50, kEndSig = 0x06054b50,
                        kEnd64Sig = 0x06064b50, kLocator64Sig = 0x07064b50;
constexpr std::size_t kLocalLen = 30, kCentralLen = 46, kEndLen = 22, kEnd64Len = 56,
                      kLocator64Len = 20;
// Deflate cannot expand data more than about 1032:1; a member claiming more is corrupt.
constexpr std::uint64_t kMaxInflateRatio = 1032;

std::uint64_t le(std::string_view b, std::uint64_t at, int bytes) {
  std::uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(b[at + i]);
  return v;
}

void put(std::string& out, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out += static_cast<char>((v >> (8 * i)) & 0xFF);
}

std::string hex(std::uint32_t v) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s = "0x";
  for (int i = 28; i >= 0; i -= 4) s += kHex[(v >> i) & 15];
  return s;
}

std::uint32_t crc32_of(std::string_view data) {
  return static_cast<std::uint32_t>(
      crc32_z(0, reinterpret_cast<const Bytef*>(data.data()), data.size()));
}

// The central directory's location, from the end record or its Zip64 form.
struct Directory {
  std::uint64_t offset = 0, size = 0, entries = 0, end = 0;  // end: where the end records start
};

Directory find_directory(std::string_view zip, const Where& where) {
  const std::uint64_t n = zip.size();
  if (n < kEndLen) {
    if (n >= 4 && zip.substr(0, 2) != "PK")
      where.fail(0, "not a zip archive (.npz): no 'PK' magic");
    where.fail(n,
               "truncated: a zip archive ends with a 22-byte end-of-central-directory record, "
               "the file has " +
                   std::to_string(n) + " bytes");
  }
  // The end record sits at the very end, after a comment of up to 65535 bytes.
  std::uint64_t pos = n - kEndLen;
  const std::uint64_t lowest = n - kEndLen > 0xFFFF ? n - kEndLen - 0xFFFF : 0;
  bool found = false;
  for (;; --pos) {
    if (le(zip, pos, 4) == kEndSig && pos + kEndLen + le(zip, pos + 20, 2) == n) {
      found = true;
      break;
    }
    if (pos == lowest) break;
  }
  if (!found) {
    if (zip.substr(0, 2) != "PK")
      where.fail(0, "not a zip archive (.npz): it starts with bytes " + hex(le(zip, 0, 4)) +
                        " instead of the 'PK' magic");
    where.fail(n, "no end-of-central-directory record: the archive is truncated or corrupt");
  }
  Directory d{le(zip, pos + 16, 4), le(zip, pos + 12, 4), le(zip, pos + 10, 2), pos};
  if (le(zip, pos + 4, 2) != 0 || le(zip, pos + 6, 2) != 0 || le(zip, pos + 8, 2) != d.entries)
    where.fail<NotImplementedError>(pos, "multi-part zip archives are not supported");
  if (d.entries == 0xFFFF || d.size == 0xFFFFFFFF || d.offset == 0xFFFFFFFF) {
    // Zip64: a locator just before the end record points at the Zip64 end record.
    if (pos < kLocator64Len || le(zip, pos - kLocator64Len, 4) != kLocator64Sig)
      where.fail(pos, "the end record defers to a Zip64 record, but no Zip64 locator precedes it");
    const std::uint64_t loc = pos - kLocator64Len, at = le(zip, loc + 8, 8);
    if (at > loc || loc - at < kEnd64Len || le(zip, at, 4) != kEnd64Sig)
      where.fail(loc, "the Zip64 locator points at byte " + std::to_string(at) +
                          ", where no Zip64 end record is");
    if (le(zip, at + 16, 4) != 0 || le(zip, at + 20, 4) != 0)
      where.fail<NotImplementedError>(at, "multi-part zip archives are not supported");
    d = {le(zip, at + 48, 8), le(zip, at + 40, 8), le(zip, at + 32, 8), at};
  }
  if (d.offset > d.end || d.size > d.end - d.offset)
    where.fail(d.end, "the central directory (" + std::to_string(d.size) + " bytes at byte " +
                          std::to_string(d.offset) + ") does not fit before the end record");
  if (d.entries > d.size / kCentralLen)
    where.fail(d.end, std::to_string(d.entries) + " members cannot fit a central directory of " +
                          std::to_string(d.size) + " bytes");
  return d;
}

// Sizes and offset that the central entry holds as 0xFFFFFFFF live in its Zip64 extra field.
void read_zip64_extra(std::string_view zip, std::uint64_t at, std::uint64_t len, ZipMember& m,
                      std::uint64_t& local, const Where& where) {
  const bool want_size = m.size == 0xFFFFFFFF, want_csize = m.compressed_size == 0xFFFFFFFF,
             want_local = local == 0xFFFFFFFF;
  if (!want_size && !want_csize && !want_local) return;
  for (std::uint64_t p = at; p + 4 <= at + len;) {
    const std::uint64_t id = le(zip, p, 2), size = le(zip, p + 2, 2);
    if (p + 4 + size > at + len) break;
    if (id == 1) {
      std::uint64_t q = p + 4;
      auto take = [&](std::uint64_t& field) {
        if (q + 8 > p + 4 + size)
          where.fail(p, "the Zip64 extra field of '" + m.name + "' is too short");
        field = le(zip, q, 8);
        q += 8;
      };
      if (want_size) take(m.size);
      if (want_csize) take(m.compressed_size);
      if (want_local) take(local);
      return;
    }
    p += 4 + size;
  }
  where.fail(at, "member '" + m.name + "' records 0xFFFFFFFF sizes but has no Zip64 extra field");
}

}  // namespace

std::vector<ZipMember> zip_members(std::string_view zip, const Where& where) {
  const Directory dir = find_directory(zip, where);
  std::vector<ZipMember> members;
  members.reserve(static_cast<std::size_t>(dir.entries));
  std::uint64_t p = dir.offset;
  const std::uint64_t end = dir.offset + dir.size;
  for (std::uint64_t i = 0; i < dir.entries; ++i) {
    if (end - p < kCentralLen || le(zip, p, 4) != kCentralSig)
      where.fail(p, "central directory entry " + std::to_string(i) + " of " +
                        std::to_string(dir.entries) + " is missing or corrupt");
    const std::uint64_t flags = le(zip, p + 8, 2), name_len = le(zip, p + 28, 2),
                        extra_len = le(zip, p + 30, 2), comment_len = le(zip, p + 32, 2);
    if (end - p - kCentralLen < name_len + extra_len + comment_len)
      where.fail(p, "central directory entry " + std::to_string(i) +
                        " runs past the end of the directory");
    ZipMember m;
    m.method = static_cast<std::uint16_t>(le(zip, p + 10, 2));
    m.crc = static_cast<std::uint32_t>(le(zip, p + 16, 4));
    m.compressed_size = le(zip, p + 20, 4);
    m.size = le(zip, p + 24, 4);
    m.name = std::string(zip.substr(p + kCentralLen, name_len));
    std::uint64_t local = le(zip, p + 42, 4);
    read_zip64_extra(zip, p + kCentralLen + name_len, extra_len, m, local, where);
    if (flags & 1) where.fail<NotImplementedError>(p, "member '" + m.name + "' is encrypted");
    if (m.method != 0 && m.method != 8)
      where.fail<NotImplementedError>(p, "member '" + m.name + "' uses compression method " +
                                             std::to_string(m.method) +
                                             " (linum reads stored (0) and deflated (8) members)");
    // The local header repeats the name; its extra field may differ from the central one.
    if (local > dir.offset || dir.offset - local < kLocalLen || le(zip, local, 4) != kLocalSig)
      where.fail(p, "member '" + m.name + "': no local header at byte " + std::to_string(local));
    const std::uint64_t local_name = le(zip, local + 26, 2), local_extra = le(zip, local + 28, 2);
    m.data_offset = local + kLocalLen + local_name + local_extra;
    if (m.data_offset > dir.offset || dir.offset - m.data_offset < m.compressed_size)
      where.fail(local, "member '" + m.name + "': its " + std::to_string(m.compressed_size) +
                            " bytes run past the start of the central directory");
    if (zip.substr(local + kLocalLen, local_name) != m.name)
      where.fail(local, "member '" + m.name + "': the local header names it '" +
                            std::string(zip.substr(local + kLocalLen,
                                                   std::min<std::uint64_t>(local_name, 64))) +
                            "'");
    if (m.method == 0 && m.compressed_size != m.size)
      where.fail(p, "stored member '" + m.name + "' records " + std::to_string(m.size) +
                        " bytes but occupies " + std::to_string(m.compressed_size));
    if (m.method == 8 && m.size > kMaxInflateRatio * m.compressed_size + 1024)
      where.fail(p, "deflated member '" + m.name + "' claims " + std::to_string(m.size) +
                        " bytes from " + std::to_string(m.compressed_size) +
                        ", more than deflate can expand to");
    members.push_back(std::move(m));
    p += kCentralLen + name_len + extra_len + comment_len;
  }
  return members;
}

std::string_view zip_read(std::string_view zip, const ZipMember& m, const Where& where,
                          std::string& scratch) {
  std::string_view data = zip.substr(m.data_offset, m.compressed_size);
  if (m.method == 8) {
    // One byte of room beyond the recorded size tells "inflates to more" from "truncated".
    scratch.assign(m.size + 1, '\0');
    z_stream zs{};
    if (inflateInit2(&zs, -MAX_WBITS) != Z_OK) where.fail(m.data_offset, "zlib inflateInit failed");
    std::uint64_t in = 0, out = 0;
    int r = Z_OK;
    while (r == Z_OK) {  // zlib counts in 32 bits: at most 1 GiB a call
      const std::uint64_t in_chunk = std::min<std::uint64_t>(data.size() - in, 1u << 30);
      const std::uint64_t out_chunk = std::min<std::uint64_t>(scratch.size() - out, 1u << 30);
      zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data() + in));
      zs.avail_in = static_cast<uInt>(in_chunk);
      zs.next_out = reinterpret_cast<Bytef*>(scratch.data() + out);
      zs.avail_out = static_cast<uInt>(out_chunk);
      r = inflate(&zs, Z_NO_FLUSH);
      in += in_chunk - zs.avail_in;
      out += out_chunk - zs.avail_out;
    }
    const std::string msg = zs.msg ? zs.msg : "no message";
    inflateEnd(&zs);
    const std::string who = "member '" + m.name + "'";
    if (r == Z_DATA_ERROR || r == Z_NEED_DICT || r == Z_MEM_ERROR)
      where.fail(m.data_offset + in, who + ": corrupt deflate data (" + msg + ")");
    if (out > m.size)
      where.fail(m.data_offset + in, who + " inflates to more than the " + std::to_string(m.size) +
                                         " bytes its entry records");
    if (r != Z_STREAM_END)
      where.fail(m.data_offset + in, who + ": the deflate stream is truncated (" +
                                         std::to_string(out) + " of " + std::to_string(m.size) +
                                         " bytes)");
    if (out != m.size)
      where.fail(m.data_offset + in, who + " inflates to " + std::to_string(out) +
                                         " bytes, its entry records " + std::to_string(m.size));
    if (in != data.size())
      where.fail(m.data_offset + in, who + ": " + std::to_string(data.size() - in) +
                                         " bytes after the end of the deflate stream");
    scratch.resize(m.size);
    data = scratch;
  }
  const std::uint32_t crc = crc32_of(data);
  if (crc != m.crc)
    where.fail(m.data_offset, "member '" + m.name + "': CRC-32 mismatch (the directory records " +
                                  hex(m.crc) + ", the data has " + hex(crc) + ")");
  return data;
}

std::string zip_write(const std::vector<std::pair<std::string, std::string>>& members, bool deflate,
                      std::string_view fn) {
  constexpr std::uint64_t kMax32 = 0xFFFFFFFF;
  if (members.size() >= 0xFFFF)
    throw ValueError(std::string(fn) + ": " + std::to_string(members.size()) +
                     " arrays need a Zip64 archive, which linum does not write");
  std::string out, central;
  for (const auto& member : members) {
    // Named references, not a structured binding: clang 14 (the fuzz build) cannot capture those.
    const std::string& name = member.first;
    const std::string& bytes = member.second;
    std::string packed;
    if (deflate) {
      z_stream zs{};
      if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY) !=
          Z_OK)
        throw Error(std::string(fn) + ": zlib deflateInit failed");
      packed.resize(deflateBound(&zs, bytes.size()));
      std::uint64_t in = 0, done = 0;
      int r = Z_OK;
      while (r == Z_OK) {
        const std::uint64_t in_chunk = std::min<std::uint64_t>(bytes.size() - in, 1u << 30);
        const std::uint64_t out_chunk = std::min<std::uint64_t>(packed.size() - done, 1u << 30);
        zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data() + in));
        zs.avail_in = static_cast<uInt>(in_chunk);
        zs.next_out = reinterpret_cast<Bytef*>(packed.data() + done);
        zs.avail_out = static_cast<uInt>(out_chunk);
        r = ::deflate(&zs, in + in_chunk == bytes.size() ? Z_FINISH : Z_NO_FLUSH);
        in += in_chunk - zs.avail_in;
        done += out_chunk - zs.avail_out;
      }
      deflateEnd(&zs);
      if (r != Z_STREAM_END) throw Error(std::string(fn) + ": zlib deflate failed");
      packed.resize(done);
    }
    const std::string_view data = deflate ? std::string_view(packed) : std::string_view(bytes);
    const std::uint64_t local = out.size();
    if (bytes.size() > kMax32 || data.size() > kMax32 || local > kMax32)
      throw ValueError(std::string(fn) + ": array '" + name +
                       "' would put the archive past 4 GiB, which needs Zip64 (not written)");
    const std::uint32_t crc = crc32_of(bytes);
    const bool utf8 = std::any_of(name.begin(), name.end(), [](char c) { return c & 0x80; });
    auto common = [&](std::string& h) {  // the fields both headers share, from "version needed"
      put(h, 20, 2);                     // version 2.0 needed to extract
      put(h, utf8 ? 0x800 : 0, 2);       // flags: bit 11, a UTF-8 name
      put(h, deflate ? 8 : 0, 2);
      put(h, 0, 2);     // time 00:00:00
      put(h, 0x21, 2);  // date 1980-01-01, the earliest zip can record
      put(h, crc, 4);
      put(h, data.size(), 4);
      put(h, bytes.size(), 4);
      put(h, name.size(), 2);
      put(h, 0, 2);  // extra field length
    };
    put(out, kLocalSig, 4);
    common(out);
    out += name;
    out += data;
    put(central, kCentralSig, 4);
    put(central, 0x0314, 2);  // made by: Unix, version 2.0
    common(central);
    put(central, 0, 2);            // comment length
    put(central, 0, 2);            // disk number
    put(central, 0, 2);            // internal attributes
    put(central, 0600u << 16, 4);  // external attributes: rw------- (Python's default)
    put(central, local, 4);
    central += name;
  }
  const std::uint64_t cd_offset = out.size();
  if (cd_offset > kMax32 || central.size() > kMax32)
    throw ValueError(std::string(fn) + ": the archive would pass 4 GiB, which needs Zip64");
  out += central;
  put(out, kEndSig, 4);
  put(out, 0, 2);
  put(out, 0, 2);
  put(out, members.size(), 2);
  put(out, members.size(), 2);
  put(out, central.size(), 4);
  put(out, cd_offset, 4);
  put(out, 0, 2);
  return out;
}

}  // namespace linum::data::detail
