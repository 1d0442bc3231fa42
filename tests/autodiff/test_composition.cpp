// The composition matrix: every pair of {grad, vjp, jvp, vmap, scan, cond, while_loop,
// custom_vjp, checkpoint} in both orders where meaningful, each against an independent
// computation (closed forms, explicit loops, finite differences through check_grads).
//
// One scalar function, g(x) = sum(sin(x) * x), is written through each construct (scan, cond,
// switch_, while_loop, fori_loop, custom_vjp, checkpoint); every transform of every form must
// give the closed forms dg = cos(x) x + sin(x) and d2g = diag(2 cos(x) - x sin(x)).
#include <doctest/doctest.h>

#include <functional>
#include <string>

#include "check_grads.hpp"
#include "transform_testing.hpp"

namespace test_composition {

using linum::Array;
using linum::Arrays;
using transform_testing::check_close;
using transform_testing::data;
using transform_testing::row;
using transform_testing::stack_rows;
using linum::testing::values;

namespace {

Array g_ref(const Array& x) { return linum::sum(linum::sin(x) * x); }
Array dg_ref(const Array& x) { return linum::cos(x) * x + linum::sin(x); }
Array d2g_ref(const Array& x) { return linum::cos(x) * 2.0 - x * linum::sin(x); }

// sin(x_i) * x_i selected by a (possibly batched) counter, without gathers.
Array term(const Array& x, const Array& i) {
  Array hit = linum::equal(linum::arange(x.shape(0)), i);
  return linum::sum(linum::where(hit, linum::sin(x) * x, 0.0));
}

struct Form {
  std::string name;
  std::function<Array(const Array&)> f;
  bool forward_mode = true;  // custom_vjp functions reject jvp, as in JAX
};

std::vector<Form> forms() {
  using C = std::pair<Array, Array>;
  static auto custom = linum::custom_vjp(
      [](const Array& x) { return g_ref(x); },
      [](const Array& x) { return std::make_pair(g_ref(x), x); },
      [](const Array& x, const Array& ct) { return std::make_tuple(ct * dg_ref(x)); });
  return {
      {"plain", g_ref},
      {"scan",
       [](const Array& x) {
         return linum::scan([](const Array& c, const Array& xi) { return std::make_pair(c + linum::sin(xi) * xi, c); },
                            linum::zeros({}, x.dtype()), x)
             .first;
       }},
      {"cond",  // the predicate depends on x, so under vmap it is batched
       [](const Array& x) {
         return linum::cond(linum::sum(x) > -100.0, g_ref, [](const Array& v) { return linum::sum(v * v); }, x);
       }},
      {"switch",
       [](const Array& x) {
         std::vector<std::function<Array(const Array&)>> br{[](const Array& v) { return linum::sum(v); }, g_ref,
                                                            [](const Array& v) { return linum::sum(v * v); }};
         return linum::switch_(linum::astype(linum::sum(x) > -100.0, linum::int32), br, x);
       }},
      {"while_loop",
       [](const Array& x) {
         C out = linum::while_loop([&](const C& c) { return c.first < static_cast<int>(x.shape(0)); },
                                   [&](const C& c) { return C(c.first + 1, c.second + term(x, c.first)); },
                                   C(linum::array(0), linum::zeros({}, x.dtype())));
         return out.second;
       }},
      {"fori_loop",
       [](const Array& x) {
         return linum::fori_loop(0, static_cast<int>(x.shape(0)),
                                 [&](const Array& i, const Array& acc) { return acc + term(x, i); },
                                 linum::zeros({}, x.dtype()));
       }},
      {"custom_vjp", custom, false},
      {"checkpoint", linum::checkpoint(g_ref)},
  };
}

}  // namespace

TEST_CASE("composition matrix: {grad, vjp, jvp, vmap, grad∘grad, jvp∘grad, vmap∘grad, grad∘vmap} of every construct") {
  Array x = linum::array({0.4, -1.3, 2.1});
  Array v = linum::array({0.5, 1.0, -2.0});
  Array X = data({4, 3}, 3) * 2.0;
  for (const Form& form : forms()) {
    const auto& F = form.f;
    SUBCASE(form.name.c_str()) {
      CAPTURE(form.name);
      check_close(F(x), g_ref(x));
      // grad and vjp
      check_close(linum::grad(F)(x), dg_ref(x));
      auto [y, pull] = linum::vjp(F, x);
      check_close(y, g_ref(x));
      check_close(std::get<0>(pull(linum::array(2.0))), dg_ref(x) * 2.0);
      // vmap against the loop; vmap(grad) and grad(vmap) against the closed form per row
      Arrays gv, dv;
      for (int i = 0; i < 4; ++i) {
        gv.push_back(g_ref(row(X, i)));
        dv.push_back(dg_ref(row(X, i)));
      }
      check_close(linum::vmap(F)(X), stack_rows(gv));
      check_close(linum::vmap(linum::grad(F))(X), stack_rows(dv));
      check_close(linum::grad([&](const Array& A) { return linum::sum(linum::vmap(F)(A)); })(X), stack_rows(dv));
      // grad∘grad: d/dx sum(dg) is the Hessian's diagonal here.
      check_close(linum::grad([&](const Array& z) { return linum::sum(linum::grad(F)(z)); })(x), d2g_ref(x));
      // vmap of vjp
      Array cts = linum::array({1.0, -1.0, 2.0, 0.5});
      Array vj = linum::vmap([&](const Array& r, const Array& c) { return std::get<0>(linum::vjp(F, r).second(c)); })(X, cts);
      Arrays vjw;
      for (int i = 0; i < 4; ++i) vjw.push_back(dg_ref(row(X, i)) * values(cts)[i]);
      check_close(vj, stack_rows(vjw));
      if (form.forward_mode) {
        auto [y2, t] = linum::jvp(F, std::tuple{x}, std::tuple{v});
        check_close(y2, g_ref(x));
        check_close(t, linum::sum(dg_ref(x) * v));
        // jvp∘grad: a Hessian-vector product; vmap∘jvp; jvp∘vmap
        auto hv = linum::jvp(linum::grad(F), std::tuple{x}, std::tuple{v}).second;
        check_close(hv, d2g_ref(x) * v);
        Array jv = linum::vmap([&](const Array& r) { return linum::jvp(F, std::tuple{r}, std::tuple{v}).second; })(X);
        Arrays jw;
        for (int i = 0; i < 4; ++i) jw.push_back(linum::sum(dg_ref(row(X, i)) * v));
        check_close(jv, stack_rows(jw));
        Array V = data({4, 3}, 4);
        Array tv = linum::jvp(linum::vmap(F), std::tuple{X}, std::tuple{V}).second;
        Arrays tw;
        for (int i = 0; i < 4; ++i) tw.push_back(linum::sum(dg_ref(row(X, i)) * row(V, i)));
        check_close(tv, stack_rows(tw));
        linum::testing::check_grads(F, x);
      } else {
        CHECK_ERROR_CONTAINS(linum::jvp(F, std::tuple{x}, std::tuple{v}),
                             "can't apply forward-mode autodiff (jvp) to a custom_vjp function.");
      }
    }
  }
}

TEST_CASE("constructs whose bodies apply transforms: scan∘grad, cond∘jvp, while∘vjp, checkpoint∘grad, custom_vjp∘grad, scan∘vmap") {
  Array X = data({4, 3}, 5);
  SUBCASE("scan of grad, differentiated again") {
    auto F = [](const Array& A) {
      return linum::scan([](const Array& c, const Array& r) {
               return std::make_pair(c + linum::sum(linum::grad(g_ref)(r) * r), c);
             }, linum::zeros({}, A.dtype()), A).first;
    };
    double want = 0;
    for (int i = 0; i < 4; ++i) want += values(linum::sum(dg_ref(row(X, i)) * row(X, i)))[0];
    CHECK(values(F(X))[0] == doctest::Approx(want));
    linum::testing::check_grads(F, X);
  }
  SUBCASE("cond whose branches take jvps") {
    Array v = linum::array({1.0, 0.0, -1.0});
    auto F = [&](const Array& x) {
      return linum::cond(linum::sum(x) > 0.0,
                         [&](const Array& z) { return linum::jvp(g_ref, std::tuple{z}, std::tuple{v}).second; },
                         [&](const Array& z) { return linum::jvp(g_ref, std::tuple{z * 2.0}, std::tuple{v}).second; }, x);
    };
    for (int i = 0; i < 4; ++i) {
      Array r = row(X, i);
      Array want = values(linum::sum(r))[0] > 0 ? linum::sum(dg_ref(r) * v) : linum::sum(dg_ref(r * 2.0) * v);
      check_close(F(r), want);
    }
    Array batched = linum::vmap(F)(X);
    for (int i = 0; i < 4; ++i) check_close(row(batched, i), F(row(X, i)));
    linum::testing::check_grads(F, row(X, 1));
  }
  SUBCASE("while_loop whose body pulls back a vjp") {
    auto F = [](const Array& x) {
      using C = std::pair<Array, Array>;
      return linum::while_loop([](const C& c) { return c.first < 3; },
                               [](const C& c) {
                                 auto [y, pull] = linum::vjp([](const Array& z) { return linum::sin(z); }, c.second);
                                 return C(c.first + 1, std::get<0>(pull(c.second)));  // cos(z) * z
                               }, C(linum::array(0), x)).second;
    };
    Array x = row(X, 2), want = x;
    for (int k = 0; k < 3; ++k) want = linum::cos(want) * want;
    check_close(F(x), want);
    linum::testing::check_grads(F, x);
  }
  SUBCASE("checkpoint of grad (second derivatives through a remat node)") {
    auto dg = linum::checkpoint(linum::grad(g_ref));
    Array x = row(X, 0);
    check_close(dg(x), dg_ref(x));
    check_close(linum::grad([&](const Array& z) { return linum::sum(dg(z)); })(x), d2g_ref(x));
    check_close(linum::vmap(dg)(X), linum::vmap(dg_ref)(X));
  }
  SUBCASE("custom_vjp whose bwd calls grad") {
    auto F = linum::custom_vjp(g_ref, [](const Array& x) { return std::make_pair(g_ref(x), x); },
                               [](const Array& x, const Array& ct) { return std::make_tuple(linum::grad(g_ref)(x) * ct); });
    Array x = row(X, 3);
    check_close(linum::grad(F)(x), dg_ref(x));
    check_close(linum::grad([&](const Array& z) { return linum::sum(linum::grad(F)(z)); })(x), d2g_ref(x));
    check_close(linum::vmap(linum::grad(F))(X), linum::vmap(dg_ref)(X));
  }
  SUBCASE("scan over vmapped steps, and vmap over scans") {
    auto step = [](const Array& c, const Array& r) {
      return std::make_pair(c + linum::vmap([](const Array& e) { return linum::sin(e) * e; })(r), c);
    };
    auto [c, ys] = linum::scan(step, linum::zeros({3}, linum::float64), X);
    Array want = linum::zeros({3}, linum::float64);
    for (int i = 0; i < 4; ++i) want = want + linum::sin(row(X, i)) * row(X, i);
    check_close(c, want);
    Array b = linum::vmap([&](const Array& A) { return linum::scan(step, linum::zeros({3}, linum::float64), A).first; })(
        linum::stack({X, X * 2.0}, 0));
    check_close(row(b, 0), want);
  }
}

TEST_CASE("constructs nested in constructs match explicit loops and finite differences") {
  Array X = data({5, 3}, 6);
  SUBCASE("cond inside scan (per-step predicate), scan inside cond") {
    auto F = [](const Array& A) {
      return linum::scan([](const Array& c, const Array& r) {
               Array n = linum::cond(linum::sum(r) > 0.0, [&](const Array& z) { return c + linum::sin(z); },
                                     [&](const Array& z) { return c * 0.5 + z; }, r);
               return std::make_pair(n, linum::sum(n));
             }, linum::zeros({3}, A.dtype()), A).first;
    };
    Array c = linum::zeros({3}, linum::float64);
    for (int i = 0; i < 5; ++i) {
      Array r = row(X, i);
      c = values(linum::sum(r))[0] > 0 ? c + linum::sin(r) : c * 0.5 + r;
    }
    check_close(F(X), c);
    linum::testing::check_grads(F, X);
    auto G = [&](const Array& A) {
      return linum::cond(linum::sum(A) > 0.0, F, [](const Array& B) { return linum::sum(B, 0); }, A);
    };
    check_close(G(X), values(linum::sum(X))[0] > 0 ? c : linum::sum(X, 0));
    // Batched outer predicate: both branches scan, selection per example.
    Array XS = linum::stack({X, X * -1.0}, 0);
    Array gb = linum::vmap(G)(XS);
    check_close(row(gb, 0), G(X));
    check_close(row(gb, 1), G(X * -1.0));
  }
  SUBCASE("while_loop inside scan; scan inside while_loop") {
    auto halve_until = [](const Array& v) {  // halves until |v| sums below 1
      return linum::while_loop([](const Array& z) { return linum::sum(linum::abs(z)) > 1.0; },
                               [](const Array& z) { return z * 0.5; }, v);
    };
    auto F = [&](const Array& A) {
      return linum::scan([&](const Array& c, const Array& r) {
               return std::make_pair(c + halve_until(r * 4.0), c);
             }, linum::zeros({3}, A.dtype()), A).first;
    };
    Array want = linum::zeros({3}, linum::float64);
    for (int i = 0; i < 5; ++i) {
      Array z = row(X, i) * 4.0;
      while (values(linum::sum(linum::abs(z)))[0] > 1.0) z = z * 0.5;
      want = want + z;
    }
    check_close(F(X), want);
    linum::testing::check_grads(F, X);
    check_close(linum::vmap(halve_until)(X * 4.0), [&] {
      Arrays r;
      for (int i = 0; i < 5; ++i) r.push_back(halve_until(row(X, i) * 4.0));
      return stack_rows(r);
    }());
    using C = std::pair<Array, Array>;
    auto G = [](const Array& A) {
      return linum::while_loop([](const C& c) { return c.first < 2; },
                               [&](const C& c) {
                                 auto [s, ys] = linum::scan([](const Array& a, const Array& r) {
                                   return std::make_pair(a + r, a);
                                 }, c.second, A);
                                 return C(c.first + 1, linum::sin(s));
                               }, C(linum::array(0), linum::zeros({3}, A.dtype()))).second;
    };
    Array s = linum::zeros({3}, linum::float64);
    for (int k = 0; k < 2; ++k) s = linum::sin(s + linum::sum(X, 0));
    check_close(G(X), s);
    linum::testing::check_grads(G, X);
  }
  SUBCASE("checkpoint and custom_vjp inside scan; scan inside checkpoint and custom_vjp") {
    auto cell = [](const Array& h, const Array& r) { return linum::tanh(h * 0.9 + r); };
    auto ref = [&](const Array& A) {
      return linum::scan([&](const Array& h, const Array& r) { return std::make_pair(cell(h, r), std::nullopt); },
                         linum::zeros({3}, A.dtype()), A).first;
    };
    auto ck = linum::checkpoint(cell);
    auto F1 = [&](const Array& A) {
      return linum::scan([&](const Array& h, const Array& r) { return std::make_pair(ck(h, r), std::nullopt); },
                         linum::zeros({3}, A.dtype()), A).first;
    };
    auto F2 = linum::checkpoint(ref);
    auto cv = linum::custom_vjp(ref, [&](const Array& A) { return std::make_pair(ref(A), A); },
                                [&](const Array& A, const Array& ct) {
                                  return std::make_tuple(std::get<0>(linum::vjp(ref, A).second(ct)));
                                });
    auto ccell = linum::custom_vjp(cell, [&](const Array& h, const Array& r) {
      Array n = cell(h, r);
      return std::make_pair(n, n);
    }, [](const Array& n, const Array& ct) {
      Array d = ct * (1.0 - n * n);
      return std::make_tuple(d * 0.9, d);
    });
    auto F3 = [&](const Array& A) {
      return linum::scan([&](const Array& h, const Array& r) { return std::make_pair(ccell(h, r), std::nullopt); },
                         linum::zeros({3}, A.dtype()), A).first;
    };
    auto wsum = [](auto fn) { return [fn](const Array& A) { return linum::sum(fn(A) * linum::array({1.0, -2.0, 0.5})); }; };
    Array want = linum::grad(wsum(ref))(X);
    for (auto fn : std::vector<std::function<Array(const Array&)>>{F1, F2, cv, F3}) {
      check_close(fn(X), ref(X));
      check_close(linum::grad(wsum(fn))(X), want);
    }
    linum::testing::check_grads(ref, X);
    linum::testing::check_grads(F1, X);
    linum::testing::check_grads(F2, X);
  }
  SUBCASE("checkpoint inside custom_vjp's fwd, cond inside checkpoint, checkpoint inside cond") {
    auto inner = linum::checkpoint(g_ref);
    auto cv = linum::custom_vjp(g_ref, [&](const Array& x) { return std::make_pair(inner(x), x); },
                                [](const Array& x, const Array& ct) { return std::make_tuple(ct * dg_ref(x)); });
    Array x = row(X, 0);
    check_close(linum::grad(cv)(x), dg_ref(x));
    auto c1 = linum::checkpoint([](const Array& z) {
      return linum::cond(linum::sum(z) > 0.0, g_ref, [](const Array& w) { return linum::sum(w * w); }, z);
    });
    auto c2 = [&](const Array& z) {
      return linum::cond(linum::sum(z) > 0.0, linum::checkpoint(g_ref),
                         linum::checkpoint([](const Array& w) { return linum::sum(w * w); }), z);
    };
    for (int i = 0; i < 5; ++i) {
      Array r = row(X, i);
      Array want = values(linum::sum(r))[0] > 0 ? dg_ref(r) : r * 2.0;
      check_close(linum::grad(c1)(r), want);
      check_close(linum::grad(c2)(r), want);
    }
    check_close(linum::vmap(linum::grad(c1))(X), linum::vmap(linum::grad(c2))(X));
  }
}

TEST_CASE("jit of every construct: f, grad, vmap and vmap∘grad under jit equal eager bit for bit") {
  Array x = linum::array({0.4, -1.3, 2.1});
  Array X = data({4, 3}, 3) * 2.0;
  auto same = [](const Array& a, const Array& b) {
    return a.shape() == b.shape() && a.dtype() == b.dtype() && linum::all(linum::equal(a, b)).item<bool>();
  };
  for (const Form& form : forms()) {
    const auto& F = form.f;
    SUBCASE(form.name.c_str()) {
      CAPTURE(form.name);
      auto jf = linum::jit(F);
      CHECK(same(jf(x), F(x)));
      CHECK(same(jf(x * 0.5), F(x * 0.5)));  // replayed, cond/switch/while staged
      CHECK(jf.trace_count() == 1);
      CHECK(same(linum::jit(linum::vmap(F))(X), linum::vmap(F)(X)));
      CHECK(same(linum::jit(linum::vmap(linum::grad(F)))(X), linum::vmap(linum::grad(F))(X)));
      // cond/switch: a predicate computed from x inside grad, staged as one primitive.
      CHECK(same(linum::jit(linum::grad(F))(x), linum::grad(F)(x)));
    }
  }
}

}  // namespace test_composition
