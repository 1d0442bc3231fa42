// The layers Flax's guides build on (Dense, Conv, BatchNorm, Dropout, Sequential) and
// ConvTranspose / Einsum against hand computations, and the patterns of Flax's "Extracting
// intermediate values" guide (sow, capture_intermediates, method=).
#include <doctest/doctest.h>

#include <cmath>

#include <linum/linum.hpp>
#include <linum/nn/nn.hpp>
#include <linum/nn/serialization.hpp>

#include "../support/testing.hpp"
#include "nn_testing.hpp"

namespace test_layers {

using namespace linum;
using lift::Filter;
using testing::allclose;
using testing::check_error;
using testing::shape_of;
namespace init = linum::nn::initializers;

namespace {
// Seed 000's CNN, with sow of the flattened features (SowCNN).
struct SowCNN : nn::Module<SowCNN> {
  Array call(Array x) {
    x = nn::Conv({.features = 32, .kernel_size = {3, 3}})(x);
    x = nn::relu(x);
    x = nn::avg_pool(x, {2, 2}, {2, 2});
    x = nn::Conv({.features = 64, .kernel_size = {3, 3}})(x);
    x = nn::relu(x);
    x = nn::avg_pool(x, {2, 2}, {2, 2});
    x = x.reshape({x.shape(0), -1});  // flatten
    sow("intermediates", "features", x);
    x = nn::Dense(256)(x);
    x = nn::relu(x);
    x = nn::Dense(10)(x);
    return nn::log_softmax(x);
  }
};
struct SowCNN2 : nn::Module<SowCNN2> {
  Array call(const Array& x) {
    auto mod = SowCNN().named("SowCNN");
    return mod(x) + mod(x);  // calling the same module instance twice
  }
};
}  // namespace

TEST_CASE("Dense: Flax's parameter names and shapes; y = x @ kernel + bias") {
  Array x = random::normal(random::key(1), {4, 3});
  auto [y, v] = nn::Dense(5).init_with_output(random::key(0), x);
  CHECK(shape_of(v["params"]["kernel"]) == Shape{3, 5});
  CHECK(shape_of(v["params"]["bias"]) == Shape{5});
  CHECK(allclose(y, matmul(x, v["params"]["kernel"].leaf()) + v["params"]["bias"].leaf()));
  auto nb = nn::Dense({.features = 2, .use_bias = false}).init(random::key(0), x);
  CHECK_FALSE(nb["params"].contains("bias"));
  CHECK_THROWS_AS(nn::Dense(5).apply(v, ones({4, 4})), lift::ScopeParamShapeError);
}

TEST_CASE("Conv: SAME padding output shape and the value at one pixel by hand") {
  Array x = random::normal(random::key(2), {1, 5, 5, 2});
  auto [y, v] =
      nn::Conv({.features = 3, .kernel_size = {3, 3}}).init_with_output(random::key(0), x);
  CHECK(y.shape() == Shape{1, 5, 5, 3});
  CHECK(shape_of(v["params"]["kernel"]) == Shape{3, 3, 2, 3});
  // Output pixel (2, 2), feature 1: the 3x3x2 window around it times the kernel.
  const float* xd = x.data<float>();
  const float* k = v["params"]["kernel"].leaf().data<float>();
  double acc = 0;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      for (int c = 0; c < 2; ++c)
        acc += xd[((1 + i) * 5 + (1 + j)) * 2 + c] * k[((i * 3 + j) * 2 + c) * 3 + 1];
  CHECK(y.data<float>()[(2 * 5 + 2) * 3 + 1] == doctest::Approx(acc).epsilon(1e-5));
  // An unbatched input gives an unbatched output.
  CHECK(nn::Conv({.features = 3, .kernel_size = {3, 3}}).apply(v, ones({5, 5, 2})).shape() ==
        Shape{5, 5, 3});
  CHECK_THROWS_AS(
      nn::Conv({.features = 3, .kernel_size = {3, 3}}).init(random::key(0), ones({5, 2})),
      ValueError);
}

TEST_CASE("ConvTranspose: Flax's kernel shapes; the output is lax.conv_transpose plus the bias") {
  const Array x = random::normal(random::key(2), {2, 4, 3, 2});
  nn::ConvTranspose ct({.features = 3,
                        .kernel_size = {3, 2},
                        .strides = {2, 2},
                        .bias_init = nn::initializers::constant(0.5)});
  auto [y, v] = ct.init_with_output(random::key(0), x);
  CHECK(y.shape() == Shape{2, 8, 6, 3});  // SAME: in * stride
  CHECK(shape_of(v["params"]["kernel"]) == Shape{3, 2, 2, 3});
  CHECK(shape_of(v["params"]["bias"]) == Shape{3});
  const Array k = v["params"]["kernel"].leaf();
  CHECK(allclose(y, conv_transpose(x, k, {2, 2}, "SAME") + 0.5f));
  // An unbatched input gives an unbatched output.
  CHECK(allclose(ct.apply(v, squeeze(slice(x, {{0, 1}}), 0)), squeeze(slice(y, {{0, 1}}), 0)));

  // transpose_kernel stores (features, in) and flips the window; VALID grows by k - s.
  nn::ConvTranspose tk({.features = 3,
                        .kernel_size = {3, 2},
                        .strides = {2, 1},
                        .padding = "VALID",
                        .use_bias = false,
                        .transpose_kernel = true});
  auto [y2, v2] = tk.init_with_output(random::key(1), x);
  CHECK(shape_of(v2["params"]["kernel"]) == Shape{3, 2, 3, 2});
  CHECK_FALSE(v2["params"].contains("bias"));
  CHECK(y2.shape() == Shape{2, 9, 4, 3});
  CHECK(allclose(y2, conv_transpose(x, v2["params"]["kernel"].leaf(), {2, 1}, "VALID", {}, true)));
  CHECK_THROWS_AS(
      nn::ConvTranspose({.features = 3, .kernel_size = {3, 3}}).init(random::key(0), ones({5, 2})),
      ValueError);
}

TEST_CASE("Einsum: Flax's docstring shapes; output is jnp.einsum plus the kernel-axes bias") {
  const Array x = random::normal(random::key(4), {3, 4, 5});
  nn::Einsum layer({.shape = {5, 6, 7},
                    .einsum_str = "abc,cde->abde",
                    .bias_init = nn::initializers::normal(1.0)});
  auto [y, v] = layer.init_with_output(random::key(0), x);
  CHECK(shape_of(v["params"]["kernel"]) == Shape{5, 6, 7});
  CHECK(shape_of(v["params"]["bias"]) == Shape{6, 7});
  const Array k = v["params"]["kernel"].leaf(), b = v["params"]["bias"].leaf();
  CHECK(allclose(y, einsum("abc,cde->abde", x, k) + reshape(b, {1, 1, 6, 7}), 1e-4f));
  // The equation at call time; the bias follows the output order of the kernel's letters.
  nn::Einsum late({.shape = {5, 6}, .use_bias = true});
  auto [y2, v2] = late.init_with_output(random::key(1), x, std::string("...c,cd->d..."));
  CHECK(shape_of(v2["params"]["bias"]) == Shape{6});
  CHECK(y2.shape() == Shape{6, 3, 4});
  check_error<ValueError>(
      [&] {
        nn::Einsum({.shape = {5, 6}, .einsum_str = "ac,cd->ad"})
            .init(random::key(0), x, std::string("ac,cd->ad"));
      },
      {"Einsum", "just once"});
  check_error<ValueError>(
      [&] {
        nn::Einsum({.shape = {5, 6}}).init(random::key(0), x);
      },
      {"Einsum", "must be passed"});
  check_error<ValueError>(
      [&] {
        nn::Einsum({.shape = {5, 6}, .einsum_str = "abc,cd"}).init(random::key(0), x);
      },
      {"Einsum", "->"});
}

TEST_CASE("BatchNorm: normalised output and running statistics equal a hand computation") {
  Array x = random::normal(random::key(3), {8, 4}) * 3.0f + 1.0f;
  nn::BatchNorm bn({.use_running_average = false, .momentum = 0.9});
  Tree v = bn.init(random::key(0), x);
  CHECK(shape_of(v["batch_stats"]["mean"]) == Shape{4});
  CHECK(allclose(v["batch_stats"]["var"].leaf(), ones({4})));  // init does not update stats
  auto [y, state] = bn.apply(v, x, {.mutable_ = Filter{"batch_stats"}});
  Array m = mean(x, 0), var = mean(square(x - m), 0);
  CHECK(allclose(y, (x - m) / sqrt(var + 1e-5f), 1e-4f));
  CHECK(allclose(state["batch_stats"]["mean"].leaf(), 0.1f * m, 1e-5f));
  CHECK(allclose(state["batch_stats"]["var"].leaf(), 0.9f + 0.1f * var, 1e-5f));
  // With the running average the stored statistics are used.
  nn::BatchNorm eval({.use_running_average = true});
  Tree v2{{"params", v["params"]}, {"batch_stats", state["batch_stats"]}};
  Array ye = eval.apply(v2, x);
  CHECK(allclose(ye, (x - 0.1f * m) / sqrt(0.9f + 0.1f * var + 1e-5f), 1e-4f));
}

TEST_CASE(
    "Dropout: deterministic is the identity; otherwise kept values are scaled, rate ~ zeros") {
  Array x = ones({1000});
  nn::Dropout d(0.25);
  CHECK(allclose(d.apply(Tree::dict(), x, true), x));
  Array y = d.apply(Tree::dict(), x, false, lift::Rngs{{"dropout", random::key(0)}});
  const float* p = y.data<float>();
  int zeros_seen = 0;
  for (int i = 0; i < 1000; ++i) {
    if (p[i] == 0.0f)
      ++zeros_seen;
    else
      CHECK(p[i] == doctest::Approx(1.0f / 0.75f));
  }
  CHECK(zeros_seen > 200);
  CHECK(zeros_seen < 300);
  // The mask is bernoulli(make_rng('dropout')) with keep probability 1 - rate, as in Flax.
  Array key = lift::LazyRng::create(random::key(0), {std::uint64_t{1}}).as_jax_rng();
  Array mask = random::bernoulli(key, 0.75, {1000});
  CHECK(allclose(y, where(mask, x / 0.75f, zeros_like(x))));
  CHECK_THROWS_AS(d.apply(Tree::dict(), x), ValueError);  // deterministic not given
}

TEST_CASE(
    "seed 000: SowCNN2 sows two feature values; the intermediates are not in init's variables") {
  Array batch = ones({1, 28, 28, 1});
  Tree variables = SowCNN2().init(random::PRNGKey(0), batch);
  CHECK(variables.as_dict().keys() == std::vector<std::string>{"params"});
  CHECK(variables["params"].as_dict().keys() == std::vector<std::string>{"SowCNN"});
  auto [output, mod_vars] = SowCNN2().apply(variables, batch, {.mutable_ = "intermediates"});
  const Tree& feats = mod_vars["intermediates"]["SowCNN"]["features"];
  CHECK(feats.size() == 2);  // a tuple with two values, since the module was called twice
  CHECK(shape_of(feats[0]) == Shape{1, 3136});
  CHECK(allclose(feats[0].leaf(), feats[1].leaf()));
  CHECK(output.shape() == Shape{1, 10});
}

namespace {
struct CNN : nn::Module<CNN> {
  Array call(Array x) {
    x = nn::Conv({.features = 8, .kernel_size = {3, 3}})(x);
    x = nn::relu(x);
    x = nn::avg_pool(x, {2, 2}, {2, 2});
    x = x.reshape({x.shape(0), -1});
    x = nn::Dense(16)(x);
    x = nn::relu(x);
    x = nn::Dense(10)(x);
    return nn::log_softmax(x);
  }
};
struct Features : nn::Module<Features> {
  Array call(Array x) {
    x = nn::Conv({.features = 8, .kernel_size = {3, 3}})(x);
    x = nn::relu(x);
    x = nn::avg_pool(x, {2, 2}, {2, 2});
    return x.reshape({x.shape(0), -1});
  }
};
struct Classifier : nn::Module<Classifier> {
  Array call(Array x) {
    x = nn::Dense(16)(x);
    x = nn::relu(x);
    x = nn::Dense(10)(x);
    return nn::log_softmax(x);
  }
};
struct RefactoredCNN : nn::Module<RefactoredCNN> {
  Features features;
  Classifier classifier;
  void setup() override {
    submodule("features", features);
    submodule("classifier", classifier);
  }
  Array call(const Array& x) { return classifier(features(x)); }
};
}  // namespace

TEST_CASE("seed 000: capture_intermediates of every __call__, all finite; the Dense filter") {
  Array batch = random::normal(random::key(1), {2, 8, 8, 1});
  Tree variables = CNN().init(random::PRNGKey(0), batch);
  auto [y, state] = CNN().apply(
      variables, batch, {.mutable_ = Filter{"intermediates"}, .capture_intermediates = true});
  const Tree& im = state["intermediates"];
  CHECK(im.as_dict().keys() ==
        std::vector<std::string>{"Conv_0", "Dense_0", "Dense_1", "__call__"});
  auto fin = pytree::tree_map([](const Array& a) { return all(isfinite(a)); }, im);
  for (const auto& leaf : pytree::tree_leaves<Array>(fin)) CHECK(leaf.item<bool>());
  CHECK(allclose(im["__call__"][0].leaf(), y));
  auto filter_dense = [](const nn::ModuleBase& m, const std::string&) {
    return nn::isinstance<nn::Dense>(m);
  };
  auto [y2, s2] =
      CNN().apply(variables, batch,
                  {.mutable_ = Filter{"intermediates"}, .capture_intermediates = filter_dense});
  CHECK(s2["intermediates"].as_dict().keys() == std::vector<std::string>{"Dense_0", "Dense_1"});
}

TEST_CASE("seed 000: RefactoredCNN with setup children and apply(method=...) for the features") {
  Array batch = random::normal(random::key(1), {2, 8, 8, 1});
  Tree params = RefactoredCNN().init(random::PRNGKey(0), batch)["params"];
  CHECK(params.as_dict().keys() == std::vector<std::string>{"features", "classifier"});
  Array feats = RefactoredCNN().apply(
      Tree{{"params", params}}, batch,
      nn::method([](RefactoredCNN& m, const Array& x) { return m.features(x); }));
  CHECK(feats.shape() == Shape{2, 128});
  // The features path equals Features applied to its own params.
  CHECK(allclose(feats, Features().apply(Tree{{"params", params["features"]}}, batch)));
  Array y = RefactoredCNN().apply(Tree{{"params", params}}, batch);
  CHECK(allclose(y, Classifier().apply(Tree{{"params", params["classifier"]}}, feats)));
}

namespace {
nn::Sequential SeqCNN() {
  return nn::Sequential({
      nn::Conv({.features = 8, .kernel_size = {3, 3}}),
      nn::relu,
      [](const Array& x) {
        return nn::avg_pool(x, {2, 2}, {2, 2});
      },
      [](const Array& x) {
        return x.reshape({x.shape(0), -1});
      },  // flatten
      nn::Dense(16),
      nn::relu,
      nn::Dense(10),
      nn::log_softmax,
  });
}
}  // namespace

TEST_CASE(
    "seed 000: Sequential names its module layers layers_<i>; a prefix of it reuses the params") {
  Array batch = random::normal(random::key(1), {2, 8, 8, 1});
  Tree variables = SeqCNN().init(random::PRNGKey(0), batch);
  CHECK(variables["params"].as_dict().keys() ==
        std::vector<std::string>{"layers_0", "layers_4", "layers_6"});
  CHECK(shape_of(variables["params"]["layers_4"]["kernel"]) == Shape{128, 16});
  auto layers = SeqCNN().layers;
  nn::Sequential first4(std::vector<nn::Layer>(layers.begin(), layers.begin() + 4));
  Array feats =
      first4.apply(Tree{{"params", Tree{{"layers_0", variables["params"]["layers_0"]}}}}, batch);
  CHECK(feats.shape() == Shape{2, 128});
  Array y = SeqCNN().apply(variables, batch);
  CHECK(y.shape() == Shape{2, 10});
}

TEST_CASE("a checkpoint written with to_bytes loads into a module's apply (flax_model.msgpack)") {
  Array batch = random::normal(random::key(1), {2, 8, 8, 1});
  Tree trained = CNN().init(random::PRNGKey(7), batch);
  const std::string file = serialization::to_bytes(trained);
  // The target comes from init with another key: from_bytes replaces every leaf and checks paths.
  Tree loaded = serialization::from_bytes(CNN().init(random::PRNGKey(0), batch), file);
  CHECK(allclose(CNN().apply(loaded, batch), CNN().apply(trained, batch), 0.0f));
  Tree wrong = nn::Dense(3).init(random::key(0), ones({1, 2}));
  CHECK_THROWS_AS(serialization::from_bytes(wrong, file), ValueError);
}

}  // namespace test_layers
