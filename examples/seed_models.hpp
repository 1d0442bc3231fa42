// The models of Flax's "Extracting intermediate values" guide (seeds 000, 001 and 002's second
// half): CNN, SowCNN, SowCNN2, Features/Classifier/RefactoredCNN, SeqCNN and the perturbed Model.
#pragma once

#include <optional>

#include <linum/linum.hpp>
#include <linum/nn/nn.hpp>

namespace seed_models {
using linum::Array;
namespace nn = linum::nn;

struct CNN : nn::Module<CNN> {
  // The layers' computation dtype (Flax's `dtype` field; params stay float32): bfloat16 or
  // float16 for mixed precision. Unset, the seed's model exactly.
  std::optional<linum::DType> dtype;

  Array call(Array x) {
    x = nn::Conv({.features = 32, .kernel_size = {3, 3}, .dtype = dtype})(x);
    x = nn::relu(x);
    x = nn::avg_pool(x, {2, 2}, {2, 2});
    x = nn::Conv({.features = 64, .kernel_size = {3, 3}, .dtype = dtype})(x);
    x = nn::relu(x);
    x = nn::avg_pool(x, {2, 2}, {2, 2});
    x = x.reshape({x.shape(0), -1});  // flatten
    x = nn::Dense({.features = 256, .dtype = dtype})(x);
    x = nn::relu(x);
    x = nn::Dense({.features = 10, .dtype = dtype})(x);
    // Mixed precision's usual recipe: the log-probabilities (and so the loss) in float32.
    if (dtype) x = linum::astype(x, linum::float32);
    x = nn::log_softmax(x);
    return x;
  }
};

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
    x = nn::log_softmax(x);
    return x;
  }
};

struct SowCNN2 : nn::Module<SowCNN2> {
  Array call(const Array& x) {
    auto mod = SowCNN().named("SowCNN");
    return mod(x) + mod(x);  // Calling same module instance twice.
  }
};

struct Features : nn::Module<Features> {
  Array call(Array x) {
    x = nn::Conv({.features = 32, .kernel_size = {3, 3}})(x);
    x = nn::relu(x);
    x = nn::avg_pool(x, {2, 2}, {2, 2});
    x = nn::Conv({.features = 64, .kernel_size = {3, 3}})(x);
    x = nn::relu(x);
    x = nn::avg_pool(x, {2, 2}, {2, 2});
    x = x.reshape({x.shape(0), -1});  // flatten
    return x;
  }
};

struct Classifier : nn::Module<Classifier> {
  Array call(Array x) {
    x = nn::Dense(256)(x);
    x = nn::relu(x);
    x = nn::Dense(10)(x);
    x = nn::log_softmax(x);
    return x;
  }
};

struct RefactoredCNN : nn::Module<RefactoredCNN> {
  Features features;
  Classifier classifier;
  void setup() override {
    submodule("features", features);
    submodule("classifier", classifier);
  }
  Array call(Array x) {
    x = features(x);
    x = classifier(x);
    return x;
  }
};

nn::Sequential SeqCNN() {
  return nn::Sequential({
      nn::Conv({.features = 32, .kernel_size = {3, 3}}),
      nn::relu,
      [](const Array& x) {
        return nn::avg_pool(x, {2, 2}, {2, 2});
      },
      nn::Conv({.features = 64, .kernel_size = {3, 3}}),
      nn::relu,
      [](const Array& x) {
        return nn::avg_pool(x, {2, 2}, {2, 2});
      },
      [](const Array& x) {
        return x.reshape({x.shape(0), -1});
      },  // flatten
      nn::Dense(256),
      nn::relu,
      nn::Dense(10),
      nn::log_softmax,
  });
}

struct Model : nn::Module<Model> {
  Array call(Array x) {
    x = nn::relu(nn::Dense(8)(x));
    x = perturb("hidden", x);
    x = nn::Dense(2)(x);
    x = perturb("logits", x);
    return x;
  }
};

}  // namespace seed_models
