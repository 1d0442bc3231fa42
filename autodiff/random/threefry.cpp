// threefry2x32 and the key/bits algorithms of jax/_src/random/threefry2x32.py, both modes.
#include <linum/autodiff/random/threefry.hpp>

#include <atomic>
#include <limits>
#include <string>
#include <vector>

#include <linum/error.hpp>

namespace linum::random {

namespace {
std::atomic<bool> g_partitionable{true};
thread_local int t_override = -1;  // -1: none, else 0/1
}  // namespace

bool threefry_partitionable() {
  return t_override >= 0 ? t_override != 0 : g_partitionable.load(std::memory_order_relaxed);
}

void set_threefry_partitionable(bool on) { g_partitionable.store(on, std::memory_order_relaxed); }

ThreefryPartitionableScope::ThreefryPartitionableScope(bool on) : previous_(t_override) {
  t_override = on ? 1 : 0;
}

ThreefryPartitionableScope::~ThreefryPartitionableScope() { t_override = previous_; }

}  // namespace linum::random

namespace linum::random::detail {

namespace {

constexpr std::uint32_t rotl(std::uint32_t x, int d) { return (x << d) | (x >> (32 - d)); }

// The 20 rounds: five groups of four, each followed by a key injection; rotation sets alternate.
inline std::array<std::uint32_t, 2> block(std::uint32_t k0, std::uint32_t k1, std::uint32_t x0,
                                          std::uint32_t x1) {
  const std::uint32_t ks[3] = {k0, k1, k0 ^ k1 ^ 0x1BD11BDAu};
  constexpr int kRot[2][4] = {{13, 15, 26, 6}, {17, 29, 16, 24}};
  x0 += ks[0];
  x1 += ks[1];
  for (int i = 0; i < 5; ++i) {
    for (int r : kRot[i % 2]) {
      x0 += x1;
      x1 = rotl(x1, r);
      x1 ^= x0;
    }
    x0 += ks[(i + 1) % 3];
    x1 += ks[(i + 2) % 3] + static_cast<std::uint32_t>(i + 1);
  }
  return {x0, x1};
}

inline std::uint32_t hi32(std::uint64_t i) { return static_cast<std::uint32_t>(i >> 32); }
inline std::uint32_t lo32(std::uint64_t i) { return static_cast<std::uint32_t>(i); }

// threefry_2x32(key, iota(m)) without materialising the counts: word j < h pairs with h + j
// (or with the zero padding when m is odd).
void iota_words(KeyData key, std::uint32_t* out, std::uint64_t m) {
  const std::uint64_t h = (m + 1) / 2;
  for (std::uint64_t j = 0; j < h; ++j) {
    const std::uint64_t b = h + j;
    const auto y = block(key[0], key[1], static_cast<std::uint32_t>(j),
                         b < m ? static_cast<std::uint32_t>(b) : 0u);
    out[j] = y[0];
    if (b < m) out[b] = y[1];
  }
}

// The legacy stream of m 32-bit words: one iota, or for draws of 2^32 - 1 words and more, JAX's
// blocks of 2^32 - 1 words under keys from a legacy split.
void legacy_words(KeyData key, std::uint32_t* out, std::uint64_t m) {
  constexpr std::uint64_t kBlock = std::numeric_limits<std::uint32_t>::max();
  const std::uint64_t nblocks = m / kBlock, rem = m % kBlock;
  if (nblocks == 0) return iota_words(key, out, m);
  std::vector<KeyData> keys(nblocks + 1);
  split(key, keys, /*partitionable=*/false);
  for (std::uint64_t b = 0; b < nblocks; ++b) iota_words(keys[b], out + b * kBlock, kBlock);
  iota_words(keys[nblocks], out + nblocks * kBlock, rem);
}

}  // namespace

std::array<std::uint32_t, 2> threefry2x32(KeyData key, std::uint32_t x0, std::uint32_t x1) {
  return block(key[0], key[1], x0, x1);
}

void threefry_2x32(KeyData key, std::span<const std::uint32_t> count,
                   std::span<std::uint32_t> out) {
  if (out.size() != count.size())
    throw ValueError("threefry_2x32: output has " + std::to_string(out.size()) +
                     " elements, count has " + std::to_string(count.size()));
  const std::size_t n = count.size(), h = (n + 1) / 2;
  for (std::size_t j = 0; j < h; ++j) {
    const std::size_t b = h + j;
    const auto y = block(key[0], key[1], count[j], b < n ? count[b] : 0u);
    out[j] = y[0];
    if (b < n) out[b] = y[1];
  }
}

KeyData seed_key(std::int64_t seed, bool x64) {
  const auto u = static_cast<std::uint64_t>(seed);
  return {x64 ? hi32(u) : 0u, lo32(u)};
}

void split(KeyData key, std::span<KeyData> out, bool partitionable) {
  const std::uint64_t n = out.size();
  if (partitionable) {
    for (std::uint64_t i = 0; i < n; ++i) out[i] = block(key[0], key[1], hi32(i), lo32(i));
    return;
  }
  // Legacy: threefry_2x32(key, iota(2n)) read as n rows of two words.
  if (2 * n > std::numeric_limits<std::uint32_t>::max())
    throw ValueError("split: " + std::to_string(n) + " keys exceed the legacy uint32 counter");
  std::vector<std::uint32_t> words(2 * n);
  iota_words(key, words.data(), 2 * n);
  for (std::uint64_t i = 0; i < n; ++i) out[i] = {words[2 * i], words[2 * i + 1]};
}

KeyData fold_in(KeyData key, std::uint32_t data) { return block(key[0], key[1], 0u, data); }

void random_bits(KeyData key, std::span<std::uint32_t> out, bool partitionable) {
  const std::uint64_t n = out.size();
  if (partitionable) {
    for (std::uint64_t i = 0; i < n; ++i) {
      const auto y = block(key[0], key[1], hi32(i), lo32(i));
      out[i] = y[0] ^ y[1];
    }
    return;
  }
  legacy_words(key, out.data(), n);
}

void random_bits(KeyData key, std::span<std::uint64_t> out, bool partitionable) {
  const std::uint64_t n = out.size();
  if (partitionable) {
    for (std::uint64_t i = 0; i < n; ++i) {
      const auto y = block(key[0], key[1], hi32(i), lo32(i));
      out[i] = (static_cast<std::uint64_t>(y[0]) << 32) | y[1];
    }
    return;
  }
  // Legacy: 2n words; the first half are the high words, the second half the low words.
  std::vector<std::uint32_t> words(2 * n);
  legacy_words(key, words.data(), 2 * n);
  for (std::uint64_t i = 0; i < n; ++i)
    out[i] = (static_cast<std::uint64_t>(words[i]) << 32) | words[n + i];
}

namespace {

// 8/16-bit draws: partitionable keeps the low bits of b1 ^ b2; legacy cuts each 32-bit word of
// a ceil(width * n / 32)-word stream into little-endian sub-words.
template <class U>
void narrow_bits(KeyData key, std::span<U> out, bool partitionable) {
  constexpr int kWidth = 8 * sizeof(U);
  const std::uint64_t n = out.size();
  if (partitionable) {
    for (std::uint64_t i = 0; i < n; ++i) {
      const auto y = block(key[0], key[1], hi32(i), lo32(i));
      out[i] = static_cast<U>(y[0] ^ y[1]);
    }
    return;
  }
  constexpr int kPer = 32 / kWidth;
  const std::uint64_t m = (n + kPer - 1) / kPer;
  std::vector<std::uint32_t> words(m);
  legacy_words(key, words.data(), m);
  for (std::uint64_t i = 0; i < n; ++i)
    out[i] = static_cast<U>(words[i / kPer] >> (kWidth * (i % kPer)));
}

}  // namespace

void random_bits(KeyData key, std::span<std::uint16_t> out, bool partitionable) {
  narrow_bits(key, out, partitionable);
}

void random_bits(KeyData key, std::span<std::uint8_t> out, bool partitionable) {
  narrow_bits(key, out, partitionable);
}

}  // namespace linum::random::detail
