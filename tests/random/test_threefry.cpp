// threefry2x32, seeding, split, fold_in and random bits against JAX's known answers
// (jax/tests/random_test.py and random_impl_test.py), in both jax_threefry_partitionable modes,
// plus the mode setting.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <thread>
#include <vector>

#include <linum/autodiff/random/threefry.hpp>

namespace test_threefry {

namespace lr = linum::random;
using lr::detail::KeyData;

namespace {

KeyData key(std::int64_t seed) { return lr::detail::seed_key(seed); }

template <class U>
std::vector<U> bits(KeyData k, std::size_t n, bool partitionable) {
  std::vector<U> out(n);
  lr::detail::random_bits(k, std::span(out), partitionable);
  return out;
}

std::vector<KeyData> split(KeyData k, std::size_t n, bool partitionable) {
  std::vector<KeyData> out(n);
  lr::detail::split(k, std::span(out), partitionable);
  return out;
}

}  // namespace

TEST_SUITE("random.threefry") {
  TEST_CASE("the Random123 known-answer vectors of threefry2x32") {
    using lr::detail::threefry2x32;
    CHECK(threefry2x32({0, 0}, 0, 0) == std::array<std::uint32_t, 2>{0x6B200159u, 0x99BA4EFEu});
    CHECK(threefry2x32({0xFFFFFFFFu, 0xFFFFFFFFu}, 0xFFFFFFFFu, 0xFFFFFFFFu) ==
          std::array<std::uint32_t, 2>{0x1CB996FCu, 0xBB002BE7u});
    CHECK(threefry2x32({0x13198A2Eu, 0x03707344u}, 0x243F6A88u, 0x85A308D3u) ==
          std::array<std::uint32_t, 2>{0xC4923A9Cu, 0x483DF7A0u});
  }

  TEST_CASE("the array helper pairs the first half of the counts with the second") {
    const std::size_t n = 10'000'000;
    std::vector<std::uint32_t> count(2 * n), out(2 * n);
    std::fill(count.begin(), count.begin() + n, 0x243F6A88u);
    std::fill(count.begin() + n, count.end(), 0x85A308D3u);
    lr::detail::threefry_2x32({0x13198A2Eu, 0x03707344u}, count, out);
    bool first = true, second = true;
    for (std::size_t i = 0; i < n; ++i) {
      first = first && out[i] == 0xC4923A9Cu;
      second = second && out[n + i] == 0x483DF7A0u;
    }
    CHECK(first);
    CHECK(second);
  }

  TEST_CASE("the array helper pads odd counts with a zero and drops the padded output") {
    const std::vector<std::uint32_t> count{1, 2, 3};
    std::vector<std::uint32_t> out(3);
    lr::detail::threefry_2x32({7, 9}, count, out);
    const auto a = lr::detail::threefry2x32({7, 9}, 1, 3);
    const auto b = lr::detail::threefry2x32({7, 9}, 2, 0);
    CHECK(out == std::vector<std::uint32_t>{a[0], b[0], a[1]});
  }

  TEST_CASE("PRNGKey seeds as JAX with x64 disabled, and with x64 enabled") {
    CHECK(key(0) == KeyData{0, 0});
    CHECK(key(1) == KeyData{0, 1});
    CHECK(key(3) == KeyData{0, 3});
    CHECK(key(-1) == KeyData{0, 4294967295u});
    CHECK(key(-2) == KeyData{0, 4294967294u});
    CHECK(key(-3) == KeyData{0, 4294967293u});
    CHECK(key(2147483647LL + 100) == KeyData{0, 2147483747u});
    CHECK(key(2147483647LL + 101) == KeyData{0, 2147483748u});
    CHECK(key(-2147483648LL - 100) == KeyData{0, 2147483548u});
    CHECK(key(-2147483648LL - 101) == KeyData{0, 2147483547u});
    // x64: the 64-bit seed is bit-cast to two words, high word first.
    CHECK(lr::detail::seed_key(-1, true) == KeyData{0xFFFFFFFFu, 0xFFFFFFFFu});
    CHECK(lr::detail::seed_key((5LL << 32) | 7, true) == KeyData{5, 7});
    CHECK(lr::detail::seed_key(42, true) == KeyData{0, 42});
  }

  TEST_CASE("fold_in(key(0), 4), the same in both modes") {
    CHECK(lr::detail::fold_in(key(0), 4) == KeyData{2285895361u, 433833334u});
  }

  TEST_CASE("Flax make_rng keys: fold_in with the SHA-1 hash of the scope path and counter") {
    // Root counters 1, 2, 3 hash to 0xbf8b4530, 0xc4ea21bb, 0x9842926a.
    CHECK(lr::detail::fold_in(key(0), 3213575472u) == KeyData{1428664606u, 3351135085u});
    CHECK(lr::detail::fold_in(key(0), 3303678395u) == KeyData{3456700291u, 3873160899u});
    CHECK(lr::detail::fold_in(key(0), 2554499690u) == KeyData{2411773124u, 4124888837u});
    CHECK(lr::detail::fold_in(key(1), 3213575472u) == KeyData{3077990774u, 2166202870u});
    // ('Dense_0', 1) hashes to 0xb2b71315.
    CHECK(lr::detail::fold_in(key(0), 2998342421u) == KeyData{3043437727u, 3662875008u});
  }

  TEST_CASE("default-mode split(k, n)[i] == fold_in(k, i)") {
    const auto keys = split(key(72), 3, true);
    for (std::uint32_t i = 0; i < 3; ++i) CHECK(keys[i] == lr::detail::fold_in(key(72), i));
  }

  TEST_CASE("legacy split(key(0), 4)") {
    const auto keys = split(key(0), 4, false);
    CHECK(keys[0] == KeyData{2285895361u, 1501764800u});
    CHECK(keys[1] == KeyData{1518642379u, 4090693311u});
    CHECK(keys[2] == KeyData{433833334u, 4221794875u});
    CHECK(keys[3] == KeyData{839183663u, 3740430601u});
  }

  TEST_CASE("default-mode split, fold_in and bits") {
    // From a pure-Python threefry2x32; tests/random/reference_samplers.py gives the same words.
    CHECK(split(key(0), 2, true) ==
          std::vector<KeyData>{{1797259609u, 2579123966u}, {928981903u, 3453687069u}});
    CHECK(split(key(0), 4, true) == std::vector<KeyData>{{1797259609u, 2579123966u},
                                                         {928981903u, 3453687069u},
                                                         {4146024105u, 2718843009u},
                                                         {2467461003u, 3840466878u}});
    CHECK(split(key(1), 2, true) ==
          std::vector<KeyData>{{507451445u, 1853169794u}, {1948878966u, 4237131848u}});
    CHECK(lr::detail::fold_in(key(0), 1) == KeyData{928981903u, 3453687069u});
    CHECK(lr::detail::fold_in(key(0), 0xFFFFFFFFu) == KeyData{743310391u, 3789761811u});
    CHECK(bits<std::uint32_t>(key(0), 4, true) ==
          std::vector<std::uint32_t>{4070199207u, 4202968722u, 1427181096u, 2012915765u});
    CHECK(bits<std::uint32_t>(key(1701), 3, true) ==
          std::vector<std::uint32_t>{1111271205u, 2679469115u, 974515252u});
  }

  TEST_CASE("legacy bits of key(1701) for 8, 16, 32 and 64 bits") {
    CHECK(bits<std::uint8_t>(key(1701), 3, false) == std::vector<std::uint8_t>{216, 115, 43});
    CHECK(bits<std::uint16_t>(key(1701), 3, false) ==
          std::vector<std::uint16_t>{41682, 1300, 55017});
    CHECK(bits<std::uint32_t>(key(1701), 3, false) ==
          std::vector<std::uint32_t>{56197195u, 4200222568u, 961309823u});
    CHECK(bits<std::uint64_t>(key(1701), 3, false) ==
          std::vector<std::uint64_t>{3982329540505020460ull, 16822122385914693683ull,
                                     7882654074788531506ull});
  }

  TEST_CASE("RandomValuesCase 'bits' (legacy, seed adler32('bitsthreefry2x32'))") {
    const KeyData k = key(942802475);
    CHECK(bits<std::uint8_t>(k, 5, false) == std::vector<std::uint8_t>{10, 158, 82, 54, 158});
    CHECK(bits<std::uint16_t>(k, 5, false) ==
          std::vector<std::uint16_t>{6738, 38161, 50695, 57337, 61600});
    CHECK(bits<std::uint32_t>(k, 5, false) == std::vector<std::uint32_t>{1978747883u, 4134381225u,
                                                                         3628107870u, 689687174u,
                                                                         2788938207u});
    CHECK(bits<std::uint64_t>(k, 5, false) ==
          std::vector<std::uint64_t>{17649965731882839947ull, 1415307058040849897ull,
                                     8282622628079774249ull, 14024425113645909402ull,
                                     2012979996110532418ull});
  }

  TEST_CASE("legacy narrow bits are the little-endian view of the 32-bit stream") {
    // jax's testRngRandomBitsViewProperty: N * 64 / n draws of n bits view as the same words.
    const std::size_t N = 10;
    const auto w32 = bits<std::uint32_t>(key(1701), N * 2, false);
    const auto w16 = bits<std::uint16_t>(key(1701), N * 4, false);
    const auto w8 = bits<std::uint8_t>(key(1701), N * 8, false);
    CHECK(std::memcmp(w32.data(), w16.data(), N * 8) == 0);
    CHECK(std::memcmp(w32.data(), w8.data(), N * 8) == 0);
  }

  TEST_CASE("default-mode 64-bit words are (b1 << 32) | b2 and narrow words the low bits") {
    const auto w64 = bits<std::uint64_t>(key(5), 3, true);
    const auto w8 = bits<std::uint8_t>(key(5), 3, true);
    for (std::uint32_t i = 0; i < 3; ++i) {
      const auto y = lr::detail::threefry2x32(key(5), 0, i);
      CHECK(w64[i] == ((std::uint64_t{y[0]} << 32) | y[1]));
      CHECK(w8[i] == static_cast<std::uint8_t>(y[0] ^ y[1]));
    }
  }

  TEST_CASE("legacy bits of an odd count equal threefry_2x32 over iota") {
    const std::vector<std::uint32_t> iota{0, 1, 2, 3, 4};
    std::vector<std::uint32_t> expect(5);
    lr::detail::threefry_2x32(key(3), iota, expect);
    CHECK(bits<std::uint32_t>(key(3), 5, false) == expect);
  }

  TEST_CASE("the mode: default partitionable, global setter, thread-local nested scopes") {
    CHECK(lr::threefry_partitionable());
    {
      lr::ThreefryPartitionableScope legacy(false);
      CHECK_FALSE(lr::threefry_partitionable());
      bool other_thread = false;
      std::thread([&] { other_thread = lr::threefry_partitionable(); }).join();
      CHECK(other_thread);  // scopes are per thread
      {
        lr::ThreefryPartitionableScope inner(true);
        CHECK(lr::threefry_partitionable());
      }
      CHECK_FALSE(lr::threefry_partitionable());
    }
    CHECK(lr::threefry_partitionable());
    lr::set_threefry_partitionable(false);
    CHECK_FALSE(lr::threefry_partitionable());
    bool other_thread = true;
    std::thread([&] { other_thread = lr::threefry_partitionable(); }).join();
    CHECK_FALSE(other_thread);  // the setter is process-wide
    lr::set_threefry_partitionable(true);
    CHECK(lr::threefry_partitionable());
  }
}

}  // namespace test_threefry
