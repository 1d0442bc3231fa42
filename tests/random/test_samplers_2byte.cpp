// jax.random's samplers with bfloat16 and float16 dtypes: uniform bit for bit from the threefry
// bits (8 bits per bfloat16 element, 16 per float16, in both jax_threefry_partitionable modes);
// the other samplers as the float32 chain over the 2-byte unit draw rounded once, plus moments;
// and nn::initializers with a 2-byte param dtype.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <optional>
#include <vector>

#include <linum/autodiff/jit.hpp>
#include <linum/autodiff/ops.hpp>
#include <linum/autodiff/random/draw_format.hpp>
#include <linum/autodiff/random/random.hpp>
#include <linum/autodiff/random/threefry.hpp>
#include <linum/autodiff/random/xla_math.hpp>
#include <linum/nn/initializers.hpp>

namespace test_samplers_2byte {

namespace lr = linum::random;
namespace init = linum::nn::initializers;
using linum::Array;
using linum::BFloat16;
using linum::DType;
using linum::Float16;
using linum::Shape;
using lr::detail::KeyData;

namespace {

KeyData key_data(const Array& k) {
  return {k.data<std::uint32_t>()[0], k.data<std::uint32_t>()[1]};
}

// The n draws of `width` bits (8 or 16) that JAX's _random_bits gives, written out from the
// threefry block: default mode takes the xor of the pair at counter (0, i), truncated; legacy mode
// cuts the 32-bit stream of ceil(n * width / 32) words into width-bit pieces, low piece first.
std::vector<std::uint32_t> narrow_bits(KeyData k, std::size_t n, int width, bool partitionable) {
  std::vector<std::uint32_t> out(n);
  const std::uint32_t mask = (1u << width) - 1;
  if (partitionable) {
    for (std::size_t i = 0; i < n; ++i) {
      const auto y = lr::detail::threefry2x32(k, 0, static_cast<std::uint32_t>(i));
      out[i] = (y[0] ^ y[1]) & mask;
    }
    return out;
  }
  const std::size_t per = 32 / width;
  std::vector<std::uint32_t> words((n + per - 1) / per);
  lr::detail::random_bits(k, std::span(words), false);
  for (std::size_t i = 0; i < n; ++i) out[i] = (words[i / per] >> (width * (i % per))) & mask;
  return out;
}

// The unit draws in [0, 1): bfloat16 keeps the top 7 of 8 bits under 0x3F80, float16 the top 10
// of 16 under 0x3C00; both are exact in float.
std::vector<float> unit_draws(KeyData k, std::size_t n, DType dtype, bool partitionable) {
  const bool bf = dtype == linum::bfloat16;
  const auto b = narrow_bits(k, n, bf ? 8 : 16, partitionable);
  std::vector<float> u(n);
  for (std::size_t i = 0; i < n; ++i)
    u[i] = bf ? static_cast<float>(BFloat16::from_bits(0x3F80 | (b[i] >> 1))) - 1.0f
              : static_cast<float>(Float16::from_bits(0x3C00 | (b[i] >> 6))) - 1.0f;
  return u;
}

// A float32 value rounded to dtype, and the elements of a 2-byte array, as float.
float round_to(float x, DType dtype) {
  return dtype == linum::bfloat16 ? static_cast<float>(BFloat16(x))
                                  : static_cast<float>(Float16(x));
}
std::vector<float> values(const Array& a) {
  std::vector<float> v(a.size());
  for (std::size_t i = 0; i < v.size(); ++i)
    v[i] = a.dtype() == linum::bfloat16 ? static_cast<float>(a.data<BFloat16>()[i])
                                        : static_cast<float>(a.data<Float16>()[i]);
  return v;
}

// finfo(dtype).nmant.
int nmant(DType dtype) { return dtype == linum::bfloat16 ? 7 : 10; }

struct Moments {
  double mean, std;
};
Moments moments(const std::vector<float>& v) {
  double s = 0, s2 = 0;
  for (float x : v) s += x;
  const double m = s / static_cast<double>(v.size());
  for (float x : v) s2 += (x - m) * (x - m);
  return {m, std::sqrt(s2 / static_cast<double>(v.size()))};
}

const DType kDtypes[] = {linum::bfloat16, linum::float16};

// A sampler and the float32 chain JAX's code applies to the unit draw u, with the constants in
// dtype and the affine map of uniform as one FMA (as XLA:CPU contracts it); mean and std of the
// continuous distribution where the 2-byte grid approximates it well.
struct Chain {
  const char* name;
  std::function<Array(const Array&, const Shape&, DType)> sample;
  std::function<float(float, DType)> chain;
  std::optional<double> mean, std;
};

// max(lo, u * (hi - lo) + lo): uniform's map of the unit draw onto [lo, hi).
float affine(float u, float lo, float hi) { return std::max(lo, std::fma(u, hi - lo, lo)); }

std::vector<Chain> chains() {
  using lr::detail::erf_inv;
  using lr::detail::xla_log;
  using lr::detail::xla_log1p;
  auto sqrt2 = [](DType d) { return round_to(std::sqrt(2.0f), d); };
  auto epsneg = [](DType d) { return std::ldexp(1.0f, -nmant(d) - 1); };
  auto tiny = [](DType d) { return d == linum::bfloat16 ? 0x1p-126f : 0x1p-14f; };
  return {
      {"uniform", [](const Array& k, const Shape& s, DType d) { return lr::uniform(k, s, d); },
       [](float u, DType) { return u; }, 0.5, std::sqrt(1.0 / 12)},
      {"normal", [](const Array& k, const Shape& s, DType d) { return lr::normal(k, s, d); },
       [=](float u, DType d) {
         const float lo = -1.0f + epsneg(d);  // nextafter(-1, 0) in dtype
         return sqrt2(d) * erf_inv(affine(u, lo, 1.0f));
       },
       0.0, 1.0},
      {"truncated_normal",
       [](const Array& k, const Shape& s, DType d) { return lr::truncated_normal(k, -2, 2, s, d); },
       [=](float u, DType d) {
         const float a = lr::detail::erf(-2.0f / sqrt2(d)), b = lr::detail::erf(2.0f / sqrt2(d));
         // Clipped to nextafter(-2, inf) and nextafter(2, -inf) in dtype.
         const float bound = 2.0f - 2.0f * epsneg(d);
         return std::min(std::max(sqrt2(d) * erf_inv(affine(u, a, b)), -bound), bound);
       },
       0.0, 0.87962566103423978},
      {"exponential",
       [](const Array& k, const Shape& s, DType d) { return lr::exponential(k, s, d); },
       [](float u, DType) { return -xla_log1p(-u); }},
      {"gumbel", [](const Array& k, const Shape& s, DType d) { return lr::gumbel(k, s, d); },
       [=](float u, DType d) { return -xla_log(-xla_log(affine(u, tiny(d), 1.0f))); }},
      {"laplace", [](const Array& k, const Shape& s, DType d) { return lr::laplace(k, s, d); },
       [=](float u, DType d) {
         const float x = affine(u, -1.0f + epsneg(d), 1.0f);
         return (x > 0 ? 1.0f : x < 0 ? -1.0f : 0.0f) * xla_log1p(-std::abs(x));
       }},
      {"logistic", [](const Array& k, const Shape& s, DType d) { return lr::logistic(k, s, d); },
       [=](float u, DType d) {
         const float x = affine(u, tiny(d), 1.0f);
         return xla_log(x) - xla_log1p(-x);
       }},
  };
}

}  // namespace

TEST_SUITE("random.2byte") {
  TEST_CASE("nextafter and finfo in the 2-byte formats") {
    using lr::detail::next_after;
    const float inf = std::numeric_limits<float>::infinity();
    CHECK(next_after<float, BFloat16>(2.0f, -inf) == 2.0f - 0x1p-7f);
    CHECK(next_after<float, BFloat16>(2.0f, inf) == 2.0f + 0x1p-6f);
    CHECK(next_after<float, BFloat16>(0.0f, 1.0f) == 0x1p-133f);
    CHECK(next_after<float, BFloat16>(-1.0f, 0.0f) == -1.0f + 0x1p-8f);
    CHECK(next_after<float, Float16>(1.0f, 2.0f) == 1.0f + 0x1p-10f);
    CHECK(next_after<float, Float16>(0.0f, -1.0f) == -0x1p-24f);
    CHECK(next_after<float, Float16>(65504.0f, inf) == inf);
    CHECK(lr::detail::finfo_tiny<float, Float16>() == 0x1p-14f);
    CHECK(lr::detail::finfo_eps<float, BFloat16>() == 0x1p-7f);
    CHECK(lr::detail::finfo_epsneg<float, Float16>() == 0x1p-11f);
  }

  TEST_CASE("uniform: the known unit values of key(1701)'s legacy bits") {
    // The legacy 8- and 16-bit draws of key(1701) are {216, 115, 43} and {41682, 1300, 55017}.
    lr::ThreefryPartitionableScope legacy(false);
    const Array k = lr::PRNGKey(1701);
    CHECK(values(lr::uniform(k, {3}, linum::bfloat16)) ==
          std::vector<float>{108 / 128.0f, 57 / 128.0f, 21 / 128.0f});
    CHECK(values(lr::uniform(k, {3}, linum::float16)) ==
          std::vector<float>{651 / 1024.0f, 20 / 1024.0f, 859 / 1024.0f});
  }

  TEST_CASE("uniform is exact from the threefry bits, in both modes, with bounds") {
    for (const bool partitionable : {true, false}) {
      lr::ThreefryPartitionableScope mode(partitionable);
      for (const DType dtype : kDtypes) {
        INFO("partitionable " << partitionable << ", " << linum::dtype_name(dtype));
        const Array k = lr::PRNGKey(42);
        const std::size_t n = 37;  // odd, so the legacy stream ends inside a word
        const auto u = unit_draws(key_data(k), n, dtype, partitionable);
        const Array got = lr::uniform(k, {n}, dtype);
        REQUIRE(got.dtype() == dtype);
        CHECK(values(got) == u);  // minval 0, maxval 1: the unit draw itself

        // minval and maxval round to dtype first; u * (max - min) + min in float32 (one FMA, as
        // XLA:CPU contracts it), rounded once.
        const float lo = round_to(-0.3f, dtype), hi = round_to(2.7f, dtype);
        const auto got2 = values(lr::uniform(k, {n}, dtype, -0.3, 2.7));
        for (std::size_t i = 0; i < n; ++i)
          CHECK(got2[i] == round_to(std::max(lo, std::fma(u[i], hi - lo, lo)), dtype));
      }
    }
  }

  TEST_CASE("each sampler is its float32 chain over the 2-byte unit draw, rounded once") {
    for (const bool partitionable : {true, false}) {
      lr::ThreefryPartitionableScope mode(partitionable);
      for (const DType dtype : kDtypes) {
        for (const Chain& c : chains()) {
          INFO(c.name << ", partitionable " << partitionable << ", " << linum::dtype_name(dtype));
          const Array k = lr::PRNGKey(7);
          const std::size_t n = 64;
          const auto u = unit_draws(key_data(k), n, dtype, partitionable);
          const Array got = c.sample(k, {static_cast<std::int64_t>(n)}, dtype);
          REQUIRE(got.dtype() == dtype);
          const auto v = values(got);
          for (std::size_t i = 0; i < n; ++i) CHECK(v[i] == round_to(c.chain(u[i], dtype), dtype));
        }
        // bernoulli compares the unit draw with p rounded to dtype.
        const Array k = lr::PRNGKey(7);
        const auto u = unit_draws(key_data(k), 64, dtype, partitionable);
        const Array bits = lr::bernoulli(k, 0.3, {64}, "low", dtype);
        REQUIRE(bits.dtype() == linum::bool_);
        const float p = round_to(0.3f, dtype);
        for (std::size_t i = 0; i < 64; ++i) CHECK(bits.data<bool>()[i] == (u[i] < p));
      }
    }
  }

  TEST_CASE("moments of 10^5 draws: the exact moments over the 2-byte grid, and the continuum's") {
    // A 2-byte unit draw takes 2^nmant equally likely values, so each sampler's exact mean and
    // std are those of its chain over that grid (heavy-tailed where the grid's ends map far).
    for (const DType dtype : kDtypes) {
      const std::size_t levels = std::size_t{1} << nmant(dtype);
      for (const Chain& c : chains()) {
        INFO(c.name << ", " << linum::dtype_name(dtype));
        std::vector<float> grid(levels);
        for (std::size_t j = 0; j < levels; ++j)
          grid[j] =
              round_to(c.chain(std::ldexp(static_cast<float>(j), -nmant(dtype)), dtype), dtype);
        const Moments exact = moments(grid);
        const auto draws = values(c.sample(lr::PRNGKey(0), {100000}, dtype));
        const Moments got = moments(draws);
        CHECK(std::abs(got.mean - exact.mean) < 5 * exact.std / std::sqrt(1e5));
        CHECK(std::abs(got.std - exact.std) < 0.05 * exact.std);
        if (c.mean) CHECK(std::abs(exact.mean - *c.mean) < 0.02);
        if (c.std) CHECK(std::abs(exact.std - *c.std) < 0.03);
      }
    }
  }

  TEST_CASE("samplers built on the 2-byte draws keep the dtype") {
    const Array k = lr::PRNGKey(3);
    for (const DType dtype : kDtypes) {
      INFO(linum::dtype_name(dtype));
      CHECK(lr::cauchy(k, {4}, dtype).dtype() == dtype);
      CHECK(lr::laplace(k, {4}, dtype).dtype() == dtype);
      CHECK(lr::logistic(k, {4}, dtype).dtype() == dtype);
      CHECK(lr::maxwell(k, {4}, dtype).dtype() == dtype);
      CHECK(lr::gumbel(k, {4}, dtype, "high").dtype() == dtype);
      CHECK(lr::lognormal(k, Array(0.5f).astype(dtype), std::nullopt, dtype).dtype() == dtype);
      // categorical over 2-byte logits: with replacement through gumbel, without through top-k.
      const Array logits = linum::array({0.0f, 10.0f, 0.0f}).astype(dtype);
      const Array c = lr::categorical(k, logits, -1, Shape{50});
      CHECK(c.dtype() == linum::int32);
      CHECK(linum::sum(linum::equal(c, linum::Array(1))).item<std::int32_t>() >= 48);
      const Array top = lr::categorical(k, logits, -1, Shape{2}, /*replace=*/false);
      CHECK(top.data<std::int32_t>()[0] == 1);
      const Array pick =
          lr::choice(k, 3, {20}, true, linum::array({0.0f, 1.0f, 0.0f}).astype(dtype));
      CHECK(linum::all(linum::equal(pick, linum::Array(1))).item<bool>());
    }
  }

  TEST_CASE("samplers composed with ops take 2-byte dtypes; the gamma family refuses them") {
    const Array k = lr::PRNGKey(4);
    for (const DType dtype : kDtypes) {
      INFO(linum::dtype_name(dtype));
      const Array two = Array(2.0f).astype(dtype), one = Array(1.0f).astype(dtype);
      CHECK(lr::pareto(k, two, Shape{8}, dtype).dtype() == dtype);
      CHECK(lr::weibull_min(k, one, two, {8}, dtype).dtype() == dtype);
      CHECK(lr::double_sided_maxwell(k, one, two, {8}, dtype).dtype() == dtype);
      CHECK_THROWS_AS(lr::gamma(k, two, Shape{8}, dtype), linum::TypeError);
      CHECK_THROWS_AS(lr::beta(k, two, two, Shape{8}, dtype), linum::TypeError);
      CHECK_THROWS_AS(lr::binomial(k, two, Array(0.5f).astype(dtype), Shape{8}, dtype),
                      linum::TypeError);
      CHECK_THROWS_AS(lr::generalized_normal(k, 2.0, {8}, dtype), linum::TypeError);
      CHECK_THROWS_AS(lr::ball(k, 3, 2.0, {8}, dtype), linum::TypeError);
    }
  }

  TEST_CASE("a vmapped batch of keys draws what each key draws") {
    const Array keys = lr::split(lr::PRNGKey(11), 3);
    const Array batched =
        linum::vmap([](const Array& k) { return lr::normal(k, {5}, linum::bfloat16); })(keys);
    REQUIRE(batched.dtype() == linum::bfloat16);
    for (std::int64_t i = 0; i < 3; ++i)
      CHECK(values(batched[i]) == values(lr::normal(keys[i], {5}, linum::bfloat16)));
  }

  TEST_CASE("under jit a 2-byte sampler draws what it draws eagerly") {
    const Array k = lr::PRNGKey(12);
    auto f = [](const Array& key) {
      return lr::truncated_normal(key, -1.0, 3.0, {6}, linum::float16) +
             lr::gumbel(key, {6}, linum::float16);
    };
    const Array jitted = linum::jit(f)(k);
    REQUIRE(jitted.dtype() == linum::float16);
    CHECK(values(jitted) == values(f(k)));
  }

  TEST_CASE("a non-float dtype is still refused") {
    CHECK_THROWS_AS(lr::normal(lr::PRNGKey(0), {2}, linum::int32), linum::ValueError);
  }
}

TEST_SUITE("nn.initializers.2byte") {
  TEST_CASE("initializers draw in the param dtype and scale in it") {
    const Array k = lr::PRNGKey(5);
    for (const DType dtype : kDtypes) {
      INFO(linum::dtype_name(dtype));
      const Shape s{6, 4};
      CHECK(init::zeros_init()(k, s, dtype).dtype() == dtype);
      CHECK(init::ones_init()(k, s, dtype).dtype() == dtype);

      // normal(stddev): normal(key) * jnp.array(stddev, dtype), rounded once.
      const auto n = values(init::normal(0.02)(k, s, dtype));
      const auto z = values(lr::normal(k, s, dtype));
      const float sd = round_to(0.02f, dtype);
      for (std::size_t i = 0; i < n.size(); ++i) CHECK(n[i] == round_to(z[i] * sd, dtype));

      // lecun_normal: truncated_normal(-2, 2) * (sqrt(variance) / 0.8796...), every jnp op
      // rounding to dtype (fan_in = 6).
      const Array w = init::lecun_normal()(k, s, dtype);
      REQUIRE(w.dtype() == dtype);
      const float var = round_to(1.0f / 6.0f, dtype);
      const float f =
          round_to(round_to(std::sqrt(var), dtype) / round_to(0.87962566103423978f, dtype), dtype);
      const auto t = values(lr::truncated_normal(k, -2, 2, s, dtype));
      const auto wv = values(w);
      for (std::size_t i = 0; i < wv.size(); ++i) CHECK(wv[i] == round_to(t[i] * f, dtype));

      // glorot_uniform: uniform(-1, 1) * sqrt(3 * variance), fan_avg = 5.
      const float gv = round_to(1.0f / 5.0f, dtype);
      const float gf = round_to(std::sqrt(round_to(3.0f * gv, dtype)), dtype);
      const auto gu = values(lr::uniform(k, s, dtype, -1.0, 1.0));
      const auto g = values(init::glorot_uniform()(k, s, dtype));
      for (std::size_t i = 0; i < g.size(); ++i) CHECK(g[i] == round_to(gu[i] * gf, dtype));

      CHECK(init::uniform()(k, s, dtype).dtype() == dtype);
      CHECK(init::variance_scaling(1.0, "fan_in", "normal")(k, s, dtype).dtype() == dtype);
      CHECK(init::he_normal()(k, s, dtype).dtype() == dtype);
    }
  }

  TEST_CASE("orthogonal with bfloat16 is orthogonal to bfloat16 precision") {
    const Array q = init::orthogonal()(lr::PRNGKey(2), {8, 8}, linum::bfloat16);
    REQUIRE(q.dtype() == linum::bfloat16);
    const Array qf = q.astype(linum::float32);
    const Array gram = linum::matmul(qf.T(), qf);
    const Array err = linum::max(linum::abs(gram - linum::eye(8)));
    CHECK(err.item<float>() < 0.05f);
  }
}

}  // namespace test_samplers_2byte
