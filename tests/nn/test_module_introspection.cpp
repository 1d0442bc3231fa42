// What a module tells about itself and its children (cases from Flax's
// tests/linen/linen_module_test.py): module paths inside transforms, module_paths, rng stream
// fallback, compact_name_scope, copies of template modules, repr, lazy_init.
#include <doctest/doctest.h>

#include <algorithm>

#include <linum/lift/lift.hpp>
#include <linum/linum.hpp>
#include <linum/nn/nn.hpp>

#include "test_module_util.hpp"

namespace test_module_introspection {

using namespace linum;
using lift::Filter;
using mcases::Keys;
using mcases::keys;
using mcases::same;
using mcases::tree_same;
namespace init = linum::nn::initializers;

namespace {

using Path = std::vector<std::string>;

// ---- paths seen by setup, also inside nested remat ----
std::vector<Path> g_module_paths, g_debug_paths;
void record(const nn::ModuleBase& m) {
  g_module_paths.push_back(m.path());
  g_debug_paths.push_back(m.scope().debug_path());
}
struct PC : nn::Module<PC> {
  void setup() override { record(*this); }
  Array call(const Array& x) { return x; }
};
struct PB : nn::Module<PB> {
  nn::Checkpoint<nn::Checkpoint<PC>> c1 = nn::remat(nn::remat(PC()));
  PC c2;
  void setup() override {
    record(*this);
    submodule("c1", c1);
    submodule("c2", c2);
  }
  Array call(const Array& x) { return c1(x) + c2(x); }
};
struct PA : nn::Module<PA> {
  PB b1, b2;
  PC c1;
  void setup() override {
    record(*this);
    submodule("b1", b1);
    submodule("b2", b2);
    submodule("c1", c1);
  }
  Array call(const Array& x) { return b1(x) + b2(x) + c1(x); }
};
}  // namespace

TEST_CASE("module paths and debug paths of setup children, inside nested remat") {
  g_module_paths.clear();
  g_debug_paths.clear();
  PA().init(random::key(0), random::uniform(random::key(42), {2}));
  // linum runs a child's setup when it is registered (Flax: at first attribute access), so the
  // order differs from Flax's list; the set of paths is the same.
  std::vector<Path> want{{},     {"b1"},       {"b1", "c1"}, {"b1", "c2"},
                         {"b2"}, {"b2", "c1"}, {"b2", "c2"}, {"c1"}};
  // lift::checkpoint packs under Flax's name 'remat'.
  const std::string remat2 = "remat(remat(c1))";
  std::vector<Path> want_debug{{},     {"b1"},         {"b1", remat2}, {"b1", "c2"},
                               {"b2"}, {"b2", remat2}, {"b2", "c2"},   {"c1"}};
  auto sorted = [](std::vector<Path> v) {
    std::sort(v.begin(), v.end());
    return v;
  };
  CHECK(sorted(g_module_paths) == sorted(want));
  CHECK(sorted(g_debug_paths) == sorted(want_debug));
}

namespace {
// ---- module_paths ----
struct MPBar : nn::Module<MPBar> {
  Array call(const Array& x) {
    Array h = nn::Dense(3)(x);
    return nn::Dense(4)(h);
  }
};
struct MPFoo : nn::Module<MPFoo> {
  Array call(const Array& x) { return nn::Dense(5)(MPBar()(x)); }
};
}  // namespace

TEST_CASE("module_paths maps every called module's path to an unbound copy") {
  auto paths = MPFoo().module_paths(random::key(0), ones({1, 2}));
  Keys got;
  for (const auto& [k, m] : paths) got.push_back(k);
  CHECK(got == Keys{"", "Dense_0", "MPBar_0", "MPBar_0/Dense_0", "MPBar_0/Dense_1"});
  for (const auto& [k, m] : paths) CHECK_FALSE(m->is_bound());
  CHECK(nn::isinstance<MPFoo>(*paths.at("")));
  CHECK(nn::isinstance<MPBar>(*paths.at("MPBar_0")));
  CHECK(nn::isinstance<nn::Dense>(*paths.at("Dense_0")));
  CHECK(nn::isinstance<nn::Dense>(*paths.at("MPBar_0/Dense_1")));
  CHECK(dynamic_cast<const nn::Dense&>(*paths.at("MPBar_0/Dense_1")).features == 4);
  CHECK(dynamic_cast<const nn::Dense&>(*paths.at("Dense_0")).features == 5);
}

namespace {
// ---- a missing rng stream falls back to 'params' ----
struct RSub : nn::Module<RSub> {
  Array call(const Array& x, bool apply_dropout) {
    Array h = nn::Dense(8)(x);
    h = nn::Dropout(0.8)(h, !apply_dropout);
    Array p = param(
        "parameter", [](const Array& key, const Shape& s) { return random::normal(key, s); },
        h.shape());
    Array noise = random::normal(make_rng("noise"), h.shape());
    return h * p + noise;
  }
};
struct RModel : nn::Module<RModel> {
  Array call(const Array& x, bool apply_dropout) {
    Array h = nn::Dense(16)(x);
    h = RSub()(h, apply_dropout);
    h = nn::Dropout(0.5)(h, !apply_dropout);
    auto v = variable(
        "var_collection", "variable",
        [this](const Shape& s) { return random::normal(make_rng("var_rng"), s); }, h.shape());
    Array noise = random::normal(make_rng("noise"), h.shape());
    return h * v.value() + noise;
  }
};
}  // namespace

TEST_CASE("streams missing from init/apply rngs fall back to 'params'") {
  Array key1 = random::key(1), key2 = random::key(2);
  Array x = random::normal(random::key(0), {10, 4});
  RModel model;
  Tree dflt = model.init(lift::Rngs{{"params", key1}}, x, false);
  lift::Rngs rngs{{"params", key1}, {"var_rng", key1}, {"noise", key1}};
  CHECK(tree_same(dflt, model.init(rngs, x, false)));
  for (const char* name : {"params", "var_rng"}) {
    lift::Rngs changed = rngs;
    changed[name] = key2;
    CHECK_FALSE(tree_same(dflt, model.init(changed, x, false)));
  }
  Array out = model.apply(dflt, x, true, lift::Rngs{{"params", key1}});
  lift::Rngs arngs{{"dropout", key1}, {"noise", key1}};
  CHECK(same(out, model.apply(dflt, x, true, arngs)));
  for (const char* name : {"dropout", "noise"}) {
    lift::Rngs changed = arngs;
    changed[name] = key2;
    CHECK_FALSE(same(out, model.apply(dflt, x, true, changed)));
  }
}

namespace {
// ---- compact_name_scope ----
struct NSFoo : nn::Module<NSFoo> {
  Array up(const Array& x) {
    return compact_name_scope("up", [&] { return nn::Dense(3)(x); });
  }
  Array down(const Array& x) {
    return compact_name_scope("down", [&] { return nn::Dense(3)(x); });
  }
  Array call(const Array& x) { return up(x) + down(x) + nn::Dense(3)(x); }
};
// The same scopes used from a call that is not compact, and a name scope used twice.
struct NSPlain : nn::Module<NSPlain> {
  static constexpr bool compact = false;
  Array up(const Array& x) {
    return compact_name_scope("up", [&] { return nn::Dense(3)(x); });
  }
  Array call(const Array& x) { return up(x) + up(x); }
};
}  // namespace

TEST_CASE("compact_name_scope puts a method's modules under its name") {
  Array x = ones({1, 2});
  Tree v = NSFoo().init(random::key(0), x);
  const Tree& p = v["params"];
  CHECK(keys(p) == Keys{"Dense_0", "down", "up"});
  CHECK(keys(p["up"]) == Keys{"Dense_0"});
  CHECK(keys(p["down"]) == Keys{"Dense_0"});
  CHECK(NSFoo().apply(v, x).shape() == Shape{1, 3});
  Array y_up = NSFoo().apply(v, x, &NSFoo::up);
  CHECK(same(y_up, nn::Dense(3).apply(Tree{{"params", p["up"]["Dense_0"]}}, x)));
  Array y_down = NSFoo().apply(v, x, &NSFoo::down);
  CHECK(same(y_down, nn::Dense(3).apply(Tree{{"params", p["down"]["Dense_0"]}}, x)));
  auto [y2, v2] = NSPlain().init_with_output(random::key(0), x);
  CHECK(keys(v2["params"]) == Keys{"up"});
  CHECK(keys(v2["params"]["up"]) == Keys{"Dense_0"});
  CHECK(same(y2, 2.0f * NSPlain().apply(v2, x, &NSPlain::up)));
}

namespace {
// ---- copies of a template module ----
struct Child : nn::Module<Child> {
  Array call(const Array& x) {
    return matmul(x, param("w", init::zeros_init(), Shape{5, x.shape(1)}));
  }
};
struct TemplParent : nn::Module<TemplParent> {
  int num_layers = 2;
  Child child_template;
  Array call(Array x) {
    for (int i = 0; i < num_layers; ++i) x = child_template.copy()(x);
    for (int i = 0; i < num_layers; ++i)
      x = child_template.copy("next_layer_" + std::to_string(i))(x);
    return x;
  }
};
struct CopyParent : nn::Module<CopyParent> {
  Array call(Array x) {
    nn::Dense child(2);
    x = child(x);
    return child.copy()(x);
  }
};
}  // namespace

TEST_CASE("copy() of a template makes auto-named or named children of the caller") {
  Tree p = TemplParent().init(random::key(0), ones({32, 5}))["params"];
  CHECK(keys(p) == Keys{"Child_0", "Child_1", "next_layer_0", "next_layer_1"});
  CHECK(p["Child_0"]["w"].leaf().shape() == Shape{5, 5});
  Tree q = CopyParent().init(random::key(0), ones({2, 2}))["params"];
  CHECK(keys(q) == Keys{"Dense_0", "Dense_1"});
  CHECK(q["Dense_0"]["kernel"].leaf().shape() == q["Dense_1"]["kernel"].leaf().shape());
  CHECK_FALSE(same(q["Dense_0"]["kernel"].leaf(), q["Dense_1"]["kernel"].leaf()));
  // Outside any module, copy() is an unbound clone.
  CHECK_FALSE(Child().copy().is_bound());
}

namespace {
// ---- repr ----
struct MLP : nn::Module<MLP> {
  std::vector<std::int64_t> sizes{3, 2};
  nn::Attributes attributes() const override {
    return {{"act", "relu"}, {"sizes", nn::attr_repr(sizes)}};
  }
  std::string call(Array x) {
    for (auto s : sizes) x = nn::relu(nn::Dense(s)(x));
    return repr();
  }
};
struct Bare : nn::Module<Bare> {};
// Flax's repr of a default Dense(features) child.
std::string dense_repr(const std::string& features) {
  return "Dense(\n"
         "        # attributes\n"
         "        features = " +
         features +
         "\n"
         "        use_bias = True\n"
         "        dtype = None\n"
         "        param_dtype = float32\n"
         "        precision = None\n"
         "        kernel_init = init\n"
         "        bias_init = zeros\n"
         "        promote_dtype = promote_dtype\n"
         "        dot_general = None\n"
         "        dot_general_cls = None\n"
         "    )";
}
}  // namespace

TEST_CASE("repr prints attributes and bound children as Flax does") {
  const std::string want =
      "MLP(\n"
      "    # attributes\n"
      "    act = relu\n"
      "    sizes = (3, 2)\n"
      "    # children\n"
      "    Dense_0 = " +
      dense_repr("3") +
      "\n"
      "    Dense_1 = " +
      dense_repr("2") +
      "\n"
      ")";
  auto [trace, v] = MLP().init_with_output(random::key(0), ones({1, 2}));
  CHECK(trace == want);
  CHECK(MLP().apply(v, ones({1, 2})) == want);
  CHECK(MLP().repr() == "MLP(\n    # attributes\n    act = relu\n    sizes = (3, 2)\n)");
  CHECK(Bare().repr() == "Bare()");
  CHECK(nn::attr_repr(3.0) == "3.0");
  CHECK(nn::attr_repr(0.5) == "0.5");
  CHECK(nn::attr_repr(std::string("ok")) == "'ok'");
  CHECK(nn::attr_repr(std::vector<std::int64_t>{3}) == "(3,)");
  CHECK(nn::attr_repr(std::nullopt) == "None");
  CHECK(nn::attr_repr(false) == "False");
  CHECK(nn::attr_repr(float64) == "float64");
  CHECK(nn::attr_repr(std::optional<DType>{}) == "None");
}

TEST_CASE("initializers print their JAX function's name: init, zeros, ones") {
  // JAX's builders return their inner function `init`; zeros_init() / ones_init() return
  // jax.nn.initializers.zeros / ones themselves.
  for (const init::Initializer& f :
       {init::lecun_normal(), init::lecun_uniform(), init::glorot_normal(), init::glorot_uniform(),
        init::xavier_normal(), init::xavier_uniform(), init::he_normal(), init::he_uniform(),
        init::kaiming_normal(), init::kaiming_uniform(), init::normal(), init::uniform(),
        init::truncated_normal(), init::constant(1.0),
        init::variance_scaling(1.0, "fan_in", "normal"), init::orthogonal(),
        init::delta_orthogonal(), nn::default_kernel_init()})
    CHECK(nn::attr_repr(f) == "init");
  CHECK(nn::attr_repr(init::zeros_init()) == "zeros");
  CHECK(nn::attr_repr(init::ones_init()) == "ones");
  // A C++ function has no Python name: it prints as a lambda unless one is given.
  CHECK(nn::attr_repr(init::Initializer(&init::zeros)) == "<lambda>");
  const init::Initializer named([](const Array&, const Shape& s, DType d) { return zeros(s, d); },
                                float32, "my_init");
  CHECK(nn::attr_repr(named) == "my_init");
}

namespace {
// ---- lazy_init ----
struct DataDependent : nn::Module<DataDependent> {
  Array call(const Array& x) {
    Array k = param("kernel", [x](const Array&) { return x; });
    return x * k;
  }
};
struct LazyMLP : nn::Module<LazyMLP> {
  Array call(const Array& x) { return nn::Dense(2)(nn::relu(nn::Dense(3)(x))); }
};
}  // namespace

TEST_CASE("lazy_init makes init's variables from shapes; data-dependent ones fail") {
  ShapeDtype x{{8, 4}, float32};
  CHECK_THROWS_WITH_AS(DataDependent().lazy_init(random::key(0), x),
                       doctest::Contains("Lazy init encountered a value"), lift::LazyInitError);
  Tree lazy = LazyMLP().lazy_init(random::key(0), x);
  Tree eager = LazyMLP().init(random::key(0), ones({8, 4}));
  CHECK(tree_same(lazy, eager));
}

}  // namespace test_module_introspection
