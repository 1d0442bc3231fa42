// Linen transform L cases of spec §3.4 (flax tests/linen/linen_transforms_test.py): scan over a
// recurrent cell, modules shared across transforms (multi-scope lifting), setup under
// transforms, sow and rngs under jit, function-form transforms, TransformTargetError, and
// value_and_grad over a module held as a field. Each is checked against an explicit loop or a
// hand computation.
//
// Not applicable: L52 (nn.add_metadata_axis / Partitioned) and L59 (AxisMetadata add_axis /
// remove_axis under vmap) need boxed variable metadata, which linum's variables do not have
// (a variable is a plain Tree of Arrays). L20 (vmap BatchNorm axis_name) is in test_norms.cpp.
#include <doctest/doctest.h>

#include <map>
#include <optional>
#include <tuple>

#include <linum/linum.hpp>
#include <linum/nn/nn.hpp>

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

TEST_CASE("nn::scan of a recurrent cell equals the explicit loop, carries too (L21)") {
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

TEST_CASE("nn::scan over a method: a broadcast input arrives whole every step (L22)") {
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
// L25: a stateful module shared by two jitted parents keeps one counter.
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

TEST_CASE("a module shared by two nn::jit parents counts in one place: 2 after init, 4 (L25)") {
  Array x = ones({10, 10});
  Tree v = CntTest().init(random::key(0), x);
  CHECK(v["counter"].as_dict().size() == 1);
  CHECK(v["counter"]["outer"]["cntr"]["foo"].leaf().item<int>() == 2);
  auto [y, s] = CntTest().apply(v, x, {.mutable_ = "counter"});
  CHECK(s["counter"]["outer"]["cntr"]["foo"].leaf().item<int>() == 4);
  CHECK(allclose(y, 2 * x));
}

namespace {
// L28: Outer's Dense is created inside the vmap of whichever Inner calls it first.
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

TEST_CASE("a shared module called under a vmap gets the vmapped axis in its own place (L28)") {
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

TEST_CASE("nn::vmap of a module whose setup makes a param: the param gets the axis (L29)") {
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
// L30: C's vmapped __call__ reaches A through B; A was built (and is named) in D.
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

TEST_CASE("modules held as fields are lifted where they were built: A_0 gets the axis (L30)") {
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

TEST_CASE("two nn::remat methods share their setup child; setup runs per transform (L33)") {
  Array x = random::normal(random::key(1), {2});
  g_setup33 = 0;
  auto [y, v] = B33().init_with_output(random::key(0), x);
  CHECK(same(y.first, y.second));
  const Tree& d = v["params"]["a"]["d"];
  CHECK(allclose(y.first, matmul(x, d["kernel"].leaf()) + d["bias"].leaf()));
  // Flax counts 4: one _validate_setup call, one outside the transforms, one per transform.
  // linum has no validation call: 1 + 2.
  CHECK(g_setup33 == 3);
  // Grad through the remat method equals the closed form's.
  Tree g = linum::grad([&](const Tree& p) { return sum(B33().apply(p, x).second); })(v);
  CHECK(allclose(g["params"]["a"]["d"]["bias"].leaf(), ones({2})));
  CHECK(allclose(g["params"]["a"]["d"]["kernel"].leaf(), matmul(reshape(x, {2, 1}), ones({1, 2}))));
}
