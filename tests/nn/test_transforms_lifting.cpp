// Cases from Flax's tests/linen/linen_transforms_test.py: scan over a recurrent cell, modules
// shared across transforms (multi-scope lifting), setup under transforms, sow and rngs under jit,
// function-form transforms, TransformTargetError, and value_and_grad over a module held as a field.
// Each is checked against an explicit loop or a hand computation. Its boxed variable metadata cases
// are in test_transforms_metadata.cpp, vmap of BatchNorm with an axis_name in test_norms.cpp.
#include <doctest/doctest.h>

#include <map>
#include <optional>
#include <tuple>

#include <linum/linum.hpp>
#include <linum/nn/nn.hpp>

namespace test_transforms_lifting {

using namespace linum;

namespace {
Array row(const Array& x, std::int64_t i) {
  return squeeze(take(x, Array(static_cast<int>(i)).reshape({1}), 0), 0);
}
bool allclose(const Array& a, const Array& b, float tol = 1e-5f) {
  return a.shape() == b.shape() && all(less_equal(abs(a - b), tol + tol * abs(b))).item<bool>();
}
bool same(const Array& a, const Array& b) {
  return a.shape() == b.shape() && all(linum::equal(a, b)).item<bool>();
}
Tree params_of(const Tree& p) { return Tree::dict({{"params", p}}); }

// A small LSTM-like cell (LSTMCell lives in nn/recurrent, another helper's): carry (c, h).
using CH = std::pair<Array, Array>;
struct TinyCell : nn::Module<TinyCell> {
  std::pair<CH, Array> call(const CH& carry, const Array& x) {
    Array z = nn::Dense(2).named("ih")(x) +
              nn::Dense({.features = 2, .use_bias = false, .name = "hh"})(carry.second);
    Array c = nn::sigmoid(z) * carry.first + tanh(z);
    Array h = tanh(c);
    return {{c, h}, h};
  }
};
// The scan's reference: a loop of the cell over xs[i] with the same params.
std::pair<CH, Array> cell_loop(const Tree& cell_params, CH c, const Array& xs) {
  std::vector<Array> ys;
  for (std::int64_t i = 0; i < xs.shape(0); ++i) {
    auto [c2, y] = TinyCell().apply(params_of(cell_params), c, row(xs, i));
    c = c2;
    ys.push_back(y);
  }
  return {c, stack(ys, 0)};
}

struct SimpleScan : nn::Module<SimpleScan> {
  std::pair<CH, Array> call(const CH& c, const Array& xs) {
    return nn::scan(TinyCell(), {.variable_broadcast = "params", .split_rngs = {{"params", false}}})
        .named("lstm_cell")(c, xs);
  }
};
}  // namespace

TEST_CASE("nn::scan of a recurrent cell equals the explicit loop, carries too") {
  Array keys = random::split(random::key(0), 2);
  Array xs = random::uniform(row(keys, 0), {5, 3, 2});
  CH c0{zeros({3, 2}), zeros({3, 2})};
  Tree v = SimpleScan().init(row(keys, 1), c0, xs);
  CHECK(v["params"]["lstm_cell"]["ih"]["kernel"].leaf().shape() == Shape{2, 2});
  auto [c1, y1] = cell_loop(v["params"]["lstm_cell"], c0, xs);
  auto [c2, y2] = SimpleScan().apply(v, c0, xs);
  CHECK(allclose(y1, y2, 1e-6f));
  CHECK(allclose(c1.first, c2.first, 1e-6f));
  CHECK(allclose(c1.second, c2.second, 1e-6f));
}

namespace {
int g_bad_b_shapes = 0, g_body_runs = 0;
// @partial(nn.scan, variable_broadcast='params', in_axes=(nn.broadcast, 0)) on __call__.
struct DecoratedScan : nn::Module<DecoratedScan> {
  std::pair<CH, Array> call(const CH& c, const Array& b, const Array& xs) {
    auto body = [](DecoratedScan&, const CH& c, const Array& b, const Array& x) {
      ++g_body_runs;
      if (b.shape() != Shape{4}) ++g_bad_b_shapes;
      return TinyCell().named("lstm_cell")(c, x);
    };
    return nn::scan(body, {.variable_broadcast = "params",
                           .split_rngs = {{"params", false}},
                           .in_axes = {lift::broadcast, 0}})(*this, c, b, xs);
  }
};
}  // namespace

TEST_CASE("nn::scan over a method: a broadcast input arrives whole every step") {
  Array keys = random::split(random::key(0), 2);
  Array xs = random::uniform(row(keys, 0), {4, 3, 2});
  Array b = ones({4});
  CH c0{zeros({3, 2}), zeros({3, 2})};
  g_bad_b_shapes = g_body_runs = 0;
  Tree v = DecoratedScan().init(row(keys, 1), c0, b, xs);
  auto [c2, y2] = DecoratedScan().apply(v, c0, b, xs);
  CHECK(g_body_runs >= 8);
  CHECK(g_bad_b_shapes == 0);
  auto [c1, y1] = cell_loop(v["params"]["lstm_cell"], c0, xs);
  CHECK(allclose(y1, y2, 1e-6f));
  CHECK(allclose(c1.first, c2.first, 1e-6f));
  CHECK(allclose(c1.second, c2.second, 1e-6f));
}

namespace {
// A stateful module shared by two jitted parents keeps one counter.
struct Counter : nn::Module<Counter> {
  Array call() {
    auto v = variable("counter", "foo", [] { return zeros({1}, int32); });
    v.value() = v.value() + 1;
    return v.value();
  }
};
struct CntOuter : nn::Module<CntOuter> {
  Array call(const Array& x) {
    nn::jit(Counter()).named("cntr")();
    return x;
  }
};
struct CntInner : nn::Module<CntInner> {
  nn::Jit<CntOuter> outer_module;
  explicit CntInner(nn::Jit<CntOuter> o) : outer_module(std::move(o)) {}
  auto module_fields() { return std::tie(outer_module); }
  Array call(const Array& x) { return outer_module(x); }
};
struct CntTest : nn::Module<CntTest> {
  Array call(const Array& x) {
    auto outer_dense = nn::jit(CntOuter()).named("outer");
    auto inner = nn::jit(CntInner(outer_dense)).named("inner1");
    auto inner2 = nn::jit(CntInner(outer_dense)).named("inner2");
    return inner(x) + inner2(x);
  }
};
}  // namespace

TEST_CASE("a module shared by two nn::jit parents counts in one place: 2 after init, 4") {
  Array x = ones({10, 10});
  Tree v = CntTest().init(random::key(0), x);
  CHECK(v["counter"].as_dict().size() == 1);
  CHECK(v["counter"]["outer"]["cntr"]["foo"].leaf().item<int>() == 2);
  auto [y, s] = CntTest().apply(v, x, {.mutable_ = "counter"});
  CHECK(s["counter"]["outer"]["cntr"]["foo"].leaf().item<int>() == 4);
  CHECK(allclose(y, 2 * x));
}

namespace {
// Outer's Dense is created inside the vmap of whichever Inner calls it first.
struct VOuter : nn::Module<VOuter> {
  Array call(const Array& x) {
    return nn::jit([](VOuter&, const Array& x) { return nn::Dense(5)(x); })(*this, x);
  }
};
struct VInner : nn::Module<VInner> {
  VOuter outer_module;
  explicit VInner(VOuter o) : outer_module(std::move(o)) {}
  auto module_fields() { return std::tie(outer_module); }
  Array call(const Array& x) {
    auto jitted = [](VInner& m, const Array& x) {
      return nn::jit([](VInner& m, const Array& x) { return m.outer_module(x); })(m, x);
    };
    return nn::vmap(
        jitted, {.variable_axes = {{"params", 0}}, .split_rngs = {{"params", true}}, .in_axes = 0})(
        *this, x);
  }
};
struct VTest : nn::Module<VTest> {
  Array call(const Array& x) {
    auto outer_dense = VOuter().named("outer");
    auto inner = VInner(outer_dense).named("inner1");
    auto inner2 = VInner(outer_dense).named("inner2");
    return inner(x) + inner2(x);
  }
};
}  // namespace

TEST_CASE("a shared module called under a vmap gets the vmapped axis in its own place") {
  Array x = random::normal(random::key(1), {3, 1, 2});
  Tree v = VTest().init(random::key(0), x);
  const Tree& d = v["params"]["outer"]["Dense_0"];
  CHECK(d["kernel"].leaf().shape() == Shape{3, 2, 5});
  CHECK(d["bias"].leaf().shape() == Shape{3, 5});
  CHECK(v["params"].as_dict().size() == 1);
  Array y = VTest().apply(v, x);
  CHECK(y.shape() == Shape{3, 1, 5});
  // Both Inners map over the same stacked Dense: y[i] = 2 (x[i] K[i] + b[i]).
  for (std::int64_t i = 0; i < 3; ++i) {
    Array yi = matmul(row(x, i), row(d["kernel"].leaf(), i)) + row(d["bias"].leaf(), i);
    CHECK(allclose(row(y, i), 2 * yi));
  }
}

namespace {
struct SetupFoo : nn::Module<SetupFoo> {
  Array test;
  void setup() override { test = param("test", nn::initializers::ones_init(), Shape{}); }
  Array call(const Array& x) { return x * test; }
};
}  // namespace

TEST_CASE("nn::vmap of a module whose setup makes a param: the param gets the axis") {
  auto foo_vmap = nn::vmap(SetupFoo(), {.variable_axes = {{"params", 0}},
                                        .split_rngs = {{"params", true}},
                                        .in_axes = 0,
                                        .out_axes = 0});
  Array x = random::normal(random::key(2), {4});
  auto [y, v] = foo_vmap.init_with_output(random::key(0), x);
  CHECK(v["params"]["test"].leaf().shape() == Shape{4});
  CHECK(allclose(y, x * v["params"]["test"].leaf()));
  Array scale = array<float>({1, 2, 3, 4});
  Tree scaled = Tree::dict({{"params", Tree::dict({{"test", scale}})}});
  CHECK(allclose(foo_vmap.apply(scaled, x), x * scale));
}

namespace {
// C's vmapped __call__ reaches A through B; A was built (and is named) in D.
struct A30 : nn::Module<A30> {
  Array call(const Array& x) { return nn::Dense(3)(x); }
};
struct B30 : nn::Module<B30> {
  A30 a;
  explicit B30(A30 a_) : a(std::move(a_)) {}
  auto module_fields() { return std::tie(a); }
  Array call(const Array& x) { return a(x); }
};
const lift::VmapOptions kSplitParams{.variable_axes = {{"params", 0}},
                                     .split_rngs = {{"params", true}}};
struct C30 : nn::Module<C30> {
  B30 b;
  explicit C30(B30 b_) : b(std::move(b_)) {}
  auto module_fields() { return std::tie(b); }
  Array call(const Array& x) {
    return nn::vmap([](C30& m, const Array& x) { return m.b(x); }, kSplitParams)(*this, x);
  }
};
struct CSimple : nn::Module<CSimple> {
  B30 b;
  explicit CSimple(B30 b_) : b(std::move(b_)) {}
  auto module_fields() { return std::tie(b); }
  Array call(const Array& x) { return b(x); }
};
struct D30 : nn::Module<D30> {
  bool class_transform = false;
  Array call(const Array& x) {
    A30 a;
    B30 b(a);
    if (class_transform) return nn::vmap(CSimple(b), kSplitParams)(x);
    C30 c(b);
    return c(x);
  }
};
}  // namespace

TEST_CASE("modules held as fields are lifted where they were built: A_0 gets the axis") {
  for (bool class_transform : {false, true}) {
    CAPTURE(class_transform);
    D30 d;
    d.class_transform = class_transform;
    Array x = random::normal(random::key(1), {10, 10});
    auto [y, v] = d.init_with_output(random::key(0), x);
    const Tree& dense = v["params"]["A30_0"]["Dense_0"];
    CHECK(dense["kernel"].leaf().shape() == Shape{10, 10, 3});
    CHECK(dense["bias"].leaf().shape() == Shape{10, 3});
    CHECK(v["params"].as_dict().size() == 1);
    for (std::int64_t i = 0; i < 10; ++i) {
      Array yi = matmul(row(x, i), row(dense["kernel"].leaf(), i)) + row(dense["bias"].leaf(), i);
      CHECK(allclose(row(y, i), yi));
    }
    CHECK(allclose(d.apply(v, x), y));
  }
}

namespace {
int g_setup33 = 0;
struct A33 : nn::Module<A33> {
  nn::Dense d{2};
  void setup() override {
    ++g_setup33;
    submodule("d", d);
  }
  Array foo(const Array& x) {
    return method(
        "foo", [&] { return nn::remat([](A33& m, const Array& x) { return m.d(x); })(*this, x); });
  }
  Array bar(const Array& x) {
    return method(
        "bar", [&] { return nn::remat([](A33& m, const Array& x) { return m.d(x); })(*this, x); });
  }
  Array call(const Array& x) { return foo(x); }
};
struct B33 : nn::Module<B33> {
  A33 a;
  void setup() override { submodule("a", a); }
  std::pair<Array, Array> call(const Array& x) { return {a.foo(x), a.bar(x)}; }
};
}  // namespace

TEST_CASE("two nn::remat methods share their setup child; setup runs per transform") {
  Array x = random::normal(random::key(1), {2});
  g_setup33 = 0;
  auto [y, v] = B33().init_with_output(random::key(0), x);
  CHECK(same(y.first, y.second));
  const Tree& d = v["params"]["a"]["d"];
  CHECK(allclose(y.first, matmul(x, d["kernel"].leaf()) + d["bias"].leaf()));
  // Set up at a's first method call, then once in each transform's copy: what Flax counts for
  // nn.remat over a function inside plain methods, linum's spelling. Flax's decorated methods
  // (test_multimethod_setup_calls) count 4: each decorated call on an instance not yet set up
  // also runs an abstract _validate_setup.
  CHECK(g_setup33 == 3);
  // Grad through the remat method equals the closed form's.
  Tree g = linum::grad([&](const Tree& p) { return sum(B33().apply(p, x).second); })(v);
  CHECK(allclose(g["params"]["a"]["d"]["bias"].leaf(), ones({2})));
  CHECK(allclose(g["params"]["a"]["d"]["kernel"].leaf(), matmul(reshape(x, {2, 1}), ones({1, 2}))));
}

namespace {
// nn.scan(Foo, methods={...}): each method scanned with its own options.
struct Foo42 : nn::Module<Foo42> {
  nn::Dense dense0{2}, dense1{2};
  void setup() override {
    submodule("dense0", dense0);
    submodule("dense1", dense1);
  }
  std::pair<Array, Array> method_0(const Array& x) {
    return method("method_0", [&] { return std::make_pair(dense0(x), x); });
  }
  std::pair<Array, Tree> method_1(const Array& x, const Array& y) {
    return method("method_1", [&] { return std::make_pair(Array(dense1(x) + y), Tree()); });
  }
};
struct Bar42 : nn::Module<Bar42> {
  Array call(const Array& x) {
    std::map<std::string, lift::ScanOptions> methods{
        {"method_0",
         {.variable_axes = {{"params", 0}},
          .split_rngs = {{"params", true}},
          .in_axes = {lift::broadcast},
          .out_axes = 0,
          .length = 3}},
        {"method_1",
         {.variable_axes = {{"params", 0}}, .split_rngs = {{"params", true}}, .length = 3}}};
    auto sf = nn::scan(Foo42(), methods);
    auto [y, ys] = sf.call_method("method_0", &Foo42::method_0, x);
    return sf.call_method("method_1", &Foo42::method_1, y, ys).first;
  }
};
}  // namespace

TEST_CASE("nn::scan with per-method options: two methods over one scope == loops") {
  Array x = random::uniform(random::key(1), {2, 2});
  auto [z, v] = Bar42().init_with_output(random::key(0), x);
  const Tree& p = v["params"]["ScanFoo42_0"];
  Array k0 = p["dense0"]["kernel"].leaf(), b0 = p["dense0"]["bias"].leaf();
  Array k1 = p["dense1"]["kernel"].leaf(), b1 = p["dense1"]["bias"].leaf();
  CHECK(k0.shape() == Shape{3, 2, 2});
  CHECK(k1.shape() == Shape{3, 2, 2});
  Array c = x;
  std::vector<Array> ys;
  for (int t = 0; t < 3; ++t) {
    ys.push_back(c);
    c = matmul(c, row(k0, t)) + row(b0, t);
  }
  for (int t = 0; t < 3; ++t) c = matmul(c, row(k1, t)) + row(b1, t) + ys[t];
  CHECK(allclose(z, c));
  CHECK(allclose(Bar42().apply(v, x), c));
  CHECK_THROWS_AS(nn::scan(Foo42(), std::map<std::string, lift::ScanOptions>{})
                      .apply(v, x, nn::method([](nn::Scan<Foo42>& s, const Array& x) {
                               return s.call_method("method_0", &Foo42::method_0, x).first;
                             })),
                  ValueError);
}

namespace {
struct Inner43 : nn::Module<Inner43> {
  Array call(const Array& x) {
    sow("intermediates", "loss", Tree(sum(x)));
    return x + 1;
  }
};
struct Outer43 : nn::Module<Outer43> {
  Inner43 inner;
  void setup() override { submodule("inner", inner); }
  Array call(const Array& x) {
    return nn::jit([](Outer43& m, const Array& x) { return m.inner(x); })(*this, x);
  }
};
}  // namespace

TEST_CASE("sow under nn::jit stores a 1-tuple in the calling module's place") {
  Array x = ones({2, 2});
  Tree v = Outer43().init(random::key(0), x);
  auto [y, s] = Outer43().apply(v, x, {.mutable_ = "intermediates"});
  const Tree& loss = s["intermediates"]["inner"]["loss"];
  REQUIRE(loss.is_tuple());
  CHECK(loss.size() == 1);
  CHECK(loss[0].leaf().item<float>() == 4.0f);
  CHECK(allclose(y, full({2, 2}, 2.0f)));
}

namespace {
struct Foo44 : nn::Module<Foo44> {
  bool use_jit = true;
  Array call() {
    auto f = [](Foo44& m) { return m.make_rng("params"); };
    return use_jit ? nn::jit(f)(*this) : nn::fold_rngs(f)(*this);
  }
};
}  // namespace

TEST_CASE("nn::jit and nn::fold_rngs fork the rngs alike: identical keys") {
  const lift::Rngs rngs{{"params", random::key(0)}};
  Foo44 jit_foo, fold_foo;
  fold_foo.use_jit = false;
  Array k_jit = jit_foo.apply(Tree::dict(), rngs);
  Array k_fold = fold_foo.apply(Tree::dict(), rngs);
  CHECK(same(k_jit, k_fold));
  // fork_rngs: one make_rng in the module (counter 1) gives the new base key; the call inside
  // continues the shared counter (2).
  Array forked = lift::fold_in_static(random::key(0), {std::uint64_t{1}});
  CHECK(same(k_jit, lift::fold_in_static(forked, {std::uint64_t{2}})));
  CHECK_FALSE(same(k_jit, lift::fold_in_static(random::key(0), {std::uint64_t{1}})));
  // The module-type forms agree with each other too.
  Array x = ones({1, 1});
  Tree a = nn::fold_rngs(nn::Dense({.features = 1, .use_bias = false})).init(random::key(0), x);
  Tree b = nn::jit(nn::Dense({.features = 1, .use_bias = false})).init(random::key(0), x);
  CHECK(same(a["params"]["kernel"].leaf(), b["params"]["kernel"].leaf()));
}

namespace {
struct Block45 : nn::Module<Block45> {
  std::pair<Tree, Array> call(const Tree& c, const Array& in) {
    auto f = [](Block45& m, const Tree& c, const Array&) {
      return std::make_pair(c, m.make_rng("params"));
    };
    return nn::jit(f)(*this, c, in);
  }
};
struct Transformer45 : nn::Module<Transformer45> {
  Array call() {
    return nn::scan(Block45(), {.variable_axes = {{"params", 0}},
                                .split_rngs = {{"params", true}}})(Tree(), arange(10))
        .second;
  }
};
}  // namespace

TEST_CASE("nn::scan of a jitted block: every init gives the same keys, one per step") {
  std::vector<Array> runs;
  for (int i = 0; i < 4; ++i)
    runs.push_back(Transformer45().init_with_output(random::key(1)).first);
  REQUIRE(runs[0].shape() == Shape{10, 2});
  for (int i = 1; i < 4; ++i) CHECK(same(runs[0], runs[i]));
  // Step t: base split(key(1), 10)[t] with suffix ScanBlock45_0; the first trace took counters
  // 1 (fork) and 2, so every step forks with 3 and draws with 4.
  Array split = random::split(random::key(1), 10);
  for (std::int64_t t = 0; t < 10; ++t) {
    Array fork =
        lift::fold_in_static(row(split, t), {std::string("ScanBlock45_0"), std::uint64_t{3}});
    CHECK(same(row(runs[0], t), lift::fold_in_static(fork, {std::uint64_t{4}})));
  }
}

namespace {
struct Foo50 : nn::Module<Foo50> {
  nn::Dense d{2};
  void setup() override { submodule("d", d); }
  Array call(const Array& x) { return nn::checkpoint(d)(x); }
};
struct Bar50 : nn::Module<Bar50> {
  Array call(const Array& x) {
    nn::Dense used(2);
    used(x);
    return nn::remat(used)(x);
  }
};
}  // namespace

TEST_CASE("a transform over a bound module instance is TransformTargetError") {
  Array x = zeros({2, 3});
  CHECK_THROWS_AS(Foo50().init(random::key(0), x), lift::TransformTargetError);
  CHECK_THROWS_AS(Bar50().init(random::key(0), x), lift::TransformTargetError);
}

namespace {
struct Foo51 : nn::Module<Foo51> {
  Array call(const Array& x) {
    auto body = [](Foo51&, const Array& x) {
      return std::make_pair(nn::Dense(x.shape().back())(x), std::tuple<>{});
    };
    return nn::scan(body, {.variable_axes = {{"params", 0}},
                           .split_rngs = {{"params", true}},
                           .length = 5})(*this, x)
        .first;
  }
};
}  // namespace

TEST_CASE("modules a scanned function creates are named in the calling module") {
  Array x = ones({3});
  auto [y, v] = Foo51().init_with_output(random::key(0), x);
  Array k = v["params"]["Dense_0"]["kernel"].leaf(), b = v["params"]["Dense_0"]["bias"].leaf();
  CHECK(k.shape() == Shape{5, 3, 3});
  Array c = x;
  for (int t = 0; t < 5; ++t) c = matmul(c, row(k, t)) + row(b, t);
  CHECK(allclose(y, c, 1e-5f));
  CHECK(allclose(Foo51().apply(v, x), c, 1e-5f));
}

namespace {
struct A53 : nn::Module<A53> {
  Array foo;
  void setup() override { foo = param("foo", nn::initializers::zeros_init(), Shape{2, 2}); }
  Array call(const Array&) { return foo; }
};
struct B53 : nn::Module<B53> {
  A53 a;
  explicit B53(A53 a_) : a(std::move(a_)) {}
  auto module_fields() { return std::tie(a); }
  Array call(const Array& x) { return a(x); }
};
struct C53 : nn::Module<C53> {
  A53 a;
  std::optional<nn::Jit<B53>> b;
  void setup() override {
    submodule("a", a);
    b.emplace(nn::jit(B53(a)));
    submodule("b", *b);
  }
  Array call(const Array& x) { return (*b)(x) + a(x); }
};
}  // namespace

TEST_CASE("a setup child shared into nn::jit(B) keeps one copy of its params") {
  Array x = ones({2, 2});
  auto [y, v] = C53().init_with_output(random::key(0), x);
  CHECK(v.as_dict().size() == 1);
  CHECK(v["params"].as_dict().size() == 1);
  CHECK(v["params"]["a"]["foo"].leaf().shape() == Shape{2, 2});
  Tree p = v;
  p["params"]["a"]["foo"] = Tree(full({2, 2}, 1.5f));
  CHECK(allclose(C53().apply(p, x), full({2, 2}, 3.0f)));
}

namespace {
struct Foo57 : nn::Module<Foo57> {
  nn::Dense bar;
  explicit Foo57(nn::Dense b) : bar(std::move(b)) {}
  auto module_fields() { return std::tie(bar); }
  std::tuple<Array, Array, Array> call(const Array& x, const Array& y) {
    auto fn = [](Foo57& m, const Array& x, const Array& y) {
      nn::Dense qup(y.shape().back());
      return sum(square(y - m.bar(qup(x))));
    };
    auto [z, g] = nn::value_and_grad(fn, *this, x, y);
    return {z, std::get<0>(g), std::get<1>(g)};
  }
};
struct Baz57 : nn::Module<Baz57> {
  std::tuple<Array, Array, Array> call(const Array& x, const Array& y) {
    nn::Dense bar(y.shape().back());
    return Foo57(bar)(x, y);
  }
};
}  // namespace

TEST_CASE("nn::value_and_grad with a module made inside and one from a field") {
  Array x = random::uniform(random::key(1), {4});
  Array y = random::uniform(random::key(2), {4});
  Tree v = Baz57().init(random::key(0), x, y);
  auto [z, gx, gy] = Baz57().apply(v, x, y);
  const Tree& qup = v["params"]["Foo57_0"]["Dense_0"];
  const Tree& bar = v["params"]["Dense_0"];
  auto closed = [&](const Array& x, const Array& y) {
    Array h = matmul(x, qup["kernel"].leaf()) + qup["bias"].leaf();
    return sum(square(y - (matmul(h, bar["kernel"].leaf()) + bar["bias"].leaf())));
  };
  CHECK(allclose(z, closed(x, y)));
  auto [wx, wy] = linum::grad(closed, argnums<0, 1>)(x, y);
  CHECK(allclose(gx, wx));
  CHECK(allclose(gy, wy));
}

namespace {
// A field module lifted through nn::checkpoint: the backward pass recomputes the body after the
// call returned, over the combined scope's copies.
struct RematHolder : nn::Module<RematHolder> {
  B30 b;
  explicit RematHolder(B30 b_) : b(std::move(b_)) {}
  auto module_fields() { return std::tie(b); }
  Array call(const Array& x) {
    return nn::checkpoint([](RematHolder& m, const Array& x) { return tanh(m.b(x)); })(*this, x);
  }
};
struct RematTop : nn::Module<RematTop> {
  Array call(const Array& x) {
    A30 a;
    B30 b(a);
    return RematHolder(b)(x);
  }
};
}  // namespace

TEST_CASE("nn::checkpoint over a module holding a field: grads equal the plain computation") {
  Array x = random::normal(random::key(1), {4, 5});
  Tree v = RematTop().init(random::key(0), x);
  REQUIRE(v["params"].as_dict().size() == 1);
  auto loss = [&](const Tree& p) { return sum(square(RematTop().apply(p, x))); };
  auto plain = [&](const Tree& p) {
    const Tree& d = p["params"]["A30_0"]["Dense_0"];
    return sum(square(tanh(matmul(x, d["kernel"].leaf()) + d["bias"].leaf())));
  };
  CHECK(allclose(loss(v), plain(v)));
  Tree g = linum::grad(loss)(v), gp = linum::grad(plain)(v);
  const Tree& d = g["params"]["A30_0"]["Dense_0"];
  const Tree& dp = gp["params"]["A30_0"]["Dense_0"];
  CHECK(allclose(d["kernel"].leaf(), dp["kernel"].leaf()));
  CHECK(allclose(d["bias"].leaf(), dp["bias"].leaf()));
}

namespace {
// Flax's test_nested_setup_calls_count: Repeat<M>'s setup makes N copies of M; both Repeat's and
// Counter's calls are remat methods, nested D = 3 deep, so 4^3 = 64 Counters run.
int g_counter_setups = 0, g_counter_calls = 0;
struct CounterNested : nn::Module<CounterNested> {
  nn::Dense dense{nn::DenseConfig{.features = 2, .use_bias = false}};
  void setup() override {
    ++g_counter_setups;
    submodule("dense", dense);
  }
  Array call(const Array& x) {
    return nn::remat([](CounterNested& m, const Array& x) {
      ++g_counter_calls;
      return m.dense(x);
    })(*this, x);
  }
};
template <class M>
struct RepeatNested : nn::Module<RepeatNested<M>> {
  std::vector<M> lyrs = std::vector<M>(4);
  void setup() override { this->submodule("lyrs", lyrs); }
  Array call(const Array& x) {
    return nn::remat([](RepeatNested& m, const Array& x) {
      for (auto& l : m.lyrs) l(x);
      return x;
    })(*this, x);
  }
};
}  // namespace

TEST_CASE("setup runs once per module instance through nested nn::remat methods") {
  // Flax's test_nested_setup_calls_count builds this model with decorated methods and counts
  // 128 setups (64 abstract _validate_setup runs, 64 real) and 64 calls. Written with nn.remat
  // over a function inside plain methods, as linum spells it, Flax counts the same 128: each
  // Counter is set up when its method is entered and once more in remat's copy. A child is set up
  // only when used, so the lifted copies do not set up whole subtrees again (eagerly, 320).
  using Model = RepeatNested<RepeatNested<RepeatNested<CounterNested>>>;
  Array x = ones({2});
  g_counter_setups = g_counter_calls = 0;
  Tree v = Model().init(random::key(0), x);
  CHECK(g_counter_setups == 128);
  CHECK(g_counter_calls == 64);
  CHECK(v["params"]["lyrs_3"]["lyrs_3"]["lyrs_3"]["dense"]["kernel"].leaf().shape() == Shape{2, 2});
  g_counter_setups = g_counter_calls = 0;
  Model().apply(v, x);
  CHECK(g_counter_setups == 128);
  CHECK(g_counter_calls == 64);
  // Differentiated, each remat runs its body again in the backward pass (linum re-executes where
  // JAX replays its trace), so each level's copies run twice.
  g_counter_setups = g_counter_calls = 0;
  linum::grad([&](const Tree& p) { return sum(Model().apply(p, x)); })(v);
  CHECK(g_counter_calls == 128);
  CHECK(g_counter_setups == 256);
}

namespace {
// A child registered in setup is set up at its first use; one never used is never set up, so
// the params its setup would make do not exist (as in Flax, whose setup runs on attribute access).
int g_used_setups = 0, g_unused_setups = 0;
struct UsedChild : nn::Module<UsedChild> {
  Array w;
  void setup() override {
    ++g_used_setups;
    w = param("w", nn::initializers::ones_init(), Shape{2});
  }
  Array call(const Array& x) { return x * w; }
};
struct UnusedChild : nn::Module<UnusedChild> {
  void setup() override {
    ++g_unused_setups;
    param("never", nn::initializers::ones_init(), Shape{2});
  }
  Array call(const Array& x) { return x; }
};
struct HoldsChildren : nn::Module<HoldsChildren> {
  UsedChild used;
  UnusedChild unused;
  void setup() override {
    submodule("used", used);
    submodule("unused", unused);
  }
  Array call(const Array& x) { return used(x); }
};
// A grandchild held in a vector (on the heap) of a child not yet set up, called directly.
struct VectorChild : nn::Module<VectorChild> {
  std::vector<nn::Dense> layers{nn::Dense(3), nn::Dense(3)};
  void setup() override { submodule("layers", layers); }
  Array call(const Array& x) { return layers[0](x); }
};
struct ReachesIntoVector : nn::Module<ReachesIntoVector> {
  VectorChild child;
  void setup() override { submodule("child", child); }
  Array call(const Array& x) { return child.layers[1](x); }
};
}  // namespace

TEST_CASE("a setup child is set up at its first use, and never when unused") {
  Array x = ones({2});
  g_used_setups = g_unused_setups = 0;
  Tree v = HoldsChildren().init(random::key(0), x);
  CHECK(g_used_setups == 1);
  CHECK(g_unused_setups == 0);
  CHECK(v["params"].as_dict().keys() == std::vector<std::string>{"used"});
  // bind() is for reading fields directly: it sets up every field at once.
  Tree v2 = v;
  v2["params"]["unused"] = Tree::dict({{"never", Tree(ones({2}))}});
  HoldsChildren bound = HoldsChildren().bind(v2);
  CHECK(g_unused_setups == 1);
  CHECK(bound.used.w.shape() == Shape{2});
  // A module held in a container of a child whose setup has not run is found when called.
  Tree vv = ReachesIntoVector().init(random::key(0), ones({1, 2}));
  CHECK(vv["params"]["child"].as_dict().keys() == std::vector<std::string>{"layers_1"});
}

}  // namespace test_transforms_lifting
