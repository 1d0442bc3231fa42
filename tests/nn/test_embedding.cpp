// Embed: the param 'embedding' with Flax's initial values (the Embed docstring's example in
// flax/linen/linear.py), lookups (negative and out-of-range indices), attend for weight tying, and
// gradients against finite differences.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include <linum/linum.hpp>
#include <linum/nn/nn.hpp>

#include "../autodiff/check_grads.hpp"
#include "nn_testing.hpp"

namespace test_embedding {

using namespace linum;
using testing::allclose;
using testing::shape_of;
using testing::sorted_keys;

namespace {
Array ints(std::vector<std::int32_t> v, Shape s) { return array(v, s); }
}  // namespace

TEST_CASE("Embed: init gives Flax's embedding for key(0); lookups gather rows") {
  Array idx = ints({0, 1, 2, -1, -2, -3}, {2, 3});
  auto [y, v] = nn::Embed(5, 3).init_with_output(random::key(0), idx);
  CHECK(v["params"].as_dict().keys() == std::vector<std::string>{"embedding"});
  const Array e = v["params"]["embedding"].leaf();
  REQUIRE(e.shape() == Shape{5, 3});
  const std::vector<float> flax = {0.04396089f, -0.9328513f,  -0.97328115f, 0.41147125f,
                                   0.66334754f, 0.49469155f,  0.09719624f,  0.49861377f,
                                   0.49519277f, -0.13316602f, 0.6697022f,   0.3710195f,
                                   -0.5039532f, 0.287319f,    1.4369922f};
  for (std::size_t i = 0; i < flax.size(); ++i)
    CHECK(e.data<float>()[i] == doctest::Approx(flax[i]).epsilon(1e-6));
  CHECK(y.shape() == Shape{2, 3, 3});
  // Row r of the output for index i is embedding[i mod 5] (-1 is the last row).
  const int rows[] = {0, 1, 2, 4, 3, 2};
  for (int k = 0; k < 6; ++k)
    for (int f = 0; f < 3; ++f)
      CHECK(y.data<float>()[k * 3 + f] == e.data<float>()[rows[k] * 3 + f]);
  // Out-of-range indices give NaN rows, as jnp.take's default fill mode.
  Array oob = nn::Embed(5, 3).apply(v, ints({5, -6, 0}, {3}));
  CHECK(all(isnan(slice(oob, {{0, 2}}))).item<bool>());
  CHECK_FALSE(any(isnan(slice(oob, {{2, 3}}))).item<bool>());
  CHECK_THROWS_AS(nn::Embed(5, 3).apply(v, ones({2})), ValueError);  // float indices
  CHECK_THROWS_AS(nn::Embed(0, 3).init(random::key(0), idx), ValueError);
}

TEST_CASE(
    "Embed with one row: index 0 gives the row, every other index NaN (Flax's special case)") {
  Tree v = nn::Embed(1, 2).init(random::key(0), ints({0}, {1}));
  Array y = nn::Embed(1, 2).apply(v, ints({0, -1, 1}, {3}));
  CHECK(allclose(slice(y, {{0, 1}}), reshape(v["params"]["embedding"].leaf(), {1, 2})));
  CHECK(all(isnan(slice(y, {{1, 3}}))).item<bool>());
}

TEST_CASE("Embed.attend: query @ embedding.T, shares the param with the lookup") {
  Tree v = nn::Embed(7, 4).init(random::key(1), ints({0}, {1}));
  Array q = random::normal(random::key(2), {2, 3, 4});
  Array logits = nn::Embed(7, 4).apply(v, q, &nn::Embed::attend);
  CHECK(logits.shape() == Shape{2, 3, 7});
  const Array e = v["params"]["embedding"].leaf();
  // Element (1, 2, 5) by hand.
  double acc = 0;
  for (int f = 0; f < 4; ++f)
    acc += q.data<float>()[(1 * 3 + 2) * 4 + f] * e.data<float>()[5 * 4 + f];
  CHECK(logits.data<float>()[(1 * 3 + 2) * 7 + 5] == doctest::Approx(acc).epsilon(1e-5));
  CHECK_THROWS_AS(nn::Embed(7, 4).apply(v, ones({2, 3}), &nn::Embed::attend), ValueError);
}

TEST_CASE("Embed: gradients of lookup and attend w.r.t. the table match finite differences") {
  Array table = astype(random::normal(random::key(3), {6, 3}), float64);
  Array q = astype(random::normal(random::key(4), {2, 3}), float64);
  Array idx = ints({1, 1, 4, 0, -1}, {5});  // a repeated index accumulates
  auto vars = [](const Array& t) { return Tree{{"params", Tree{{"embedding", Tree(t)}}}}; };
  testing::check_grads(
      [&](const Arrays& a) {
        nn::Embed m({.num_embeddings = 6, .features = 3, .param_dtype = float64});
        return m.apply(vars(a[0]), idx) * 2.0 + sum(m.apply(vars(a[0]), a[1], &nn::Embed::attend));
      },
      {table, q});
}

}  // namespace test_embedding
