// Scope: cases from Flax's tests/core/core_scope_test.py and the scope-level dense
// layer against the same computation written by hand.
#include <doctest/doctest.h>

#include <linum/lift/lift.hpp>
#include <linum/linum.hpp>
#include <linum/nn/initializers.hpp>

#include "lift_testing.hpp"

namespace test_scope {

using namespace linum;
using namespace linum::lift::testing;
namespace init = linum::nn::initializers;

namespace {
using KD = std::pair<std::uint32_t, std::uint32_t>;
KD kd(const Array& key) { return {key.data<std::uint32_t>()[0], key.data<std::uint32_t>()[1]}; }
}  // namespace

TEST_CASE("init: has_rng and the first params key") {
  auto [rng, vars] = lift::init([](lift::Scope& scope) {
    CHECK(scope.has_rng("params"));
    CHECK_FALSE(scope.has_rng("dropout"));
    return scope.make_rng("params");
  })(random::key(0));
  CHECK(kd(rng) == KD{1428664606u, 3351135085u});
  CHECK(vars.size() == 0);
}

TEST_CASE("a param of the wrong shape is a ScopeParamShapeError with Flax's message") {
  Tree vars{{"params", Tree{{"test", ones({2})}}}};
  auto f = [](lift::Scope& scope) { return scope.param("test", init::ones_init(), Shape{4}); };
  const std::string msg = error_of<lift::ScopeParamShapeError>([&] { lift::apply(f)(vars); });
  CHECK(msg.find("For parameter \"test\" in \"/\", the given initializer is expected to generate "
                 "shape (4,), but the existing parameter it received has shape (2,).") == 0);
  // A lambda initializer is checked by running it.
  auto g = [](lift::Scope& scope) {
    return scope.param("test", [](const Array&) { return zeros({4}); });
  };
  CHECK_THROWS_AS(lift::apply(g)(vars), lift::ScopeParamShapeError);
}

TEST_CASE("an extra params layer is an ApplyScopeInvalidVariablesStructureError") {
  auto f = [](lift::Scope& scope) { return scope.param("kernel", init::ones_init(), Shape{4}); };
  Tree params{{"params", Tree{{"kernel", ones({4})}}}};
  CHECK(lift::apply(f)(params).shape() == Shape{4});
  const std::string msg = error_of<lift::ApplyScopeInvalidVariablesStructureError>([&] {
    lift::apply(f)(Tree{{"params", params}});
  });
  CHECK(msg.find("but got a dict with an extra params layer") != std::string::npos);
}

TEST_CASE("writing an immutable collection is a ModifyScopeVariableError") {
  auto f = [](lift::Scope& scope) {
    scope.put_variable("state", "test", Array(123));
    return 0;
  };
  const std::string msg =
      error_of<lift::ModifyScopeVariableError>([&] { lift::init(f, "params")(random::key(0)); });
  CHECK(msg.find("Cannot update variable \"test\" in \"/\" because collection \"state\" is "
                 "immutable.") == 0);
  CHECK(msg.find("flax.errors.ModifyScopeVariableError") != std::string::npos);
}

TEST_CASE("a missing param in a non-empty params collection is ScopeParamNotFoundError") {
  auto f = [](lift::Scope& scope) {
    lift::Scope d = scope.push("dense");
    return dense(d, ones({1, 2}), 2);
  };
  const std::string msg = error_of<lift::ScopeParamNotFoundError>([&] {
    lift::apply(f)(Tree{{"params", Tree{{"abc", Array(1)}}}});
  });
  CHECK(msg.find("Could not find parameter named \"kernel\" in scope \"/dense\".") == 0);
}

TEST_CASE("valid rngs: a key is uint32[2], a batch of keys is not") {
  CHECK(lift::is_valid_rng(random::key(0)));
  CHECK(lift::is_valid_rng(random::PRNGKey(0)));
  CHECK_FALSE(lift::is_valid_rng(random::split(random::key(0), 3)));
  CHECK_FALSE(lift::is_valid_rng(zeros({2})));
  CHECK_THROWS_AS(lift::init([](lift::Scope&) { return 0; })(zeros({2})), ValueError);
  CHECK_THROWS_AS(lift::bind(Tree::dict(), {{"params", zeros({3})}}), lift::InvalidRngError);
}

TEST_CASE("child() pushes once; rewound scopes continue the child's rng counter") {
  lift::Scope root(Tree::dict(), {{"dropout", random::key(0)}});
  auto f = [](lift::Scope& scope) { return scope.make_rng("dropout"); };
  Array a = root.child(f, "f_0")();
  root = root.rewound();
  Array b = root.child(f, "f_0")();
  CHECK(kd(a) != kd(b));
  Array k = random::key(0);
  CHECK(kd(a) == kd(lift::LazyRng::create(k, {std::string("f_0"), std::uint64_t{1}}).as_jax_rng()));
  CHECK(kd(b) == kd(lift::LazyRng::create(k, {std::string("f_0"), std::uint64_t{2}}).as_jax_rng()));
}

TEST_CASE("param and variable in an empty collection are ScopeCollectionNotFound") {
  CHECK_THROWS_AS(lift::Scope().param("test", init::zeros_init(), Shape{}),
                  lift::ScopeCollectionNotFound);
  CHECK_THROWS_AS(
      lift::Scope(Tree{{"params", Tree::dict()}}).param("test", init::zeros_init(), Shape{}),
      lift::ScopeCollectionNotFound);
  CHECK_THROWS_AS(lift::Scope(Tree::dict(), {}, "state").variable("state", "test"),
                  lift::ScopeCollectionNotFound);
  lift::Scope root(Tree{{"state", Tree{{"abc", Array(1)}}}}, {}, "state");
  CHECK(root.variable("state", "abc").value().item<int>() == 1);
  CHECK_THROWS_AS(root.variable("state", "test"), lift::ScopeVariableNotFoundError);
}

TEST_CASE("put_variable merges dicts, so a child's variables stay visible") {
  lift::Scope scope(Tree::dict(), {}, "state");
  lift::Scope sub = scope.push("a");
  sub.put_variable("state", "x", Array(0.0f));
  sub.put_variable("state", "y", Array(5.0f));
  scope.put_variable("state", "a", Tree{{"x", Array(1.0f)}});
  CHECK(scope.variables()["state"]["a"]["x"].leaf().item<float>() == 1.0f);
  CHECK(sub.variables()["state"]["x"].leaf().item<float>() == 1.0f);
  CHECK(sub.variables()["state"]["y"].leaf().item<float>() == 5.0f);  // kept by the merge
}

TEST_CASE("reservations: a name may hold variables of several collections, not a child") {
  lift::Scope s;
  s.reserve("x", "params");
  s.reserve("x", "state");
  CHECK_THROWS_WITH_AS(s.reserve("x"), "Duplicate use of scope name: \"x\"", ValueError);
  CHECK_THROWS_AS(s.reserve("x", "params"), ValueError);
}

TEST_CASE("push() auto-names '0', '1', then 'a_0'") {
  lift::Scope s;
  CHECK(s.push().name() == "0");
  CHECK(s.push().name() == "1");
  lift::Scope a = s.push(std::nullopt, "a_");
  CHECK(a.name() == "a_0");
  CHECK(a.path() == std::vector<std::string>{"a_0"});
  CHECK(a.path_text() == "/a_0");
  CHECK(s.push("a_0", "", true).name() == "a_0");  // reuse
  CHECK_THROWS_AS(s.push("a_0"), ValueError);
}

TEST_CASE("a missing stream falls back to 'params' and advances its counter") {
  lift::Scope s(Tree::dict(), {{"params", random::key(0)}});
  Array d = s.make_rng("dropout");
  CHECK(kd(d) == KD{1428664606u, 3351135085u});
  CHECK(kd(s.make_rng("params")) == KD{3456700291u, 3873160899u});
  lift::Scope none;
  CHECK_THROWS_WITH_AS(none.make_rng("params"), doctest::Contains("None needs PRNG for \"params\""),
                       lift::InvalidRngError);
  CHECK_THROWS_WITH_AS(none.push("Dense_0").make_rng("params"),
                       doctest::Contains("Dense_0 needs PRNG for \"params\""),
                       lift::InvalidRngError);
}

TEST_CASE("a scope used after apply returned is an InvalidScopeError") {
  std::optional<lift::Scope> kept;
  lift::init([&](lift::Scope& scope) {
    kept = scope.push("child");
    return 0;
  })(random::key(0));
  CHECK_THROWS_WITH_AS(kept->make_rng("params"), doctest::Contains("is no longer valid"),
                       lift::InvalidScopeError);
  CHECK_THROWS_AS(kept->put_variable("params", "x", Array(1.0f)), lift::InvalidScopeError);
}

TEST_CASE("variables that are not a dict of dicts are ApplyScopeInvalidVariablesTypeError") {
  auto f = [](lift::Scope&) { return 0; };
  CHECK_THROWS_AS(lift::apply(f)(Tree(Array(1.0f))), lift::ApplyScopeInvalidVariablesTypeError);
  CHECK_THROWS_AS(lift::apply(f)(Tree{{"params", Array(1.0f)}}),
                  lift::ApplyScopeInvalidVariablesTypeError);
}

TEST_CASE("a scope-level dense layer: init, apply and mutable state against the hand computation") {
  Array x = random::normal(random::key(3), {4, 3});
  auto model = [](lift::Scope& scope, const Array& x) {
    lift::Scope d = scope.push("dense");
    Array y = dense(d, x, 5);
    auto count = scope.variable("counter", "n", [] { return Array(0); });
    if (count.is_mutable()) count.value() = count.value() + 1;
    return y;
  };
  auto [y, vars] = lift::init(model)(random::key(0), x);
  CHECK(vars.as_dict().keys() == std::vector<std::string>{"params", "counter"});
  CHECK(vars["counter"]["n"].leaf().item<int>() == 1);
  // The kernel is lecun_normal drawn from the key of path ('dense',) counter 1, as in Flax.
  Array key =
      lift::LazyRng::create(random::key(0), {std::string("dense"), std::uint64_t{1}}).as_jax_rng();
  Array kernel = init::lecun_normal()(key, {3, 5});
  CHECK(all(equal(vars["params"]["dense"]["kernel"].leaf(), kernel)).item<bool>());
  CHECK(all(equal(y, matmul(x, kernel))).item<bool>());  // bias is zero
  // apply with the counter mutable returns the new state; the input variables are unchanged.
  auto [y2, state] = lift::apply(model, "counter")(vars, x);
  CHECK(all(equal(y2, y)).item<bool>());
  CHECK(state.as_dict().keys() == std::vector<std::string>{"counter"});
  CHECK(state["counter"]["n"].leaf().item<int>() == 2);
  CHECK(vars["counter"]["n"].leaf().item<int>() == 1);
  // Immutable apply: the variable stays as it was (is_mutable false, no write).
  CHECK(all(equal(lift::apply(model)(vars, x), y)).item<bool>());
}

TEST_CASE("apply takes rngs as a trailing Rngs argument") {
  auto f = [](lift::Scope& scope, int n) {
    Array k;
    for (int i = 0; i < n; ++i) k = scope.make_rng("dropout");
    return k;
  };
  Array k = lift::apply(f)(Tree::dict(), 2, lift::Rngs{{"dropout", random::key(1)}});
  CHECK(kd(k) == KD{3825832496u, 2886313970u});
  CHECK_THROWS_AS(lift::apply(f)(Tree::dict(), 1, lift::Rngs{{"dropout", zeros({2})}}), ValueError);
}

}  // namespace test_scope
