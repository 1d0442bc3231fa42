// Auto-names across function-form transforms (Flax's _state.export / reimport): modules made
// inside nn::checkpoint(fn), nn::scan(fn), nn::value_and_grad, nn::cond, ... take the caller's next
// names, and a module made after the transform continues from there; @nn.compact on a named method
// of a setup-style module (compact_method) restarts its names per outermost call. Also two
// TransformedMLP cases of Flax's linen_transforms_test: nn::jit applies the identity's params
// exactly, and nn::remat with a static bool argument.
#include <doctest/doctest.h>

#include <tuple>
#include <utility>
#include <vector>

#include <linum/linum.hpp>
#include <linum/nn/nn.hpp>

#include "nn_testing.hpp"

namespace test_transform_names {

using namespace linum;
using linum::testing::allclose;
using linum::testing::sorted_keys;

namespace {
Array row(const Array& x, std::int64_t i) {
  return squeeze(take(x, Array(static_cast<int>(i)).reshape({1}), 0), 0);
}
bool same(const Array& a, const Array& b) {
  return a.shape() == b.shape() && all(linum::equal(a, b)).item<bool>();
}
Array dense(const Tree& p, const Array& x) {
  return p.contains("bias") ? Array(matmul(x, p["kernel"].leaf()) + p["bias"].leaf())
                            : matmul(x, p["kernel"].leaf());
}

// nn.checkpoint(fn)(self, x) makes Dense_0; the Dense after it is Dense_1.
struct RematThenDense : nn::Module<RematThenDense> {
  Array call(const Array& x) {
    auto body = [](RematThenDense&, const Array& c) { return tanh(nn::Dense(3)(c)); };
    Array y = nn::checkpoint(body)(*this, x);
    return nn::Dense(2)(y);
  }
};

// nn.value_and_grad's function makes Dense_0; the Dense the caller makes after is Dense_1.
struct GradThenDense : nn::Module<GradThenDense> {
  std::pair<Array, Array> call(const Array& x) {
    auto fn = [](GradThenDense&, const Array& x) { return sum(nn::Dense(3)(x)); };
    auto [z, g] = nn::value_and_grad(fn, *this, x);
    return {z + sum(nn::Dense(3)(x)), std::get<0>(g)};
  }
};

// Both branches of nn.cond start from the caller's names (Dense_0 each); after: Dense_1.
struct CondThenDense : nn::Module<CondThenDense> {
  Array call(const Array& x, const Array& pred) {
    auto t = [](CondThenDense&, const Array& x) { return nn::Dense(3)(x); };
    auto f = [](CondThenDense&, const Array& x) { return -nn::Dense(3)(x); };
    Array y = nn::cond(pred, t, f, *this, x);
    return nn::Dense(2)(y);
  }
};

// linen_transforms_test's tied autoencoder as Flax writes it: a setup-style module whose only
// compact method is _call, reached from encode and decode; each outermost _call restarts the names,
// so both make (and share) Dense_0.
Tree transpose_leaves(const Tree& t) {
  return linum::detail::tree_apply(t, [](const Array& a) { return transpose(a); });
}
struct TiedAutoencoder : nn::Module<TiedAutoencoder> {
  static constexpr bool compact = false;
  std::int64_t features = 4, latents = 5;
  Array call_(const Array& x, bool decode) {
    return compact_method("_call", [&] {
      auto f = [&](TiedAutoencoder&, const Array& x) {
        return nn::Dense({.features = decode ? features : latents, .use_bias = false})(x);
      };
      nn::VariablesMap map_fn =
          decode ? nn::VariablesMap(transpose_leaves) : nn::VariablesMap(nn::identity_variables);
      return nn::map_variables(f, "params", map_fn, map_fn, {.mutable_ = true})(*this, x);
    });
  }
  Array encode(const Array& x) { return method("encode", [&] { return call_(x, false); }); }
  Array decode(const Array& z) { return method("decode", [&] { return call_(z, true); }); }
  Array call(const Array& x) { return decode(encode(x)); }
};

// A compact class calling one function-form transform twice in one call: the second continues
// the names (Dense_0, then Dense_1), as two inline Dense would.
struct TwoScans : nn::Module<TwoScans> {
  Array call(const Array& x) {
    auto body = [](TwoScans&, const Array& c) {
      return std::make_pair(tanh(nn::Dense(c.shape().back())(c)), std::tuple<>{});
    };
    lift::ScanOptions scan_opts{
        .variable_axes = {{"params", 0}}, .split_rngs = {{"params", true}}, .length = 2};
    Array y = nn::scan(body, scan_opts)(*this, x).first;
    return nn::scan(body, scan_opts)(*this, y).first;
  }
};

// TransformedMLP(features=[3,4,5], transform=T): T(nn.Dense)(feat, name=f'layers_{i}'), relu
// between (linen_transforms_test.py).
template <bool Jitted>
struct TransformedMLP : nn::Module<TransformedMLP<Jitted>> {
  Array call(Array x) {
    const std::int64_t features[] = {3, 4, 5};
    for (int i = 0; i < 3; ++i) {
      const std::string name = "layers_" + std::to_string(i);
      if constexpr (Jitted)
        x = nn::jit(nn::Dense(features[i])).named(name)(x);
      else
        x = nn::Dense(features[i]).named(name)(x);
      if (i != 2) x = nn::relu(x);
    }
    return x;
  }
};

// nn.remat(Foo) whose call takes a static bool; C++ passes it through as the bool it is.
struct Foo18 : nn::Module<Foo18> {
  Array call(const Array& inputs, bool train) {
    Array y = nn::Dense({.features = 3, .use_bias = false})(inputs);
    return train ? nn::relu(y) : y;
  }
};
struct Remat18 : nn::Module<Remat18> {
  Array call(const Array& x, bool train) { return nn::remat(Foo18())(x, train); }
};
}  // namespace

TEST_CASE("a Dense made after nn::checkpoint(fn) continues the names: Dense_0 inside, Dense_1 after") {
  Array x = random::normal(random::key(1), {2, 4});
  auto [y, v] = RematThenDense().init_with_output(random::key(0), x);
  CHECK(sorted_keys(v["params"]) == std::vector<std::string>{"Dense_0", "Dense_1"});
  const Tree& p = v["params"];
  CHECK(p["Dense_0"]["kernel"].leaf().shape() == Shape{4, 3});
  CHECK(p["Dense_1"]["kernel"].leaf().shape() == Shape{3, 2});
  CHECK(allclose(y, dense(p["Dense_1"], tanh(dense(p["Dense_0"], x)))));
  CHECK(same(RematThenDense().apply(v, x), y));
  // Grads through the checkpointed body equal the plain computation's.
  auto loss = [&](const Tree& q) { return sum(square(RematThenDense().apply(q, x))); };
  auto plain = [&](const Tree& q) {
    return sum(square(dense(q["params"]["Dense_1"], tanh(dense(q["params"]["Dense_0"], x)))));
  };
  Tree g = linum::grad(loss)(v), gp = linum::grad(plain)(v);
  CHECK(allclose(g["params"]["Dense_0"]["kernel"].leaf(), gp["params"]["Dense_0"]["kernel"].leaf()));
}

TEST_CASE("a Dense made after nn::value_and_grad continues the names the function took") {
  Array x = random::normal(random::key(1), {2, 4});
  auto [out, v] = GradThenDense().init_with_output(random::key(0), x);
  CHECK(sorted_keys(v["params"]) == std::vector<std::string>{"Dense_0", "Dense_1"});
  const Tree& p = v["params"];
  CHECK(allclose(out.first, sum(dense(p["Dense_0"], x)) + sum(dense(p["Dense_1"], x))));
  // d/dx sum(x W0 + b0) = ones @ W0^T, row by row.
  Array want = matmul(ones({2, 3}), transpose(p["Dense_0"]["kernel"].leaf()));
  CHECK(allclose(out.second, want));
  CHECK(same(GradThenDense().apply(v, x).first, out.first));
}

TEST_CASE("both nn::cond branches start from the caller's names; the Dense after is Dense_1") {
  Array x = random::normal(random::key(1), {2, 4});
  auto [y, v] = CondThenDense().init_with_output(random::key(0), x, Array(true));
  CHECK(sorted_keys(v["params"]) == std::vector<std::string>{"Dense_0", "Dense_1"});
  const Tree& p = v["params"];
  CHECK(allclose(y, dense(p["Dense_1"], dense(p["Dense_0"], x))));
  CHECK(allclose(CondThenDense().apply(v, x, Array(false)),
                 dense(p["Dense_1"], -dense(p["Dense_0"], x))));
}

TEST_CASE("nn::map_variables ties an autoencoder's kernels through a compact _call") {
  Array x = ones({2, 4});
  auto [y, v] = TiedAutoencoder().init_with_output(random::key(0), x);
  CHECK(sorted_keys(v["params"]) == std::vector<std::string>{"Dense_0"});
  Array k = v["params"]["Dense_0"]["kernel"].leaf();
  CHECK(k.shape() == Shape{4, 5});
  CHECK(allclose(y, matmul(matmul(x, k), transpose(k))));
  CHECK(same(TiedAutoencoder().apply(v, x), y));
}

TEST_CASE("a compact class calling nn::scan(fn) twice gets Dense_0 and Dense_1") {
  Array x = random::normal(random::key(1), {3});
  auto [y, v] = TwoScans().init_with_output(random::key(0), x);
  CHECK(sorted_keys(v["params"]) == std::vector<std::string>{"Dense_0", "Dense_1"});
  Array c = x;
  for (const char* name : {"Dense_0", "Dense_1"}) {
    const Tree& d = v["params"][name];
    for (int t = 0; t < 2; ++t)
      c = tanh(matmul(c, row(d["kernel"].leaf(), t)) + row(d["bias"].leaf(), t));
  }
  CHECK(allclose(y, c));
}

namespace {
struct Plain : nn::Module<Plain> {
  static constexpr bool compact = false;
  Array call(const Array& x) { return method("plain", [&] { return nn::Dense(2)(x); }); }
};
}  // namespace

TEST_CASE("only setup and compact methods make submodules; compact_method is one") {
  CHECK_THROWS_AS(Plain().init(random::key(0), ones({1, 3})), Error);
}

TEST_CASE("TransformedMLP: nn::jit applies the identity MLP's params with the same outputs") {
  Array keys2 = random::split(random::key(3));
  Array key1 = row(keys2, 0), key2 = row(keys2, 1);
  Array x = random::uniform(key1, {4, 4});
  Tree v = TransformedMLP<false>().init(key2, x);
  Array y1 = TransformedMLP<false>().apply(v, x);
  Array y2 = TransformedMLP<true>().apply(v, x);
  CHECK(same(y1, y2));
  // The jitted MLP's own init puts its parameters in the same places (with other values: nn.jit
  // forks the rngs, as Flax's).
  Tree vj = TransformedMLP<true>().init(key2, x);
  for (const char* layer : {"layers_0", "layers_1", "layers_2"})
    for (const char* leaf : {"kernel", "bias"})
      CHECK(vj["params"][layer][leaf].leaf().shape() == v["params"][layer][leaf].leaf().shape());
}

TEST_CASE("nn::remat(Foo) with a bool argument: the bool arrives as a bool") {
  Array x = ones({1, 2});
  Tree v = Remat18().init(random::key(0), x, true);
  const Tree& k = v["params"]["CheckpointFoo18_0"]["Dense_0"]["kernel"];
  CHECK(Remat18().apply(v, x, true).shape() == Shape{1, 3});
  CHECK(same(Remat18().apply(v, x, true), nn::relu(matmul(x, k.leaf()))));
  CHECK(same(Remat18().apply(v, x, false), matmul(x, k.leaf())));
  // Grad through the remat call equals the plain computation's.
  auto loss = [&](const Tree& p) { return sum(square(Remat18().apply(p, x, false))); };
  Tree g = linum::grad(loss)(v);
  Array want = matmul(transpose(x), 2.0f * matmul(x, k.leaf()));
  CHECK(allclose(g["params"]["CheckpointFoo18_0"]["Dense_0"]["kernel"].leaf(), want));
}

}  // namespace test_transform_names
