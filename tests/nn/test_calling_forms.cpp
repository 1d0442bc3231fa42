// Every documented way of calling init / init_with_output / apply / bind (a module's, the
// function forms nn::init/apply(fn, module), lift's), with rngs as a key, a bare key or a dict,
// with a method (lambda or member pointer), mutable collections and captured intermediates; and
// braced shapes where a shape is taken.
#include <doctest/doctest.h>

#include "nn_testing.hpp"

namespace test_calling_forms {

using namespace linum;
using linum::testing::allclose;
using linum::testing::sorted_keys;
namespace init = linum::nn::initializers;

namespace {

bool same(const Array& a, const Array& b) {
  return a.shape() == b.shape() && all(equal(a, b)).item<bool>();
}

// Dense(3), a call counter in "counter", and noise from the "noise" stream when given one.
struct Noisy : nn::Module<Noisy> {
  Array call(const Array& x) {
    auto count = variable("counter", "n", [] { return Array(0); });
    if (count.is_mutable()) count.value() = count.value() + 1;
    Array y = nn::Dense(3)(x);
    if (has_rng("noise")) y = y + random::normal(make_rng("noise"), y.shape());
    return y;
  }
  Array twice(const Array& x) {
    return method("twice", [&] { return (*this)(x)*2.0f; });
  }
  Array add(const Array& x, const Array& y, const Array& z) { return (*this)(x + y + z); }
};

// Noise from the "params" stream at apply time: what a bare key's {"params": key} feeds.
struct ParamsNoise : nn::Module<ParamsNoise> {
  Array call(const Array& x) {
    Array y = nn::Dense(2)(x);
    if (!is_initializing()) y = y + random::normal(make_rng("params"), y.shape());
    return y;
  }
};

const Array x = linspace(-1.0, 1.0, 8).reshape({2, 4});
const Array key0 = random::key(0);

}  // namespace

TEST_CASE("Module::init: a key, a bare-key Rngs, Rngs and a braced dict give the same variables") {
  const Tree v = Noisy().init(key0, x);
  CHECK(sorted_keys(v) == std::vector<std::string>{"counter", "params"});
  // init's own call counts once: init makes every collection mutable, as Flax's.
  CHECK(v["counter"]["n"].leaf().item<int>() == 1);
  const Array kernel = v["params"]["Dense_0"]["kernel"].leaf();
  for (const Tree& w :
       {Noisy().init(lift::Rngs(key0), x), Noisy().init(nn::Rngs{{"params", key0}}, x),
        Noisy().init({{"params", key0}}, x)}) {
    CHECK(same(w["params"]["Dense_0"]["kernel"].leaf(), kernel));
  }
  CHECK_FALSE(same(Noisy().init(random::key(1), x)["params"]["Dense_0"]["kernel"].leaf(), kernel));
  // init_with_output's output is what apply computes from the variables it returns.
  auto [y, v2] = Noisy().init_with_output({{"params", key0}}, x);
  CHECK(allclose(y, Noisy().apply(v2, x)));
}

TEST_CASE("Module::init and apply with a method: a member pointer or nn::method, and options") {
  auto by_lambda = nn::method([](Noisy& m, const Array& a) { return m.twice(a); });
  const Tree v = Noisy().init(key0, x, &Noisy::twice);
  CHECK(same(v["params"]["Dense_0"]["kernel"].leaf(),
             Noisy().init(key0, x, by_lambda)["params"]["Dense_0"]["kernel"].leaf()));
  const Array y = Noisy().apply(v, x);
  CHECK(allclose(Noisy().apply(v, x, &Noisy::twice), y * 2.0f));
  CHECK(allclose(Noisy().apply(v, x, by_lambda), y * 2.0f));
  // init with options, with and without a method: capture_intermediates keeps them in the result.
  const Tree vi = Noisy().init(key0, x, {.capture_intermediates = true});
  CHECK(allclose(vi["intermediates"]["__call__"][0].leaf(), y));
  // (true captures __call__ outputs only: twice's inner call, not twice.)
  const Tree vm = Noisy().init(key0, x, &Noisy::twice, {.capture_intermediates = true});
  CHECK(allclose(vm["intermediates"]["__call__"][0].leaf(), y));
  CHECK_FALSE(vm["intermediates"].contains("twice"));
  auto [yo, vo] = Noisy().init_with_output(key0, x, by_lambda, {.capture_intermediates = true});
  CHECK(allclose(yo, y * 2.0f));
  CHECK(vo.contains("intermediates"));
  // Three arguments and a method before a trailing ApplyOptions (the variadic form).
  const Array z = zeros({2, 4});
  auto [ya, state] =
      Noisy().apply(v, x, z, z, &Noisy::add, nn::ApplyOptions{.mutable_ = "counter"});
  CHECK(allclose(ya, y));
  CHECK(state["counter"]["n"].leaf().item<int>() == 2);  // init's 1, then this call
}

TEST_CASE("Module::apply: rngs as a trailing Rngs, options .rngs, a bare key, with a method") {
  const Tree v = Noisy().init(key0, x);
  const Array clean = Noisy().apply(v, x);
  const Array k = random::key(7);
  const Array noisy = Noisy().apply(v, x, nn::Rngs{{"noise", k}});
  CHECK_FALSE(allclose(noisy, clean));
  auto [noisy2, none] = Noisy().apply(v, x, {.rngs = {{"noise", k}}});
  CHECK(same(noisy2, noisy));
  CHECK(none.as_dict().empty());
  // A method and a trailing Rngs together; the method's noise is the call's, doubled.
  CHECK(allclose(Noisy().apply(v, x, &Noisy::twice, nn::Rngs{{"noise", k}}), noisy * 2.0f));
  // mutable and rngs in one options struct.
  auto [noisy3, state] = Noisy().apply(v, x, {.mutable_ = "counter", .rngs = {{"noise", k}}});
  CHECK(same(noisy3, noisy));
  CHECK(state["counter"]["n"].leaf().item<int>() == 2);  // init's 1, then this call

  // rngs=key means {"params": key}, as Flax's apply (flax/linen/module.py Module.apply).
  const Tree pv = ParamsNoise().init(key0, x);
  auto [bare, s1] = ParamsNoise().apply(pv, x, {.rngs = k});
  auto [dict, s2] = ParamsNoise().apply(pv, x, {.rngs = {{"params", k}}});
  CHECK(same(bare, dict));
  CHECK(same(ParamsNoise().apply(pv, x, nn::Rngs(k)), dict));
  auto [other, s3] = ParamsNoise().apply(pv, x, {.rngs = random::key(8)});
  CHECK_FALSE(allclose(other, dict));
}

TEST_CASE("bad rngs: Flax's errors for a bare key, a dict, and bind's refusal of a bare key") {
  const Tree v = Noisy().init(key0, x);
  // A bare key of the wrong shape: Module.init/apply's InvalidRngError naming the module.
  CHECK_THROWS_WITH_AS(Noisy().init(zeros({3}), x),
                       doctest::Contains("RNGs should be of shape (2,) or PRNGKey in Module Noisy"),
                       lift::InvalidRngError);
  CHECK_THROWS_WITH_AS(Noisy().apply(v, x, {.rngs = zeros({3})}),
                       doctest::Contains("RNGs should be of shape (2,) or PRNGKey in Module Noisy"),
                       lift::InvalidRngError);
  // A dict with a bad key, in the options or trailing: flax.core.apply's ValueError.
  CHECK_THROWS_WITH_AS(Noisy().apply(v, x, nn::Rngs{{"noise", zeros({3})}}),
                       doctest::Contains("The ``rngs`` argument passed to an apply function"),
                       ValueError);
  // flax.core.bind takes only a dict (a bare key is its InvalidRngError); a dict works.
  CHECK_THROWS_WITH_AS(Noisy().bind(v, key0),
                       doctest::Contains("rngs should be a dictionary mapping strings"),
                       lift::InvalidRngError);
  CHECK_THROWS_AS(lift::bind(v, lift::Rngs(key0)), lift::InvalidRngError);
  // lift::apply reads a bare key as {"params": key}; a bad one is flax.core.apply's ValueError.
  auto fn = [](lift::Scope& s, const Array& a) {
    return a + random::normal(s.make_rng("params"), a.shape());
  };
  const Array k = random::key(3);
  CHECK(same(lift::apply(fn)(Tree::dict(), x, lift::Rngs(k)),
             lift::apply(fn)(Tree::dict(), x, lift::Rngs{{"params", k}})));
  CHECK_THROWS_WITH_AS(lift::apply(fn)(Tree::dict(), x, lift::Rngs(zeros({2}))),
                       doctest::Contains("The ``rngs`` argument passed to an apply function"),
                       ValueError);
}

TEST_CASE("Module::bind: no rngs, a dict of streams, mutable collections") {
  const Tree v = Noisy().init(key0, x);
  const Array clean = Noisy().apply(v, x);
  CHECK(allclose(Noisy().bind(v)(x), clean));
  const Array k = random::key(7);
  CHECK(same(Noisy().bind(v, {{"noise", k}})(x), Noisy().apply(v, x, nn::Rngs{{"noise", k}})));
  Noisy bound = Noisy().bind(v, {}, "counter");
  bound(x);
  bound(x);
  CHECK(bound.variables()["counter"]["n"].leaf().item<int>() == 3);  // init's 1, then 2 calls
}

TEST_CASE("nn::init / init_with_output / apply (fn, module): rngs, options, mutable") {
  auto fn = [](Noisy& m, const Array& a) { return m.twice(a); };
  const Tree v = nn::init(fn, Noisy())(key0, x);
  CHECK(same(v["params"]["Dense_0"]["kernel"].leaf(),
             Noisy().init(key0, x)["params"]["Dense_0"]["kernel"].leaf()));
  auto [y0, v0] = nn::init_with_output(fn, Noisy())(nn::Rngs{{"params", key0}}, x);
  const Array y = nn::apply(fn, Noisy())(v, x);
  CHECK(allclose(y0, y));
  CHECK(allclose(y, Noisy().apply(v, x) * 2.0f));
  // A trailing Rngs (the case that did not compile: the method went after it).
  const Array k = random::key(7);
  CHECK(same(nn::apply(fn, Noisy())(v, x, nn::Rngs{{"noise", k}}),
             Noisy().apply(v, x, &Noisy::twice, nn::Rngs{{"noise", k}})));
  // A trailing options struct, and Flax's nn.apply(fn, module, mutable=...) as options given once.
  auto [y1, s1] = nn::apply(fn, Noisy())(v, x, nn::ApplyOptions{.mutable_ = "counter"});
  CHECK(s1["counter"]["n"].leaf().item<int>() == 2);
  auto apply_counting = nn::apply(fn, Noisy(), {.mutable_ = "counter"});
  auto [y2, s2] = apply_counting(v, x, nn::Rngs{{"noise", k}});
  CHECK(allclose(y1, y));
  CHECK(same(y2, nn::apply(fn, Noisy())(v, x, nn::Rngs{{"noise", k}})));
  CHECK(s2["counter"]["n"].leaf().item<int>() == 2);
  // nn.init(fn, module, capture_intermediates=True).
  const Tree vi = nn::init(fn, Noisy(), {.capture_intermediates = true})(key0, x);
  // (fn calls twice(), so its output is twice the captured __call__ output.)
  CHECK(allclose(vi["intermediates"]["__call__"][0].leaf(), y / 2.0f));
}

TEST_CASE("braced shapes: param, variable, and a scanned cell's initialize_carry") {
  struct Braced : nn::Module<Braced> {
    Array call(const Array& a) {
      Array w = param("w", init::lecun_normal(), {a.shape(-1), 3});
      Array b = param("b", init::zeros_init(), {3});
      auto seen = variable("stats", "seen", [](const Shape& s) { return zeros(s); }, {3});
      return matmul(a, w) + b + seen.value();
    }
  };
  const Tree v = Braced().init(key0, x);
  CHECK(v["params"]["w"].leaf().shape() == Shape{4, 3});
  CHECK(v["params"]["b"].leaf().shape() == Shape{3});
  CHECK(v["stats"]["seen"].leaf().shape() == Shape{3});
  // The braced and the explicit Shape give the same draw.
  lift::Scope s = lift::bind(Tree::dict(), {{"params", key0}}, true);
  CHECK(same(
      s.param("k", init::lecun_normal(), {4, 3}),
      init::lecun_normal()(lift::Scope(Tree::dict(), {{"params", key0}}, true).make_rng("params"),
                           Shape{4, 3})));
  // nn::scan(LSTMCell)'s initialize_carry takes a braced (batch, features) as the cell's does.
  const std::int64_t B = 2, F = 4;
  auto scanned = nn::scan(nn::LSTMCell(5),
                          {.variable_broadcast = "params", .split_rngs = {{"params", false}}});
  auto [c, h] = scanned.initialize_carry(key0, {B, F});
  auto [c0, h0] = nn::LSTMCell(5).initialize_carry(key0, {B, F});
  CHECK(same(c, c0));
  CHECK(same(h, h0));
  CHECK(c.shape() == Shape{2, 5});
}

}  // namespace test_calling_forms
