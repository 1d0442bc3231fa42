// IDX reading with zlib: gzread also reads uncompressed files, so one path serves both.
#include "idx.hpp"

#include <zlib.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <memory>

#include <linum/error.hpp>

namespace linum::examples {
namespace {

int type_size(std::uint8_t type) {
  switch (type) {
    case 0x08:
    case 0x09:
      return 1;
    case 0x0B:
      return 2;
    case 0x0C:
    case 0x0D:
      return 4;
    case 0x0E:
      return 8;
    default:
      return 0;
  }
}

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw ValueError("read_idx: " + path + ": " + what);
}

// Reads up to n bytes; returns how many came, throwing on a zlib error (corrupt stream).
std::size_t read_some(gzFile f, const std::string& path, void* dst, std::size_t n) {
  std::size_t got = 0;
  while (got < n) {
    const unsigned chunk = static_cast<unsigned>(std::min<std::size_t>(n - got, 1u << 20));
    const int r = gzread(f, static_cast<char*>(dst) + got, chunk);
    if (r < 0) {
      int errnum = 0;
      const char* msg = gzerror(f, &errnum);
      fail(path, std::string("corrupt gzip stream (") + msg + ")");
    }
    if (r == 0) break;
    got += static_cast<std::size_t>(r);
  }
  // A gzip stream cut short reads as a short count plus a Z_BUF_ERROR.
  int errnum = 0;
  gzerror(f, &errnum);
  if (errnum != Z_OK)
    fail(path, "corrupt or truncated gzip stream (" + std::string(gzerror(f, &errnum)) + ")");
  return got;
}

}  // namespace

std::int64_t Idx::size() const {
  std::int64_t n = 1;
  for (auto d : dims) n *= d;
  return n;
}

double Idx::at(std::int64_t i) const {
  const std::uint8_t* p = bytes.data() + i * type_size(type);
  switch (type) {
    case 0x08:
      return p[0];
    case 0x09:
      return static_cast<std::int8_t>(p[0]);
    case 0x0B: {
      std::int16_t v;
      std::memcpy(&v, p, 2);
      return v;
    }
    case 0x0C: {
      std::int32_t v;
      std::memcpy(&v, p, 4);
      return v;
    }
    case 0x0D: {
      float v;
      std::memcpy(&v, p, 4);
      return v;
    }
    default: {
      double v;
      std::memcpy(&v, p, 8);
      return v;
    }
  }
}

Idx read_idx(const std::string& path) {
  std::unique_ptr<gzFile_s, int (*)(gzFile)> f(gzopen(path.c_str(), "rb"), gzclose);
  if (!f) fail(path, "cannot open the file");
  std::uint8_t head[4];
  if (read_some(f.get(), path, head, 4) != 4) fail(path, "truncated: the 4-byte magic is missing");
  Idx idx;
  idx.type = head[2];
  const int tsize = type_size(idx.type);
  if (head[0] != 0 || head[1] != 0 || tsize == 0 || head[3] == 0)
    fail(path, "not an IDX file (magic bytes " + std::to_string(head[0]) + " " +
                   std::to_string(head[1]) + " " + std::to_string(head[2]) + " " +
                   std::to_string(head[3]) + "; expected 0 0 <type 8,9,11,12,13,14> <rank>)");
  std::int64_t total = 1;
  for (int d = 0; d < head[3]; ++d) {
    std::uint8_t b[4];
    if (read_some(f.get(), path, b, 4) != 4)
      fail(path, "truncated: header of rank " + std::to_string(head[3]) + " ends at dim " +
                     std::to_string(d));
    const std::int64_t dim = (std::int64_t{b[0]} << 24) | (b[1] << 16) | (b[2] << 8) | b[3];
    if (dim > (std::int64_t{1} << 40) / std::max<std::int64_t>(total, 1) / tsize)
      fail(path, "dims too large to be real (corrupt header)");
    idx.dims.push_back(dim);
    total *= dim;
  }
  const std::size_t nbytes = static_cast<std::size_t>(total) * tsize;
  idx.bytes.resize(nbytes);
  const std::size_t got = read_some(f.get(), path, idx.bytes.data(), nbytes);
  if (got != nbytes)
    fail(path, "truncated: expected " + std::to_string(nbytes) + " data bytes, got " +
                   std::to_string(got));
  std::uint8_t extra;
  if (read_some(f.get(), path, &extra, 1) != 0)
    fail(path, "trailing bytes after the " + std::to_string(nbytes) + " data bytes");
  // IDX stores multi-byte elements big-endian.
  if (tsize > 1 && std::endian::native == std::endian::little)
    for (std::size_t i = 0; i < nbytes; i += tsize)
      std::reverse(&idx.bytes[i], &idx.bytes[i] + tsize);
  return idx;
}

}  // namespace linum::examples
