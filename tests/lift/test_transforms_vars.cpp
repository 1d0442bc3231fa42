// lift.custom_vjp, map_variables / swap_collection and remat_scan: Flax's core_custom_vjp_test and
// scope-level versions of linen_transforms_test's tied autoencoder, sign-mapped dense and
// remat_scan cases, each against the computation written out by hand.
#include <doctest/doctest.h>

#include <linum/lift/lift.hpp>
#include <linum/linum.hpp>
#include <linum/nn/initializers.hpp>

#include "../autodiff/check_grads.hpp"
#include "lift_testing.hpp"

namespace test_transforms_vars {

using namespace linum;
using namespace linum::lift::testing;
namespace init = linum::nn::initializers;
using lift::Scope;

namespace {

Tree params_of(const Tree& vars) { return Tree::dict({{"params", vars["params"]}}); }

// core_custom_vjp_test's dense with a custom rule: the params' cotangents are the signs of the true
// ones, the input's cotangent is the true one.
Array dense_custom_grad(Scope& scope, const Array& x, std::int64_t features) {
  auto fwd = [](Scope& s, const Array& x, std::int64_t f) {
    Array y = dense(s, x, f);
    return std::make_pair(y, std::make_pair(s.variables()["params"], x));
  };
  auto bwd = [](std::int64_t, const std::pair<Tree, Array>& res, const Array& g) {
    const Tree& p = res.first;
    auto explicit_dense = [](const Array& k, const Array& b, const Array& x) {
      return matmul(x, k) + b;
    };
    auto [y, pullback] =
        linum::vjp(explicit_dense, p["kernel"].leaf(), p["bias"].leaf(), res.second);
    auto [gk, gb, gx] = pullback(g);
    Tree vt = Tree::dict({{"params", Tree::dict({{"kernel", sign(gk)}, {"bias", sign(gb)}})}});
    return std::make_tuple(vt, gx);
  };
  return lift::custom_vjp(dense, fwd, bwd, "params", nondiff_argnums<2>)(scope, x, features);
}

template <class D>
Array mlp(Scope& scope, const Array& x, D dense_fn) {
  Array h = relu(scope.child(dense_fn, std::nullopt, "hidden_")(x, 8));
  return scope.child(dense_fn, "out")(h, 1);
}

}  // namespace

TEST_SUITE("lift.custom_vjp") {
  TEST_CASE("mlp_custom_grad's param grads are the signs of the true grads") {
    Array x = random::normal(random::key(0), {1, 4});
    auto custom = [](Scope& s, const Array& x) { return mlp(s, x, dense_custom_grad); };
    auto plain = [](Scope& s, const Array& x) { return mlp(s, x, dense); };
    auto [y, vars] = lift::init(custom)(random::key(1), x);
    CHECK(y.shape() == Shape{1, 1});
    CHECK(vars["params"]["hidden_0"]["kernel"].leaf().shape() == Shape{4, 8});
    CHECK(vars["params"]["hidden_0"]["bias"].leaf().shape() == Shape{8});
    CHECK(vars["params"]["out"]["kernel"].leaf().shape() == Shape{8, 1});
    CHECK(vars["params"]["out"]["bias"].leaf().shape() == Shape{1});
    auto loss = [&](auto f) {
      return [&, f](const Tree& p) { return mean(square(lift::apply(f)(p, x))); };
    };
    Tree p = params_of(vars);
    CHECK(close(lift::apply(custom)(p, x), lift::apply(plain)(p, x)));
    Tree g = linum::grad(loss(custom))(p);
    Tree g_true = linum::grad(loss(plain))(p);
    for (const char* layer : {"hidden_0", "out"}) {
      for (const char* v : {"kernel", "bias"}) {
        Array gc = g["params"][layer][v].leaf();
        Array gt = g_true["params"][layer][v].leaf();
        CAPTURE(layer);
        CAPTURE(v);
        CHECK(gc.shape() == gt.shape());
        CHECK(close(gc, sign(gc)));  // every leaf in {-1, 0, 1}
        CHECK(close(gc, sign(gt)));  // the hand check: the sign of the true gradient
      }
    }
    CHECK(max(abs(g["params"]["hidden_0"]["kernel"].leaf())).item<float>() == 1.0f);
  }

  TEST_CASE("custom_vjp outside grad runs fn; the input cotangent reaches the caller") {
    Array x = astype(random::normal(random::key(3), {2, 4}), float64);
    auto f = [](Scope& s, const Array& x) { return sum(dense_custom_grad(s, x, 3)); };
    auto [y, vars] = lift::init(f)(random::key(1), x);
    Tree p = params_of(vars);
    CHECK(close(lift::apply(f)(p, x), y));
    // x's cotangent is the true one: the plain dense's gradient w.r.t. x.
    auto gx = linum::grad([&](const Array& x) { return lift::apply(f)(p, x); })(x);
    auto gx_true = linum::grad([&](const Array& x) {
      return lift::apply([](Scope& s, const Array& x) { return sum(dense(s, x, 3)); })(p, x);
    })(x);
    CHECK(close(gx, gx_true));
  }
}

TEST_SUITE("lift.map_variables") {
  TEST_CASE("a tied autoencoder shares one kernel, the decoder sees its transpose") {
    auto transpose_kernel = [](const Tree& t) {
      Tree out = t;
      if (t.contains("params") && t["params"].contains("kernel"))
        out["params"]["kernel"] = Tree(transpose(t["params"]["kernel"].leaf()));
      return out;
    };
    auto id = [](const Tree& t) { return t; };
    auto dense_nb = [](Scope& s, const Array& x, std::int64_t f) {
      Array k = s.param("kernel", init::lecun_normal(), Shape{x.shape(-1), f});
      return matmul(x, k);
    };
    auto autoencoder = [&](Scope& scope, const Array& x) {
      Scope enc = scope.push("Dense_0");
      auto encode = lift::map_variables(dense_nb, "params", id, id, {.mutable_ = true});
      Array z = encode(enc, x, 5);
      Scope dec = scope.push("Dense_0", "", true);  // the same variables, reused
      auto decode = lift::map_variables(dense_nb, "params", transpose_kernel, transpose_kernel,
                                        {.mutable_ = true});
      return decode(dec, z, 4);
    };
    Array x = ones({2, 4});
    auto [y, vars] = lift::init(autoencoder)(random::key(0), x);
    CHECK(vars["params"].as_dict().size() == 1);
    CHECK(vars["params"]["Dense_0"].as_dict().size() == 1);
    Array k = vars["params"]["Dense_0"]["kernel"].leaf();
    CHECK(k.shape() == Shape{4, 5});
    CHECK(y.shape() == Shape{2, 4});
    CHECK(close(y, matmul(matmul(x, k), transpose(k))));
    CHECK(close(lift::apply(autoencoder)(vars, x), y));
  }

  TEST_CASE("a sign-mapped dense (init=True) gives the same y at init and apply") {
    auto sgn = [](const Tree& t) {
      return linum::detail::tree_apply(t, [](const Array& a) { return sign(a); });
    };
    auto bit_dense = lift::map_variables([](Scope& s, const Array& x) { return dense(s, x, 4); },
                                         "params", sgn, sgn, {.init = true});
    Array x = ones({2, 4});
    auto [y, vars] = lift::init(bit_dense)(random::key(0), x);
    Array k = vars["params"]["kernel"].leaf();
    CHECK(close(k, sign(k)));  // what was stored went through map_out_fn
    CHECK(close(y, matmul(x, k) + vars["params"]["bias"].leaf()));
    CHECK(close(lift::apply(bit_dense)(vars, x), y));
  }

  TEST_CASE("map_variables without mutable: the mapped collection is read-only inside") {
    auto double_it = [](const Tree& t) {
      return linum::detail::tree_apply(t, [](const Array& a) { return a * 2.0f; });
    };
    auto f = lift::map_variables([](Scope& s, const Array& x) { return dense(s, x, 3); }, "params",
                                 double_it, double_it);
    Array x = ones({1, 2});
    auto [y0, vars] =
        lift::init([](Scope& s, const Array& x) { return dense(s, x, 3); })(random::key(0), x);
    Array y = lift::apply(f)(vars, x);
    CHECK(close(y, matmul(x, vars["params"]["kernel"].leaf() * 2.0f) +
                       vars["params"]["bias"].leaf() * 2.0f));
    CHECK_THROWS_AS(lift::init(f)(random::key(0), x), lift::FlaxError);
  }

  TEST_CASE("grad through map_variables matches finite differences (the kernel seen doubled)") {
    auto double_it = [](const Tree& t) {
      return linum::detail::tree_apply(t, [](const Array& a) { return a * 2.0; });
    };
    auto f = lift::map_variables([](Scope& s, const Array& x) { return tanh(dense(s, x, 3)); },
                                 "params", double_it, double_it);
    Array k = astype(random::normal(random::key(1), {2, 3}), float64);
    Array b = astype(random::normal(random::key(2), {3}), float64);
    Array x = astype(random::normal(random::key(3), {4, 2}), float64);
    auto run = [&](const Arrays& a) {
      Tree v = Tree::dict({{"params", Tree::dict({{"kernel", a[0]}, {"bias", a[1]}})}});
      return lift::apply(f)(v, a[2]);
    };
    CHECK(close(run({k, b, x}), tanh(matmul(x, k * 2.0) + b * 2.0), 1e-12));
    testing::check_grads(run, {k, b, x});
  }

  TEST_CASE("swap_collection: fn's writes to 'a' land in 'b' and it reads 'b' as 'a'") {
    auto f = [](Scope& s) {
      Tree before = s.has_variable("a", "v") ? s.get_variable("a", "v") : Tree(zeros({2}));
      s.put_variable("a", "v", Tree(before.leaf() + 1.0f));
      return before.leaf();
    };
    auto swapped = lift::swap_collection(f, "a", "b");
    Tree vars = Tree::dict({{"a", Tree::dict()}, {"b", Tree::dict({{"v", full({2}, 5.0f)}})}});
    auto [y, out] = lift::apply(swapped, lift::Filter(true))(vars);
    CHECK(close(y, full({2}, 5.0f)));
    CHECK(close(out["b"]["v"].leaf(), full({2}, 6.0f)));
    CHECK(out["a"].as_dict().size() == 0);
  }
}

TEST_SUITE("lift.remat_scan") {
  TEST_CASE("remat_scan of a dense over lengths {100} stacks a (100,8,8) kernel") {
    auto body = [](Scope& s, const Array& c) { return dense(s, c, 8); };
    Array x = ones({2, 8});
    auto [y, vars] = lift::init(lift::remat_scan(body, {100}))(random::key(0), x);
    CHECK(vars["params"]["kernel"].leaf().shape() == Shape{100, 8, 8});
    CHECK(vars["params"]["bias"].leaf().shape() == Shape{100, 8});
    CHECK(y.shape() == Shape{2, 8});
  }

  TEST_CASE("remat_scan over lengths {3, 4}: (3,4,..) params; value and grads equal the loop") {
    auto body = [](Scope& s, const Array& c) { return tanh(dense(s, c, 3)); };
    Array x = astype(random::normal(random::key(2), {2, 3}), float64);
    auto rs = lift::remat_scan(body, {3, 4});
    auto [y, vars] = lift::init(rs)(random::key(0), x);
    Array k = astype(vars["params"]["kernel"].leaf(), float64);
    Array b = astype(vars["params"]["bias"].leaf(), float64);
    REQUIRE(k.shape() == Shape{3, 4, 3, 3});
    REQUIRE(b.shape() == Shape{3, 4, 3});
    // The hand loop over the 12 stacked (kernel, bias) pairs in row-major order.
    auto loop = [](const Array& k, const Array& b, const Array& x) {
      Array kf = reshape(k, {12, 3, 3}), bf = reshape(b, {12, 3});
      Array c = x;
      for (int i = 0; i < 12; ++i)
        c = tanh(matmul(c, take(kf, Array(i), 0)) + take(bf, Array(i), 0));
      return c;
    };
    auto via_scope = [&](const Array& k, const Array& b, const Array& x) {
      Tree v = Tree::dict({{"params", Tree::dict({{"kernel", k}, {"bias", b}})}});
      return lift::apply(rs)(v, x);
    };
    CHECK(close(via_scope(k, b, x), loop(k, b, x), 1e-12));
    CHECK(close(astype(y, float64), loop(k, b, x), 1e-5));
    auto sum_of = [](auto f) {
      return [f](const Array& k, const Array& b, const Array& x) { return sum(f(k, b, x)); };
    };
    auto g0 = linum::grad(sum_of(loop), argnums<0, 1, 2>)(k, b, x);
    auto g1 = linum::grad(sum_of(via_scope), argnums<0, 1, 2>)(k, b, x);
    CHECK(close(std::get<0>(g0), std::get<0>(g1), 1e-12));
    CHECK(close(std::get<1>(g0), std::get<1>(g1), 1e-12));
    CHECK(close(std::get<2>(g0), std::get<2>(g1), 1e-12));
    testing::check_grads([&](const Arrays& a) { return via_scope(a[0], a[1], a[2]); }, {k, b, x});
    CHECK_THROWS_AS(lift::remat_scan(body, {}), ValueError);
  }
}

}  // namespace test_transforms_vars
