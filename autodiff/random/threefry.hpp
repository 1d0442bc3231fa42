// JAX's threefry2x32 PRNG over raw buffers: the 20-round block function, the array helper, key
// seeding, split, fold_in and random bits in both of JAX's modes (jax_threefry_partitionable).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

namespace linum::random {

// ---- the mode setting ---------------------------------------------------------------------
//
// JAX's `jax_threefry_partitionable` flag changes split() and random bits (not fold_in).
// true (default, as in JAX >= 0.5): the i-th key/word is threefry2x32(key, (hi32(i), lo32(i))).
// false (legacy, JAX < 0.5 and most published notebooks): counters are one iota over the whole
// draw. The effective value is the innermost ThreefryPartitionableScope of the calling thread,
// else the process-wide value set by set_threefry_partitionable (atomic, default true).

bool threefry_partitionable();
void set_threefry_partitionable(bool on);

// Overrides the mode for the current thread while alive (nests; like JAX's
// `with jax.threefry_partitionable(False):`).
class ThreefryPartitionableScope {
 public:
  explicit ThreefryPartitionableScope(bool on);
  ~ThreefryPartitionableScope();
  ThreefryPartitionableScope(const ThreefryPartitionableScope&) = delete;
  ThreefryPartitionableScope& operator=(const ThreefryPartitionableScope&) = delete;

 private:
  int previous_;  // -1: no override before this scope
};

}  // namespace linum::random

namespace linum::random::detail {

// The two uint32 words of a threefry key, as jax.random.key_data shows them.
using KeyData = std::array<std::uint32_t, 2>;

// The threefry2x32 block function (20 rounds) on one counter pair.
std::array<std::uint32_t, 2> threefry2x32(KeyData key, std::uint32_t x0, std::uint32_t x1);

// JAX's threefry_2x32(keypair, count) array helper: the flat counts are padded to even length,
// halved into (a, b), hashed pairwise and returned as concat(y0, y1) without the padding.
void threefry_2x32(KeyData key, std::span<const std::uint32_t> count, std::span<std::uint32_t> out);

// Seeds as jax.random.PRNGKey: with JAX's default (x64 disabled) the seed is a 32-bit integer,
// so the key is [0, low 32 bits]; with x64 enabled it is [high 32 bits, low 32 bits].
KeyData seed_key(std::int64_t seed, bool x64 = false);

// split(key, n) written to out[0..n).
void split(KeyData key, std::span<KeyData> out, bool partitionable);
// fold_in(key, data) = threefry2x32(key, (0, data)); identical in both modes.
KeyData fold_in(KeyData key, std::uint32_t data);

// Random bits of the given width for a draw of out.size() elements (row-major flat order).
void random_bits(KeyData key, std::span<std::uint32_t> out, bool partitionable);
void random_bits(KeyData key, std::span<std::uint64_t> out, bool partitionable);
void random_bits(KeyData key, std::span<std::uint16_t> out, bool partitionable);
void random_bits(KeyData key, std::span<std::uint8_t> out, bool partitionable);

}  // namespace linum::random::detail
