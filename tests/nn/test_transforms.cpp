// Linen transforms over modules (flax/linen/transforms.py and its tests): transformed module types
// and the direct transforms, against the untransformed model and Flax's printed numbers.
#include <doctest/doctest.h>

#include <optional>

#include <linum/linum.hpp>
#include <linum/nn/nn.hpp>

#include "../autodiff/check_grads.hpp"

namespace test_transforms {

using namespace linum;
using lift::Filter;

namespace {
// x[i] along the first axis.
Array row(const Array& x, std::int64_t i) {
  return squeeze(take(x, Array(static_cast<int>(i)).reshape({1}), 0), 0);
}
bool allclose(const Array& a, const Array& b, float tol = 1e-5f) {
  return a.shape() == b.shape() && all(less_equal(abs(a - b), tol + tol * abs(b))).item<bool>();
}
void check_values(const Array& a, const std::vector<float>& want, float tol = 2e-6f) {
  REQUIRE(a.size() == static_cast<std::int64_t>(want.size()));
  for (std::size_t i = 0; i < want.size(); ++i)
    CHECK(a.data<float>()[i] == doctest::Approx(want[i]).epsilon(tol));
}

struct MLP : nn::Module<MLP> {
  Array call(const Array& x) {
    Array h = nn::relu(nn::Dense(3).named("layers_0")(x));
    return nn::Dense(4).named("layers_1")(h);
  }
};
}  // namespace

TEST_CASE("nn::vmap with shared params equals the model stacked over the batch") {
  Array x2 = random::uniform(random::key(2), {5, 4, 4});
  Tree params = MLP().init(random::key(1), row(x2, 0));
  auto vmlp = nn::vmap(
      MLP(), {.variable_axes = {{"params", std::nullopt}}, .split_rngs = {{"params", false}}});
  Array y = vmlp.apply(params, x2);
  for (std::int64_t i = 0; i < 5; ++i)
    CHECK(allclose(row(y, i), MLP().apply(params, row(x2, i)), 1e-6f));
  // Initialised through the transform, the shared params have the plain shapes.
  Tree v = vmlp.init(random::key(1), x2);
  CHECK(v["params"]["layers_0"]["kernel"].leaf().shape() == Shape{4, 3});
}

TEST_CASE("nn::vmap(nn::Dense) keys equal the Flax RNG guide, shared and split") {
  Array x = ones({3, 2});
  Tree shared = nn::vmap(nn::Dense(2), {.variable_axes = {{"params", std::nullopt}},
                                        .split_rngs = {{"params", false}}})
                    .init(random::key(0), x);
  check_values(shared["params"]["kernel"].leaf(),
               {0.058418754f, -1.166304f, -1.2072171f, 0.54235715f});
  Tree split =
      nn::vmap(nn::Dense(2), {.variable_axes = {{"params", 0}}, .split_rngs = {{"params", true}}})
          .init(random::key(0), x);
  CHECK(split["params"]["kernel"].leaf().shape() == Shape{3, 2, 2});
  check_values(split["params"]["kernel"].leaf(),
               {0.76119637f, 1.0844675f, -0.54567879f, -0.49972105f, -0.23197685f, -0.33653489f,
                0.18674162f, -0.7139582f, 0.21411802f, 0.88457131f, 0.36252701f, 0.9802478f});
  CHECK(split["params"]["bias"].leaf().shape() == Shape{3, 2});
}

namespace {
struct ResidualMLPBlock : nn::Module<ResidualMLPBlock> {
  std::pair<Array, Tree> call(const Array& x) {
    Array h = nn::relu(nn::Dense(2)(x));
    return {x + h, Tree()};
  }
};
nn::Scan<ResidualMLPBlock> scan_block(bool split) {
  return nn::scan(
      ResidualMLPBlock(),
      {.variable_axes = {{"params", 0}}, .split_rngs = {{"params", split}}, .length = 3});
}
}  // namespace

TEST_CASE("nn::scan replays Flax's two traces: kernels drawn with counter 3") {
  Array x = ones({3, 2});
  // The transformed module is the root, as in the guide: nn.scan(...)().init(key(0), x, None).
  Tree v = scan_block(true).init(random::key(0), x);
  const Tree& k = v["params"]["Dense_0"]["kernel"];
  CHECK(k.leaf().shape() == Shape{3, 2, 2});
  check_values(k.leaf(),
               {-0.47237748f, 0.9342351f, -0.051814452f, -0.54192263f, 0.45121637f, 1.3581365f,
                0.0040389909f, 0.51114082f, 0.032164656f, -0.17287178f, -0.8439222f, 0.36585602f});
  Tree v2 = scan_block(false).init(random::key(0), x);
  const Array k2 = v2["params"]["Dense_0"]["kernel"].leaf();
  for (int t = 0; t < 3; ++t)
    check_values(row(k2, t), {0.49437523f, -1.5521431f, -1.0780724f, 0.87564963f});
}

namespace {
struct Foo : nn::Module<Foo> {
  std::pair<Tree, Array> call(const Tree& c, const Array& x) { return {c, nn::Dense(4)(x)}; }
};
struct Outer : nn::Module<Outer> {
  Array call(const Array& x) {
    auto s = nn::scan(Foo(), {.variable_broadcast = "params",
                              .split_rngs = {{"params", false}},
                              .in_axes = {1},
                              .out_axes = -1});
    return s(Tree(), x).second;
  }
};
}  // namespace

TEST_CASE("nn::scan names the transformed class ScanFoo; in_axes=1, out_axes=-1") {
  Array x = random::normal(random::PRNGKey(1), {1, 2, 3});
  auto [y, v] = Outer().init_with_output(random::key(0), x);
  CHECK(y.shape() == Shape{1, 4, 2});
  CHECK(v["params"]["ScanFoo_0"]["Dense_0"]["kernel"].leaf().shape() == Shape{3, 4});
  CHECK(v["params"]["ScanFoo_0"]["Dense_0"]["bias"].leaf().shape() == Shape{4});
}

namespace {
struct LearnScale : nn::Module<LearnScale> {
  Array call(const Array& x, const Array& y) {
    Array p = param("scale", nn::initializers::ones_init(), Shape{});
    return sum(p * x * y);
  }
};
struct GradFoo : nn::Module<GradFoo> {
  std::tuple<Array, Array, Array> call(const Array& x, const Array& y) {
    LearnScale ls;
    auto [z, grads] = nn::value_and_grad(
        [](LearnScale& mdl, const Array& a, const Array& b) { return mdl(a, b); }, ls, x, y);
    auto [gx, gy] = grads;
    return {z, gx, gy};
  }
};
}  // namespace

TEST_CASE("nn::value_and_grad over a module: grads of sum(p*x*y) are y and x") {
  Array x = random::uniform(random::key(1), {4});
  Array y = random::uniform(random::key(2), {4});
  auto [out, v] = GradFoo().init_with_output(random::key(0), x, y);
  auto [z, gx, gy] = out;
  CHECK(allclose(z, sum(x * y)));
  CHECK(allclose(gx, y));
  CHECK(allclose(gy, x));
  CHECK(v["params"]["LearnScale_0"]["scale"].leaf().shape() == Shape{});
}

namespace {
// fn returns (sum(p*x*y), (p*x, a tree of p)) with has_aux: the aux passes through
// undifferentiated.
struct AuxGradFoo : nn::Module<AuxGradFoo> {
  std::tuple<Array, Array, Tree, Array, Array, Tree> call(const Array& x, const Array& y) {
    LearnScale ls;
    auto fn = [](LearnScale& mdl, const Array& a, const Array& b) {
      Array z = mdl(a, b);
      Array p = mdl.get_variable("params", "scale").leaf();
      return std::make_pair(z, std::make_pair(Array(p * a), Tree{{"scale", Tree(p)}}));
    };
    auto [value_aux, grads] = nn::value_and_grad(fn, ls, x, y, linum::has_aux);
    auto [z, aux] = value_aux;
    auto [gx, gy] = grads;
    // nn.grad with has_aux gives (grads, aux).
    auto [grads2, aux2] = nn::grad(fn, ls, x, y, linum::has_aux);
    CHECK(allclose(std::get<0>(grads2), gx));
    CHECK(allclose(aux2.first, aux.first));
    return {z, aux.first, aux.second, gx, gy, aux2.second};
  }
};
}  // namespace

TEST_CASE("nn::value_and_grad / nn::grad with has_aux: ((y, aux), grads) and (grads, aux)") {
  Array x = random::uniform(random::key(1), {4});
  Array y = random::uniform(random::key(2), {4});
  auto [out, v] = AuxGradFoo().init_with_output(random::key(0), x, y);
  auto [z, px, tree_aux, gx, gy, tree_aux2] = out;
  // scale starts at 1 (ones_init), so y = sum(x*y), aux = (x, {scale: 1}), grads = (y, x).
  CHECK(allclose(z, sum(x * y)));
  CHECK(allclose(px, x));
  CHECK(allclose(tree_aux["scale"].leaf(), ones({})));
  CHECK(allclose(tree_aux2["scale"].leaf(), ones({})));
  CHECK(allclose(gx, y));
  CHECK(allclose(gy, x));
  // With a scale of 3 the aux reads the stored parameter, and the grads scale with it.
  Tree v3{{"params", Tree{{"LearnScale_0", Tree{{"scale", Tree(full({}, 3.0))}}}}}};
  auto out3 = AuxGradFoo().apply(v3, x, y);
  CHECK(allclose(std::get<1>(out3), 3.0 * x));
  CHECK(allclose(std::get<3>(out3), 3.0 * y));
  // The output must still be a scalar: Flax's message.
  struct VecOut : nn::Module<VecOut> {
    Array call(const Array& x) {
      LearnScale ls;
      auto fn = [](LearnScale& m, const Array& a) {
        return std::make_pair(Array(m(a, a) * a), Array(a));
      };
      return nn::value_and_grad(fn, ls, x, linum::has_aux).first.first;
    }
  };
  CHECK_THROWS_WITH_AS(VecOut().init(random::key(0), x),
                       doctest::Contains("grad can only work on functions with scalar-valued "
                                         "outputs. out shape=float32[4]"),
                       linum::ValueError);
}

// ---- checkpoint, remat_scan, map_variables, jit, cond/switch/while_loop, custom_vjp ------------

namespace {
struct TanhMLP : nn::Module<TanhMLP> {
  Array call(const Array& x) {
    Array h = tanh(nn::Dense(3).named("layers_0")(x));
    return nn::Dense(2).named("layers_1")(h);
  }
};
struct HoldsCheckpoint : nn::Module<HoldsCheckpoint> {
  Array call(const Array& x) { return nn::checkpoint(TanhMLP())(x); }
};
}  // namespace

TEST_CASE("nn::checkpoint: CheckpointTanhMLP_0 holds the plain params; value and grads equal") {
  Array x = astype(random::normal(random::key(3), {4, 5}), float64);
  auto [y, v] = HoldsCheckpoint().init_with_output(random::key(0), x);
  REQUIRE(v["params"].contains("CheckpointTanhMLP_0"));
  Tree inner = Tree::dict({{"params", v["params"]["CheckpointTanhMLP_0"]}});
  CHECK(inner["params"]["layers_0"]["kernel"].leaf().shape() == Shape{5, 3});
  CHECK(allclose(y, TanhMLP().apply(inner, x)));
  // The root-level transform keeps the target's own layout.
  auto remat_mlp = nn::remat(TanhMLP());
  CHECK(allclose(remat_mlp.apply(inner, x), y));
  auto loss = [&](const auto& model) {
    return [&model](const Array& k, const Array& x) {
      Tree p = Tree::dict(
          {{"params",
            Tree::dict({{"layers_0", Tree::dict({{"kernel", k}, {"bias", zeros({3}, float64)}})},
                        {"layers_1", Tree::dict({{"kernel", ones({3, 2}, float64)},
                                                 {"bias", zeros({2}, float64)}})}})}});
      return sum(square(model.apply(p, x)));
    };
  };
  Array k = astype(inner["params"]["layers_0"]["kernel"].leaf(), float64);
  auto plain = TanhMLP();
  auto g0 = linum::grad(loss(plain), argnums<0, 1>)(k, x);
  auto g1 = linum::grad(loss(remat_mlp), argnums<0, 1>)(k, x);
  CHECK(allclose(std::get<0>(g0), std::get<0>(g1), 1e-10f));
  CHECK(allclose(std::get<1>(g0), std::get<1>(g1), 1e-10f));
  testing::check_grads([&](const Arrays& a) { return loss(remat_mlp)(a[0], a[1]); }, {k, x});
}

namespace {
struct DenseStack : nn::Module<DenseStack> {
  Array call(const Array& x) { return nn::remat_scan(nn::Dense(8), {100}).named("dense_stack")(x); }
};
}  // namespace

TEST_CASE("nn::remat_scan(nn::Dense(8), {100}): a (100,8,8) kernel; y is the 100-step loop") {
  Array x = ones({2, 8});
  auto [y, v] = DenseStack().init_with_output(random::key(0), x);
  Array k = v["params"]["dense_stack"]["kernel"].leaf();
  Array b = v["params"]["dense_stack"]["bias"].leaf();
  CHECK(k.shape() == Shape{100, 8, 8});
  CHECK(b.shape() == Shape{100, 8});
  CHECK(y.shape() == Shape{2, 8});
  Array c = x;
  for (int i = 0; i < 100; ++i) c = matmul(c, row(k, i)) + row(b, i);
  CHECK(allclose(y, c, 1e-4f));
  CHECK(allclose(DenseStack().apply(v, x), y, 1e-6f));
}

// The tied autoencoder through a compact _call is in test_transform_names.cpp.

TEST_CASE("nn::map_variables(nn::Dense(4), sign in, init): init's y equals apply's y") {
  auto sign_all = [](const Tree& t) {
    return linum::detail::tree_apply(t, [](const Array& a) { return sign(a); });
  };
  auto bit_dense =
      nn::map_variables(nn::Dense(4), "params", sign_all, nn::identity_variables, {.init = true});
  Array x = ones({2, 4});
  auto [y, v] = bit_dense.init_with_output(random::key(0), x);
  Array k = v["params"]["kernel"].leaf();
  // The second (mapped) run's variables are stored, as in Flax: the signs.
  CHECK(allclose(k, sign(k)));
  CHECK(allclose(y, matmul(x, k)));
  CHECK(allclose(bit_dense.apply(v, x), y));
}

namespace {
struct HoldsJit : nn::Module<HoldsJit> {
  Array call(const Array& x) { return nn::jit(TanhMLP())(x); }
};
}  // namespace

TEST_CASE("nn::jit in a compact method: JitTanhMLP_0 holds the plain params, same values") {
  Array x = random::normal(random::key(3), {4, 5});
  auto [y, v] = HoldsJit().init_with_output(random::key(0), x);
  REQUIRE(v["params"].contains("JitTanhMLP_0"));
  CHECK(allclose(y, TanhMLP().apply(Tree::dict({{"params", v["params"]["JitTanhMLP_0"]}}), x)));
}

namespace {
// Counts how often its call runs: under nn::jit, once per trace.
struct CountedMLP : nn::Module<CountedMLP> {
  int* runs = nullptr;
  explicit CountedMLP(int* r) : runs(r) {}
  Array call(const Array& x) {
    ++*runs;
    return TanhMLP()(x);
  }
};
}  // namespace

TEST_CASE("nn::jit(Module) traces the call once per signature and mutable filter; copies share") {
  int traces = 0, eager_runs = 0;
  auto model = nn::jit(CountedMLP(&traces));
  CountedMLP plain(&eager_runs);
  Array x = random::normal(random::key(3), {4, 5});
  auto [y, v] = model.init_with_output(random::key(0), x);
  CHECK(traces == 1);
  CHECK(allclose(y, plain.apply(v, x)));
  CHECK(allclose(model.apply(v, x), y));
  CHECK(traces == 2);  // apply: params given, nothing mutable — a new signature
  Array x2 = x * 2.0f;
  CHECK(allclose(model.apply(v, x2), plain.apply(v, x2)));
  auto copy = model;
  CHECK(allclose(copy.apply(v, x2), plain.apply(v, x2)));
  CHECK(traces == 2);  // replayed, also through the copy
  // grad through the jitted module runs it inline: the eager gradient.
  auto loss = [&](auto& m) { return [&](const Tree& p) { return sum(m.apply(p, x)); }; };
  Tree g = linum::grad(loss(model))(v), g_plain = linum::grad(loss(plain))(v);
  auto gl = pytree::tree_leaves<Array>(g), pl = pytree::tree_leaves<Array>(g_plain);
  REQUIRE(gl.size() == pl.size());
  for (std::size_t i = 0; i < gl.size(); ++i) CHECK(allclose(gl[i], pl[i]));
}

namespace {
// nn::jit of a module that uses a sibling bound in its parent (module_fields): both scopes lift.
struct SharedDense : nn::Module<SharedDense> {
  Array call(const Array& x) { return nn::Dense(3).named("d")(x); }
};
struct UsesShared : nn::Module<UsesShared> {
  SharedDense shared;
  int* runs = nullptr;
  UsesShared(SharedDense s, int* r) : shared(std::move(s)), runs(r) {}
  auto module_fields() { return std::tie(shared); }
  Array call(const Array& x) {
    ++*runs;
    return tanh(shared(x));
  }
};
struct HoldsShared : nn::Module<HoldsShared> {
  int* runs = nullptr;
  SharedDense s;
  std::optional<nn::Jit<UsesShared>> user;
  explicit HoldsShared(int* r) : runs(r) {}
  void setup() override {
    submodule("shared", s);
    user.emplace(nn::jit(UsesShared(s, runs)));
    submodule("user", *user);
  }
  Array call(const Array& x) {
    Array a = (*user)(x);  // at init this call creates the shared Dense's params
    Array b = (*user)(x * 2.0f);
    return a + b + s(x);
  }
};
}  // namespace

TEST_CASE("nn::jit of a module holding a sibling lifts both scopes; calls replay per signature") {
  int traces = 0;
  HoldsShared model(&traces);
  Array x = random::normal(random::key(1), {2, 4});
  auto [y, v] = model.init_with_output(random::key(0), x);
  CHECK(v["params"].as_dict().size() == 1);  // one copy of the Dense, under 'shared'
  Array k = v["params"]["shared"]["d"]["kernel"].leaf(),
        b = v["params"]["shared"]["d"]["bias"].leaf();
  auto expect = [&](const Array& in) {
    Array h1 = matmul(in, k) + b, h2 = matmul(in * 2.0f, k) + b;
    return tanh(h1) + tanh(h2) + h1;
  };
  CHECK(allclose(y, expect(x)));
  const int after_init = traces;
  CHECK(after_init == 2);  // the first call creates the params: the second is a new signature
  CHECK(allclose(model.apply(v, x), expect(x)));
  CHECK(traces == after_init + 1);  // apply: one trace, the second call replays it
  Array x3 = x * 3.0f;
  CHECK(allclose(model.apply(v, x3), expect(x3)));
}

TEST_CASE("jit of a module train step (apply, value_and_grad, adam) equals eager for 10 steps") {
  TanhMLP model;
  Array x = random::normal(random::key(3), {8, 5}), y = random::normal(random::key(4), {8, 2});
  const Tree init = model.init(random::key(0), x);
  auto tx = optim::adam(1e-2);
  using State = decltype(tx.init(init));
  auto loss = [&](const Tree& p, const Array& xb, const Array& yb) {
    return mean(square(model.apply(p, xb) - yb));
  };
  auto step = [&](const Tree& p, const State& s, const Array& xb, const Array& yb) {
    auto [l, g] = value_and_grad(loss)(p, xb, yb);
    auto [u, next] = tx.update(g, s, p);
    return std::make_tuple(optim::apply_updates(p, u), next, l);
  };
  auto jstep = jit(step);
  Tree pe = init, pj = init;
  State se = tx.init(init), sj = tx.init(init);
  for (int i = 0; i < 10; ++i) {
    Array xb = x * (1.0f + 0.1f * static_cast<float>(i));
    auto [p1, s1, l1] = step(pe, se, xb, y);
    auto [p2, s2, l2] = jstep(pj, sj, xb, y);
    CHECK(all(equal(l1, l2)).item<bool>());
    pe = p1, se = s1, pj = p2, sj = s2;
  }
  auto le = pytree::tree_leaves<Array>(pe), lj = pytree::tree_leaves<Array>(pj);
  REQUIRE(le.size() == lj.size());
  for (std::size_t i = 0; i < le.size(); ++i) CHECK(all(equal(le[i], lj[i])).item<bool>());
  CHECK(jstep.trace_count() == 1);
  CHECK_FALSE(all(equal(le[0], pytree::tree_leaves<Array>(init)[0])).item<bool>());  // it trained
}

namespace {
struct WhileFoo : nn::Module<WhileFoo> {
  Array call() {
    auto cond_fn = [](WhileFoo&, const Array& c) { return less(c, Array(10.0f)); };
    auto body_fn = [](WhileFoo& mdl, const Array& c) {
      mdl.make_rng("random");
      return Array(c + 1.0f);
    };
    return nn::while_loop(cond_fn, body_fn, *this, zeros({}),
                          {.split_rngs = {{"params", false}, {lift::DenyList("params"), true}}});
  }
};
}  // namespace

TEST_CASE("nn::while_loop with make_rng in the body counts to 10") {
  Array y = WhileFoo().apply(Tree::dict(), lift::Rngs{{"random", random::key(0)}});
  CHECK(y.item<float>() == 10.0f);
}

namespace {
struct SwitchFoo : nn::Module<SwitchFoo> {
  Array call(const Array& x, const Array& index) {
    for (const char* c : {"a_count", "b_count", "c_count"})
      variable("state", c, [] { return Array(0); });
    auto counted = [](const char* name, float s) {
      return [name, s](SwitchFoo& mdl, const Array& x) {
        auto v = mdl.variable("state", name);
        v.set(Tree(v.value() + 1));
        return Array(nn::Dense(2).named("dense")(x) * s);
      };
    };
    std::vector<std::function<Array(SwitchFoo&, const Array&)>> branches{
        counted("a_count", 1.0f), counted("b_count", -1.0f), counted("c_count", 1.0f)};
    return nn::switch_(index, branches, *this, x);
  }
};
std::vector<int> counts(const Tree& state) {
  std::vector<int> out;
  for (const char* c : {"a_count", "b_count", "c_count"})
    out.push_back(state[c].leaf().item<int>());
  return out;
}
}  // namespace

TEST_CASE("nn::switch_ counts the taken branch; the branches share 'dense'") {
  Array x = ones({1, 3});
  auto [y1, v] = SwitchFoo().init_with_output(random::key(0), x, Array(0));
  CHECK(counts(v["state"]) == std::vector<int>{1, 0, 0});
  Tree vars = v;
  auto [y2, s2] = SwitchFoo().apply(vars, x, Array(1), {.mutable_ = "state"});
  CHECK(counts(s2["state"]) == std::vector<int>{1, 1, 0});
  CHECK(allclose(y1, -y2));
  vars["state"] = s2["state"];
  auto [y3, s3] = SwitchFoo().apply(vars, x, Array(2), {.mutable_ = "state"});
  CHECK(counts(s3["state"]) == std::vector<int>{1, 1, 1});
  CHECK(allclose(y1, y3));
  Array k = v["params"]["dense"]["kernel"].leaf();
  CHECK(allclose(y1, matmul(x, k) + v["params"]["dense"]["bias"].leaf()));
}

namespace {
struct CondFoo : nn::Module<CondFoo> {
  Array call(const Array& x, const Array& pred) {
    return nn::cond(
        pred, [](CondFoo&, const Array& x) { return nn::Dense(2).named("dense")(x); },
        [](CondFoo&, const Array& x) { return Array(-nn::Dense(2).named("dense")(x)); }, *this, x);
  }
};
}  // namespace

TEST_CASE("nn::cond runs the chosen branch over shared params") {
  Array x = random::normal(random::key(1), {2, 3});
  auto [yt, v] = CondFoo().init_with_output(random::key(0), x, Array(true));
  Array yf = CondFoo().apply(v, x, Array(false));
  CHECK(allclose(yt, -yf));
  CHECK(allclose(yt, nn::Dense(2).apply(Tree::dict({{"params", v["params"]["dense"]}}), x)));
}

namespace {
// nn.custom_vjp over a module: the params' cotangents are the signs of the true ones.
struct SignGradDense : nn::Module<SignGradDense> {
  Array call(const Array& x) {
    auto f = [](SignGradDense&, const Array& x) { return nn::Dense(3).named("d")(x); };
    auto fwd = [](SignGradDense& mdl, const Array& x) {
      Array y = nn::Dense(3).named("d")(x);
      return std::make_pair(y, std::make_pair(mdl.variables()["params"]["d"], x));
    };
    auto bwd = [](const std::pair<Tree, Array>& res, const Array& g) {
      const Tree& p = res.first;
      auto [y, pb] = linum::vjp(
          [](const Array& k, const Array& b, const Array& x) { return matmul(x, k) + b; },
          p["kernel"].leaf(), p["bias"].leaf(), res.second);
      auto [gk, gb, gx] = pb(g);
      Tree vt = Tree::dict(
          {{"params",
            Tree::dict({{"d", Tree::dict({{"kernel", sign(gk)}, {"bias", sign(gb)}})}})}});
      return std::make_tuple(vt, gx);
    };
    return nn::custom_vjp(f, fwd, bwd)(*this, x);
  }
};
}  // namespace

TEST_CASE("nn::custom_vjp: plain value, param grads are the signs of the true grads") {
  Array x = random::normal(random::key(1), {2, 4});
  auto [y, v] = SignGradDense().init_with_output(random::key(0), x);
  Tree p = Tree::dict({{"params", v["params"]}});
  Tree dp = Tree::dict({{"params", v["params"]["d"]}});
  CHECK(allclose(y, nn::Dense(3).apply(dp, x)));
  Tree g = linum::grad([&](const Tree& p) { return sum(square(SignGradDense().apply(p, x))); })(p);
  Tree gt = linum::grad([&](const Tree& p) { return sum(square(nn::Dense(3).apply(p, x))); })(dp);
  CHECK(allclose(g["params"]["d"]["kernel"].leaf(), sign(gt["params"]["kernel"].leaf())));
  CHECK(allclose(g["params"]["d"]["bias"].leaf(), sign(gt["params"]["bias"].leaf())));
}

namespace {
// Per-branch params, created by running every branch once while params are mutable.
struct MultiHeadSwitch : nn::Module<MultiHeadSwitch> {
  nn::Sequential heads_0{{nn::Dense(10), nn::Dense(7), nn::Dense(5)}};
  nn::Sequential heads_1{{nn::Dense(11), nn::Dense(5)}};
  nn::Dense heads_2{5};
  void setup() override {
    submodule("heads_0", heads_0);
    submodule("heads_1", heads_1);
    submodule("heads_2", heads_2);
  }
  Array call(const Array& x, const Array& index) {
    using Branch = std::function<Array(MultiHeadSwitch&, const Array&)>;
    std::vector<Branch> branches;
    for (int i = 0; i < 3; ++i) {
      const std::string name = std::to_string(i) + "_count";
      branches.push_back([i, name](MultiHeadSwitch& mdl, const Array& x) {
        auto v = mdl.variable("state", name, [] { return Array(-1); });
        v.set(Tree(v.value() + 1));
        if (i == 0) return mdl.heads_0(x);
        if (i == 1) return mdl.heads_1(x);
        return mdl.heads_2(x);
      });
    }
    if (is_mutable_collection("params"))
      for (auto& branch : branches) branch(*this, x);
    return nn::switch_(index, branches, *this, x);
  }
};
std::vector<int> head_counts(const Tree& state) {
  return {state["0_count"].leaf().item<int>(), state["1_count"].leaf().item<int>(),
          state["2_count"].leaf().item<int>()};
}
}  // namespace

TEST_CASE("nn::switch_ over heads of different structure, all run once at init") {
  Array x = random::normal(random::key(1), {1, 3});
  auto [y0, v] = MultiHeadSwitch().init_with_output(random::key(0), x, Array(0));
  CHECK(head_counts(v["state"]) == std::vector<int>{1, 0, 0});
  const Tree& p = v["params"];
  CHECK(p["heads_0"]["layers_0"]["kernel"].leaf().shape() == Shape{3, 10});
  CHECK(p["heads_0"]["layers_0"]["bias"].leaf().shape() == Shape{10});
  CHECK(p["heads_0"]["layers_1"]["kernel"].leaf().shape() == Shape{10, 7});
  CHECK(p["heads_0"]["layers_2"]["kernel"].leaf().shape() == Shape{7, 5});
  CHECK(p["heads_0"]["layers_2"]["bias"].leaf().shape() == Shape{5});
  CHECK(p["heads_1"]["layers_0"]["kernel"].leaf().shape() == Shape{3, 11});
  CHECK(p["heads_1"]["layers_1"]["kernel"].leaf().shape() == Shape{11, 5});
  CHECK(p["heads_2"]["kernel"].leaf().shape() == Shape{3, 5});
  CHECK(p["heads_2"]["bias"].leaf().shape() == Shape{5});
  auto [y1, s1] = MultiHeadSwitch().apply(v, x, Array(1), {.mutable_ = "state"});
  CHECK(head_counts(s1["state"]) == std::vector<int>{1, 1, 0});
  Tree vars = v;
  vars["state"] = s1["state"];
  auto [y2, s2] = MultiHeadSwitch().apply(vars, x, Array(2), {.mutable_ = "state"});
  CHECK(head_counts(s2["state"]) == std::vector<int>{1, 1, 1});
  CHECK(allclose(y2, nn::Dense(5).apply(Tree::dict({{"params", p["heads_2"]}}), x)));
  Array h = nn::Dense(11).apply(Tree::dict({{"params", p["heads_1"]["layers_0"]}}), x);
  CHECK(allclose(y1, nn::Dense(5).apply(Tree::dict({{"params", p["heads_1"]["layers_1"]}}), h)));
}

}  // namespace test_transforms
