// The linen Module system: cases from Flax's tests/linen/linen_module_test.py,
// and module-level results against the same computation written at scope level.
#include <doctest/doctest.h>

#include <linum/lift/lift.hpp>
#include <linum/linum.hpp>
#include <linum/nn/nn.hpp>

namespace test_module {

using namespace linum;
using lift::Filter;
namespace init = linum::nn::initializers;

namespace {

bool same(const Array& a, const Array& b) {
  return a.shape() == b.shape() && all(equal(a, b)).item<bool>();
}
Shape shape_at(const Tree& t) { return t.leaf().shape(); }
bool allclose(const Array& a, const Array& b, float tol = 1e-5f) {
  return a.shape() == b.shape() && all(less_equal(abs(a - b), tol + tol * abs(b))).item<bool>();
}

// linen_module_test's fixtures: DummyModule adds a ones-initialised bias; Dense has no bias.
struct DummyModule : nn::Module<DummyModule> {
  Array call(const Array& x) { return x + param("bias", init::ones_init(), x.shape()); }
};
struct KDense : nn::Module<KDense> {
  std::int64_t features;
  explicit KDense(std::int64_t f) : features(f) {}
  Array call(const Array& x) {
    return matmul(x, param("kernel", init::lecun_normal(), Shape{x.shape(-1), features}));
  }
};

struct MLP : nn::Module<MLP> {
  Array mydense(const Array& x) { return KDense(3)(x); }
  Array call(const Array& x) { return mydense(mydense(x)); }
};

struct Top : nn::Module<Top> {
  Array call(const Array& x) {
    MLP mlp;
    Array y = mlp(x);
    Array z = mlp(x);
    return y + z;
  }
};

}  // namespace

TEST_CASE("a module bound to a scope by hand: params and output") {
  lift::Scope scope(Tree::dict(), {{"params", random::key(0)}}, "params");
  DummyModule m;
  m.bind_root(scope);
  Array y = m(array({1.0f}));
  CHECK(same(y, array({2.0f})));
  DummyModule m2;
  m2.bind_root(scope.rewound());
  CHECK(same(m2(array({1.0f})), array({2.0f})));
  CHECK(same(scope.variables()["params"]["bias"].leaf(), array({1.0f})));
}

TEST_CASE("compact submodules are auto-named per type; a reused instance shares params") {
  auto vars = MLP().init(random::key(0), ones({10}));
  CHECK(vars["params"].as_dict().keys() == std::vector<std::string>{"KDense_0", "KDense_1"});
  CHECK(shape_at(vars["params"]["KDense_0"]["kernel"]) == Shape{10, 3});
  CHECK(shape_at(vars["params"]["KDense_1"]["kernel"]) == Shape{3, 3});
  // Top calls the same MLP twice: the second call reuses MLP_0's params instead of adding more.
  auto [y, tv] = Top().init_with_output(random::key(0), ones({10}));
  CHECK(tv["params"].as_dict().keys() == std::vector<std::string>{"MLP_0"});
  CHECK(tv["params"]["MLP_0"].size() == 2);
  CHECK(y.shape() == Shape{3});
}

namespace {
struct SetupModule : nn::Module<SetupModule> {
  std::vector<KDense> lyrs1{KDense(3), KDense(3)};
  std::vector<KDense> lyrs2{KDense(3), KDense(3)};
  void setup() override {
    submodule("lyrs1", lyrs1);
    submodule("lyrs2", lyrs2);
  }
  Array call(const Array& x) { return lyrs1[1](lyrs1[0](x)); }
};
}  // namespace

TEST_CASE("setup children are named <field>_<i>; unused ones create nothing") {
  auto vars = SetupModule().init(random::key(0), ones({10}));
  CHECK(vars["params"].as_dict().keys() == std::vector<std::string>{"lyrs1_0", "lyrs1_1"});
  CHECK(shape_at(vars["params"]["lyrs1_0"]["kernel"]) == Shape{10, 3});
  CHECK(shape_at(vars["params"]["lyrs1_1"]["kernel"]) == Shape{3, 3});
}

namespace {
struct SetupParam : nn::Module<SetupParam> {
  Array bias;
  void setup() override { bias = param("bias", init::ones_init(), Shape{1}); }
  Array call(const Array& x) { return x + bias; }
};
struct ParamTwice : nn::Module<ParamTwice> {
  Array call(const Array& x) {
    Array a = param("bias", init::ones_init(), x.shape());
    return a + param("bias", init::ones_init(), x.shape());
  }
};
struct SetupThenCompact : nn::Module<SetupThenCompact> {
  Array bias;
  void setup() override { bias = param("bias", init::ones_init(), Shape{1}); }
  Array call(const Array& x) { return x + param("bias", init::ones_init(), Shape{1}); }
};
struct ParamThenSubmodule : nn::Module<ParamThenSubmodule> {
  Array call(const Array& x) {
    Array b = param("bias", init::ones_init(), Shape{1});
    return DummyModule().named("bias")(x) + b;
  }
};
}  // namespace

TEST_CASE("a param made in setup; a name used twice is a NameInUseError") {
  auto [y, vars] = SetupParam().init_with_output(random::key(0), array({1.0f}));
  CHECK(same(y, array({2.0f})));
  CHECK(same(vars["params"]["bias"].leaf(), array({1.0f})));
  CHECK_THROWS_WITH_AS(
      ParamTwice().init(random::key(0), ones({1})),
      doctest::Contains("Could not create param \"bias\" in Module ParamTwice: Name in use."),
      lift::NameInUseError);
  CHECK_THROWS_AS(SetupThenCompact().init(random::key(0), ones({1})), lift::NameInUseError);
  CHECK_THROWS_WITH_AS(
      ParamThenSubmodule().init(random::key(0), ones({1})),
      doctest::Contains(
          "Could not create submodule \"bias\" in Module ParamThenSubmodule: Name in use."),
      lift::NameInUseError);
}

namespace {
struct TwoCompact : nn::Module<TwoCompact> {
  Array helper(const Array& x) {
    return method("helper", [&] { return KDense(1)(x); });
  }
  Array call(const Array& x) { return helper(KDense(1)(x)); }
};
}  // namespace

TEST_CASE("a second compact method continues the caller's auto-names") {
  auto vars = TwoCompact().init(random::key(0), ones({2}));
  CHECK(vars["params"].as_dict().keys() == std::vector<std::string>{"KDense_0", "KDense_1"});
}

TEST_CASE("unbound modules: calling or reading variables and rngs is an error") {
  CHECK_THROWS_WITH_AS(KDense(3)(ones({1})),
                       doctest::Contains("Can't call compact methods on unbound modules (in "
                                         "linum: a module's compact `call` runs inside "
                                         "init/apply, or on the module bind() returns)"),
                       lift::CallCompactUnboundModuleError);
  KDense d(3);
  CHECK_THROWS_WITH_AS(d.has_variable("params", "kernel"),
                       doctest::Contains("variables on unbound module"), ValueError);
  CHECK_THROWS_WITH_AS(d.make_rng("dropout"), doctest::Contains("RNGs on unbound module"),
                       ValueError);
  CHECK_THROWS_WITH_AS(d.variables(), doctest::Contains("variables on unbound module"), ValueError);
}

namespace {
struct IsMutable : nn::Module<IsMutable> {
  bool call() { return is_mutable_collection("test"); }
};
}  // namespace

TEST_CASE("is_mutable_collection follows apply's mutable") {
  CHECK(IsMutable()
            .apply(Tree::dict(), nn::method([](IsMutable& m) { return m(); }),
                   nn::ApplyOptions{.mutable_ = Filter{"test"}})
            .first);
  CHECK_FALSE(IsMutable().apply(Tree::dict(), nn::method([](IsMutable& m) { return m(); })));
}

namespace {
struct Sower : nn::Module<Sower> {
  bool reduce = false;
  Array call(const Array& x) {
    if (reduce) {
      auto add = [](const Tree& a, const Tree& b) { return Tree(a.leaf() + b.leaf()); };
      auto zero = [] { return Tree(Array(0.0f)); };
      sow("intermediates", "h", x, add, zero);
      sow("intermediates", "h", 2.0f * x, add, zero);
    } else {
      sow("intermediates", "h", x);
      sow("intermediates", "h", 2.0f * x);
    }
    return 3.0f * x;
  }
};
}  // namespace

TEST_CASE("sow appends to a tuple, reduces with init_fn/reduce_fn, and is a no-op when immutable") {
  Array one = Array(1.0f);
  CHECK_FALSE(Sower().init(random::key(0), one).contains("intermediates"));
  Tree all = Sower().init(random::key(0), one, nn::InitOptions{.mutable_ = true});
  REQUIRE(all["intermediates"]["h"].is_tuple());
  CHECK(all["intermediates"]["h"].size() == 2);
  CHECK(all["intermediates"]["h"][0].leaf().item<float>() == 1.0f);
  CHECK(all["intermediates"]["h"][1].leaf().item<float>() == 2.0f);
  auto [y, state] = Sower().apply(Tree::dict(), one, {.mutable_ = Filter{"intermediates"}});
  CHECK(y.item<float>() == 3.0f);
  CHECK(state["intermediates"]["h"].size() == 2);
  Sower r;
  r.reduce = true;
  auto [y2, s2] = r.apply(Tree::dict(), one, {.mutable_ = Filter{"intermediates"}});
  CHECK(s2["intermediates"]["h"].leaf().item<float>() == 3.0f);
  CHECK(Sower().apply(Tree::dict(), one).item<float>() == 3.0f);
}

namespace {
struct Bar : nn::Module<Bar> {
  Array test(const Array& x) {
    return method("test", [&] { return x + 1.0f; });
  }
  Array call(const Array& x) { return test(x); }
};
struct Foo : nn::Module<Foo> {
  Array call(const Array& x) { return Bar().test(x) + 1.0f; }
};
}  // namespace

TEST_CASE("capture_intermediates records __call__ outputs, or what a filter picks") {
  auto [y, state] =
      Foo().apply(Tree::dict(), Array(1.0f),
                  {.mutable_ = Filter{"intermediates"}, .capture_intermediates = true});
  CHECK(y.item<float>() == 3.0f);
  CHECK(state["intermediates"].as_dict().keys() == std::vector<std::string>{"__call__"});
  CHECK(state["intermediates"]["__call__"][0].leaf().item<float>() == 3.0f);
  auto [y2, s2] =
      Foo().apply(Tree::dict(), Array(1.0f),
                  {.mutable_ = Filter{"intermediates"},
                   .capture_intermediates = [](const nn::ModuleBase& m, const std::string&) {
                     return nn::isinstance<Bar>(m);
                   }});
  CHECK(s2["intermediates"].as_dict().keys() == std::vector<std::string>{"Bar_0"});
  CHECK(s2["intermediates"]["Bar_0"]["test"][0].leaf().item<float>() == 2.0f);
}

namespace {
struct Perturbed : nn::Module<Perturbed> {
  Array call(const Array& x) {
    Array h = nn::Dense(3)(x);
    h = perturb("dense3", h);
    return nn::Dense(2)(h);
  }
};
struct PerturbScale : nn::Module<PerturbScale> {
  Array call(const Array& x) {
    Array h = perturb("before_multiply", nn::Dense(10)(x));
    return perturb("after_multiply", h * 4.0f);
  }
};
}  // namespace

TEST_CASE("perturb: Flax's doctest numbers and the intermediate gradients") {
  Array x = ones({2, 9});
  Tree variables = Perturbed().init(random::key(0), x);
  CHECK(variables.as_dict().keys() == std::vector<std::string>{"params", "perturbations"});
  Array y = Perturbed().apply(variables, x);
  const float want[] = {-0.04579116f, 0.50412744f};
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 2; ++c)
      CHECK(y.data<float>()[r * 2 + c] == doctest::Approx(want[c]).epsilon(1e-5));
  auto loss = [&](const Tree& perturbations) {
    Tree v = variables;
    v["perturbations"] = perturbations;
    Array d = Perturbed().apply(v, x) - 1.0f;
    return mean(d * d);
  };
  Tree g = grad(loss)(variables["perturbations"]);
  const float gw[] = {-0.04684732f, 0.06573904f, -0.3194327f};
  const Array gd = g["dense3"].leaf();
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < 3; ++c)
      CHECK(gd.data<float>()[r * 3 + c] == doctest::Approx(gw[c]).epsilon(1e-4));
}

TEST_CASE("perturb: before/after a x4 scale the gradients differ by 4; no-op rules") {
  Array x = random::normal(random::key(1), {3, 5});
  Tree variables = PerturbScale().init(random::key(0), x);
  auto loss = [&](const Tree& p) {
    Tree v = variables;
    v["perturbations"] = p;
    return mean(square(PerturbScale().apply(v, x)));
  };
  Tree g = grad(loss)(variables["perturbations"]);
  CHECK(allclose(g["after_multiply"].leaf() * 4.0f, g["before_multiply"].leaf()));
  Tree params_only{{"params", variables["params"]}};
  CHECK_NOTHROW(PerturbScale().apply(params_only, x));
  Tree empty_pert{{"params", variables["params"]}, {"perturbations", Tree::dict()}};
  CHECK_THROWS_WITH_AS(PerturbScale().apply(empty_pert, x),
                       doctest::Contains("Perturbation collection"), ValueError);
}

namespace {
struct RngLeaf : nn::Module<RngLeaf> {
  Array call() { return make_rng("dropout"); }
};
struct RngMid : nn::Module<RngMid> {
  Array call() { return RngLeaf()(); }
};
struct RngTop : nn::Module<RngTop> {
  std::pair<Array, Array> call() {
    RngMid a;
    Array x0 = a();
    Array x1 = a();
    return {x0, x1};
  }
};
}  // namespace

TEST_CASE("a module called twice continues its child's rng counter") {
  auto [x0, x1] = RngTop().apply(Tree::dict(), lift::Rngs{{"dropout", random::key(0)}});
  Array k = random::key(0);
  auto expect = [&](std::uint64_t c) {
    return lift::LazyRng::create(k, {std::string("RngMid_0"), std::string("RngLeaf_0"), c})
        .as_jax_rng();
  };
  CHECK(same(x0, expect(1)));
  CHECK(same(x1, expect(2)));
}

namespace {
struct PutGet : nn::Module<PutGet> {
  Array call(const Array& x) {
    put_variable("test_col", "a", x);
    CHECK(has_variable("test_col", "a"));
    return get_variable("test_col", "a").leaf();
  }
};
struct TwoCols : nn::Module<TwoCols> {
  bool again = false;
  Array call() {
    auto a = variable("col1", "v", [] { return zeros({2}); });
    auto b = variable("col2", "v", [] { return ones({2}); });
    if (again) variable("col1", "v", [] { return zeros({2}); });
    return a.value() + b.value();
  }
};
}  // namespace

TEST_CASE("put_variable/get_variable; one name in two collections is fine, twice in one is not") {
  auto [y, vs] = PutGet().init_with_output(random::key(0), ones({2}));
  CHECK(same(y, ones({2})));
  CHECK(same(vs["test_col"]["a"].leaf(), ones({2})));
  auto v2 = TwoCols().init(random::key(0));
  CHECK(v2.contains("col1"));
  CHECK(v2.contains("col2"));
  TwoCols t;
  t.again = true;
  CHECK_THROWS_WITH_AS(t.init(random::key(0)),
                       doctest::Contains("Could not create variable \"v\" in Module TwoCols"),
                       lift::NameInUseError);
}

TEST_CASE("init with a missing params stream names the module; bad rngs") {
  struct M : nn::Module<M> {
    Array call(const Array& x) { return nn::Dense(2)(x); }
  };
  CHECK_THROWS_WITH_AS(M().init(lift::Rngs{{"other_rng_stream", random::key(0)}}, ones({1, 3})),
                       doctest::Contains("Dense_0 needs PRNG for \"params\""),
                       lift::InvalidRngError);
  CHECK_THROWS_WITH_AS(M().init(lift::Rngs{{"params", zeros({2})}}, ones({1, 3})),
                       doctest::Contains("First argument passed to an init function"), ValueError);
  Tree v = M().init(random::key(0), ones({1, 3}));
  CHECK_THROWS_WITH_AS(M().apply(v, ones({1, 3}), {.rngs = {{"params", zeros({3})}}}),
                       doctest::Contains("The ``rngs`` argument passed to an apply function"),
                       ValueError);
}

namespace {
// The same two-layer model at scope level and at module level.
Array scope_dense(lift::Scope& scope, const Array& x, std::int64_t features) {
  Array k = scope.param("kernel", init::lecun_normal(), Shape{x.shape(-1), features});
  Array b = scope.param("bias", init::zeros_init(), Shape{features});
  return matmul(x, k) + b;
}
struct TwoLayer : nn::Module<TwoLayer> {
  Array call(const Array& x) {
    Array h = nn::relu(nn::Dense(4)(x));
    return nn::Dense(2)(h);
  }
};
}  // namespace

TEST_CASE("module params and outputs equal the scope-level computation") {
  Array x = random::normal(random::key(5), {3, 6});
  auto [ym, vm] = TwoLayer().init_with_output(random::key(0), x);
  auto [ys, vs] = lift::init([](lift::Scope& s, const Array& x) {
    lift::Scope d0 = s.push("Dense_0");
    Array h = relu(scope_dense(d0, x, 4));
    lift::Scope d1 = s.push("Dense_1");
    return scope_dense(d1, h, 2);
  })(random::key(0), x);
  CHECK(same(ym, ys));
  for (const char* l : {"Dense_0", "Dense_1"})
    for (const char* p : {"kernel", "bias"})
      CHECK(same(vm["params"][l][p].leaf(), vs["params"][l][p].leaf()));
  // And gradients through apply against finite differences of the loss.
  auto loss = [&](const Tree& params) {
    return sum(square(TwoLayer().apply(Tree{{"params", params}}, x)));
  };
  Tree g = grad(loss)(vm["params"]);
  const Array k = vm["params"]["Dense_0"]["kernel"].leaf();
  const float eps = 1e-2f;
  for (int i : {0, 5, 11}) {
    std::vector<float> plus(k.data<float>(), k.data<float>() + 24), minus = plus;
    plus[i] += eps;
    minus[i] -= eps;
    Tree p1 = vm["params"], p2 = vm["params"];
    p1["Dense_0"]["kernel"] = array(plus, {6, 4});
    p2["Dense_0"]["kernel"] = array(minus, {6, 4});
    const double fd = (loss(p1).item<float>() - loss(p2).item<float>()) / (2 * eps);
    CHECK(g["Dense_0"]["kernel"].leaf().data<float>()[i] == doctest::Approx(fd).epsilon(2e-2));
  }
}

}  // namespace test_module
