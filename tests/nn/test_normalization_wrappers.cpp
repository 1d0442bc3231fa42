// SpectralNorm and WeightNorm (flax/linen/normalization.py): Flax's variable trees (names,
// shapes, dtypes, where the wrapped layer's params stay), init values from the rng streams Flax
// draws them from, outputs against explicit double-precision loops (the algorithms of Flax's
// source redone by hand) and numpy's SVD, gradients, jit, vmap and errors.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include <linum/linum.hpp>
#include <linum/nn/nn.hpp>

#include "../autodiff/check_grads.hpp"
#include "nn_testing.hpp"

namespace test_normalization_wrappers {

using namespace linum;
using lift::Filter;
using testing::allclose;
using testing::shape_of;
using testing::sorted_keys;
using Keys = std::vector<std::string>;

namespace {

std::vector<double> values(const Array& a) {
  Array c = astype(a, float64);
  return {c.data<double>(), c.data<double>() + c.size()};
}
Array from(const std::vector<double>& v, const Shape& s, DType d = float32) {
  return astype(array(v, s), d);
}
bool same(const Array& a, const Array& b) {
  return a.shape() == b.shape() && a.dtype() == b.dtype() && all(equal(a, b)).item<bool>();
}
Tree params_of(Tree p) { return Tree{{"params", std::move(p)}}; }

// ---- by-hand references ----

// Flax's SpectralNorm power iteration on W (m, n), row-major, from u (n): v = l2(W u),
// u = l2(W^T v), `steps` times (l2(z) = z / sqrt(|z|^2 + eps)); sigma = v^T W u.
struct PowerIteration {
  std::vector<double> u, v;
  double sigma;
};
PowerIteration power_iteration(const std::vector<double>& W, int m, int n, std::vector<double> u,
                               int steps, double eps = 1e-12) {
  std::vector<double> v(m);
  auto l2 = [&](std::vector<double>& z) {
    double s = 0;
    for (double e : z) s += e * e;
    for (double& e : z) e /= std::sqrt(s + eps);
  };
  for (int s = 0; s < steps; ++s) {
    for (int i = 0; i < m; ++i) {
      v[i] = 0;
      for (int j = 0; j < n; ++j) v[i] += W[i * n + j] * u[j];
    }
    l2(v);
    for (int j = 0; j < n; ++j) {
      u[j] = 0;
      for (int i = 0; i < m; ++i) u[j] += W[i * n + j] * v[i];
    }
    l2(u);
  }
  double sigma = 0;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) sigma += v[i] * W[i * n + j] * u[j];
  return {u, v, sigma};
}

// x (B, K) @ W (K, F) + b, in double.
std::vector<double> dense_ref(const std::vector<double>& x, int B, int K,
                              const std::vector<double>& W, int F, const std::vector<double>& b) {
  std::vector<double> y(static_cast<std::size_t>(B * F));
  for (int r = 0; r < B; ++r)
    for (int f = 0; f < F; ++f) {
      double s = b.empty() ? 0.0 : b[f];
      for (int k = 0; k < K; ++k) s += x[r * K + k] * W[k * F + f];
      y[r * F + f] = s;
    }
  return y;
}

void check_close(const std::vector<double>& a, const std::vector<double>& b, double tol) {
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) CHECK(a[i] == doctest::Approx(b[i]).epsilon(tol));
}

// A (3, 4) matrix; numpy.linalg.svd(W, compute_uv=False) = [2.59174528, 1.86088654, 1.00496652].
const std::vector<double> kW34 = {0.5, -1.2, 0.3, 2.0, 1.1, 0.4, -0.7, 0.2, -0.6, 0.9, 1.5, -0.3};
constexpr double kW34Sigma = 2.59174528;

// ---- modules of Flax's docstring examples ----

// nn.SpectralNorm's example: only the second Dense is spectral-normalized.
struct SNFoo : nn::Module<SNFoo> {
  Array call(const Array& x, bool train) {
    Array h = nn::Dense(3)(x);
    h = nn::SpectralNorm(nn::Dense(4))(h, train);
    return nn::Dense(5)(h);
  }
};
// The same layers without the wrapper: the raw params Flax's init draws at the same paths.
struct PlainFoo : nn::Module<PlainFoo> {
  Array call(const Array& x) {
    Array h = nn::Dense(3)(x);  // one statement each: C++ builds a callee before its argument
    h = nn::Dense(4)(h);
    return nn::Dense(5)(h);
  }
};

// A Dense named layer_instance: the params SpectralNorm's adopted layer draws.
struct NamedChild : nn::Module<NamedChild> {
  Array call(const Array& x) { return nn::Dense({.features = 4, .name = "layer_instance"})(x); }
};

// WeightNorm(Dense(4)) with a random scale_init, inside a module (its child WeightNorm_0).
struct ScaledWN : nn::Module<ScaledWN> {
  Array call(const Array& x) {
    return nn::WeightNorm(nn::Dense(4),
                          {.scale_init = nn::initializers::normal(1.0), .variable_filter = {}})(x);
  }
};

// A named layer built in a compact method keeps its name in the wrapper's paths.
struct SNNamed : nn::Module<SNNamed> {
  Array call(const Array& x) {
    return nn::SpectralNorm(nn::Dense({.features = 4, .name = "proj"}))(x, false);
  }
};

// nn.WeightNorm's example (Baz, Bar, Foo).
struct Baz : nn::Module<Baz> {
  Array call(const Array& x) { return nn::Dense(2)(x); }
};
struct Bar : nn::Module<Bar> {
  Array call(const Array& x) {
    Array h = Baz()(x);
    h = nn::Dense(3)(h);
    h = Baz()(h);
    return nn::Dense(3)(h);
  }
};
struct WNFoo : nn::Module<WNFoo> {
  Array call(const Array& x) {
    Array h = nn::Dense(3)(x);
    h = nn::WeightNorm(nn::Dense(4), {.variable_filter = {}})(h);
    h = nn::Dense(5)(h);
    return nn::WeightNorm(Bar(), {.variable_filter = {"kernel", "Baz"}})(h);
  }
};

}  // namespace

// ================================ SpectralNorm ===================================================

TEST_CASE(
    "SpectralNorm, Flax's example: batch_stats SpectralNorm_0/Dense_1/kernel/{u, sigma}, "
    "params stay at Dense_1, u from the module's first 'params' draw") {
  Array x = ones({1, 2});
  auto [y, v] = SNFoo().init_with_output(random::key(0), x, false);
  CHECK(sorted_keys(v) == Keys{"batch_stats", "params"});
  CHECK(sorted_keys(v["batch_stats"]) == Keys{"SpectralNorm_0"});
  const Tree& st = v["batch_stats"]["SpectralNorm_0"];
  CHECK(sorted_keys(st) == Keys{"Dense_1/kernel/sigma", "Dense_1/kernel/u"});
  CHECK(shape_of(st["Dense_1/kernel/u"]) == Shape{1, 4});
  CHECK(shape_of(st["Dense_1/kernel/sigma"]) == Shape{});
  CHECK(st["Dense_1/kernel/u"].leaf().dtype() == float32);
  CHECK(st["Dense_1/kernel/sigma"].leaf().dtype() == float32);
  CHECK(sorted_keys(v["params"]) == Keys{"Dense_0", "Dense_1", "Dense_2"});
  CHECK(shape_of(v["params"]["Dense_1"]["kernel"]) == Shape{3, 4});
  CHECK(shape_of(v["params"]["Dense_1"]["bias"]) == Shape{4});
  // u = jax.random.normal(make_rng('params'), (1, 4)) in scope SpectralNorm_0: Flax's LazyRng
  // folds in sha1(b"SpectralNorm_0" + b"\x01")[:4] as a big-endian uint32 = 2608917977
  // (hashlib, Flax's _fold_in_static with its default flax_fix_rng_separator = False).
  const Array u0 = random::normal(random::fold_in(random::key(0), 2608917977LL), {1, 4});
  CHECK(same(st["Dense_1/kernel/u"].leaf(), u0));
  // update_stats = false during init: sigma keeps its initial 1.
  CHECK(same(st["Dense_1/kernel/sigma"].leaf(), ones({})));
  // The wrapped layer's params are drawn as without the wrapper; as Flax's map_variables(init=
  // True) stores what the layer saw, Dense_1's kernel is the raw kernel over one power iteration's
  // sigma; the other layers are untouched.
  Tree plain = PlainFoo().init(random::key(0), x);
  for (const char* d : {"Dense_0", "Dense_2"})
    CHECK(same(v["params"][d]["kernel"].leaf(), plain["params"][d]["kernel"].leaf()));
  const Array raw = plain["params"]["Dense_1"]["kernel"].leaf();
  const PowerIteration pi = power_iteration(values(raw), 3, 4, values(u0), 1);
  check_close(values(v["params"]["Dense_1"]["kernel"].leaf()),
              values(raw / static_cast<float>(pi.sigma)), 1e-5);
  // Apply sees that kernel and normalizes it again: its sigma from the same u is 1, so the output
  // is init's.
  CHECK(allclose(SNFoo().apply(v, x, false), y, 1e-5f));
}

TEST_CASE("SpectralNorm at the root adopts the layer as its field layer_instance") {
  Array x = random::normal(random::key(2), {2, 3});
  nn::SpectralNorm sn(nn::Dense(4));
  Tree v = sn.init(random::key(0), x, false);
  CHECK(sorted_keys(v["params"]) == Keys{"layer_instance"});
  CHECK(sorted_keys(v["params"]["layer_instance"]) == Keys{"bias", "kernel"});
  CHECK(sorted_keys(v["batch_stats"]) ==
        Keys{"layer_instance/kernel/sigma", "layer_instance/kernel/u"});
  // The root's first draw: sha1(b"\x01")[:4] = 3213575472.
  CHECK(same(v["batch_stats"]["layer_instance/kernel/u"].leaf(),
             random::normal(random::fold_in(random::key(0), 3213575472LL), {1, 4})));
  // The adopted layer draws its params in its own scope "layer_instance" (as a child of that name
  // would); the stored kernel is that raw kernel over one power iteration's sigma.
  const Array raw =
      NamedChild().init(random::key(0), x)["params"]["layer_instance"]["kernel"].leaf();
  const PowerIteration pi = power_iteration(
      values(raw), 3, 4, values(v["batch_stats"]["layer_instance/kernel/u"].leaf()), 1);
  check_close(values(v["params"]["layer_instance"]["kernel"].leaf()),
              values(raw / static_cast<float>(pi.sigma)), 1e-5);
  // The prototype stays unbound for the next init. A name given to a layer built outside any
  // module gives way to the field's, as Flax's adoption does by default
  // (flax_preserve_adopted_names = False).
  CHECK_FALSE(sn.layer_instance().is_bound());
  Tree vn =
      nn::SpectralNorm(nn::Dense({.features = 4, .name = "proj"})).init(random::key(0), x, false);
  CHECK(sorted_keys(vn["batch_stats"]) ==
        Keys{"layer_instance/kernel/sigma", "layer_instance/kernel/u"});
  CHECK(sorted_keys(vn["params"]) == Keys{"layer_instance"});
  Tree vp = SNNamed().init(random::key(0), x);
  CHECK(sorted_keys(vp["params"]) == Keys{"proj"});
  CHECK(sorted_keys(vp["batch_stats"]["SpectralNorm_0"]) ==
        Keys{"proj/kernel/sigma", "proj/kernel/u"});
  // collection_name moves the state; n_steps < 1 keeps none and leaves the kernel as it is.
  Tree vc = nn::SpectralNorm(nn::Dense(4), {.collection_name = "spectral"})
                .init(random::key(0), x, false);
  CHECK(sorted_keys(vc) == Keys{"params", "spectral"});
  Tree v0 = nn::SpectralNorm(nn::Dense(4), {.n_steps = 0}).init(random::key(0), x, false);
  CHECK(sorted_keys(v0) == Keys{"params"});
}

TEST_CASE(
    "SpectralNorm: the output is the layer with kernel / sigma; update_stats stores u and "
    "sigma, false leaves them; many steps give numpy's largest singular value") {
  const Array W = from(kW34, {3, 4}), b = array({0.1f, -0.2f, 0.3f, 0.0f});
  const Array u_init = random::normal(random::key(11), {1, 4});
  auto vars = [&](const Array& u, const Array& sigma) {
    return Tree{{"params", Tree{{"layer_instance", Tree{{"kernel", W}, {"bias", b}}}}},
                {"batch_stats",
                 Tree{{"layer_instance/kernel/u", u}, {"layer_instance/kernel/sigma", sigma}}}};
  };
  Tree v = vars(u_init, ones({}));
  Array x = random::normal(random::key(12), {2, 3});
  nn::SpectralNorm sn(nn::Dense(4));
  // One step from u: the by-hand power iteration, y = x (W / sigma) + b.
  const PowerIteration pi = power_iteration(kW34, 3, 4, values(u_init), 1);
  std::vector<double> Wn(kW34);
  for (double& e : Wn) e /= pi.sigma;
  auto [y, state] = sn.apply(v, x, true, {.mutable_ = Filter{"batch_stats"}});
  check_close(values(y), dense_ref(values(x), 2, 3, Wn, 4, values(b)), 1e-5);
  check_close(values(state["batch_stats"]["layer_instance/kernel/u"].leaf()), pi.u, 1e-5);
  CHECK(state["batch_stats"]["layer_instance/kernel/sigma"].leaf().item<float>() ==
        doctest::Approx(pi.sigma).epsilon(1e-5));
  // update_stats = false: the same output, the state as it was.
  auto [y2, state2] = sn.apply(v, x, false, {.mutable_ = Filter{"batch_stats"}});
  CHECK(allclose(y2, y, 1e-6f));
  CHECK(same(state2["batch_stats"]["layer_instance/kernel/u"].leaf(), u_init));
  CHECK(same(state2["batch_stats"]["layer_instance/kernel/sigma"].leaf(), ones({})));
  // Feeding the state back: sigma converges to the largest singular value (numpy's SVD).
  Tree cur = v;
  for (int i = 0; i < 40; ++i) {
    Tree si = sn.apply(cur, x, true, {.mutable_ = Filter{"batch_stats"}}).second;
    cur = vars(si["batch_stats"]["layer_instance/kernel/u"].leaf(),
               si["batch_stats"]["layer_instance/kernel/sigma"].leaf());
  }
  CHECK(cur["batch_stats"]["layer_instance/kernel/sigma"].leaf().item<float>() ==
        doctest::Approx(kW34Sigma).epsilon(1e-5));
  // n_steps = 40 in one call reaches the same.
  auto [y40, s40] = nn::SpectralNorm(nn::Dense(4), {.n_steps = 40})
                        .apply(v, x, true, {.mutable_ = Filter{"batch_stats"}});
  CHECK(s40["batch_stats"]["layer_instance/kernel/sigma"].leaf().item<float>() ==
        doctest::Approx(kW34Sigma).epsilon(1e-5));
  std::vector<double> Ws(kW34);
  for (double& e : Ws) e /= kW34Sigma;
  check_close(values(y40), dense_ref(values(x), 2, 3, Ws, 4, values(b)), 1e-4);
}

TEST_CASE("SpectralNorm: a rank-4 Conv kernel is a (-1, out) matrix; error_on_non_matrix") {
  // kernel[i] = cos(0.9 i^2 + 0.2), HWIO (2, 2, 2, 3); numpy.linalg.svd(kernel.reshape(-1, 3),
  // compute_uv=False)[0] = 2.11245922.
  std::vector<double> k(24);
  for (int i = 0; i < 24; ++i) k[i] = std::cos(0.9 * i * i + 0.2);
  const Array K = from(k, {2, 2, 2, 3}), bias = zeros({3});
  nn::SpectralNorm sn(nn::Conv({.features = 3, .kernel_size = {2, 2}}), {.n_steps = 200});
  Array x = random::normal(random::key(13), {1, 4, 4, 2});
  Tree init = sn.init(random::key(0), x, false);
  CHECK(shape_of(init["params"]["layer_instance"]["kernel"]) == Shape{2, 2, 2, 3});
  CHECK(shape_of(init["batch_stats"]["layer_instance/kernel/u"]) == Shape{1, 3});
  Tree v{{"params", Tree{{"layer_instance", Tree{{"kernel", K}, {"bias", bias}}}}},
         {"batch_stats", init["batch_stats"]}};
  auto [y, s] = sn.apply(v, x, true, {.mutable_ = Filter{"batch_stats"}});
  CHECK(s["batch_stats"]["layer_instance/kernel/sigma"].leaf().item<float>() ==
        doctest::Approx(2.11245922).epsilon(1e-5));
  Array expected = nn::Conv({.features = 3, .kernel_size = {2, 2}})
                       .apply(params_of(Tree{{"kernel", K / 2.11245922f}, {"bias", bias}}), x);
  CHECK(allclose(y, expected, 1e-4f));
  CHECK_THROWS_WITH_AS(
      nn::SpectralNorm(nn::Conv({.features = 3, .kernel_size = {2, 2}}),
                       {.error_on_non_matrix = true})
          .init(random::key(0), x, false),
      doctest::Contains("SpectralNorm: error_on_non_matrix is true, so every variable must have "
                        "rank 2 at most, but \"layer_instance/kernel\" has rank 4"),
      ValueError);
}

TEST_CASE("SpectralNorm: gradients hold u and v constant (stop_gradient), as Flax") {
  // With x = I and no bias the output is W / sigma; for L = sum(G * W / sigma) with u, v held
  // constant, dL/dW = G / sigma - sum(G * W) / sigma^2 * v u^T (u, v after one step, by hand).
  const Array W = from(kW34, {3, 4}, float64);
  const Array u_init = astype(random::normal(random::key(14), {1, 4}), float64);
  const Array G = astype(random::normal(random::key(15), {3, 4}), float64);
  nn::SpectralNorm sn(nn::Dense({.features = 4, .use_bias = false, .param_dtype = float64}),
                      {.param_dtype = float64});
  auto loss = [&](const Array& w) {
    Tree v{{"params", Tree{{"layer_instance", Tree{{"kernel", w}}}}},
           {"batch_stats",
            Tree{{"layer_instance/kernel/u", u_init}, {"layer_instance/kernel/sigma", ones({})}}}};
    return sum(sn.apply(v, eye(3, -1, 0, float64), false) * G);
  };
  const Array g = linum::grad(loss)(W);
  const PowerIteration pi = power_iteration(kW34, 3, 4, values(u_init), 1);
  const std::vector<double> gv = values(G);
  double gw = 0;
  for (std::size_t i = 0; i < kW34.size(); ++i) gw += gv[i] * kW34[i];
  std::vector<double> expected(12);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j)
      expected[i * 4 + j] =
          gv[i * 4 + j] / pi.sigma - gw / (pi.sigma * pi.sigma) * pi.v[i] * pi.u[j];
  check_close(values(g), expected, 1e-9);
  // Converged (u, v the top singular pair) the held-constant gradient is the true one: finite
  // differences agree.
  nn::SpectralNorm converged(nn::Dense({.features = 4, .param_dtype = float64}),
                             {.n_steps = 300, .param_dtype = float64});
  Array x = astype(random::normal(random::key(16), {2, 3}), float64);
  testing::check_grads(
      [&](const Arrays& a) {
        Tree v{{"params", Tree{{"layer_instance", Tree{{"kernel", a[0]}, {"bias", a[1]}}}}},
               {"batch_stats", Tree{{"layer_instance/kernel/u", u_init},
                                    {"layer_instance/kernel/sigma", ones(Shape{}, float64)}}}};
        return converged.apply(v, a[2], false);
      },
      {W, astype(array({0.1f, 0.2f, -0.3f, 0.4f}), float64), x}, 1e-6, 1e-5);
}

TEST_CASE("SpectralNorm: jit and vmap of apply equal eager") {
  Array x = random::normal(random::key(17), {4, 2});
  Tree v = SNFoo().init(random::key(0), x, false);
  auto eager = SNFoo().apply(v, x, true, {.mutable_ = Filter{"batch_stats"}});
  auto jitted = linum::jit([](const Tree& vars, const Array& in) {
    auto [y, s] = SNFoo().apply(vars, in, true, {.mutable_ = Filter{"batch_stats"}});
    return Tree::tuple({Tree(y), s});
  });
  Tree out = jitted(v, x);
  CHECK(allclose(out.items()[0].leaf(), eager.first, 1e-6f));
  const Tree& js = out.items()[1]["batch_stats"]["SpectralNorm_0"];
  const Tree& es = eager.second["batch_stats"]["SpectralNorm_0"];
  CHECK(allclose(js["Dense_1/kernel/u"].leaf(), es["Dense_1/kernel/u"].leaf(), 1e-6f));
  CHECK(allclose(js["Dense_1/kernel/sigma"].leaf(), es["Dense_1/kernel/sigma"].leaf(), 1e-6f));
  // vmap over examples (the variables shared): each row as its own batch of one.
  Array ys = linum::vmap([&](const Array& xi) { return SNFoo().apply(v, xi, false); })(x);
  for (std::int64_t i = 0; i < 4; ++i) CHECK(allclose(ys[i], SNFoo().apply(v, x[i], false), 1e-6f));
}

TEST_CASE("SpectralNorm: errors") {
  Array x = ones({1, 2});
  Tree v = SNFoo().init(random::key(0), x, false);
  // update_stats needs its collection mutable (Flax's ModifyScopeVariableError).
  CHECK_THROWS_AS(SNFoo().apply(v, x, true), lift::ModifyScopeVariableError);
  // Missing state in apply: u would be drawn from a 'params' rng there is none of.
  CHECK_THROWS_AS(SNFoo().apply(params_of(v["params"]), x, false), lift::InvalidRngError);
  // A stored u of the wrong shape.
  Tree bad = v;
  bad["batch_stats"]["SpectralNorm_0"]["Dense_1/kernel/u"] = Tree(ones({1, 3}));
  CHECK_THROWS_WITH_AS(SNFoo().apply(bad, x, false),
                       doctest::Contains("SpectralNorm: the stored \"Dense_1/kernel/u\""),
                       ValueError);
}

// ================================ WeightNorm =====================================================

TEST_CASE(
    "WeightNorm, Flax's example: the scale params and their paths, the wrapped layers' "
    "params where they belong") {
  Array x = ones({1, 2});
  Tree v = WNFoo().init(random::key(0), x);
  CHECK(sorted_keys(v) == Keys{"params"});
  const Tree& p = v["params"];
  CHECK(sorted_keys(p) ==
        Keys{"Bar_0", "Dense_0", "Dense_1", "Dense_2", "WeightNorm_0", "WeightNorm_1"});
  CHECK(sorted_keys(p["WeightNorm_0"]) == Keys{"Dense_1/bias/scale", "Dense_1/kernel/scale"});
  CHECK(shape_of(p["WeightNorm_0"]["Dense_1/bias/scale"]) == Shape{4});
  CHECK(shape_of(p["WeightNorm_0"]["Dense_1/kernel/scale"]) == Shape{4});
  CHECK(sorted_keys(p["WeightNorm_1"]) ==
        Keys{"Bar_0/Baz_0/Dense_0/bias/scale", "Bar_0/Baz_0/Dense_0/kernel/scale",
             "Bar_0/Baz_1/Dense_0/bias/scale", "Bar_0/Baz_1/Dense_0/kernel/scale",
             "Bar_0/Dense_0/kernel/scale", "Bar_0/Dense_1/kernel/scale"});
  CHECK(shape_of(p["WeightNorm_1"]["Bar_0/Baz_0/Dense_0/kernel/scale"]) == Shape{2});
  CHECK(shape_of(p["WeightNorm_1"]["Bar_0/Dense_1/kernel/scale"]) == Shape{3});
  CHECK(p["WeightNorm_1"]["Bar_0/Dense_1/kernel/scale"].leaf().dtype() == float32);
  CHECK(same(p["WeightNorm_1"]["Bar_0/Dense_1/kernel/scale"].leaf(), ones({3})));
  CHECK(sorted_keys(p["Bar_0"]) == Keys{"Baz_0", "Baz_1", "Dense_0", "Dense_1"});
  CHECK(shape_of(p["Bar_0"]["Baz_0"]["Dense_0"]["kernel"]) == Shape{5, 2});
  CHECK(shape_of(p["Bar_0"]["Baz_1"]["Dense_0"]["kernel"]) == Shape{3, 2});
  CHECK(shape_of(p["Bar_0"]["Dense_0"]["kernel"]) == Shape{2, 3});
  CHECK(shape_of(p["Dense_1"]["kernel"]) == Shape{3, 4});
  // Init stores what the layer saw (map_variables(init=True)): Dense_1's kernel with unit columns
  // and its bias normalized entrywise (sign(b) * |b| / sqrt(b^2 + eps): zeros stay 0).
  const std::vector<double> k = values(p["Dense_1"]["kernel"].leaf());
  for (int c = 0; c < 4; ++c) {
    double s = 0;
    for (int r = 0; r < 3; ++r) s += k[r * 4 + c] * k[r * 4 + c];
    CHECK(s == doctest::Approx(1.0).epsilon(1e-5));
  }
  CHECK(same(p["Dense_1"]["bias"].leaf(), zeros({4})));
  // ... so apply gives init's output (normalizing is idempotent with scale 1).
  auto [y, v2] = WNFoo().init_with_output(random::key(0), x);
  CHECK(allclose(WNFoo().apply(v2, x), y, 1e-5f));
}

TEST_CASE("WeightNorm: scale_init draws from the module's 'params' stream in sorted path order") {
  // Flax's draws in WeightNorm_0 (the root's child): 1 for Dense_1/bias/scale, 2 for
  // Dense_1/kernel/scale (tree_map_with_path visits 'bias' before 'kernel'); the keys fold in
  // sha1(b"WeightNorm_0" + bytes([i]))[:4] = 43544535 (i = 1) and 1637873949 (i = 2).
  Tree v = ScaledWN().init(random::key(0), ones({1, 3}));
  const Tree& s = v["params"]["WeightNorm_0"];
  CHECK(sorted_keys(s) == Keys{"Dense_0/bias/scale", "Dense_0/kernel/scale"});
  auto init = nn::initializers::normal(1.0);
  CHECK(
      same(s["Dense_0/bias/scale"].leaf(), init(random::fold_in(random::key(0), 43544535LL), {4})));
  CHECK(same(s["Dense_0/kernel/scale"].leaf(),
             init(random::fold_in(random::key(0), 1637873949LL), {4})));
}

TEST_CASE("WeightNorm: output is the layer with kernel / column norm * scale; feature_axes") {
  const Array W = from(kW34, {3, 4}), b = array({0.5f, -0.25f, 0.0f, 1.0f});
  const Array scale = array({2.0f, -1.0f, 0.5f, 3.0f});
  Array x = random::normal(random::key(20), {2, 3});
  Tree v = params_of(Tree{{"layer_instance", Tree{{"kernel", W}, {"bias", b}}},
                          {"layer_instance/kernel/scale", scale}});
  Array y = nn::WeightNorm(nn::Dense(4)).apply(v, x);
  // By hand: each column of W over its l2 norm (eps 1e-12 inside the rsqrt), times scale; the
  // bias is not matched by the default filter {"kernel"}.
  std::vector<double> Wn(kW34);
  const std::vector<double> sv = values(scale);
  for (int c = 0; c < 4; ++c) {
    double n2 = 0;
    for (int r = 0; r < 3; ++r) n2 += kW34[r * 4 + c] * kW34[r * 4 + c];
    for (int r = 0; r < 3; ++r) Wn[r * 4 + c] = kW34[r * 4 + c] / std::sqrt(n2 + 1e-12) * sv[c];
  }
  check_close(values(y), dense_ref(values(x), 2, 3, Wn, 4, values(b)), 1e-5);
  // feature_axes empty (Flax's None): one Frobenius norm and a scalar scale.
  Tree vn = nn::WeightNorm(nn::Dense(4), {.feature_axes = {}}).init(random::key(0), x);
  CHECK(shape_of(vn["params"]["layer_instance/kernel/scale"]) == Shape{});
  Tree v0 = params_of(Tree{{"layer_instance", Tree{{"kernel", W}, {"bias", b}}},
                           {"layer_instance/kernel/scale", array(2.0f)}});
  double fro = 0;
  for (double e : kW34) fro += e * e;
  std::vector<double> Wf(kW34);
  for (double& e : Wf) e = e / std::sqrt(fro + 1e-12) * 2.0;
  check_close(values(nn::WeightNorm(nn::Dense(4), {.feature_axes = {}}).apply(v0, x)),
              dense_ref(values(x), 2, 3, Wf, 4, values(b)), 1e-5);
  // feature_axes {0}: one norm per row of the kernel, scale (3,).
  Tree vr = nn::WeightNorm(nn::Dense(4), {.feature_axes = {0}}).init(random::key(0), x);
  CHECK(shape_of(vr["params"]["layer_instance/kernel/scale"]) == Shape{3});
  Tree vr2 = params_of(Tree{{"layer_instance", Tree{{"kernel", W}, {"bias", b}}},
                            {"layer_instance/kernel/scale", ones({3})}});
  std::vector<double> Wr(kW34);
  for (int r = 0; r < 3; ++r) {
    double n2 = 0;
    for (int c = 0; c < 4; ++c) n2 += kW34[r * 4 + c] * kW34[r * 4 + c];
    for (int c = 0; c < 4; ++c) Wr[r * 4 + c] = kW34[r * 4 + c] / std::sqrt(n2 + 1e-12);
  }
  check_close(values(nn::WeightNorm(nn::Dense(4), {.feature_axes = {0}}).apply(vr2, x)),
              dense_ref(values(x), 2, 3, Wr, 4, values(b)), 1e-5);
  // use_scale = false: no params of its own, unit columns.
  Tree vu = nn::WeightNorm(nn::Dense(4), {.use_scale = false}).init(random::key(0), x);
  CHECK(sorted_keys(vu["params"]) == Keys{"layer_instance"});
  // dtype: the layer sees a float64 kernel, so it computes in float64.
  CHECK(nn::WeightNorm(nn::Dense(4), {.dtype = float64}).apply(v, x).dtype() == float64);
}

TEST_CASE("WeightNorm: gradients against finite differences; jit and vmap equal eager") {
  const Array W = from(kW34, {3, 4}, float64);
  const Array scale = astype(array({2.0f, -1.0f, 0.5f, 3.0f}), float64);
  const Array b = astype(array({0.5f, -0.25f, 0.0f, 1.0f}), float64);
  Array x = astype(random::normal(random::key(21), {2, 3}), float64);
  nn::WeightNorm wn(nn::Dense({.features = 4, .param_dtype = float64}), {.param_dtype = float64});
  auto vars = [](const Array& w, const Array& bb, const Array& s) {
    return params_of(Tree{{"layer_instance", Tree{{"kernel", w}, {"bias", bb}}},
                          {"layer_instance/kernel/scale", s}});
  };
  testing::check_grads([&](const Arrays& a) { return wn.apply(vars(a[0], a[1], a[2]), a[3]); },
                       {W, b, scale, x});
  Tree v = vars(W, b, scale);
  Array eager = wn.apply(v, x);
  auto jitted = linum::jit([&](const Tree& vs, const Array& in) { return wn.apply(vs, in); });
  CHECK(allclose(jitted(v, x), eager, 1e-12f));
  Array ys = linum::vmap([&](const Array& xi) { return wn.apply(v, xi); })(x);
  for (std::int64_t i = 0; i < 2; ++i) CHECK(allclose(ys[i], wn.apply(v, x[i]), 1e-12f));
}

TEST_CASE("WeightNorm: errors name the layer and the variable") {
  Array x = ones({1, 3});
  CHECK_THROWS_WITH_AS(
      nn::WeightNorm(nn::Dense(4), {.feature_axes = {2}}).init(random::key(0), x),
      doctest::Contains("WeightNorm: feature axis 2 is out of range for \"layer_instance/kernel\" "
                        "of shape (3, 4)"),
      ValueError);
  CHECK_THROWS_WITH_AS(nn::WeightNorm(nn::Dense(4), {.dtype = int32}).init(random::key(0), x),
                       doctest::Contains("WeightNorm: dtype must be inexact"), ValueError);
}

}  // namespace test_normalization_wrappers
