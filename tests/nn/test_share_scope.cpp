// nn::share_scope (flax.linen.share_scope): the two examples of Flax's docstring, a LoRA wrapper
// whose params land beside the wrapped Dense's, and the unbound-module error.
#include <doctest/doctest.h>

#include <set>
#include <string>
#include <utility>

#include <linum/linum.hpp>
#include <linum/nn/nn.hpp>

namespace test_share_scope {

using namespace linum;

namespace {
std::set<std::string> keys(const Tree& t) {
  std::set<std::string> out;
  for (const auto& k : t.as_dict().keys()) out.insert(k);
  return out;
}
// Flax's first example: the wrapped Dense is passed in, so the wrapper takes its scope.
struct DenseLoRA : nn::Module<DenseLoRA> {
  nn::Dense base;
  std::int64_t rank;
  DenseLoRA(nn::Dense b, std::int64_t r) : base(std::move(b)), rank(r) {}
  void setup() override {
    submodule("base", base);
    nn::share_scope(*this, base);
  }
  Array call(const Array& x) {
    const std::int64_t din = x.shape(-1), dout = base.features;
    Array a = param("A", nn::initializers::zeros_init(), Shape{din, rank});
    Array b = param("B", nn::initializers::zeros_init(), Shape{rank, dout});
    return base(x) + matmul(matmul(x, a), b);
  }
};
struct ModelPassed : nn::Module<ModelPassed> {
  Array call(const Array& x) {
    nn::Dense dense(10);
    return DenseLoRA(dense, 2)(x);
  }
};

// Flax's second example: the Dense is the wrapper's own child, so the child takes its scope.
struct DenseLoRAChild : nn::Module<DenseLoRAChild> {
  std::int64_t features = 10, rank = 2;
  nn::Dense child{10};
  void setup() override {
    submodule("child", child);
    nn::share_scope(*this, child);
  }
  Array call(const Array& x) {
    Array a = param("A", nn::initializers::zeros_init(), Shape{x.shape(-1), rank});
    Array b = param("B", nn::initializers::zeros_init(), Shape{rank, features});
    return child(x) + matmul(matmul(x, a), b);
  }
};
struct ModelOwned : nn::Module<ModelOwned> {
  Array call(const Array& x) { return DenseLoRAChild()(x); }
};
}  // namespace

TEST_CASE("share_scope: a wrapper of a passed-in Dense keeps the Dense's parameter tree") {
  Array x = random::normal(random::key(1), {1, 5});
  auto [y, v] = ModelPassed().init_with_output(random::key(0), x);
  const Tree& p = v["params"];
  CHECK(keys(p) == std::set<std::string>{"Dense_0"});
  CHECK(keys(p["Dense_0"]) == std::set<std::string>{"A", "B", "kernel", "bias"});
  CHECK(p["Dense_0"]["A"].leaf().shape() == Shape{5, 2});
  CHECK(p["Dense_0"]["B"].leaf().shape() == Shape{2, 10});
  // With A and B zero the output is the Dense's; with them set, x @ A @ B is added.
  const Tree& d = p["Dense_0"];
  CHECK(allclose(y, matmul(x, d["kernel"].leaf()) + d["bias"].leaf()));
  Tree v2 = v;
  Array a = random::normal(random::key(2), {5, 2}), b = random::normal(random::key(3), {2, 10});
  v2["params"]["Dense_0"]["A"] = Tree(a);
  v2["params"]["Dense_0"]["B"] = Tree(b);
  Array y2 = ModelPassed().apply(v2, x);
  CHECK(allclose(y2, matmul(x, d["kernel"].leaf()) + d["bias"].leaf() + matmul(matmul(x, a), b),
                 1e-5, 1e-5));
}

TEST_CASE("share_scope: a child registered in setup takes its parent's scope") {
  Array x = ones({1, 5});
  Tree v = ModelOwned().init(random::key(0), x);
  CHECK(keys(v["params"]) == std::set<std::string>{"DenseLoRAChild_0"});
  CHECK(keys(v["params"]["DenseLoRAChild_0"]) == std::set<std::string>{"A", "B", "kernel", "bias"});
  CHECK(v["params"]["DenseLoRAChild_0"]["kernel"].leaf().shape() == Shape{5, 10});
}

TEST_CASE("share_scope on unbound modules is Flax's CallShareScopeOnUnboundModuleError") {
  nn::Dense a(5), b(5);
  CHECK_THROWS_WITH_AS(nn::share_scope(a, b),
                       doctest::Contains("Can't call `share_scope` on unbound modules"),
                       lift::CallShareScopeOnUnboundModuleError);
}

}  // namespace test_share_scope
