// IDX reading with zlib: gzread also reads uncompressed files, so one path serves both.
#include <linum/data/idx.hpp>

#include <zlib.h>

#include <algorithm>
#include <bit>
#include <memory>

#include "../nn/dtype_codec.hpp"
#include "file_io.hpp"

namespace linum::data {
namespace {

namespace codec = serialization::codec;

// The element type of an IDX type code, or nullopt.
std::optional<codec::Src> element_type(std::uint8_t code) {
  switch (code) {
    case 0x08: return codec::Src::u8;
    case 0x09: return codec::Src::i8;
    case 0x0B: return codec::Src::i16;
    case 0x0C: return codec::Src::i32;
    case 0x0D: return codec::Src::f32;
    case 0x0E: return codec::Src::f64;
    default: return std::nullopt;
  }
}

// Reads up to n bytes; returns how many came, throwing on a zlib error (a corrupt stream).
std::size_t read_some(gzFile f, const detail::Where& where, std::uint64_t at, void* dst,
                      std::size_t n) {
  std::size_t got = 0;
  while (got < n) {
    const unsigned chunk = static_cast<unsigned>(std::min<std::size_t>(n - got, 1u << 20));
    const int r = gzread(f, static_cast<char*>(dst) + got, chunk);
    if (r < 0) {
      int errnum = 0;
      where.fail(at + got, std::string("corrupt gzip stream (") + gzerror(f, &errnum) + ")");
    }
    if (r == 0) break;
    got += static_cast<std::size_t>(r);
  }
  // A gzip stream cut short reads as a short count plus a Z_BUF_ERROR.
  int errnum = 0;
  const char* msg = gzerror(f, &errnum);
  if (errnum != Z_OK)
    where.fail(at + got, "corrupt or truncated gzip stream (" + std::string(msg) + ")");
  return got;
}

}  // namespace

Array load_idx(const std::string& path) {
  std::unique_ptr<gzFile_s, int (*)(gzFile)> f(gzopen(path.c_str(), "rb"), gzclose);
  detail::Where where{"load_idx", path};
  if (!f) throw ValueError("load_idx: " + path + ": cannot open the file");
  std::uint8_t head[4];
  const std::size_t got_head = read_some(f.get(), where, 0, head, 4);
  where.compressed = gzdirect(f.get()) == 0;  // offsets count decompressed bytes
  if (got_head != 4) where.fail(got_head, "truncated: the 4-byte magic number is missing");
  const auto src = element_type(head[2]);
  if (head[0] != 0 || head[1] != 0 || !src || head[3] == 0)
    where.fail(0, "not an IDX file (magic bytes " + std::to_string(head[0]) + " " +
                      std::to_string(head[1]) + " " + std::to_string(head[2]) + " " +
                      std::to_string(head[3]) +
                      "; expected 0 0 <type 8, 9, 11, 12, 13 or 14> <rank >= 1>)");
  const std::size_t item = codec::itemsize(*src);
  Shape dims;
  std::uint64_t total = 1;
  for (int d = 0; d < head[3]; ++d) {
    std::uint8_t b[4];
    const std::uint64_t at = 4 + 4 * static_cast<std::uint64_t>(d);
    const std::size_t got = read_some(f.get(), where, at, b, 4);
    if (got != 4)
      where.fail(at + got, "truncated: the header of rank " + std::to_string(head[3]) +
                               " ends inside dimension " + std::to_string(d));
    const std::uint64_t dim = (std::uint64_t{b[0]} << 24) | (b[1] << 16) | (b[2] << 8) | b[3];
    // No real dataset comes near 2^40 bytes: a larger header is corrupt, not a reason to allocate.
    if (dim && total > (std::uint64_t{1} << 40) / dim / item)
      where.fail(at, "the dimensions " + shape_str(dims) + " then " + std::to_string(dim) +
                         " are too large to be real (a corrupt header)");
    dims.push_back(static_cast<std::int64_t>(dim));
    total *= dim;
  }
  const std::uint64_t data_at = 4 + 4 * std::uint64_t{head[3]};
  const std::size_t nbytes = static_cast<std::size_t>(total) * item;
  std::string bytes(nbytes, '\0');
  const std::size_t got = read_some(f.get(), where, data_at, bytes.data(), nbytes);
  if (got != nbytes)
    where.fail(data_at + got, "truncated: shape " + shape_str(dims) + " needs " +
                                  std::to_string(nbytes) + " data bytes, the file has " +
                                  std::to_string(got));
  std::uint8_t extra;
  if (read_some(f.get(), where, data_at + nbytes, &extra, 1) != 0)
    where.fail(data_at + nbytes, "trailing bytes after the " + std::to_string(nbytes) +
                                     " data bytes of shape " + shape_str(dims));
  // IDX stores multi-byte elements big-endian.
  if (item > 1 && std::endian::native == std::endian::little)
    for (std::size_t i = 0; i < nbytes; i += item) std::reverse(&bytes[i], &bytes[i] + item);
  return codec::decode(*src, dims, bytes.data(), bytes.size(), "load_idx: " + path, nullptr);
}

}  // namespace linum::data
