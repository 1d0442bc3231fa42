// SHA-1 and the LazyRng suffix hash of flax/core/scope.py's _fold_in_static.
#include <linum/lift/rng.hpp>

#include <atomic>
#include <cstring>

#include <linum/autodiff/random/random.hpp>

namespace linum::lift {

namespace {
std::atomic<bool> g_fix_rng_separator{false};

std::uint32_t rotl(std::uint32_t x, int n) { return (x << n) | (x >> (32 - n)); }

// One 64-byte block of FIPS 180-4 SHA-1.
void sha1_block(std::array<std::uint32_t, 5>& h, const std::uint8_t* p) {
  std::uint32_t w[80];
  for (int i = 0; i < 16; ++i) {
    w[i] = std::uint32_t(p[4 * i]) << 24 | std::uint32_t(p[4 * i + 1]) << 16 |
           std::uint32_t(p[4 * i + 2]) << 8 | std::uint32_t(p[4 * i + 3]);
  }
  for (int i = 16; i < 80; ++i) w[i] = rotl(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
  std::uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
  for (int i = 0; i < 80; ++i) {
    std::uint32_t f, k;
    if (i < 20)
      f = (b & c) | (~b & d), k = 0x5a827999;
    else if (i < 40)
      f = b ^ c ^ d, k = 0x6ed9eba1;
    else if (i < 60)
      f = (b & c) | (b & d) | (c & d), k = 0x8f1bbcdc;
    else
      f = b ^ c ^ d, k = 0xca62c1d6;
    const std::uint32_t t = rotl(a, 5) + f + e + k + w[i];
    e = d, d = c, c = rotl(b, 30), b = a, a = t;
  }
  h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e;
}

// The bytes flax feeds to SHA-1 for one suffix element: a string's UTF-8 bytes, an int's
// minimal big-endian bytes (0 gives none).
void append_item(std::string& out, const RngSuffixItem& x) {
  if (const auto* s = std::get_if<std::string>(&x)) {
    out += *s;
    return;
  }
  const std::uint64_t v = std::get<std::uint64_t>(x);
  int n = 0;
  while (n < 8 && (v >> (8 * n)) != 0) ++n;
  for (int i = n - 1; i >= 0; --i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}
}  // namespace

bool fix_rng_separator() { return g_fix_rng_separator.load(std::memory_order_relaxed); }
void set_fix_rng_separator(bool on) { g_fix_rng_separator.store(on, std::memory_order_relaxed); }

std::array<std::uint8_t, 20> sha1(std::string_view bytes) {
  std::array<std::uint32_t, 5> h = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0};
  const auto* p = reinterpret_cast<const std::uint8_t*>(bytes.data());
  std::size_t n = bytes.size();
  for (; n >= 64; n -= 64, p += 64) sha1_block(h, p);
  // Padding: 0x80, zeros, then the message length in bits as a 64-bit big-endian number.
  std::uint8_t tail[128] = {};
  std::memcpy(tail, p, n);
  tail[n] = 0x80;
  const std::size_t blocks = n + 9 <= 64 ? 1 : 2;
  const std::uint64_t bits = static_cast<std::uint64_t>(bytes.size()) * 8;
  for (int i = 0; i < 8; ++i)
    tail[blocks * 64 - 1 - i] = static_cast<std::uint8_t>(bits >> (8 * i));
  for (std::size_t b = 0; b < blocks; ++b) sha1_block(h, tail + 64 * b);
  std::array<std::uint8_t, 20> digest;
  for (int i = 0; i < 20; ++i)
    digest[i] = static_cast<std::uint8_t>(h[i / 4] >> (24 - 8 * (i % 4)));
  return digest;
}

std::uint32_t rng_suffix_hash(const RngSuffix& data) {
  const bool sep = fix_rng_separator();
  std::string bytes;
  for (const auto& x : data) {
    if (sep) bytes += '\0';
    append_item(bytes, x);
  }
  const auto d = sha1(bytes);
  return std::uint32_t(d[0]) << 24 | std::uint32_t(d[1]) << 16 | std::uint32_t(d[2]) << 8 | d[3];
}

Array fold_in_static(const Array& rng, const RngSuffix& data) {
  if (data.empty()) return rng;
  return random::fold_in(rng, static_cast<std::int64_t>(rng_suffix_hash(data)));
}

LazyRng LazyRng::create(const LazyRng& base, RngSuffix more) {
  LazyRng r = base;
  r.suffix.insert(r.suffix.end(), std::make_move_iterator(more.begin()),
                  std::make_move_iterator(more.end()));
  return r;
}

LazyRng LazyRng::create(const Array& key, RngSuffix suffix) { return {key, std::move(suffix)}; }

bool is_valid_rng(const Array& key) {
  return key.valid() && key.dtype() == DType::uint32 && key.shape() == Shape{2};
}

}  // namespace linum::lift
