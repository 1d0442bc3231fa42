// nn::intercept_methods: Flax's linen_module_test intercept cases (test_intercept_methods*), in
// C++ spelling: the interceptor gets next(), the call's arguments as a Tree and the context.
#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

#include <linum/linum.hpp>
#include <linum/nn/nn.hpp>

namespace test_intercept_methods {

using namespace linum;

namespace {
// Flax's test IdentityModule: a setup-style module whose __call__ returns its input.
struct IdentityModule : nn::Module<IdentityModule> {
  static constexpr bool compact = false;
  Array call(const Array& x) { return x; }
};
struct CompactModule : nn::Module<CompactModule> {
  Array call(const Array& x) { return nn::Dense(2)(x); }
};
struct SetupModule : nn::Module<SetupModule> {
  static constexpr bool compact = false;
  nn::Dense layer{2};
  void setup() override { submodule("layer", layer); }
  Array call(const Array& x) { return layer(x); }
};
bool same(const Array& a, const Array& b) { return static_cast<bool>(allclose(a, b, 0.0, 0.0)); }
}  // namespace

TEST_CASE("intercept_methods: the interceptor sees the call and replaces its output") {
  IdentityModule mod;
  Array x = ones({});
  int calls = 0;
  auto add_one = [&](const std::function<Tree()>& next, const Tree& args,
                     const nn::InterceptorContext& context) {
    ++calls;
    CHECK(&context.module == &mod);
    CHECK(context.method_name == "__call__");
    CHECK(args.is_leaf());  // one argument, as itself (Flax's (x,) in C++'s single-value form)
    CHECK(same(args.leaf(), x));
    CHECK(same(context.orig_method().leaf(), x));  // the method itself
    return Tree(next().leaf() + 1.0f);
  };
  Array y1 = mod(x);
  Array y2 = nn::intercept_methods(add_one, [&] { return mod(x); });
  Array y3 = mod(x);
  CHECK(calls == 1);
  CHECK(y1.item<float>() == 1.0f);
  CHECK(y2.item<float>() == 2.0f);
  CHECK(y3.item<float>() == 1.0f);
}

TEST_CASE("intercept_methods: every module of a compact model, outer call first") {
  CompactModule mod;
  Array x = ones({1, 3});
  Tree v = mod.init(random::key(0), x);
  std::vector<std::string> types;
  auto log = [&](const std::function<Tree()>& next, const Tree& args,
                 const nn::InterceptorContext& context) {
    types.push_back(context.module.type_name());
    CHECK(context.method_name == "__call__");
    CHECK(same(args.leaf(), x));
    return next();
  };
  Array y = nn::intercept_methods(log, [&] { return mod.apply(v, x); });
  CHECK(types == std::vector<std::string>{"CompactModule", "Dense"});
  CHECK(same(y, mod.apply(v, x)));  // passing next() through changes nothing
}

TEST_CASE("intercept_methods: setup is intercepted where the class defines it") {
  SetupModule mod;
  Array x = ones({1, 3});
  Tree v = mod.init(random::key(0), x);
  std::vector<std::pair<std::string, std::string>> log;
  auto logger = [&](const std::function<Tree()>& next, const Tree& args,
                    const nn::InterceptorContext& context) {
    log.emplace_back(context.module.type_name(), context.method_name);
    if (context.method_name == "setup") CHECK((args.is_tuple() && args.items().empty()));
    return next();
  };
  nn::intercept_methods(logger, [&] { return mod.apply(v, x); });
  // Flax's log: ('setup', ()), ('__call__', (x,)) on SetupModule, then Dense's __call__ (Dense
  // has no setup of its own).
  using P = std::pair<std::string, std::string>;
  CHECK(log == std::vector<P>{
                   {"SetupModule", "setup"}, {"SetupModule", "__call__"}, {"Dense", "__call__"}});
}

TEST_CASE("intercept_methods: the first installed runs outermost") {
  IdentityModule mod;
  Array x = full({}, 7.0f);
  auto op = [](auto f) {
    return [f](const std::function<Tree()>& next, const Tree&, const nn::InterceptorContext&) {
      return Tree(f(next().leaf()));
    };
  };
  auto plus_one = op([](const Array& a) { return Array(a + 1.0f); });
  auto square = op([](const Array& a) { return Array(a * a); });
  Array y = nn::intercept_methods(
      plus_one, [&] { return nn::intercept_methods(square, [&] { return mod(x); }); });
  CHECK(y.item<float>() == 7.0f * 7.0f + 1.0f);
  y = nn::intercept_methods(
      square, [&] { return nn::intercept_methods(plus_one, [&] { return mod(x); }); });
  CHECK(y.item<float>() == 8.0f * 8.0f);
}

TEST_CASE("intercept_methods: orig_method skips the interceptors installed inside") {
  IdentityModule mod;
  Array x = full({}, 3.0f);
  int inner_calls = 0;
  auto outer = [](const std::function<Tree()>&, const Tree&, const nn::InterceptorContext& c) {
    return c.orig_method();
  };
  auto inner = [&](const std::function<Tree()>& next, const Tree&, const nn::InterceptorContext&) {
    ++inner_calls;
    return next();
  };
  Array y = nn::intercept_methods(
      outer, [&] { return nn::intercept_methods(inner, [&] { return mod(x); }); });
  CHECK(inner_calls == 0);
  CHECK(y.item<float>() == 3.0f);
}

TEST_CASE("intercept_methods: an output of the wrong form is a TypeError") {
  IdentityModule mod;
  auto returns_none = [](const std::function<Tree()>&, const Tree&, const nn::InterceptorContext&) {
    return Tree::none();
  };
  CHECK_THROWS_WITH_AS(nn::intercept_methods(returns_none, [&] { return mod(ones({})); }),
                       doctest::Contains("an interceptor returned"), TypeError);
  CHECK_THROWS_AS(nn::intercept_methods(nn::Interceptor(), [] { return 0; }), ValueError);
  // Nothing stays installed after a throw.
  CHECK(mod(ones({})).item<float>() == 1.0f);
}

}  // namespace test_intercept_methods
