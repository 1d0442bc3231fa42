// The raw samplers against JAX: published current-JAX outputs bit for bit (Flax docs/notebooks,
// default mode), JAX's legacy-mode test values, and the statistics of every distribution.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include <linum/autodiff/random/sampling.hpp>
#include <linum/autodiff/random/threefry.hpp>
#include <linum/error.hpp>

#include "test_util.hpp"

namespace test_sampling {

namespace lr = linum::random;
using lr::detail::KeyData;
using lr::testing::jax_close;
using lr::testing::prints_as;
using lr::testing::ulp_distance;

namespace {

constexpr bool kDefault = true, kLegacy = false;

KeyData key(std::int64_t seed) { return lr::detail::seed_key(seed); }
KeyData fold(KeyData k, std::uint32_t d) { return lr::detail::fold_in(k, d); }
KeyData split_at(KeyData k, std::size_t n, std::size_t i, bool partitionable = kDefault) {
  std::vector<KeyData> keys(n);
  lr::detail::split(k, std::span(keys), partitionable);
  return keys[i];
}

std::vector<float> uniform(KeyData k, std::size_t n, float lo, float hi, bool mode) {
  std::vector<float> v(n);
  lr::detail::uniform(k, std::span(v), lo, hi, mode);
  return v;
}
std::vector<float> normal(KeyData k, std::size_t n, bool mode) {
  std::vector<float> v(n);
  lr::detail::normal(k, std::span(v), mode);
  return v;
}
std::vector<float> truncated_normal(KeyData k, std::size_t n, float lo, float hi, bool mode) {
  std::vector<float> v(n);
  lr::detail::truncated_normal(k, std::span(v), lo, hi, mode);
  return v;
}
std::vector<float> scaled(std::vector<float> v, float s) {
  for (float& x : v) x = x * s;
  return v;
}
// variance_scaling's factors, computed as JAX does: variance rounded to float32 first.
float truncated_stddev(double scale, double fan) {
  return std::sqrt(static_cast<float>(scale / fan)) / 0.87962566103423978f;
}
float uniform_scale(double scale, double fan) {
  return std::sqrt(3.0f * static_cast<float>(scale / fan));
}
// lecun_normal of a (rows, cols) kernel: truncated_normal(-2, 2) * stddev with fan_in = rows.
std::vector<float> lecun_normal(KeyData k, int rows, int cols, bool mode) {
  return scaled(truncated_normal(k, rows * cols, -2, 2, mode), truncated_stddev(1.0, rows));
}

void check_prints(const std::vector<float>& got, const std::vector<const char*>& printed) {
  REQUIRE(got.size() >= printed.size());
  for (std::size_t i = 0; i < printed.size(); ++i) {
    INFO("element " << i << ": got " << lr::testing::numpy_str(got[i]) << ", JAX printed "
                    << printed[i]);
    CHECK(prints_as(got[i], printed[i]));
  }
}

void check_close(const std::vector<float>& got, const std::vector<double>& expected,
                 double tol = 1e-6) {
  for (std::size_t i = 0; i < expected.size(); ++i) {
    INFO("element " << i << ": got " << got[i] << ", expected " << expected[i]);
    CHECK(jax_close(got[i], expected[i], tol));
  }
}

void check_ulps(const std::vector<float>& got, const std::vector<float>& expected,
                std::int64_t max_ulps) {
  for (std::size_t i = 0; i < expected.size(); ++i) {
    INFO("element " << i << ": got " << got[i] << ", expected " << expected[i]);
    CHECK(ulp_distance(got[i], expected[i]) <= max_ulps);
  }
}

template <class T>
std::pair<double, double> mean_var(const std::vector<T>& v) {
  double m = 0, s = 0;
  for (T x : v) m += static_cast<double>(x);
  m /= static_cast<double>(v.size());
  for (T x : v) s += (static_cast<double>(x) - m) * (static_cast<double>(x) - m);
  return {m, s / static_cast<double>(v.size() - 1)};
}

}  // namespace

TEST_SUITE("random.sampling.jax_values") {
  TEST_CASE("default-mode uniform(key(0), (3,)) as JAX's typed-keys JEP 9263 prints it") {
    check_prints(uniform(key(0), 3, 0, 1, kDefault), {"0.947667", "0.9785799", "0.33229148"});
  }

  TEST_CASE("nn.Embed's embedding = normal(fold_in(key(0), H((1,))), (5, 3)) * sqrt(1/3)") {
    const auto emb = scaled(normal(fold(key(0), 3213575472u), 15, kDefault),
                            std::sqrt(static_cast<float>(1.0 / 3.0)));
    check_prints(emb, {"0.04396089", "-0.9328513", "-0.97328115", "0.41147125", "0.66334754",
                       "0.49469155", "0.09719624", "0.49861377", "0.49519277", "-0.13316602",
                       "0.6697022", "0.3710195", "-0.5039532", "0.287319", "1.4369922"});
  }

  TEST_CASE("Dense_0's lecun_normal kernel gives Flax's MLP output (column sums)") {
    const auto k = lecun_normal(fold(key(0), 2998342421u), 3, 4, kDefault);
    std::vector<float> y(4);
    for (int j = 0; j < 4; ++j) y[j] = (k[j] + k[4 + j]) + k[8 + j];
    check_prints(y, {"-0.17875527", "1.6255447", "-1.2431065", "-0.02554005"});
  }

  TEST_CASE("the Flax RNG guide's normal initializers (cells 36/38)") {
    check_prints(normal(fold(key(0), 2998342421u), 4, kDefault),
                 {"-1.6185919", "0.700908", "-1.3146383", "-0.79342234"});  // Dense_0 kernel
    check_prints(normal(fold(key(0), 3213575472u), 4, kDefault),
                 {"0.0761425", "-1.6157459", "-1.6857724", "0.7126891"});  // model_param
    check_prints(normal(fold(key(0), 3303678395u), 4, kDefault),
                 {"0.60175574", "0.2553228", "0.27367848", "-2.1975214"});  // model_variable1
    check_prints(normal(fold(key(1), 3213575472u), 4, kDefault),
                 {"1.6249592", "0.30813068", "1.6613585", "1.0404155"});  // model_variable2
    check_prints(normal(fold(key(0), 111800540u), 4, kDefault),
                 {"0.0030665", "0.29551846", "0.16670242", "-0.78252524"});  // Dense_1 kernel
    check_prints(normal(fold(key(0), 3340417016u), 2, kDefault),
                 {"1.582462", "0.15216611"});  // Dense_1 bias
  }

  TEST_CASE("lifted-transform kernels of the Flax RNG guide (separator-byte hashes)") {
    // Hashes with flax_fix_rng_separator: (1,) -> 1059673188, ('Dense_0', 1) -> 4288924255,
    // ('Dense_0', 3) -> 4179161679; lifted split RNGs split the base key first.
    constexpr std::uint32_t h1 = 1059673188u, hd1 = 4288924255u, hd3 = 4179161679u;
    check_prints(lecun_normal(fold(key(0), h1), 2, 2, kDefault),
                 {"-1.2488099", "-0.6127134", "-0.07084481", "0.60130936"});
    const std::vector<std::vector<const char*>> l62 = {
        {"-0.2526208", "-0.15088455", "-1.1987205", "-0.40843305"},
        {"-0.7064888", "-1.108805", "-0.938775", "1.4812315"},
        {"-0.59468937", "-0.2502723", "-1.33515", "0.5067442"}};
    const std::vector<std::vector<const char*>> l63 = {
        {"-0.9079084", "0.76390624", "-0.01285526", "0.4320353"},
        {"0.12398645", "0.7884565", "1.5344163", "1.3186085"},
        {"-0.44171348", "0.43430036", "-0.40732604", "0.29774475"}};
    const std::vector<std::vector<const char*>> l63_other = {
        {"-0.8193048", "0.711106"}, {"-0.37802765", "-0.66705877"}, {"-0.44808003", "0.93031347"}};
    const std::vector<std::vector<const char*>> l66 = {
        {"-0.07838312", "-0.7422982", "0.87488323", "0.13773395"},
        {"0.97309333", "0.9087693", "-0.12564984", "-1.0920651"},
        {"-0.99055105", "1.1499453", "-0.15721127", "-0.62520015"}};
    for (std::size_t i = 0; i < 3; ++i) {
      CAPTURE(i);
      check_prints(lecun_normal(fold(split_at(key(0), 3, i), h1), 2, 2, kDefault), l62[i]);
      check_prints(lecun_normal(fold(split_at(key(0), 3, i), hd1), 2, 2, kDefault), l63[i]);
      check_prints(normal(fold(split_at(key(1), 3, i), h1), 2, kDefault), l63_other[i]);
      check_prints(lecun_normal(fold(split_at(key(0), 3, i), hd3), 2, 2, kDefault), l66[i]);
    }
    check_prints(lecun_normal(fold(key(0), hd3), 2, 2, kDefault),
                 {"-0.66715515", "-0.0484313", "0.9867164", "0.75408363"});
  }

  TEST_CASE("default-mode uniform, normal, truncated_normal, lecun_normal (pure-Python values)") {
    // From a pure-Python port of JAX's samplers that rounds log1p from double and does not fuse;
    // XLA fuses, so a few ulp may differ (reference_samplers.py gives the uniform/normal rows).
    check_ulps(uniform(key(0), 5, 0, 1, kDefault),
               {0.947667f, 0.97857988f, 0.33229148f, 0.46866846f, 0.56988871f}, 1);
    check_ulps(normal(key(0), 5, kDefault),
               {1.622642f, 2.0252647f, -0.43359444f, -0.078617349f, 0.1760909f}, 4);
    check_ulps(normal(key(1), 5, kDefault),
               {-0.15443718f, 0.084707275f, -0.13598049f, -0.15503626f, 1.2666672f}, 4);
    check_ulps(truncated_normal(key(0), 5, -2, 2, kDefault),
               {1.455959f, 1.7147484f, -0.41267529f, -0.075033434f, 0.16800097f}, 4);
    check_ulps(lecun_normal(key(0), 3, 4, kDefault),
               {0.95563179f, 1.1254905f, -0.27086315f, -0.04924887f, 0.11026895f, -0.5990026f,
                -0.3091259f, 0.30855614f, 0.41327727f, -0.58599401f, 1.1748582f, -1.0999686f},
               4);
  }

  TEST_CASE("RandomValuesCase: the legacy-mode values of jax/tests/random_test.py") {
    check_close(uniform(key(1338574713), 5, 0, 1, kLegacy),
                {0.298671, 0.073213, 0.873356, 0.260549, 0.412797});
    check_close(normal(key(1193674498), 5, kLegacy),
                {-1.173234, -1.511662, 0.070593, -0.099764, 1.052845});
    check_close(truncated_normal(key(2846034731), 5, 0, 2, kLegacy),
                {0.582807, 1.709771, 0.159513, 0.861376, 0.36148});
    std::vector<std::uint8_t> b(5);
    lr::detail::bernoulli(key(1612777541), std::span(b), 0.5f, false, kLegacy);
    CHECK(b == std::vector<std::uint8_t>{0, 1, 1, 1, 0});
    std::vector<float> g(5);
    lr::detail::gumbel(key(1179715317), std::span(g), false, kLegacy);
    check_close(g, {2.06701, 0.911726, 0.145736, 0.185427, -0.00711});
    std::vector<std::int32_t> r(5);
    lr::detail::randint(key(1319372649), std::span(r), 0, 10, kLegacy);
    CHECK(r == std::vector<std::int32_t>{0, 5, 7, 7, 5});
  }

  TEST_CASE("legacy randint(key(0), (3, 3), 0, 8)") {
    std::vector<std::int32_t> r(9);
    lr::detail::randint(key(0), std::span(r), 0, 8, kLegacy);
    CHECK(r == std::vector<std::int32_t>{2, 1, 3, 6, 1, 5, 6, 3, 4});
  }

  TEST_CASE("the legacy initializer docstrings (key(42), shape (2, 3))") {
    // These doctests are +SKIP and were printed by older JAX releases. uniform-based ones and
    // truncated_normal(5.0) still match bit for bit; normal(5.0) and the variance-scaled
    // truncated normals were printed by an older erf_inv and agree to a few ulp.
    const KeyData k = key(42);
    check_prints(scaled(uniform(k, 6, 0, 1, kLegacy), 10.0f),
                 {"7.298188", "8.691938", "8.7230015", "2.0818567", "1.8662417", "5.5022564"});
    check_prints(scaled(truncated_normal(k, 6, -2, 2, kLegacy), 5.0f),
                 {"2.9047365", "5.2338114", "5.29852", "-3.836303", "-4.192359", "0.6022964"});
    const auto u = uniform(k, 6, -1, 1, kLegacy);
    check_prints(scaled(u, uniform_scale(1.0, 2.0)),
                 {"0.56293887", "0.90433645", "0.9119454", "-0.71479625", "-0.7676109",
                  "0.12302713"});  // lecun_uniform
    check_prints(scaled(u, uniform_scale(1.0, 2.5)),
                 {"0.50350785", "0.8088631", "0.81566876", "-0.6393332", "-0.6865721",
                  "0.11003882"});  // glorot_uniform
    check_prints(scaled(u, uniform_scale(2.0, 2.0)),
                 {"0.79611576", "1.2789248", "1.2896855", "-1.0108745", "-1.0855657",
                  "0.17398663"});  // he_uniform
    check_ulps(scaled(normal(k, 6, kLegacy), 5.0f),
               {3.0613258f, 5.6129413f, 5.6866574f, -4.063663f, -4.4520254f, 0.63115686f}, 6);
    const auto t = truncated_normal(k, 6, -2, 2, kLegacy);
    check_ulps(scaled(t, truncated_stddev(1.0, 2.0)),
               {0.46700746f, 0.8414632f, 0.8518669f, -0.61677957f, -0.67402434f, 0.09683388f},
               2);  // lecun_normal
    check_ulps(scaled(t, truncated_stddev(1.0, 2.5)),
               {0.41770416f, 0.75262755f, 0.7619329f, -0.5516644f, -0.6028657f, 0.08661086f},
               2);  // glorot_normal
    check_ulps(scaled(t, truncated_stddev(2.0, 2.0)),
               {0.6604483f, 1.1900088f, 1.2047218f, -0.87225807f, -0.95321447f, 0.1369438f},
               2);  // he_normal
  }
}

TEST_SUITE("random.sampling.behaviour") {
  TEST_CASE("uniform stays in [minval, maxval) and float64 uses 64-bit words") {
    const auto v = uniform(key(3), 10000, -3, 5, kDefault);
    CHECK(*std::min_element(v.begin(), v.end()) >= -3.0f);
    CHECK(*std::max_element(v.begin(), v.end()) < 5.0f);
    std::vector<double> d(4);
    lr::detail::uniform(key(3), std::span(d), 0.0, 1.0, kDefault);
    std::vector<std::uint64_t> w(4);
    lr::detail::random_bits(key(3), std::span(w), kDefault);
    for (int i = 0; i < 4; ++i)
      CHECK(d[i] == std::bit_cast<double>((w[i] >> 12) | 0x3FF0000000000000ull) - 1.0);
  }

  TEST_CASE("uniform's affine map is one fused multiply-add, as XLA:CPU computes it") {
    // A draw whose product u * (maxval - minval) is inexact, so fusing changes the result.
    std::vector<std::uint32_t> w(64);
    lr::detail::random_bits(key(11), std::span(w), kDefault);
    const float lo = -0.954499722f, range = 0.954499722f - lo;
    const auto v = uniform(key(11), 64, lo, 0.954499722f, kDefault);
    int differs_from_unfused = 0;
    for (int i = 0; i < 64; ++i) {
      const float u = std::bit_cast<float>((w[i] >> 9) | 0x3F800000u) - 1.0f;
      CHECK(v[i] == std::max(lo, std::fma(u, range, lo)));
      volatile float product = u * range;
      differs_from_unfused += v[i] != product + lo;
    }
    CHECK(differs_from_unfused > 0);
  }

  TEST_CASE("truncated_normal stays inside the open interval, also for one-sided bounds") {
    const auto v = truncated_normal(key(5), 20000, -0.5f, 1.5f, kDefault);
    CHECK(*std::min_element(v.begin(), v.end()) > -0.5f);
    CHECK(*std::max_element(v.begin(), v.end()) < 1.5f);
    std::vector<double> d(20000);
    lr::detail::truncated_normal(key(5), std::span(d), 0.0, 3.0, kLegacy);
    CHECK(*std::min_element(d.begin(), d.end()) > 0.0);
    CHECK(*std::max_element(d.begin(), d.end()) < 3.0);
  }

  TEST_CASE("randint: empty ranges give minval, wide and out-of-int32 ranges work") {
    std::vector<std::int32_t> r(1000);
    lr::detail::randint(key(1), std::span(r), 5, 5, kDefault);
    CHECK(std::all_of(r.begin(), r.end(), [](std::int32_t x) { return x == 5; }));
    lr::detail::randint(key(1), std::span(r), 7, -3, kDefault);
    CHECK(std::all_of(r.begin(), r.end(), [](std::int32_t x) { return x == 7; }));
    lr::detail::randint(key(1), std::span(r), -2147483648LL, 2147483648LL, kDefault);  // full
    CHECK(std::any_of(r.begin(), r.end(), [](std::int32_t x) { return x < 0; }));
    CHECK(std::any_of(r.begin(), r.end(), [](std::int32_t x) { return x > 0; }));
    lr::detail::randint(key(1), std::span(r), -3, 4, kLegacy);
    CHECK(*std::min_element(r.begin(), r.end()) == -3);
    CHECK(*std::max_element(r.begin(), r.end()) == 3);
  }

  TEST_CASE("permutation is a permutation; one element or none needs no rounds") {
    for (bool mode : {kDefault, kLegacy}) {
      std::vector<std::int32_t> p(1000);
      lr::detail::permutation(key(2), std::span(p), mode);
      std::vector<std::int32_t> sorted = p;
      std::sort(sorted.begin(), sorted.end());
      std::vector<std::int32_t> iota(1000);
      std::iota(iota.begin(), iota.end(), 0);
      CHECK(sorted == iota);
      CHECK(p != iota);
    }
    std::vector<std::int32_t> one(1);
    lr::detail::permutation(key(2), std::span(one), kDefault);
    CHECK(one[0] == 0);
  }

  TEST_CASE("permutation of 5 is the stable argsort of one round of 32-bit sort keys") {
    // One round: key, subkey = split(key); sort arange(5) by bits(subkey, (5,)).
    std::vector<KeyData> pair(2);
    lr::detail::split(key(9), std::span(pair), kDefault);
    std::vector<std::uint32_t> sk(5);
    lr::detail::random_bits(pair[1], std::span(sk), kDefault);
    std::vector<std::int32_t> expect(5);
    std::iota(expect.begin(), expect.end(), 0);
    std::stable_sort(expect.begin(), expect.end(), [&](int a, int b) { return sk[a] < sk[b]; });
    std::vector<std::int32_t> p(5);
    lr::detail::permutation(key(9), std::span(p), kDefault);
    CHECK(p == expect);
  }

  TEST_CASE("independent shuffles permute every lane along the axis separately") {
    std::vector<std::int32_t> idx(4 * 6);
    lr::detail::shuffle_indices(key(4), {4, 6}, 1, std::span(idx), kDefault);
    bool lanes_differ = false;
    for (int r = 0; r < 4; ++r) {
      std::vector<std::int32_t> lane(idx.begin() + 6 * r, idx.begin() + 6 * r + 6);
      if (r > 0) lanes_differ |= !std::equal(lane.begin(), lane.end(), idx.begin());
      std::sort(lane.begin(), lane.end());
      CHECK(lane == std::vector<std::int32_t>{0, 1, 2, 3, 4, 5});
    }
    CHECK(lanes_differ);
    CHECK_THROWS_AS(lr::detail::shuffle_indices(key(4), {4, 6}, 2, std::span(idx), kDefault),
                    linum::ValueError);
  }

  TEST_CASE("weighted choice never picks zero-weight entries and respects replace=False") {
    const std::vector<float> p{0.0f, 0.5f, 0.0f, 0.25f, 0.25f};
    std::vector<std::int32_t> out(2000);
    lr::detail::weighted_choice(key(8), std::span<const float>(p), std::span(out), true, kDefault);
    for (std::int32_t i : out) CHECK((i == 1 || i == 3 || i == 4));
    const double f1 = std::count(out.begin(), out.end(), 1) / 2000.0;
    CHECK(std::abs(f1 - 0.5) < 0.05);
    std::vector<std::int32_t> three(3);
    lr::detail::weighted_choice(key(8), std::span<const float>(p), std::span(three), false,
                                kDefault);
    std::sort(three.begin(), three.end());
    CHECK(three == std::vector<std::int32_t>{1, 3, 4});
    std::vector<std::int32_t> six(6);
    CHECK_THROWS_AS(lr::detail::weighted_choice(key(8), std::span<const float>(p), std::span(six),
                                                false, kDefault),
                    linum::ValueError);
  }
}

TEST_SUITE("random.sampling.statistics") {
  // 10^6 draws: the bounds are about 6 standard errors, for both modes and both float types.
  constexpr std::size_t N = 1'000'000;

  TEST_CASE("uniform: mean 1/2, variance 1/12") {
    for (bool mode : {kDefault, kLegacy}) {
      auto [m, v] = mean_var(uniform(key(21), N, 0, 1, mode));
      CHECK(std::abs(m - 0.5) < 6 * std::sqrt(1.0 / 12 / N));
      CHECK(std::abs(v - 1.0 / 12) < 0.002);
      std::vector<double> d(N);
      lr::detail::uniform(key(21), std::span(d), 0.0, 1.0, mode);
      auto [md, vd] = mean_var(d);
      CHECK(std::abs(md - 0.5) < 6 * std::sqrt(1.0 / 12 / N));
      CHECK(std::abs(vd - 1.0 / 12) < 0.002);
    }
  }

  TEST_CASE("normal: mean 0, variance 1, and the tail mass beyond 2 sigma") {
    for (bool mode : {kDefault, kLegacy}) {
      const auto s = normal(key(22), N, mode);
      auto [m, v] = mean_var(s);
      CHECK(std::abs(m) < 6 / std::sqrt(double(N)));
      CHECK(std::abs(v - 1) < 0.01);
      const double tail =
          std::count_if(s.begin(), s.end(), [](float x) { return std::abs(x) > 2; });
      CHECK(std::abs(tail / N - 0.0455003) < 0.0015);
      std::vector<double> d(N);
      lr::detail::normal(key(22), std::span(d), mode);
      auto [md, vd] = mean_var(d);
      CHECK(std::abs(md) < 6 / std::sqrt(double(N)));
      CHECK(std::abs(vd - 1) < 0.01);
    }
  }

  TEST_CASE("truncated_normal(-2, 2): variance 0.87962566^2, the constant of variance_scaling") {
    for (bool mode : {kDefault, kLegacy}) {
      auto [m, v] = mean_var(truncated_normal(key(23), N, -2, 2, mode));
      CHECK(std::abs(m) < 0.006);
      CHECK(std::abs(std::sqrt(v) - 0.87962566103423978) < 0.003);
      std::vector<double> d(N);
      lr::detail::truncated_normal(key(23), std::span(d), 0.0, 1.0, mode);
      // Standard normal truncated to (0, 1): mean (phi(0) - phi(1)) / (Phi(1) - Phi(0)).
      auto [md, vd] = mean_var(d);
      CHECK(std::abs(md - 0.4598622) < 0.002);
      CHECK(std::abs(vd - 0.0791451) < 0.002);
    }
  }

  TEST_CASE("bernoulli: frequency p in both modes 'low' and 'high'") {
    for (bool high : {false, true}) {
      std::vector<std::uint8_t> b(N);
      lr::detail::bernoulli(key(24), std::span(b), 0.3f, high, kDefault);
      const double f = std::accumulate(b.begin(), b.end(), 0.0) / N;
      CHECK(std::abs(f - 0.3) < 6 * std::sqrt(0.21 / N));
      lr::detail::bernoulli(key(24), std::span(b), 1e-9, high, kDefault);
      CHECK(std::accumulate(b.begin(), b.end(), 0) <= 2);
    }
  }

  TEST_CASE("gumbel: mean Euler's gamma, variance pi^2/6, modes low and high") {
    for (bool high : {false, true}) {
      std::vector<float> g(N);
      lr::detail::gumbel(key(25), std::span(g), high, kDefault);
      auto [m, v] = mean_var(g);
      CHECK(std::abs(m - 0.5772157) < 0.008);
      CHECK(std::abs(v - M_PI * M_PI / 6) < 0.03);
    }
  }

  TEST_CASE("randint: every value of [minval, maxval) equally likely") {
    std::vector<std::int32_t> r(N);
    lr::detail::randint(key(26), std::span(r), -3, 7, kDefault);
    std::vector<double> counts(10, 0);
    for (std::int32_t x : r) counts[x + 3] += 1;
    double chi2 = 0;
    for (double c : counts) chi2 += (c - N / 10.0) * (c - N / 10.0) / (N / 10.0);
    CHECK(chi2 < 35);  // 9 degrees of freedom: P(chi2 > 35) < 1e-4
  }

  TEST_CASE("permutation: each element lands in each position equally often") {
    std::vector<double> hits(5 * 5, 0);
    std::vector<std::int32_t> p(5);
    const int trials = 50000;
    for (int t = 0; t < trials; ++t) {
      lr::detail::permutation(key(t), std::span(p), kDefault);
      for (int pos = 0; pos < 5; ++pos) hits[pos * 5 + p[pos]] += 1;
    }
    for (double h : hits) CHECK(std::abs(h / trials - 0.2) < 0.012);
  }
}

}  // namespace test_sampling
