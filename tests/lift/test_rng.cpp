// Flax's rng derivation (flax/core/scope.py): SHA-1, the suffix hash table in both separator
// settings, and the keys of the Flax RNG guide's committed outputs.
#include <doctest/doctest.h>

#include <cstdio>

#include <linum/lift/lift.hpp>

namespace test_rng {

using namespace linum;
using lift::RngSuffix;

namespace {
std::string hex(const std::array<std::uint8_t, 20>& d) {
  std::string s;
  char buf[3];
  for (auto b : d) {
    std::snprintf(buf, sizeof buf, "%02x", b);
    s += buf;
  }
  return s;
}
std::pair<std::uint32_t, std::uint32_t> kd(const Array& key) {
  const auto* p = key.data<std::uint32_t>();
  return {p[0], p[1]};
}
using KD = std::pair<std::uint32_t, std::uint32_t>;
}  // namespace

TEST_CASE("sha1 matches the FIPS 180 test vectors (one and two padding blocks)") {
  CHECK(hex(lift::sha1("")) == "da39a3ee5e6b4b0d3255bfef95601890afd80709");
  CHECK(hex(lift::sha1("abc")) == "a9993e364706816aba3e25717850c26c9cd0d89d");
  CHECK(hex(lift::sha1("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")) ==
        "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
  CHECK(hex(lift::sha1(std::string(1000, 'a'))) == "291e9a6c66994949b57ba5e650361e98fc36b1ba");
}

TEST_CASE("the suffix hashes of common suffixes, without and with the separator") {
  struct Row {
    RngSuffix data;
    std::uint32_t plain, sep;
  };
  const Row rows[] = {
      {{std::uint64_t{1}}, 3213575472u, 1059673188u},
      {{std::uint64_t{2}}, 3303678395u, 2596610531u},
      {{std::uint64_t{3}}, 2554499690u, 1820846229u},
      {{std::uint64_t{0}}, 3661210606u, 1537817757u},
      {{std::uint64_t{256}}, 238381989u, 1649875089u},
      {{std::string("Dense_0"), std::uint64_t{1}}, 2998342421u, 4288924255u},
      {{std::string("Dense_0"), std::uint64_t{2}}, 2299943050u, 742636963u},
      {{std::string("Dense_1"), std::uint64_t{1}}, 111800540u, 4154514268u},
      {{std::string("Dropout_0"), std::uint64_t{1}}, 2711844646u, 3871261194u},
      {{std::string("a"), std::uint64_t{1}}, 961396223u, 1180044795u},
      {{std::string("ab"), std::string("c")}, 2845392438u, 1150604208u},
      {{std::string("a"), std::string("bc")}, 2845392438u, 2081443287u},
      {{std::string("Dense_0"), std::string("Dense_1"), std::uint64_t{1}}, 608501722u, 3958973006u},
  };
  for (const auto& r : rows) {
    CHECK(lift::rng_suffix_hash(r.data) == r.plain);
    lift::FixRngSeparatorScope on(true);
    CHECK(lift::rng_suffix_hash(r.data) == r.sep);
  }
  CHECK_FALSE(lift::fix_rng_separator());
}

TEST_CASE("('ab','c') and ('a','bc') collide without the separator only") {
  Array k = random::key(0);
  auto a = lift::LazyRng::create(k, {std::string("ab"), std::string("c")}).as_jax_rng();
  auto b = lift::LazyRng::create(k, {std::string("a"), std::string("bc")}).as_jax_rng();
  CHECK(kd(a) == kd(b));
  lift::FixRngSeparatorScope on(true);
  a = lift::LazyRng::create(k, {std::string("ab"), std::string("c")}).as_jax_rng();
  b = lift::LazyRng::create(k, {std::string("a"), std::string("bc")}).as_jax_rng();
  CHECK(kd(a) != kd(b));
}

TEST_CASE("make_rng keys equal the Flax RNG guide's outputs (root and nested scopes)") {
  lift::Scope root(Tree::dict(), {{"params", random::key(0)}});
  CHECK(kd(root.make_rng("params")) == KD{1428664606u, 3351135085u});
  CHECK(kd(root.make_rng("params")) == KD{3456700291u, 3873160899u});
  CHECK(kd(root.make_rng("params")) == KD{2411773124u, 4124888837u});

  lift::Scope r1(Tree::dict(), {{"params", random::key(1)}});
  CHECK(kd(r1.make_rng()) == KD{3077990774u, 2166202870u});
  CHECK(kd(r1.make_rng()) == KD{3825832496u, 2886313970u});
  CHECK(kd(r1.make_rng()) == KD{791337683u, 1373966058u});

  lift::Scope top(Tree::dict(), {{"params", random::key(0)}});
  lift::Scope sub0 = top.push("RNGSubModule_0");
  CHECK(kd(sub0.make_rng()) == KD{3858825717u, 2323087578u});
  CHECK(kd(sub0.make_rng()) == KD{601859108u, 3782857444u});
  lift::Scope subsub = sub0.push("RNGSubSubModule_0");
  CHECK(kd(subsub.make_rng()) == KD{234240654u, 1028548813u});
  CHECK(kd(subsub.make_rng()) == KD{3650462303u, 2124609379u});
  lift::Scope sub1 = top.push("RNGSubModule_1");
  CHECK(kd(sub1.make_rng()) == KD{426957352u, 2006350344u});
  CHECK(kd(sub1.make_rng()) == KD{4006253729u, 4205356731u});
}

TEST_CASE("two streams count independently; equal base keys give equal keys") {
  lift::Scope s(Tree::dict(), {{"rng_stream1", random::key(0)}, {"rng_stream2", random::key(1)}});
  CHECK(kd(s.make_rng("rng_stream1")) == KD{1428664606u, 3351135085u});
  CHECK(kd(s.make_rng("rng_stream2")) == KD{3077990774u, 2166202870u});
  CHECK(kd(s.make_rng("rng_stream1")) == KD{3456700291u, 3873160899u});
  CHECK(kd(s.make_rng("rng_stream2")) == KD{3825832496u, 2886313970u});
  lift::Scope same(Tree::dict(), {{"a", random::key(0)}, {"b", random::key(0)}});
  CHECK(kd(same.make_rng("a")) == kd(same.make_rng("b")));
}

}  // namespace test_rng
