// linum::random over Array: JAX's values through the public API in both modes, argument errors
// with JAX's messages, keys as pytree leaves, and keys under vmap and grad.
#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include <linum/autodiff/ops.hpp>
#include <linum/autodiff/random/random.hpp>
#include <linum/autodiff/random/sampling.hpp>
#include <linum/autodiff/transforms.hpp>

#include "test_util.hpp"

namespace test_random_api {

namespace lr = linum::random;
using linum::Array;
using linum::Shape;
using lr::testing::jax_close;
using lr::testing::prints_as;

namespace {

template <class T>
std::vector<T> values(const Array& a) {
  const T* p = a.data<T>();
  return std::vector<T>(p, p + a.size());
}

void check_prints(const Array& got, const std::vector<const char*>& printed) {
  const auto v = values<float>(got);
  REQUIRE(v.size() == printed.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    INFO("element " << i << ": got " << lr::testing::numpy_str(v[i]) << ", JAX printed "
                    << printed[i]);
    CHECK(prints_as(v[i], printed[i]));
  }
}

bool same(const Array& a, const Array& b) {
  if (a.shape() != b.shape() || a.dtype() != b.dtype()) return false;
  return static_cast<bool>(linum::all(linum::equal(a, b)));
}

}  // namespace

TEST_SUITE("random.api.keys") {
  TEST_CASE("PRNGKey is uint32[2]; x32 keeps the low word, x64 splits 64-bit seeds") {
    const Array k = lr::PRNGKey(-1);
    CHECK(k.shape() == Shape{2});
    CHECK(k.dtype() == linum::uint32);
    CHECK(values<std::uint32_t>(k) == std::vector<std::uint32_t>{0, 4294967295u});
    CHECK(values<std::uint32_t>(lr::PRNGKey(-1, lr::SeedBits::x64)) ==
          std::vector<std::uint32_t>{4294967295u, 4294967295u});
    CHECK(same(lr::key(7), lr::PRNGKey(7)));
    CHECK(same(lr::key_data(lr::key(7)), lr::key(7)));
    CHECK_THROWS_AS(lr::wrap_key_data(linum::array({1.0f, 2.0f})), linum::TypeError);
  }

  TEST_CASE("split and fold_in: default mode, legacy mode, int32 data wraps") {
    CHECK(values<std::uint32_t>(lr::split(lr::key(0), 2)) ==
          std::vector<std::uint32_t>{1797259609u, 2579123966u, 928981903u, 3453687069u});
    CHECK(lr::split(lr::key(0), Shape{2, 3}).shape() == Shape{2, 3, 2});
    // An int32 array converts to uint32 as astype does; 4294967295 is its wrapped value.
    CHECK(values<std::uint32_t>(lr::fold_in(lr::key(0), Array(std::int32_t{-1}))) ==
          std::vector<std::uint32_t>{743310391u, 3789761811u});
    CHECK(values<std::uint32_t>(lr::fold_in(lr::key(0), 4294967295LL)) ==
          std::vector<std::uint32_t>{743310391u, 3789761811u});
    CHECK(values<std::uint32_t>(lr::fold_in(lr::key(0), Array(1))) ==
          std::vector<std::uint32_t>{928981903u, 3453687069u});
    lr::ThreefryPartitionableScope legacy(false);
    CHECK(values<std::uint32_t>(lr::split(lr::key(0), 4)) ==
          std::vector<std::uint32_t>{2285895361u, 1501764800u, 1518642379u, 4090693311u, 433833334u,
                                     4221794875u, 839183663u, 3740430601u});
    CHECK(values<std::uint32_t>(lr::fold_in(lr::key(0), 4)) ==
          std::vector<std::uint32_t>{2285895361u, 433833334u});
  }

  TEST_CASE("keys[i] and auto [k1, k2] = split<2>(key) are the rows of split(key, n)") {
    // The rows of JAX's split(key(0), 2), as the test above has them.
    const Array keys = lr::split(lr::key(0), 2);
    CHECK(values<std::uint32_t>(keys[0]) == std::vector<std::uint32_t>{1797259609u, 2579123966u});
    CHECK(values<std::uint32_t>(keys[-1]) == std::vector<std::uint32_t>{928981903u, 3453687069u});
    auto [k1, k2] = lr::split<2>(lr::key(0));
    CHECK(same(k1, keys[0]));
    CHECK(same(k2, keys[1]));
    const Array four = lr::split(lr::key(5), 4);
    const std::array<Array, 4> each = lr::split<4>(lr::key(5));
    for (int i = 0; i < 4; ++i) CHECK(same(each[i], four[i]));
    // A key from keys[i] is an ordinary key: it samples as the same key made by hand.
    CHECK(same(lr::normal(keys[1], {3}),
               lr::normal(linum::array(std::vector<std::uint32_t>{928981903u, 3453687069u}), {3})));
  }

  TEST_CASE("fold_in of a C++ integer outside uint32 is an OverflowError, as in JAX") {
    // jnp.asarray(data, dtype='uint32') with NumPy >= 2 (JAX 0.11 requires numpy>=2.1).
    CHECK_THROWS_WITH_AS(lr::fold_in(lr::key(0), -1),
                         "fold_in: Python integer -1 out of bounds for uint32", linum::OverflowError);
    CHECK_THROWS_WITH_AS(lr::fold_in(lr::key(0), 4294967296LL),
                         "fold_in: Python integer 4294967296 out of bounds for uint32",
                         linum::OverflowError);
    CHECK_NOTHROW(lr::fold_in(lr::key(0), 0));
  }

  TEST_CASE("argument errors carry JAX's messages") {
    const Array keys = lr::split(lr::key(0), 3);
    CHECK_THROWS_WITH_AS(lr::normal(keys, {2}),
                         "normal accepts a single key, but was given a key array of shape (3, 2) "
                         "!= (). Use jax.vmap for batching.",
                         linum::ValueError);
    CHECK_THROWS_AS(lr::uniform(linum::array({0.0f, 1.0f})), linum::TypeError);
    CHECK_THROWS_AS(lr::split(linum::array(std::vector<std::uint32_t>{1, 2, 3})), linum::TypeError);
    CHECK_THROWS_WITH_AS(lr::uniform(lr::key(0), {2}, linum::int32),
                         "dtype argument to `uniform` must be a float dtype, got int32",
                         linum::ValueError);
    CHECK_THROWS_AS(lr::bits(lr::key(0), {2}, linum::int32), linum::ValueError);
    CHECK_THROWS_AS(lr::fold_in(lr::key(0), linum::array({1, 2})), linum::TypeError);
    CHECK_THROWS_AS(lr::randint(lr::key(0), {2}, 0, 3, linum::float32), linum::TypeError);
    CHECK_THROWS_AS(lr::bernoulli(lr::key(0), 0.5, {2}, "medium"), linum::ValueError);
    CHECK_THROWS_AS(lr::choice(lr::key(0), 3, {4}, false), linum::ValueError);
    CHECK_THROWS_AS(lr::choice(lr::key(0), 3, {2}, true, linum::array({0.5f, 0.5f})),
                    linum::ValueError);
  }

  TEST_CASE("keys are ordinary pytree leaves") {
    std::map<std::string, Array> streams{{"dropout", lr::key(1)}, {"params", lr::key(0)}};
    auto children =
        linum::pytree::tree_map([](const Array& k) { return lr::split(k, 3); }, streams);
    CHECK(children.at("params").shape() == Shape{3, 2});
    CHECK(same(children.at("dropout"), lr::split(lr::key(1), 3)));
    CHECK(linum::pytree::tree_leaves<Array>(children).size() == 2);
  }
}

TEST_SUITE("random.api.values") {
  TEST_CASE("bits, uniform, normal, truncated_normal through the API match JAX") {
    CHECK(values<std::uint32_t>(lr::bits(lr::key(1701), {3})) ==
          std::vector<std::uint32_t>{1111271205u, 2679469115u, 974515252u});
    check_prints(lr::uniform(lr::key(0), {3}), {"0.947667", "0.9785799", "0.33229148"});
    const Array model_param = lr::normal(lr::fold_in(lr::key(0), 3213575472u), {2, 2});
    CHECK(model_param.shape() == Shape{2, 2});
    check_prints(model_param, {"0.0761425", "-1.6157459", "-1.6857724", "0.7126891"});
    const Array t = lr::truncated_normal(lr::fold_in(lr::key(0), 4179161679u), -2, 2, {2, 2});
    // The RNG guide's ('Dense_0', 3) kernel divided back by lecun_normal's stddev is the
    // truncated normal itself.
    const float sd = std::sqrt(0.5f) / 0.87962566103423978f;
    check_prints(linum::multiply(t, Array(sd)),
                 {"-0.66715515", "-0.0484313", "0.9867164", "0.75408363"});
  }

  TEST_CASE("the legacy mode through the API: bits, uniform, normal, randint, bernoulli") {
    lr::ThreefryPartitionableScope legacy(false);
    CHECK(values<std::uint32_t>(lr::bits(lr::key(1701), {3})) ==
          std::vector<std::uint32_t>{56197195u, 4200222568u, 961309823u});
    const auto u = values<float>(lr::uniform(lr::key(1338574713), {5}));
    const std::vector<double> eu{0.298671, 0.073213, 0.873356, 0.260549, 0.412797};
    for (int i = 0; i < 5; ++i) CHECK(jax_close(u[i], eu[i]));
    const auto n = values<float>(lr::normal(lr::key(1193674498), {5}));
    const std::vector<double> en{-1.173234, -1.511662, 0.070593, -0.099764, 1.052845};
    for (int i = 0; i < 5; ++i) CHECK(jax_close(n[i], en[i]));
    const Array r = lr::randint(lr::key(0), {3, 3}, 0, 8);
    CHECK(r.dtype() == linum::int32);
    CHECK(values<std::int32_t>(r) == std::vector<std::int32_t>{2, 1, 3, 6, 1, 5, 6, 3, 4});
    const Array b = lr::bernoulli(lr::key(1612777541), 0.5, {5});
    CHECK(b.dtype() == linum::bool_);
    CHECK(values<bool>(b) == std::vector<bool>{false, true, true, true, false});
  }

  TEST_CASE("the mode is captured when an op is created, not when it is later replayed") {
    const Array a = lr::uniform(lr::key(3), {4});
    Array b;
    {
      lr::ThreefryPartitionableScope legacy(false);
      b = lr::uniform(lr::key(3), {4});
    }
    CHECK_FALSE(same(a, b));
    std::vector<float> expect(4);
    linum::random::detail::uniform(linum::random::detail::seed_key(3), std::span(expect), 0.0f,
                                   1.0f, false);
    CHECK(values<float>(b) == expect);
  }

  TEST_CASE("float64 samplers draw 64-bit words") {
    const Array d = lr::normal(lr::key(2), {6}, linum::float64);
    CHECK(d.dtype() == linum::float64);
    std::vector<double> expect(6);
    linum::random::detail::normal(linum::random::detail::seed_key(2), std::span(expect), true);
    CHECK(values<double>(d) == expect);
    const Array u = lr::uniform(lr::key(2), {1000}, linum::float64, -2.0, 3.0);
    CHECK(linum::min(u).item<double>() >= -2.0);
    CHECK(linum::max(u).item<double>() < 3.0);
  }

  TEST_CASE("randint into uint32 and gumbel modes") {
    const Array r = lr::randint(lr::key(4), {1000}, 10, 20, linum::uint32);
    CHECK(r.dtype() == linum::uint32);
    CHECK(linum::min(r).item<std::uint32_t>() == 10u);
    CHECK(linum::max(r).item<std::uint32_t>() == 19u);
    CHECK(lr::gumbel(lr::key(4), {3}, linum::float32, "high").shape() == Shape{3});
  }
}

TEST_SUITE("random.api.discrete") {
  TEST_CASE("categorical: frequencies follow softmax(logits), batch and prefix shapes") {
    const Array logits = linum::log(linum::array({0.1f, 0.2f, 0.7f}));
    const Array draws = lr::categorical(lr::key(5), logits, -1, Shape{30000});
    CHECK(draws.shape() == Shape{30000});
    CHECK(draws.dtype() == linum::int32);
    const auto v = values<std::int32_t>(draws);
    for (int c = 0; c < 3; ++c) {
      const double f = std::count(v.begin(), v.end(), c) / 30000.0;
      CHECK(std::abs(f - std::vector<double>{0.1, 0.2, 0.7}[c]) < 0.015);
    }
    // A batch of two distributions along axis 0: shape (4, 2) = prefix (4,) + batch (2,).
    const Array batch = linum::array({{0.0f, -1e9f}, {-1e9f, 0.0f}, {-1e9f, -1e9f}});
    const Array pick = lr::categorical(lr::key(6), batch, 0, Shape{4, 2});
    CHECK(pick.shape() == Shape{4, 2});
    for (int i = 0; i < 4; ++i) {
      CHECK(values<std::int32_t>(pick)[2 * i] == 0);
      CHECK(values<std::int32_t>(pick)[2 * i + 1] == 1);
    }
    CHECK(lr::categorical(lr::key(6), batch, 0).shape() == Shape{2});
  }

  TEST_CASE("categorical without replacement returns distinct categories") {
    const Array logits = linum::zeros({2, 5});
    const Array d = lr::categorical(lr::key(7), logits, -1, Shape{5, 2}, false);
    CHECK(d.shape() == Shape{5, 2});
    const auto v = values<std::int32_t>(d);
    for (int b = 0; b < 2; ++b) {
      std::vector<int> seen;
      for (int i = 0; i < 5; ++i) seen.push_back(v[2 * i + b]);
      std::sort(seen.begin(), seen.end());
      CHECK(seen == std::vector<int>{0, 1, 2, 3, 4});
    }
    CHECK_THROWS_AS(lr::categorical(lr::key(7), logits, -1, Shape{6, 2}, false), linum::ValueError);
  }

  TEST_CASE("permutation of n, of an array's rows, and of each lane independently") {
    const Array p = lr::permutation(lr::key(8), 10);
    std::vector<std::int32_t> expect(10);
    linum::random::detail::permutation(linum::random::detail::seed_key(8), std::span(expect), true);
    CHECK(values<std::int32_t>(p) == expect);
    const Array x = linum::reshape(linum::arange(12), {4, 3});
    const Array rows = lr::permutation(lr::key(8), x);
    CHECK(rows.shape() == Shape{4, 3});
    CHECK(same(rows, linum::take(x, lr::permutation(lr::key(8), 4), 0)));
    const Array lanes = lr::permutation(lr::key(8), x, 1, true);
    CHECK(same(linum::sum(lanes, 1), linum::sum(x, 1)));  // each row keeps its elements
  }

  TEST_CASE("choice: with and without replacement, weighted, from arrays along an axis") {
    const Array c = lr::choice(lr::key(9), 5, {3, 2});
    CHECK(c.shape() == Shape{3, 2});
    CHECK(same(c, lr::randint(lr::key(9), {3, 2}, 0, 5)));
    const Array d = lr::choice(lr::key(9), 5, {5}, false);
    CHECK(same(d, lr::permutation(lr::key(9), 5)));
    const Array a = linum::reshape(linum::arange(8), {2, 4});
    const Array cols = lr::choice(lr::key(9), a, {3}, false, std::nullopt, 1);
    CHECK(cols.shape() == Shape{2, 3});
    const Array w = lr::choice(lr::key(9), 4, {100}, true, linum::array({0.0f, 0.0f, 1.0f, 0.0f}));
    CHECK(linum::all(linum::equal(w, Array(2))).item<bool>());
    CHECK(lr::choice(lr::key(9), 4, {0}).shape() == Shape{0});
  }
}

TEST_SUITE("random.api.transforms") {
  TEST_CASE("vmap over a batch of keys gives the batch of samples") {
    const Array keys = lr::split(lr::key(0), 4);
    const Array batched = linum::vmap([](const Array& k) { return lr::normal(k, {3}); })(keys);
    CHECK(batched.shape() == Shape{4, 3});
    for (int i = 0; i < 4; ++i) {
      const Array one = lr::normal(linum::take(keys, Array(i), 0), {3});
      CHECK(same(linum::take(batched, Array(i), 0), one));
    }
  }

  TEST_CASE("vmap over fold_in data reproduces split, and nested vmaps compose") {
    const Array k = lr::key(72);
    const Array folded =
        linum::vmap([&](const Array& i) { return lr::fold_in(k, i); })(linum::arange(3));
    CHECK(same(folded, lr::split(k, 3)));
    // Keys batched by the outer vmap, data by the inner one: a (2, 3) grid of keys.
    const Array keys = lr::split(lr::key(1), 2);
    const Array data = linum::arange(3);
    const Array grid = linum::vmap([&](const Array& kk) {
      return linum::vmap([&](const Array& d) { return lr::fold_in(kk, d); })(data);
    })(keys);
    CHECK(grid.shape() == Shape{2, 3, 2});
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j)
        CHECK(same(linum::take(linum::take(grid, Array(i), 0), Array(j), 0),
                   lr::fold_in(linum::take(keys, Array(i), 0), j)));
  }

  TEST_CASE("vmap of split, uniform with batch axis 1, permutation and categorical") {
    const Array keys = lr::split(lr::key(3), 5);
    const Array sub = linum::vmap([](const Array& k) { return lr::split(k, 2); })(keys);
    CHECK(sub.shape() == Shape{5, 2, 2});
    CHECK(same(linum::take(sub, Array(3), 0), lr::split(linum::take(keys, Array(3), 0), 2)));
    linum::VmapOptions opts;
    opts.in_axes = {1};
    const Array u = linum::vmap([](const Array& k) { return lr::uniform(k, {2}); },
                                opts)(linum::transpose(keys));
    CHECK(same(linum::take(u, Array(2), 0), lr::uniform(linum::take(keys, Array(2), 0), {2})));
    const Array perms = linum::vmap([](const Array& k) { return lr::permutation(k, 6); })(keys);
    CHECK(
        same(linum::take(perms, Array(1), 0), lr::permutation(linum::take(keys, Array(1), 0), 6)));
    const Array logits = linum::array({1.0f, 2.0f, 3.0f});
    const Array cats =
        linum::vmap([&](const Array& k) { return lr::categorical(k, logits, -1, Shape{4}); })(keys);
    CHECK(same(linum::take(cats, Array(4), 0),
               lr::categorical(linum::take(keys, Array(4), 0), logits, -1, Shape{4})));
  }

  TEST_CASE("samples are constants under grad") {
    const Array k = lr::key(11);
    auto f = [&](const Array& x) { return linum::sum(linum::multiply(x, lr::normal(k, {3}))); };
    const Array g = linum::grad(f)(linum::ones({3}));
    CHECK(same(g, lr::normal(k, {3})));
  }
}

TEST_SUITE("random.api.transforms_operands") {
  TEST_CASE("vmap with a batched second operand: top-k categorical and weighted choice") {
    const Array keys = lr::split(lr::key(12), 3);
    const Array logits = lr::normal(lr::key(13), {3, 6});
    auto topk = [](const Array& k, const Array& l) {
      return lr::categorical(k, l, -1, Shape{4}, false);
    };
    auto row = [](const Array& a, int i) { return linum::take(a, Array(i), 0); };
    const Array both = linum::vmap(topk)(keys, logits);
    linum::VmapOptions only_logits;
    only_logits.in_axes = {linum::VmapOptions::kNone, 0};
    const Array shared_key = linum::vmap(topk, only_logits)(lr::key(14), logits);
    const Array p = linum::softmax(logits);
    auto weighted = [](const Array& k, const Array& w) {
      return lr::choice(k, 6, {5}, true, w);
    };
    const Array picks = linum::vmap(weighted)(keys, p);
    CHECK(both.shape() == Shape{3, 4});
    for (int i = 0; i < 3; ++i) {
      CAPTURE(i);
      CHECK(same(row(both, i), topk(row(keys, i), row(logits, i))));
      CHECK(same(row(shared_key, i), topk(lr::key(14), row(logits, i))));
      CHECK(same(row(picks, i), weighted(row(keys, i), row(p, i))));
    }
  }
}

}  // namespace test_random_api
