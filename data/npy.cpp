// The .npy format (numpy/lib/format.py): a magic string, a version, a header length, then a
// Python dict literal {'descr': <dtype str>, 'fortran_order': <bool>, 'shape': <tuple>} padded
// with spaces and a newline so that the data starts on a 64-byte boundary, then the raw data.
#include <bit>
#include <cstring>
#include <limits>
#include <optional>
#include <utility>

#include <linum/data/npy.hpp>

#include "../nn/dtype_codec.hpp"
#include "npy_codec.hpp"

namespace linum::data {
namespace detail {
namespace {

namespace codec = serialization::codec;

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicLen = 6;
constexpr std::size_t kAlign = 64;         // numpy's ARRAY_ALIGN
constexpr std::size_t kGrowthDigits = 21;  // numpy's GROWTH_AXIS_MAX_DIGITS
constexpr std::size_t kMaxRank = 64;

std::uint64_t load_le(const char* p, int bytes) {
  std::uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

// A printable rendering of up to 16 bytes, for "found ..." in messages.
std::string show(std::string_view s) {
  std::string out;
  for (unsigned char c : s.substr(0, 16)) {
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

// The element type a descr like '<f4' names, and whether its bytes need swapping.
struct Descr {
  codec::Src src;
  bool swap;
};

Descr parse_descr(const std::string& d, const Where& where, std::uint64_t offset) {
  std::string_view s = d;
  char order = '=';
  if (!s.empty() && (s[0] == '<' || s[0] == '>' || s[0] == '|' || s[0] == '=')) {
    order = s[0];
    s.remove_prefix(1);
  }
  const char kind = s.empty() ? '?' : s[0];
  // The item size in bytes; 0 unless 1 to 3 digits follow the kind ('|O' has none).
  const std::string_view digits = s.size() > 1 ? s.substr(1) : std::string_view();
  std::size_t size = 0;
  if (digits.size() <= 3 && digits.find_first_not_of("0123456789") == std::string_view::npos)
    for (char c : digits) size = size * 10 + static_cast<std::size_t>(c - '0');
  std::optional<codec::Src> src;
  const char* what = "not a numpy dtype string linum knows";
  switch (kind) {
    case 'b':
      if (size == 1) src = codec::Src::b;
      break;
    case 'i':
      if (size == 1) src = codec::Src::i8;
      if (size == 2) src = codec::Src::i16;
      if (size == 4) src = codec::Src::i32;
      if (size == 8) src = codec::Src::i64;
      break;
    case 'u':
      if (size == 1) src = codec::Src::u8;
      if (size == 2) src = codec::Src::u16;
      if (size == 4) src = codec::Src::u32;
      if (size == 8) src = codec::Src::u64;
      break;
    case 'f':
      if (size == 2) src = codec::Src::f16;
      if (size == 4) src = codec::Src::f32;
      if (size == 8) src = codec::Src::f64;
      if (size > 8) what = "extended precision floats";
      break;
    case 'c': what = "complex numbers"; break;
    case 'U': what = "Unicode strings"; break;
    case 'S':
    case 'a': what = "byte strings"; break;
    case 'O': what = "Python objects"; break;
    case 'V': what = "raw void bytes, e.g. ml_dtypes' bfloat16"; break;
    case 'M': what = "datetime64"; break;
    case 'm': what = "timedelta64"; break;
    default: break;
  }
  if (!src)
    where.fail<NotImplementedError>(
        offset, "dtype '" + show(d) + "' (" + what +
                    ") is not supported; linum reads bool, int8, int16, int32, int64, uint8, "
                    "uint16, uint32, uint64, float16, float32 and float64");
  constexpr bool little = std::endian::native == std::endian::little;
  const bool swap =
      codec::itemsize(*src) > 1 && ((order == '>' && little) || (order == '<' && !little));
  return {*src, swap};
}

// A recursive-descent reader of the header's dict literal; every error names its byte.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, std::uint64_t base, const Where& where)
      : s_(text), base_(base), where_(where) {}

  struct Header {
    std::string descr;
    std::uint64_t descr_offset = 0;
    bool fortran = false;
    Shape shape;
  };

  Header parse() {
    Header h;
    bool seen_descr = false, seen_fortran = false, seen_shape = false;
    expect('{', "'{' opening the header dict");
    while (true) {
      if (eat('}')) break;
      const std::uint64_t key_at = pos_;
      const std::string key = string_literal("a key");
      expect(':', "':' after the key");
      space();
      auto once = [&](bool& seen) {
        if (seen) fail_at(key_at, "the key '" + key + "' appears twice");
        seen = true;
      };
      if (key == "descr") {
        once(seen_descr);
        h.descr_offset = base_ + pos_;
        if (peek() == '[')
          where_.fail<NotImplementedError>(
              h.descr_offset, "structured dtypes (a list of fields) are not supported");
        h.descr = string_literal("the dtype string");
      } else if (key == "fortran_order") {
        once(seen_fortran);
        h.fortran = boolean();
      } else if (key == "shape") {
        once(seen_shape);
        h.shape = tuple();
      } else {
        fail_at(key_at, "unexpected key '" + show(key) +
                            "' (the header has exactly 'descr', 'fortran_order' and 'shape')");
      }
      if (eat(',')) continue;
      expect('}', "',' or '}' after a value");
      break;
    }
    space();
    if (pos_ != s_.size()) fail("unexpected '" + show(s_.substr(pos_)) + "' after the header dict");
    if (!seen_descr || !seen_fortran || !seen_shape)
      fail_at(0, std::string("the key '") +
                     (!seen_descr     ? "descr"
                      : !seen_fortran ? "fortran_order"
                                      : "shape") +
                     "' is missing");
    return h;
  }

 private:
  [[noreturn]] void fail_at(std::uint64_t pos, const std::string& what) const {
    where_.fail(base_ + pos, "bad .npy header: " + what);
  }
  [[noreturn]] void fail(const std::string& what) const { fail_at(pos_, what); }

  void space() {
    while (pos_ < s_.size() &&
           (s_[pos_] == ' ' || s_[pos_] == '\t' || s_[pos_] == '\n' || s_[pos_] == '\r'))
      ++pos_;
  }
  char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
  bool eat(char c) {
    space();
    if (peek() != c) return false;
    ++pos_;
    return true;
  }
  std::string found() const {
    return pos_ < s_.size() ? quoted(show(s_.substr(pos_, 8))) : "the end of the header";
  }
  void expect(char c, const char* what) {
    if (!eat(c)) fail(std::string("expected ") + what + ", found " + found());
  }

  std::string string_literal(const char* what) {
    space();
    const char q = peek();
    if (q != '\'' && q != '"')
      fail(std::string("expected ") + what + " (a quoted string), found " + found());
    const std::size_t start = ++pos_;
    while (pos_ < s_.size() && s_[pos_] != q) {
      if (s_[pos_] == '\\') fail("escape sequences are not supported in header strings");
      ++pos_;
    }
    if (pos_ == s_.size()) fail_at(start - 1, "unterminated string");
    return std::string(s_.substr(start, pos_++ - start));
  }

  bool boolean() {
    space();
    if (s_.substr(pos_, 4) == "True") {
      pos_ += 4;
      return true;
    }
    if (s_.substr(pos_, 5) == "False") {
      pos_ += 5;
      return false;
    }
    fail("'fortran_order' must be True or False, found " + found());
  }

  Shape tuple() {
    expect('(', "'(' opening the shape tuple");
    Shape dims;
    bool comma = false;
    while (!eat(')')) {
      if (dims.size() == kMaxRank) fail("more than " + std::to_string(kMaxRank) + " dimensions");
      dims.push_back(dimension());
      comma = eat(',');
      if (!comma) {
        expect(')', "',' or ')' in the shape tuple");
        break;
      }
    }
    if (dims.size() == 1 && !comma) fail("the shape must be a tuple: '(n,)', not '(n)'");
    return dims;
  }

  std::int64_t dimension() {
    space();
    if (peek() == '-') fail("negative dimension");
    if (peek() < '0' || peek() > '9') fail("expected a dimension (an integer), found " + found());
    std::int64_t v = 0;
    while (peek() >= '0' && peek() <= '9') {
      if (v > (std::numeric_limits<std::int64_t>::max() - 9) / 10)
        fail("a dimension does not fit in 64 bits");
      v = v * 10 + (s_[pos_++] - '0');
    }
    if (peek() == 'L') ++pos_;  // Python 2's long literal, in files numpy wrote long ago
    return v;
  }

  std::string_view s_;
  std::size_t pos_ = 0;
  std::uint64_t base_;
  const Where& where_;
};

// The elements in C order and native byte order: Fortran-order files are transposed and
// foreign byte orders swapped, in one pass.
std::string to_native_c_order(const char* data, const Shape& shape, std::size_t item, bool swap,
                              bool fortran) {
  std::size_t count = 1;
  for (auto d : shape) count *= static_cast<std::size_t>(d);
  std::string out(count * item, '\0');
  const std::size_t rank = shape.size();
  // Fortran strides (in elements) of the C-order index walked by an odometer.
  std::vector<std::size_t> fstride(rank, 1), index(rank, 0);
  for (std::size_t k = 1; k < rank; ++k)
    fstride[k] = fstride[k - 1] * static_cast<std::size_t>(shape[k - 1]);
  std::size_t src = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const char* from = data + (fortran ? src : i) * item;
    char* to = out.data() + i * item;
    for (std::size_t b = 0; b < item; ++b) to[b] = from[swap ? item - 1 - b : b];
    if (!fortran) continue;
    for (std::size_t k = rank; k-- > 0;) {  // next C-order index; src follows in Fortran strides
      src += fstride[k];
      if (++index[k] < static_cast<std::size_t>(shape[k])) break;
      src -= fstride[k] * index[k];
      index[k] = 0;
    }
  }
  return out;
}

std::string shape_repr(const Shape& s) {
  std::string r = "(";
  for (std::size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + (s.size() == 1 ? ",)" : ")");
}

std::string_view descr_of(DType d) {
  static_assert(std::endian::native == std::endian::little,
                "save_npy writes '<' (little-endian) dtype strings from native buffers");
  switch (d) {
    case DType::float32: return "<f4";
    case DType::float64: return "<f8";
    case DType::int32: return "<i4";
    case DType::uint32: return "<u4";
    case DType::bool_: return "|b1";
    case DType::float16: return "<f2";
    case DType::bfloat16:  // ml_dtypes' bfloat16 has no numpy dtype string (np.save writes "|V2")
      throw TypeError(
          "encode_npy / save_npy: bfloat16 arrays have no .npy dtype; astype float32 "
          "first");
    case DType::complex64:
    case DType::complex128:
      // The readers refuse complex .npy too: one pair of changes when they are wanted.
      throw TypeError("encode_npy / save_npy: complex arrays cannot be written to .npy yet; got " +
                      std::string(dtype_name(d)));
  }
  return "?";
}

}  // namespace

Array parse_npy(const char* bytes, std::size_t n, const Where& where,
                const std::shared_ptr<void>& owner, NpyDescr* descr_out) {
  if (n < 10)
    where.fail(n,
               "truncated: a .npy file starts with 10 bytes (magic, version, header length), "
               "this one has " +
                   std::to_string(n));
  if (std::memcmp(bytes, kMagic, kMagicLen) != 0)
    where.fail(0, "not a .npy file: expected the magic string \\x93NUMPY, found '" +
                      show(std::string_view(bytes, kMagicLen)) + "'");
  const int major = static_cast<unsigned char>(bytes[6]),
            minor = static_cast<unsigned char>(bytes[7]);
  if (minor != 0 || major < 1 || major > 3)
    where.fail(6, "unsupported .npy format version " + std::to_string(major) + "." +
                      std::to_string(minor) + " (linum reads 1.0, 2.0 and 3.0)");
  const std::size_t len_bytes = major == 1 ? 2 : 4, preamble = 8 + len_bytes;
  if (n < preamble)
    where.fail(n, "truncated: the header length of a version " + std::to_string(major) +
                      ".0 file ends at byte " + std::to_string(where.pos(preamble)));
  const std::uint64_t header_len = load_le(bytes + 8, static_cast<int>(len_bytes));
  if (header_len > n - preamble)
    where.fail(n, "truncated: the header of " + std::to_string(header_len) + " bytes from byte " +
                      std::to_string(where.pos(preamble)) + " runs past the end");
  const auto h =
      HeaderParser(std::string_view(bytes + preamble, header_len), preamble, where).parse();
  const Descr descr = parse_descr(h.descr, where, h.descr_offset);
  if (descr_out) *descr_out = {h.descr, h.descr_offset};

  const std::size_t data_at = preamble + header_len, item = codec::itemsize(descr.src);
  // numpy's limit: the nonzero dimensions times the item size must fit, so an empty array is
  // refused too when the rest is too big. It is counted with 8-byte items, the widest that linum
  // loads, so that what reads here also reads back once written in the dtype it loaded as.
  std::uint64_t bound = 8, need = item;
  for (auto d : h.shape) {
    if (d != 0 && __builtin_mul_overflow(bound, static_cast<std::uint64_t>(d), &bound))
      where.fail(preamble, "the shape " + shape_str(h.shape) + " of '" + h.descr +
                               "' elements needs more than 2^64 bytes");
    need *= static_cast<std::uint64_t>(d);  // within bound: item <= 8
  }
  const std::size_t have = n - data_at;
  if (need > have)
    where.fail(n, "truncated: shape " + shape_str(h.shape) + " of '" + h.descr + "' needs " +
                      std::to_string(need) + " data bytes from byte " +
                      std::to_string(where.pos(data_at)) + ", only " + std::to_string(have) +
                      " follow");
  if (need < have)
    where.fail(data_at + need, std::to_string(have - need) + " bytes after the " +
                                   std::to_string(need) + " data bytes of shape " +
                                   shape_str(h.shape) + " of '" + h.descr + "'");
  const std::string fn = where.at(data_at);
  const std::string_view fn_view(fn.data(), fn.size() - 2);  // the codec adds its own ": "
  const bool fortran = h.fortran && h.shape.size() > 1;
  if (!descr.swap && !fortran)
    return codec::decode(descr.src, h.shape, bytes + data_at, need, fn_view, owner);
  const std::string native = to_native_c_order(bytes + data_at, h.shape, item, descr.swap, fortran);
  return codec::decode(descr.src, h.shape, native.data(), native.size(), fn_view, nullptr);
}

std::string write_npy(const Array& a, std::string_view fn) {
  const codec::Bytes data = codec::bytes_of(a, fn);
  const Shape& shape = data.keep.shape();
  std::string header = "{'descr': '" + std::string(descr_of(data.keep.dtype())) +
                       "', 'fortran_order': False, 'shape': " + shape_repr(shape) + ", }";
  // numpy leaves room to grow the first axis in place.
  if (!shape.empty()) header.append(kGrowthDigits - std::to_string(shape[0]).size(), ' ');
  // Version 1.0 stores the header length in 2 bytes, 2.0 in 4 (numpy picks the oldest that fits).
  std::size_t hlen = header.size() + 1, len_bytes = 2;
  std::size_t pad = kAlign - (kMagicLen + 2 + len_bytes + hlen) % kAlign;
  if (hlen + pad > 0xFFFF) {
    len_bytes = 4;
    pad = kAlign - (kMagicLen + 2 + len_bytes + hlen) % kAlign;
  }
  std::string out(kMagic, kMagicLen);
  out += static_cast<char>(len_bytes == 2 ? 1 : 2);
  out += '\0';
  const std::uint64_t total = hlen + pad;
  for (std::size_t i = 0; i < len_bytes; ++i) out += static_cast<char>((total >> (8 * i)) & 0xFF);
  out += header;
  out.append(pad, ' ');
  out += '\n';
  out.append(data.data, data.size);
  return out;
}

}  // namespace detail

Array load_npy(const std::string& path) {
  auto file = detail::read_file("load_npy", path);
  return detail::parse_npy(file->data(), file->size(), {"load_npy", path}, file);
}

Array load_npy(const std::string& path, DType dtype) {
  auto file = detail::read_file("load_npy", path);
  const detail::Where where("load_npy", path);
  detail::NpyDescr descr;
  Array a = detail::parse_npy(file->data(), file->size(), where, file, &descr);
  if (a.dtype() != dtype)
    where.fail<TypeError>(descr.offset, "the file holds '" + descr.text +
                                            "' elements, which load as " +
                                            std::string(dtype_name(a.dtype())) +
                                            ", not the expected " + std::string(dtype_name(dtype)));
  return a;
}

void save_npy(const std::string& path, const Array& a) {
  detail::write_file("save_npy", path, detail::write_npy(a, "save_npy"));
}

Array decode_npy(std::span<const std::byte> bytes, const std::string& source) {
  return detail::parse_npy(reinterpret_cast<const char*>(bytes.data()), bytes.size(),
                           {"decode_npy", source}, nullptr);
}

std::string encode_npy(const Array& a) { return detail::write_npy(a, "encode_npy"); }

}  // namespace linum::data
