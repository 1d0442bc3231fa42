// Flax's rng derivation (flax/core/scope.py): a LazyRng is a base key plus a static suffix of path
// names and counters; turning it into a key hashes the whole suffix with SHA-1 once and folds the
// first 4 digest bytes into the base key, bit for bit as flax/core/scope.py does.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <linum/autodiff/array.hpp>

namespace linum::lift {

// flax_fix_rng_separator (default false): feed a 0 byte before each suffix element, so that
// ('ab', 'c') and ('a', 'bc') no longer collide.
bool fix_rng_separator();
void set_fix_rng_separator(bool on);
// Sets the flag for a block and restores the old value on exit (tests, replays of old runs).
class FixRngSeparatorScope {
 public:
  explicit FixRngSeparatorScope(bool on) : old_(fix_rng_separator()) { set_fix_rng_separator(on); }
  ~FixRngSeparatorScope() { set_fix_rng_separator(old_); }
  FixRngSeparatorScope(const FixRngSeparatorScope&) = delete;
  FixRngSeparatorScope& operator=(const FixRngSeparatorScope&) = delete;

 private:
  bool old_;
};

// One suffix element: a scope name or a counter.
using RngSuffixItem = std::variant<std::string, std::uint64_t>;
using RngSuffix = std::vector<RngSuffixItem>;

// SHA-1 of `bytes` (FIPS 180-4), the digest flax's _fold_in_static uses.
std::array<std::uint8_t, 20> sha1(std::string_view bytes);
// The uint32 flax folds into the key: the first 4 digest bytes of the suffix's bytes, big-endian.
std::uint32_t rng_suffix_hash(const RngSuffix& data);
// flax's _fold_in_static(rng, data): the key itself for an empty suffix.
Array fold_in_static(const Array& rng, const RngSuffix& data);

struct LazyRng {
  Array rng;         // the base key (uint32[2])
  RngSuffix suffix;  // names (and, at make_rng, the counter) still to fold in

  // LazyRng.create(rng, *suffix).
  static LazyRng create(const LazyRng& base, RngSuffix more = {});
  static LazyRng create(const Array& key, RngSuffix suffix = {});
  Array as_jax_rng() const { return fold_in_static(rng, suffix); }
  LazyRng clear_suffix() const { return {rng, {}}; }
};

// Whether `key` is one PRNG key (uint32[2]); a batch of keys is not.
bool is_valid_rng(const Array& key);

}  // namespace linum::lift
