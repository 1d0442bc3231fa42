// LayerNorm, RMSNorm, GroupNorm and BatchNorm's axis_name: Flax's parameter names and shapes,
// outputs against explicit loops over the raw numbers, gradients against finite differences.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include <linum/linum.hpp>
#include <linum/nn/nn.hpp>

#include "../autodiff/check_grads.hpp"
#include "nn_testing.hpp"

namespace test_norms {

using namespace linum;
using lift::Filter;
using testing::allclose;
using testing::shape_of;
using testing::sorted_keys;

namespace {
std::vector<float> values(const Array& a) {
  Array c = astype(a, float32);
  return {c.data<float>(), c.data<float>() + c.size()};
}
// Normalizes each row of a (rows, n) matrix with the given statistics rule, by hand in double.
std::vector<float> by_rows(const std::vector<float>& x, std::int64_t n, double eps, bool center) {
  std::vector<float> y(x.size());
  for (std::size_t r = 0; r * n < x.size(); ++r) {
    double m = 0, m2 = 0;
    for (std::int64_t j = 0; j < n; ++j) {
      m += x[r * n + j];
      m2 += double(x[r * n + j]) * x[r * n + j];
    }
    m /= n;
    m2 /= n;
    const double var = center ? m2 - m * m : m2;
    for (std::int64_t j = 0; j < n; ++j)
      y[r * n + j] = float(((center ? x[r * n + j] - m : x[r * n + j])) / std::sqrt(var + eps));
  }
  return y;
}
void check_close(const std::vector<float>& a, const std::vector<float>& b, double tol = 1e-4) {
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) CHECK(a[i] == doctest::Approx(b[i]).epsilon(tol));
}
}  // namespace

TEST_CASE("LayerNorm: params scale and bias of the feature shape; y = (x-mean)/sqrt(var+1e-6)") {
  // Rows of tiny values: their variance (~1e-6) makes the 1e-6 epsilon default visible.
  Array x = random::normal(random::key(1), {3, 5}) * 1e-3f;
  auto [y, v] = nn::LayerNorm().init_with_output(random::key(0), x);
  CHECK(v.as_dict().keys() == std::vector<std::string>{"params"});
  CHECK(v["params"].as_dict().keys() == std::vector<std::string>{"scale", "bias"});
  CHECK(shape_of(v["params"]["scale"]) == Shape{5});
  CHECK(shape_of(v["params"]["bias"]) == Shape{5});
  CHECK(allclose(v["params"]["scale"].leaf(), ones({5}), 0.0f));
  CHECK(allclose(v["params"]["bias"].leaf(), zeros({5}), 0.0f));
  check_close(values(y), by_rows(values(x), 5, 1e-6, true));
  // Learned scale and bias multiply and shift each feature.
  Array scale = random::normal(random::key(2), {5}), bias = random::normal(random::key(3), {5});
  Tree p{{"params", Tree{{"scale", Tree(scale)}, {"bias", Tree(bias)}}}};
  Array x2 = random::normal(random::key(4), {3, 5});
  Array ref = array(by_rows(values(x2), 5, 1e-6, true), {3, 5}) * scale + bias;
  CHECK(allclose(nn::LayerNorm().apply(p, x2), ref, 1e-4f));
  // use_bias / use_scale off: those params are not created.
  Tree nb = nn::LayerNorm({.use_bias = false, .use_scale = false}).init(random::key(0), x2);
  CHECK(nb.as_dict().empty());
}

TEST_CASE(
    "LayerNorm: reduction_axes over (H, W, C) with feature_axes -1; a mask excludes entries") {
  Array x = random::normal(random::key(5), {2, 3, 4, 6});
  nn::LayerNorm ln({.reduction_axes = {1, 2, 3}});
  auto [y, v] = ln.init_with_output(random::key(0), x);
  CHECK(shape_of(v["params"]["scale"]) == Shape{6});
  check_close(values(y), by_rows(values(x), 3 * 4 * 6, 1e-6, true));
  // feature_axes (-2, -1): scale of shape (4, 6).
  Tree v2 = nn::LayerNorm({.reduction_axes = {1, 2, 3}, .feature_axes = {-2, -1}})
                .init(random::key(0), x);
  CHECK(shape_of(v2["params"]["bias"]) == Shape{4, 6});
  // A mask keeping the first 4 of 6 entries: those are normalized by their own statistics.
  Array xr = random::normal(random::key(6), {2, 6});
  Array mask = array(std::vector<bool>{true, true, true, true, false, false}, {6});
  Array ym = nn::LayerNorm().apply(v, xr, mask);
  Array head = slice(xr, {{}, {0, 4}});
  check_close(values(slice(ym, {{}, {0, 4}})), by_rows(values(head), 4, 1e-6, true));
  CHECK_THROWS_AS(nn::LayerNorm().apply(v, xr, ones({6})), TypeError);
  CHECK_THROWS_AS(nn::LayerNorm({.reduction_axes = {3}}).init(random::key(0), xr), IndexError);
}

TEST_CASE("RMSNorm: only a scale param; y = x / sqrt(mean(x^2) + 1e-6) * scale") {
  Array x = random::normal(random::key(7), {4, 8});
  auto [y, v] = nn::RMSNorm().init_with_output(random::key(0), x);
  CHECK(v["params"].as_dict().keys() == std::vector<std::string>{"scale"});
  CHECK(shape_of(v["params"]["scale"]) == Shape{8});
  check_close(values(y), by_rows(values(x), 8, 1e-6, false));
  Array scale = random::normal(random::key(8), {8});
  Array ys = nn::RMSNorm().apply(Tree{{"params", Tree{{"scale", Tree(scale)}}}}, x);
  CHECK(allclose(ys, array(by_rows(values(x), 8, 1e-6, false), {4, 8}) * scale, 1e-4f));
  // Tiny inputs: the epsilon bounds the gain (|y| <= |x| / sqrt(1e-6)).
  Array tiny = full({1, 4}, 1e-4);
  Tree v4 = nn::RMSNorm().init(random::key(0), tiny);
  check_close(values(nn::RMSNorm().apply(v4, tiny)),
              std::vector<float>(4, float(1e-4 / std::sqrt(1e-8 + 1e-6))));
}

TEST_CASE("GroupNorm: statistics per example and group, by an explicit loop; errors") {
  const std::int64_t N = 2, L = 3, C = 6, G = 3;
  Array x = random::normal(random::key(9), {N, L, C}) * 2.0f + 0.5f;
  nn::GroupNorm gn({.num_groups = G});
  auto [y, v] = gn.init_with_output(random::key(0), x);
  CHECK(v["params"].as_dict().keys() == std::vector<std::string>{"scale", "bias"});
  CHECK(shape_of(v["params"]["scale"]) == Shape{C});
  CHECK(shape_of(v["params"]["bias"]) == Shape{C});
  const std::vector<float> xs = values(x);
  std::vector<float> ref(xs.size());
  const std::int64_t gs = C / G;
  for (std::int64_t n = 0; n < N; ++n)
    for (std::int64_t g = 0; g < G; ++g) {
      double m = 0, m2 = 0;
      for (std::int64_t l = 0; l < L; ++l)
        for (std::int64_t c = g * gs; c < (g + 1) * gs; ++c) {
          const double e = xs[(n * L + l) * C + c];
          m += e;
          m2 += e * e;
        }
      m /= L * gs;
      m2 /= L * gs;
      for (std::int64_t l = 0; l < L; ++l)
        for (std::int64_t c = g * gs; c < (g + 1) * gs; ++c) {
          const std::size_t i = (n * L + l) * C + c;
          ref[i] = float((xs[i] - m) / std::sqrt(m2 - m * m + 1e-6));
        }
    }
  check_close(values(y), ref);
  // group_size=2 is the same grouping as num_groups=3 for 6 channels.
  CHECK(allclose(nn::GroupNorm({.num_groups = std::nullopt, .group_size = 2}).apply(v, x), y));
  // num_groups=1 is LayerNorm over every non-batch axis.
  Array y1 = nn::GroupNorm({.num_groups = 1}).apply(v, x);
  CHECK(allclose(y1, nn::LayerNorm({.reduction_axes = {1, 2}}).apply(v, x), 1e-4f));
  CHECK_THROWS_AS(nn::GroupNorm().init(random::key(0), x), ValueError);  // 32 does not divide 6
  CHECK_THROWS_AS(nn::GroupNorm({.num_groups = 3, .group_size = 2}).init(random::key(0), x),
                  ValueError);
  CHECK_THROWS_AS(
      nn::GroupNorm({.num_groups = std::nullopt, .group_size = 4}).init(random::key(0), x),
      ValueError);
  CHECK_THROWS_AS(nn::GroupNorm({.num_groups = 3, .reduction_axes = std::vector<int>{1}})
                      .init(random::key(0), x),
                  ValueError);  // the feature axis must be reduced
}

TEST_CASE(
    "LayerNorm, RMSNorm, GroupNorm: gradients w.r.t. input and params match finite differences") {
  Array x = astype(random::normal(random::key(10), {2, 3, 4}), float64);
  Array scale = astype(random::normal(random::key(11), {4}), float64);
  Array bias = astype(random::normal(random::key(12), {4}), float64);
  auto vars = [](const Array& s, const std::optional<Array>& b) {
    Tree p{{"scale", Tree(s)}};
    if (b) p["bias"] = Tree(*b);
    return Tree{{"params", p}};
  };
  SUBCASE("LayerNorm") {
    testing::check_grads(
        [&](const Arrays& a) {
          return nn::LayerNorm({.param_dtype = float64}).apply(vars(a[1], a[2]), a[0]);
        },
        {x, scale, bias});
  }
  SUBCASE("LayerNorm, exact variance") {
    testing::check_grads(
        [&](const Arrays& a) {
          return nn::LayerNorm({.param_dtype = float64, .use_fast_variance = false})
              .apply(vars(a[1], a[2]), a[0]);
        },
        {x, scale, bias});
  }
  SUBCASE("RMSNorm") {
    testing::check_grads(
        [&](const Arrays& a) {
          return nn::RMSNorm({.param_dtype = float64}).apply(vars(a[1], std::nullopt), a[0]);
        },
        {x, scale});
  }
  SUBCASE("GroupNorm") {
    testing::check_grads(
        [&](const Arrays& a) {
          return nn::GroupNorm({.num_groups = 2, .param_dtype = float64})
              .apply(vars(a[1], a[2]), a[0]);
        },
        {x, scale, bias});
  }
}

namespace {
struct MlpBn : nn::Module<MlpBn> {
  std::string axis_name;
  explicit MlpBn(std::string a = {}) : axis_name(std::move(a)) {}
  Array call(const Array& x) {
    Array h = nn::Dense(3)(x);
    return nn::BatchNorm({.use_running_average = false, .axis_name = axis_name})(h);
  }
};
}  // namespace

TEST_CASE("BatchNorm axis_name: vmapped with pmean equals the unvmapped model on the flat batch") {
  Array keys = random::split(random::key(3), 2);
  Array key1 = squeeze(slice(keys, {{0, 1}}), 0), key2 = squeeze(slice(keys, {{1, 2}}), 0);
  Array x = random::uniform(key1, {4, 4});
  Array x2 = random::uniform(key1, {5, 4, 4});
  Tree v = MlpBn().init(key2, x);
  auto [y1, s1] = MlpBn().apply(v, reshape(x2, {-1, 4}), {.mutable_ = Filter{"batch_stats"}});
  auto vmodel = nn::vmap(
      MlpBn("batch"), {.variable_axes = {{"params", std::nullopt}, {"batch_stats", std::nullopt}},
                       .split_rngs = {{"params", false}},
                       .axis_name = "batch"});
  auto [y2, s2] = vmodel.apply(v, x2, {.mutable_ = Filter{"batch_stats"}});
  CHECK(allclose(reshape(y1, {5, 4, 3}), y2, 1e-5f));
  // The running statistics are the flat batch's as well (one copy, not one per example).
  const Tree& bs1 = s1["batch_stats"]["BatchNorm_0"];
  const Tree& bs2 = s2["batch_stats"]["BatchNorm_0"];
  CHECK(allclose(bs1["mean"].leaf(), bs2["mean"].leaf(), 1e-5f));
  CHECK(allclose(bs1["var"].leaf(), bs2["var"].leaf(), 1e-5f));
  // Without axis_name each example of the vmap has its own statistics: the outputs differ.
  auto stack5 = [](const Tree& t) { return Tree(broadcast_to(t.leaf(), {5, 3})); };
  Tree bs{{"BatchNorm_0", Tree{{"mean", stack5(v["batch_stats"]["BatchNorm_0"]["mean"])},
                               {"var", stack5(v["batch_stats"]["BatchNorm_0"]["var"])}}}};
  Array y3 = nn::vmap(MlpBn(), {.variable_axes = {{"params", std::nullopt}, {"batch_stats", 0}},
                                .split_rngs = {{"params", false}}})
                 .apply(Tree{{"params", v["params"]}, {"batch_stats", bs}}, x2,
                        {.mutable_ = Filter{"batch_stats"}})
                 .first;
  CHECK_FALSE(allclose(reshape(y1, {5, 4, 3}), y3, 1e-3f));
}

}  // namespace test_norms
