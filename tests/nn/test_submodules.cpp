// How a module's submodules are made, named, adopted and unbound (cases from Flax's
// tests/linen/linen_module_test.py): the setup/@compact rules, modules passed in fields
// (adoption, sharing, preserved names), containers, apply/init with a method, functional
// init/apply, unbind. Cases with no C++ meaning say why where they would be.
#include <doctest/doctest.h>

#include <functional>
#include <map>
#include <optional>
#include <tuple>
#include <variant>
#include <vector>

#include <linum/lift/lift.hpp>
#include <linum/linum.hpp>
#include <linum/nn/nn.hpp>

#include "test_module_util.hpp"

using namespace linum;
using lift::Filter;
using mcases::Keys;
using mcases::keys;
using mcases::same;
using mcases::tree_same;
namespace init = linum::nn::initializers;

namespace {

Shape shape_at(const Tree& t) { return t.leaf().shape(); }
nn::Dense dense_no_bias(std::int64_t f) { return nn::Dense({.features = f, .use_bias = false}); }

// linen_module_test's Dense fixture: a kernel and no bias.
struct KDense : nn::Module<KDense> {
  std::int64_t features;
  explicit KDense(std::int64_t f) : features(f) {}
  Array call(const Array& x) {
    return matmul(x, param("kernel", init::lecun_normal(), Shape{x.shape(-1), features}));
  }
};

// Sets flax_preserve_adopted_names for one scope (Flax's set_config).
struct PreserveNames {
  bool old = nn::config::flax_preserve_adopted_names;
  explicit PreserveNames(bool v) { nn::config::flax_preserve_adopted_names = v; }
  ~PreserveNames() { nn::config::flax_preserve_adopted_names = old; }
};

// ---- a bound module passed to a sibling keeps its scope ----
struct Inner : nn::Module<Inner> {
  Array call() {
    return param("x", [](const Array&) { return Array(40.0f); });
  }
};
struct Outer : nn::Module<Outer> {
  Inner inner;
  explicit Outer(Inner i) : inner(std::move(i)) {}
  void setup() override { submodule("inner", inner); }
  Array call() { return inner(); }
};
struct Wrapper : nn::Module<Wrapper> {
  Inner inner;
  std::optional<Outer> outer;
  void setup() override {
    submodule("inner", inner);
    outer.emplace(inner);
    submodule("outer", *outer);
  }
  Array call() { return (*outer)(); }
};

}  // namespace

TEST_CASE("a setup child passed to a sibling stays registered under its setup name") {
  auto [y, v] = Wrapper().init_with_output(random::key(0));
  CHECK(keys(v["params"]) == Keys{"inner"});
  CHECK(v["params"]["inner"]["x"].leaf().item<float>() == 40.0f);
  CHECK(y.item<float>() == 40.0f);
}

namespace {
// ---- methods that are not @compact ----
struct NoCompactParam : nn::Module<NoCompactParam> {
  static constexpr bool compact = false;
  Array call(const Array& x) { return x + param("bias", init::ones_init(), x.shape()); }
};
struct PlainFoo : nn::Module<PlainFoo> {
  Array call(const Array& x) { return x + param("bias", init::ones_init(), x.shape()); }
  // Not wrapped with method(): Flax's non-compact method of a compact module.
  Array foo(const Array& x) { return x + param("bias", init::ones_init(), x.shape()); }
};
struct ForgotCompact : nn::Module<ForgotCompact> {
  static constexpr bool compact = false;
  Array call(const Array& x) { return nn::Dense(1)(x); }
};
struct UsesForgotten : nn::Module<UsesForgotten> {
  Array call(const Array& x) {
    ForgotCompact bar;
    return bar(bar(x));
  }
};
struct EmptyModule : nn::Module<EmptyModule> {
  static constexpr bool compact = false;
  int foo = 3;
  int bar() {
    return method("bar", [&] { return foo; });
  }
};
}  // namespace

TEST_CASE("param outside setup and compact methods is a ValueError") {
  CHECK_THROWS_WITH_AS(
      NoCompactParam().init(random::key(0), ones({1})),
      doctest::Contains("Parameters must be initialized in `setup()` or in a method wrapped in "
                        "`@compact`"),
      ValueError);
  // Flax's message names `@compact`; the C++ spelling of it follows.
  CHECK_THROWS_WITH_AS(NoCompactParam().init(random::key(0), ones({1})),
                       doctest::Contains("(in linum: a module's `call`, unless its class says "
                                         "`compact = false`, or a method body run through "
                                         "compact_method(...))"),
                       ValueError);
  // The compact __call__ may; the plain method foo, run by apply or on a bound copy, may not.
  Tree v = PlainFoo().init(random::key(0), ones({1}));
  CHECK(same(v["params"]["bias"].leaf(), ones({1})));
  CHECK_THROWS_WITH_AS(PlainFoo().init(random::key(0), ones({1}), &PlainFoo::foo),
                       doctest::Contains("must be initialized in `setup()`"), ValueError);
  PlainFoo bound = PlainFoo().bind(v);
  CHECK_THROWS_WITH_AS(bound.foo(ones({1})), doctest::Contains("must be initialized in `setup()`"),
                       ValueError);
}

TEST_CASE("a submodule made in a non-compact method is an AssignSubModuleError") {
  CHECK_THROWS_WITH_AS(UsesForgotten().init(random::key(0), ones({1, 3})),
                       doctest::Contains("Submodule Dense must be defined in `setup()` or in a "
                                         "method wrapped in `@compact` (in linum: a module's "
                                         "`call`"),
                       lift::AssignSubModuleError);
}

TEST_CASE("an unbound module's non-compact method runs and reads its fields") {
  CHECK(EmptyModule().bar() == 3);
  // The Flax case's second half (a setup attribute read on an unbound module raises AttributeError)
  // has no C++ counterpart: setup's members exist, default-constructed, from construction on.
}

namespace {
// ---- containers of children ----
struct Containers : nn::Module<Containers> {
  std::map<std::string, KDense> lyrs1{{"b", KDense(3)}, {"a", KDense(3)}};
  std::map<std::string, std::vector<KDense>> blocks{{"b", {KDense(2), KDense(2)}},
                                                    {"a", {KDense(2)}}};
  std::vector<std::map<std::string, KDense>> nested{{{"c", KDense(2)}}};
  void setup() override {
    submodule("lyrs1", lyrs1);
    submodule("blocks", blocks);
    submodule("nested", nested);
  }
  Array call(const Array& x) {
    Array y = lyrs1.at("b")(lyrs1.at("a")(x));
    y = blocks.at("a")[0](y);
    y = blocks.at("b")[1](blocks.at("b")[0](y));
    return nested[0].at("c")(y);
  }
};
}  // namespace

TEST_CASE("container children are named field + '_' + key path, dicts in sorted order") {
  Tree p = Containers().init(random::key(0), ones({10}))["params"];
  CHECK(keys(p) ==
        Keys{"blocks_a_0", "blocks_b_0", "blocks_b_1", "lyrs1_a", "lyrs1_b", "nested_0_c"});
  CHECK(shape_at(p["lyrs1_a"]["kernel"]) == Shape{10, 3});  // called first
  CHECK(shape_at(p["lyrs1_b"]["kernel"]) == Shape{3, 3});
  CHECK(shape_at(p["blocks_a_0"]["kernel"]) == Shape{3, 2});
  CHECK(shape_at(p["nested_0_c"]["kernel"]) == Shape{2, 2});
}

namespace {
// Containers Flax allows in setup beyond string dicts and lists: their entries are named by
// str(key) of Flax's state dict ({(1, 2): Dense} -> a_(1, 2), {10: ..} -> b_10), tuples by index,
// and non-module entries (relu in [Dense, relu, Dense]) are skipped but keep their index.
using Fn = std::function<Array(const Array&)>;
struct MoreContainers : nn::Module<MoreContainers> {
  std::map<std::tuple<int, int>, KDense> a{{{1, 2}, KDense(2)}};
  std::map<int, KDense> b{{10, KDense(2)}, {2, KDense(2)}};
  std::map<std::tuple<std::string, int>, KDense> c{{{"x", 1}, KDense(2)}};
  std::map<std::tuple<std::string>, KDense> c1{{{"y"}, KDense(2)}};
  std::map<bool, KDense> d{{true, KDense(2)}};
  std::tuple<KDense, int, std::vector<KDense>> e{KDense(2), 7, {KDense(2)}};
  std::vector<std::variant<KDense, Fn>> layers{
      KDense(2), Fn([](const Array& x) { return nn::relu(x); }), KDense(2)};
  std::optional<KDense> f{KDense(2)}, g{};
  void setup() override {
    submodule("a", a);
    submodule("b", b);
    submodule("c", c);
    submodule("c1", c1);
    submodule("d", d);
    submodule("e", e);
    submodule("layers", layers);
    submodule("f", f);
    submodule("g", g);
  }
  Array call(const Array& x) {
    Array y = a.begin()->second(x);
    y = b.at(2)(b.at(10)(y));
    y = d.at(true)(c1.begin()->second(c.begin()->second(y)));
    y = std::get<2>(e)[0](std::get<0>(e)(y));
    for (auto& l : layers) y = std::visit([&](auto& m) { return Array(m(y)); }, l);
    return f->operator()(y);
  }
};
}  // namespace

TEST_CASE("setup containers: non-string dict keys, tuples, optionals, module-or-function lists") {
  Array x = ones({3});
  auto [y, v] = MoreContainers().init_with_output(random::key(0), x);
  const Tree& p = v["params"];
  CHECK(keys(p) == Keys{"a_(1, 2)", "b_10", "b_2", "c1_('y',)", "c_('x', 1)", "d_True", "e_0",
                        "e_2_0", "f", "layers_0", "layers_2"});
  CHECK(shape_at(p["a_(1, 2)"]["kernel"]) == Shape{3, 2});
  // The relu between layers_0 and layers_2 ran: the output equals the explicit computation.
  auto k = [&](const char* n) { return p[n]["kernel"].leaf(); };
  Array h = matmul(matmul(matmul(x, k("a_(1, 2)")), k("b_10")), k("b_2"));
  h = matmul(matmul(matmul(h, k("c_('x', 1)")), k("c1_('y',)")), k("d_True"));
  h = matmul(matmul(h, k("e_0")), k("e_2_0"));
  h = matmul(nn::relu(matmul(h, k("layers_0"))), k("layers_2"));
  CHECK(same(y, matmul(h, k("f"))));
}

namespace {
// ---- apply(method=...) ----
struct MethodFoo : nn::Module<MethodFoo> {
  int call() { return 1; }
  int test() { return 7; }
};
}  // namespace

TEST_CASE("apply/init with a member function or a function of the module") {
  CHECK(MethodFoo().apply(Tree::dict(), &MethodFoo::test) == 7);
  auto m = MethodFoo().apply(Tree::dict(), nn::method([](MethodFoo& f) { return f; }));
  static_assert(std::is_same_v<decltype(m), MethodFoo>);
  CHECK(m.type_name() == "MethodFoo");
  Tree v = MethodFoo().init(lift::Rngs{}, &MethodFoo::test);
  CHECK(v.as_dict().size() == 0);
  // Python's method='test' (a name looked up at run time) has no C++ counterpart.
}

TEST_CASE("apply with a function that does not take the module is ApplyModuleInvalidMethodError") {
  CHECK_THROWS_WITH_AS(MethodFoo().apply(Tree::dict(), nn::method([] { return true; })),
                       doctest::Contains("Cannot call apply()"),
                       lift::ApplyModuleInvalidMethodError);
  // method='allowed_apply_fn' (AttributeError) and method='not_callable' (TypeError) name
  // methods by string; C++ member pointers make both mistakes compile errors instead.
}

namespace {
// ---- a setup child's own setup children are usable right away ----
struct LazyA : nn::Module<LazyA> {
  nn::Dense d = nn::Dense(2);
  void setup() override { submodule("d", d); }
  Array call(const Array& x) { return d(x); }
};
struct LazyB : nn::Module<LazyB> {
  LazyA a;
  void setup() override { submodule("a", a); }
  std::pair<Array, Array> call(const Array& x) { return {a.d(x), a(x)}; }
};
}  // namespace

TEST_CASE("a grandchild made in a child's setup is reachable through the child") {
  auto [out, v] = LazyB().init_with_output(random::key(0), ones({2}));
  CHECK(same(out.first, out.second));
  CHECK(keys(v["params"]) == Keys{"a"});
  CHECK(keys(v["params"]["a"]) == Keys{"d"});
}

namespace {
// ---- a module made outside and captured is adopted as a clone ----
struct ClosureB : nn::Module<ClosureB> {
  nn::Dense foo;
  explicit ClosureB(const nn::Dense& a) : foo(a) {}
  void setup() override { submodule("foo", foo); }
  Array call(const Array& x) { return foo(x); }
};
}  // namespace

TEST_CASE("a module from outside is adopted under the field name; the original stays unbound") {
  nn::Dense a(2);
  Tree v = ClosureB(a).init(random::key(0), ones({1}));
  CHECK(keys(v["params"]) == Keys{"foo"});
  CHECK(shape_at(v["params"]["foo"]["kernel"]) == Shape{1, 2});
  CHECK(shape_at(v["params"]["foo"]["bias"]) == Shape{2});
  CHECK_FALSE(a.module_name().has_value());
  CHECK_FALSE(a.is_bound());
}

namespace {
// ---- one instance shared by two fields is adopted once ----
struct ShA : nn::Module<ShA> {
  Array call(const Array& x) { return dense_no_bias(2)(x); }
};
struct ShB : nn::Module<ShB> {
  ShA a;
  explicit ShB(ShA a_) : a(std::move(a_)) {}
  void setup() override { submodule("a", a); }
  Array call(const Array& x) { return dense_no_bias(2)(x) + a(x); }
};
struct ShC : nn::Module<ShC> {
  ShA a;
  ShB b;
  ShC(ShA a_, ShB b_) : a(std::move(a_)), b(std::move(b_)) {}
  void setup() override {
    submodule("a", a);
    submodule("b", b);
  }
  Array call(const Array& x) { return dense_no_bias(2)(x) + b(x) + a(x); }
};
}  // namespace

TEST_CASE("a module shared by two fields is adopted once, under the first field") {
  ShA a;
  ShB b(a);
  ShC c(a, b);
  Array x = random::normal(random::key(3), {2, 2});
  auto [y, v] = c.init_with_output(random::key(0), x);
  const Tree& p = v["params"];
  CHECK(keys(p) == Keys{"Dense_0", "a", "b"});
  CHECK(keys(p["a"]) == Keys{"Dense_0"});
  CHECK(keys(p["b"]) == Keys{"Dense_0"});  // b.a is c.a: no b/a
  CHECK(shape_at(p["a"]["Dense_0"]["kernel"]) == Shape{2, 2});
  // y = x K0 + (x Kb + x Ka) + x Ka: the shared a runs twice on the same kernel.
  auto k = [&](const Tree& t) { return t["Dense_0"]["kernel"].leaf(); };
  Array want = matmul(x, k(p)) + matmul(x, k(p["b"])) + 2.0f * matmul(x, k(p["a"]));
  CHECK(all(less_equal(abs(y - want), 1e-5f)).item<bool>());
}

namespace {
// ---- names of adopted modules ----
struct NA : nn::Module<NA> {
  nn::Dense dense = dense_no_bias(4);
  void setup() override { submodule("dense", dense); }
  Array call(const Array& x) { return dense(x); }
};
struct NB : nn::Module<NB> {
  NA a;
  nn::Dense proj = dense_no_bias(6);
  explicit NB(NA a_) : a(std::move(a_)) {}
  void setup() override {
    submodule("a", a);
    submodule("proj", proj);
  }
  Array call(const Array& x) { return proj(a(x)); }
};

struct PFoo : nn::Module<PFoo> {
  Array call(const Array& x) { return x + param("p", init::zeros_init(), x.shape()); }
};
// PBar<1>: class attribute preserve_adopted_names = True; PBar<0>: = False; PBar<-1>: none.
template <int P>
struct PreserveAttr {};
template <>
struct PreserveAttr<1> {
  static constexpr bool preserve_adopted_names = true;
};
template <>
struct PreserveAttr<0> {
  static constexpr bool preserve_adopted_names = false;
};
template <int P>
struct PBar : nn::Module<PBar<P>>, PreserveAttr<P> {
  PFoo sub;
  explicit PBar(PFoo s) : sub(std::move(s)) {}
  void setup() override { this->submodule("sub", sub); }
  Array call(const Array& x) { return sub(x); }
};
using PBarYes = PBar<1>;
using PBarNo = PBar<0>;
struct PBaz : nn::Module<PBaz> {
  static constexpr bool preserve_adopted_names = true;
  PBarYes sub;
  explicit PBaz(PBarYes s) : sub(std::move(s)) {}
  void setup() override { submodule("sub", sub); }
  Array call(const Array& x) { return sub(x); }
};
struct TwoSubs : nn::Module<TwoSubs> {
  PFoo sub1, sub2;
  TwoSubs(PFoo a, PFoo b) : sub1(std::move(a)), sub2(std::move(b)) {}
  void setup() override {
    submodule("sub1", sub1);
    submodule("sub2", sub2);
  }
  Array call(const Array& x) { return sub1(x) + sub2(x); }
};
}  // namespace

TEST_CASE("a named module passed in a field is adopted under the field name by default") {
  Array x = zeros({5, 5});
  {
    PreserveNames flag(false);
    Tree p = NB(NA().named("foo")).init(random::key(0), x)["params"];
    CHECK(keys(p) == Keys{"a", "proj"});
    CHECK(shape_at(p["a"]["dense"]["kernel"]) == Shape{5, 4});
    CHECK(shape_at(p["proj"]["kernel"]) == Shape{4, 6});
  }
  {
    PreserveNames flag(true);
    Tree p = NB(NA().named("foo")).init(random::key(0), x)["params"];
    CHECK(keys(p) == Keys{"foo", "proj"});
    CHECK(shape_at(p["foo"]["dense"]["kernel"]) == Shape{5, 4});
  }
}

TEST_CASE("preserve_adopted_names: the flag, the class attribute, nesting, conflicts") {
  Array x = zeros({1});
  auto params = [&](const auto& m) { return m.init(random::key(0), x)["params"]; };
  {
    PreserveNames flag(true);
    CHECK(keys(params(PBar<-1>(PFoo().named("foo")))) == Keys{"foo"});
    CHECK(keys(params(PBarNo(PFoo().named("foo")))) == Keys{"sub"});  // the class says no
    CHECK(keys(params(PBar<-1>(PFoo()))) == Keys{"sub"});             // unnamed adoptee
    CHECK_THROWS_AS(params(TwoSubs(PFoo().named("foo"), PFoo().named("foo"))),
                    lift::NameInUseError);
  }
  {
    PreserveNames flag(false);
    CHECK(keys(params(PBar<-1>(PFoo().named("foo")))) == Keys{"sub"});
    CHECK(keys(params(PBarYes(PFoo().named("foo")))) == Keys{"foo"});  // the class says yes
    Tree p = params(PBaz(PBarYes(PFoo().named("foo")).named("bar")));
    CHECK(keys(p) == Keys{"bar"});
    CHECK(keys(p["bar"]) == Keys{"foo"});
    // Both adoptees may use their field names without the preservation.
    CHECK(keys(params(TwoSubs(PFoo().named("foo"), PFoo().named("foo")))) == Keys{"sub1", "sub2"});
  }
}

namespace {
// ---- one instance under three dict keys ----
struct CountA : nn::Module<CountA> {
  Array call(const Array& x) {
    auto c = variable("counter", "i", [] { return zeros({}); });
    c.value() = c.value() + 1.0f;
    return nn::Dense(1)(x);
  }
};
struct CountB : nn::Module<CountB> {
  std::map<std::string, CountA> A;
  explicit CountB(std::map<std::string, CountA> m) : A(std::move(m)) {}
  void setup() override { submodule("A", A); }
  Array call(const Array& x) { return A.at("foo")(x) + A.at("bar")(x) + A.at("baz")(x); }
};
}  // namespace

TEST_CASE("an instance shared in a dict is adopted once, first in sorted key order") {
  CountA a;
  CountB b({{"foo", a}, {"bar", a}, {"baz", a}});
  Array x = ones({2, 2});
  Tree v = b.init(random::key(0), x);
  CHECK(keys(v["params"]) == Keys{"A_bar"});
  auto [y, counters] = b.apply(v, x, {.mutable_ = "counter"});
  CHECK(keys(counters["counter"]) == Keys{"A_bar"});
  CHECK(counters["counter"]["A_bar"]["i"].leaf().item<float>() == 6.0f);  // 3 calls per pass
}

namespace {
// ---- functional init/apply, bind and unbind ----
struct FunFoo : nn::Module<FunFoo> {
  nn::Dense a = nn::Dense(3), b = nn::Dense(1);
  void setup() override {
    submodule("a", a);
    submodule("b", b);
  }
};
struct EncDec : nn::Module<EncDec> {
  nn::Dense encoder = nn::Dense(4), decoder = nn::Dense(2);
  void setup() override {
    submodule("encoder", encoder);
    submodule("decoder", decoder);
  }
  Array call(const Array& x) { return decoder(encoder(x)); }
};
}  // namespace

TEST_CASE("nn::init_with_output / nn::apply of a function of the module; bind") {
  auto f = [](FunFoo& foo, const Array& x) { return foo.b(foo.a(x)); };
  Array x = random::normal(random::key(1), {4});
  auto [y1, v] = nn::init_with_output(f, FunFoo())(random::key(0), x);
  CHECK(keys(v["params"]) == Keys{"a", "b"});
  Array y2 = nn::apply(f, FunFoo())(v, x);
  CHECK(same(y1, y2));
  CHECK(tree_same(nn::init(f, FunFoo())(random::key(0), x), v));
  FunFoo bound = FunFoo().bind(v);
  CHECK(same(f(bound, x), y1));
  // The value is Dense(1)(Dense(3)(x)) with the stored params.
  const Tree& p = v["params"];
  Array h = matmul(x, p["a"]["kernel"].leaf()) + p["a"]["bias"].leaf();
  Array want = matmul(h, p["b"]["kernel"].leaf()) + p["b"]["bias"].leaf();
  CHECK(all(less_equal(abs(y1 - want), 1e-5f)).item<bool>());
}

TEST_CASE("unbind of a bound child: an unbound Dense(4) and its variables") {
  Tree v = EncDec().init(random::key(0), ones({2}));
  EncDec bound = EncDec().bind(v);
  auto [encoder, enc_vars] = bound.encoder.unbind();
  CHECK(encoder.features == 4);
  CHECK_FALSE(encoder.is_bound());
  CHECK(keys(enc_vars) == Keys{"params"});
  CHECK(tree_same(enc_vars["params"], v["params"]["encoder"]));
  auto [decoder, dec_vars] = bound.decoder.unbind();
  CHECK(decoder.features == 2);
  CHECK(tree_same(dec_vars["params"], v["params"]["decoder"]));
  // The unbound copy applies to its variables like the original child.
  CHECK(same(encoder.apply(enc_vars, ones({2})), bound.encoder(ones({2}))));
}

namespace {
struct UnbindWrapper : nn::Module<UnbindWrapper> {
  EncDec inner;
  std::vector<nn::Dense> heads{nn::Dense(2), nn::Dense(2).named("own")};
  void setup() override {
    submodule("inner", inner);
    submodule("heads", heads);
  }
  Array call(const Array& x) { return heads[1](heads[0](inner(x))); }
};
}  // namespace

TEST_CASE("unbind gives a module equal to the unbound original, its submodule fields too") {
  const Array x = ones({2});
  Tree v = UnbindWrapper().init(random::key(0), x);
  UnbindWrapper bound = UnbindWrapper().bind(v);
  Array y = bound(x);
  auto [u, vars] = bound.unbind();
  const UnbindWrapper original;
  // Nothing in the copy is bound any more, at any depth, and the names are those before binding:
  // the fields' adopted names (inner, heads_0) are gone, an explicit name stays.
  CHECK_FALSE(u.is_bound());
  CHECK_FALSE(u.inner.is_bound());
  CHECK_FALSE(u.inner.encoder.is_bound());
  CHECK_FALSE(u.heads[0].is_bound());
  CHECK(u.module_name() == original.module_name());
  CHECK(u.inner.module_name() == original.inner.module_name());
  CHECK(u.inner.decoder.module_name() == std::nullopt);
  CHECK(u.heads[0].module_name() == std::nullopt);
  CHECK(u.heads[1].module_name() == std::optional<std::string>("own"));
  CHECK(u.repr() == original.repr());
  CHECK(u.inner.repr() == original.inner.repr());
  // A field of the copy no longer runs on the bound module's variables.
  CHECK_THROWS_AS(u.inner.encoder(x), lift::CallCompactUnboundModuleError);
  // The copy applies to the variables as the original module does; the bound one is untouched.
  CHECK(same(u.apply(vars, x), y));
  CHECK(same(UnbindWrapper().apply(vars, x), y));
  CHECK(bound.inner.encoder.is_bound());
  CHECK(same(bound(x), y));
}

TEST_CASE(".path of an unbound module is Flax's ValueError") {
  CHECK_THROWS_WITH_AS(nn::Dense(3).path(), "Can't access module paths on unbound modules.",
                       ValueError);
  Tree v = EncDec().init(random::key(0), ones({2}));
  EncDec bound = EncDec().bind(v);
  CHECK(bound.path().empty());
  CHECK(bound.encoder.path() == std::vector<std::string>{"encoder"});
  auto [u, vars] = bound.encoder.unbind();
  CHECK_THROWS_WITH_AS(u.path(), "Can't access module paths on unbound modules.", ValueError);
}

namespace {
// ---- a subclass calling its base's compact call ----
// Python's Bar(Foo) with super().__call__: in C++ the base is a CRTP template over the final class.
template <class D>
struct FooBase : nn::Module<D> {
  Array call(const Array& x) { return nn::Dense(4)(x); }
};
struct SuperBar : FooBase<SuperBar> {
  Array call(const Array& x) {
    Array y = FooBase<SuperBar>::call(x);
    return nn::Dense(3)(y);
  }
};
}  // namespace

TEST_CASE("a subclass's call through its base's call continues the auto-names") {
  auto [y, v] = SuperBar().init_with_output(random::key(0), ones({4, 7}));
  const Tree& p = v["params"];
  CHECK(keys(p) == Keys{"Dense_0", "Dense_1"});
  CHECK(shape_at(p["Dense_0"]["kernel"]) == Shape{7, 4});
  CHECK(shape_at(p["Dense_0"]["bias"]) == Shape{4});
  CHECK(shape_at(p["Dense_1"]["kernel"]) == Shape{4, 3});
  CHECK(shape_at(p["Dense_1"]["bias"]) == Shape{3});
  CHECK(y.shape() == Shape{4, 3});
  CHECK(SuperBar().apply(v, ones({4, 7})).shape() == Shape{4, 3});
}

// nn.jit(Dense) and nn.fold_rngs(Dense) draw the same kernel: test_transforms_lifting.cpp.

// linen_module_test cases with no C++ counterpart:
// - hash(nn.Dense(10)) over the dataclass fields; TypeError for a module holding a scope:
//   a C++ module has no generic field reflection to hash, and nothing in linum keys on modules
//   (Python hashes them for jit's static arguments).
// - SetAttributeFrozenModuleError on self.i = 2 outside setup: C++ cannot intercept an
//   assignment to a data member; configuration is fixed by the constructor.
// - _freeze_attr turns lists into tuples so fields hash: C++ fields keep their declared
//   types; there is no list/tuple distinction to freeze.
// - __post_init__ may set fields before super().__post_init__(): constructors do this in
//   C++ by the language itself; there is no linum code to test.
