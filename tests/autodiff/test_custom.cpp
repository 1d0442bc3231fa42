// custom_vjp, checkpoint/remat and remat_scan: the custom rule is what grad uses (deliberately
// non-standard rules make that visible), it works under vmap and nested grad, checkpoint runs f
// exactly twice per grad, and misuse gives JAX's errors.
#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include "check_grads.hpp"
#include "transform_testing.hpp"

namespace test_custom {

using linum::Array;
using linum::Arrays;
using transform_testing::check_close;
using transform_testing::data;
using transform_testing::row;
using transform_testing::stack_rows;
using linum::testing::values;

namespace {
using Params = std::map<std::string, Array>;

// sin with a rule that doubles the true derivative, and counters of what ran.
struct Counted {
  int f = 0, fwd = 0, bwd = 0;
};
auto doubled_sin(Counted& n) {
  return linum::custom_vjp([&n](const Array& x) { ++n.f; return linum::sin(x); },
                           [&n](const Array& x) { ++n.fwd; return std::make_pair(linum::sin(x), linum::cos(x)); },
                           [&n](const Array& cos_x, const Array& g) { ++n.bwd; return std::make_tuple(g * cos_x * 2.0); });
}
}  // namespace

TEST_CASE("custom_vjp: grad uses bwd; outside grad only f runs, under grad only abstractly") {
  Counted n;
  auto f = doubled_sin(n);
  Array x = linum::array({0.3, -1.2, 2.0});
  check_close(f(x), linum::sin(x));
  CHECK(n.f == 1);
  CHECK(n.fwd == 0);
  Array g = linum::grad([&](const Array& v) { return linum::sum(f(v)); })(x);
  check_close(g, linum::cos(x) * 2.0);
  CHECK(n.fwd == 1);
  CHECK(n.bwd == 1);
  CHECK(n.f == 2);  // traced once on shapes only, as JAX traces f, to check fwd's output type
  auto [y, pull] = linum::vjp(f, x);
  check_close(y, linum::sin(x));
  check_close(std::get<0>(pull(linum::ones_like(x))), linum::cos(x) * 2.0);
}

TEST_CASE("custom_vjp: nondiff_argnums, pytree residuals and outputs, None cotangents") {
  // JAX's clip_gradient: identity forward, clipped cotangent backward.
  auto clip_gradient = linum::custom_vjp(
      [](double, double, const Array& x) { return x; },
      [](double, double, const Array& x) { return std::make_pair(x, std::tuple<>{}); },
      [](double lo, double hi, std::tuple<>, const Array& g) { return std::make_tuple(linum::clip(g, lo, hi)); },
      linum::nondiff_argnums<0, 1>);
  Array x = linum::array({1.0, -2.0});
  Array g = linum::grad([&](const Array& v) { return linum::sum(clip_gradient(-0.5, 0.5, v * 3.0)); })(x);
  check_close(g, linum::array({1.5, 1.5}));

  // Two differentiable arguments (one a dict), residuals a dict, output a pair.
  auto f = linum::custom_vjp(
      [](const Params& p, const Array& x) { return std::make_pair(p.at("a") * x, linum::sum(x)); },
      [](const Params& p, const Array& x) {
        return std::make_pair(std::make_pair(p.at("a") * x, linum::sum(x)), Params{{"a", p.at("a")}, {"x", x}});
      },
      [](const Params& r, const std::pair<Array, Array>& ct) {
        // True rule plus 1 on x's cotangent, so that the custom rule is visible.
        Params gp{{"a", ct.first * r.at("x")}};
        return std::make_tuple(gp, ct.first * r.at("a") + ct.second + 1.0);
      });
  Params p{{"a", linum::array({2.0, 3.0})}};
  auto [gp, gx] = linum::grad([&](const Params& q, const Array& v) {
    auto [m, s] = f(q, v);
    return linum::sum(m) + s * 2.0;
  }, linum::argnums<0, 1>)(p, x);
  check_close(gp["a"], x);
  check_close(gx, p["a"] + 3.0);

  // An empty Array() cotangent means zero.
  auto stop = linum::custom_vjp([](const Array& a, const Array& b) { return a * b; },
                                [](const Array& a, const Array& b) { return std::make_pair(a * b, b); },
                                [](const Array& b, const Array& g) { return std::make_tuple(g * b, Array()); });
  auto [ga, gb] = linum::grad([&](const Array& a, const Array& b) { return linum::sum(stop(a, b)); },
                              linum::argnums<0, 1>)(x, x * 2.0);
  check_close(ga, x * 2.0);
  check_close(gb, linum::zeros({2}, linum::float64));
}

TEST_CASE("custom_vjp under vmap: values, vmap(grad) and grad(vmap) use the rule per example") {
  Counted n;
  auto f = doubled_sin(n);
  Array xs = data({4, 3}, 1);
  check_close(linum::vmap(f)(xs), linum::sin(xs));
  Array g1 = linum::vmap(linum::grad([&](const Array& v) { return linum::sum(f(v)); }))(xs);
  check_close(g1, linum::cos(xs) * 2.0);
  Array g2 = linum::grad([&](const Array& X) { return linum::sum(linum::vmap(f)(X)); })(xs);
  check_close(g2, linum::cos(xs) * 2.0);
  // An unbatched argument of a vmapped custom rule gets the sum of the per-example cotangents.
  auto mul = linum::custom_vjp([](const Array& w, const Array& x) { return w * x; },
                               [](const Array& w, const Array& x) { return std::make_pair(w * x, std::make_pair(w, x)); },
                               [](const std::pair<Array, Array>& r, const Array& g) {
                                 return std::make_tuple(g * r.second, g * r.first);
                               });
  Array w = linum::array({0.5, -1.0, 2.0});
  Array gw = linum::grad([&](const Array& W) {
    return linum::sum(linum::vmap([&](const Array& x) { return mul(W, x); })(xs));
  })(w);
  check_close(gw, linum::sum(xs, 0));
}

TEST_CASE("custom_vjp under nested grad: a differentiable bwd gives second derivatives") {
  // cube with its true rule written in bwd: d2/dx2 x^3 = 6x flows through the residuals.
  auto cube = linum::custom_vjp([](const Array& x) { return x * x * x; },
                                [](const Array& x) { return std::make_pair(x * x * x, x); },
                                [](const Array& x, const Array& g) { return std::make_tuple(g * 3.0 * x * x); });
  Array x = linum::array(0.7);
  Array d2 = linum::grad(linum::grad(cube))(x);
  CHECK(values(d2)[0] == doctest::Approx(6 * 0.7));
  Array d3 = linum::grad(linum::grad(linum::grad(cube)))(x);
  CHECK(values(d3)[0] == doctest::Approx(6.0));
  Array per = linum::vmap(linum::grad(linum::grad(cube)))(linum::array({1.0, -2.0}));
  check_close(per, linum::array({6.0, -12.0}));
}

TEST_CASE("custom_vjp: closures over constants work; JAX's errors for the rest") {
  Array scale = linum::array({2.0, 3.0});
  auto f = linum::custom_vjp([&](const Array& x) { return x * scale; },
                             [&](const Array& x) { return std::make_pair(x * scale, scale); },
                             [](const Array& s, const Array& g) { return std::make_tuple(g * s); });
  Array x = linum::array({1.0, 1.0});
  check_close(linum::grad([&](const Array& v) { return linum::sum(f(v)); })(x), scale);

  CHECK_ERROR_CONTAINS(linum::jvp(f, std::tuple{x}, std::tuple{x}),
                       "can't apply forward-mode autodiff (jvp) to a custom_vjp function.");
  CHECK_ERROR_CONTAINS(linum::grad([&](const Array& w) {
                         auto g = linum::custom_vjp([&](const Array& v) { return v * w; },
                                                    [&](const Array& v) { return std::make_pair(v * w, v); },
                                                    [](const Array& v, const Array& c) { return std::make_tuple(c * v); });
                         return linum::sum(g(x));
                       })(x),
                       "Detected differentiation of a custom_vjp function with respect to a closed-over value");
  auto wrong = linum::custom_vjp([](const Array& v) { return v; },
                                 [](const Array& v) { return std::make_pair(v, v); },
                                 [](const Array&, const Array& g) { return std::make_tuple(linum::sum(g)); });
  CHECK_ERROR_CONTAINS(linum::grad([&](const Array& v) { return linum::sum(wrong(v)); })(x),
                       "Custom VJP bwd rule must produce an output with the same shape/dtypes as the "
                       "args tuple of the primal function, but at input leaf 0 the bwd rule produced an "
                       "output of shape/dtype float64[] corresponding to an input of shape/dtype float64[2]");
}

// ---- checkpoint ---------------------------------------------------------------------------------

TEST_CASE("checkpoint: same values and gradients; f runs exactly twice per grad") {
  int calls = 0;
  auto f = [&](const Array& w, const Array& x) {
    ++calls;
    Array h = x;
    for (int i = 0; i < 5; ++i) h = linum::tanh(h * w + 0.1);
    return linum::sum(h * h);
  };
  auto cf = linum::checkpoint(f);
  Array w = linum::array({0.4, -0.3}), x = linum::array({1.0, 2.0});
  check_close(cf(w, x), f(w, x));
  calls = 0;
  auto [gw, gx] = linum::grad(cf, linum::argnums<0, 1>)(w, x);
  CHECK(calls == 2);
  auto [ew, ex] = linum::grad(f, linum::argnums<0, 1>)(w, x);
  check_close(gw, ew);
  check_close(gx, ex);
  calls = 0;
  linum::remat(f)(w, x);
  CHECK(calls == 1);
  // jvp, vjp against finite differences; second derivatives.
  linum::testing::check_grads([&](const Arrays& a) { return cf(a[0], a[1]); }, {w, x});
  auto s = linum::checkpoint([](const Array& v) { return linum::sin(v) * v; });
  CHECK(values(linum::grad(linum::grad(s))(linum::array(0.3)))[0] ==
        doctest::Approx(2 * std::cos(0.3) - 0.3 * std::sin(0.3)));
}

TEST_CASE("checkpoint: ints, bools and strings are static arguments, the same in the recompute") {
  std::vector<std::string> seen;
  auto f = [&](const Array& x, bool relu, int k, const std::string& tag) {
    seen.push_back(tag + (relu ? "+" : "-") + std::to_string(k));
    Array y = x * static_cast<float>(k);
    return relu ? linum::maximum(y, Array(0.0f)) : y;
  };
  auto cf = linum::checkpoint(f);
  Array x = linum::array(std::vector<float>{-1.0f, 2.0f}, {2});
  Array g1 = linum::grad([&](const Array& v) { return linum::sum(cf(v, true, 3, "a")); })(x);
  CHECK(values(g1) == std::vector<double>{0.0, 3.0});
  // The backward pass re-ran f with the same static values.
  CHECK(seen == std::vector<std::string>{"a+3", "a+3"});
  Array g2 = linum::grad([&](const Array& v) { return linum::sum(cf(v, false, 2, "b")); })(x);
  CHECK(values(g2) == std::vector<double>{2.0, 2.0});
}

TEST_CASE("checkpoint: pytree arguments and outputs, vmap(grad) and grad(vmap)") {
  auto layer = linum::checkpoint([](const Params& p, const Array& x) {
    Array h = linum::tanh(linum::matmul(x, p.at("w")) + p.at("b"));
    return std::make_pair(h, linum::sum(h));
  });
  Params p{{"w", data({3, 2}, 2)}, {"b", data({2}, 3)}};
  Array xs = data({4, 3}, 4);
  auto loss = [&](const Params& q, const Array& x) {
    auto [h, s] = layer(q, x);
    return linum::sum(h * h) + s;
  };
  auto plain = [](const Params& q, const Array& x) {
    Array h = linum::tanh(linum::matmul(x, q.at("w")) + q.at("b"));
    return linum::sum(h * h) + linum::sum(h);
  };
  Params g1 = linum::vmap(linum::grad(loss), {{linum::VmapOptions::kNone, 0}})(p, xs);
  Params e1 = linum::vmap(linum::grad(plain), {{linum::VmapOptions::kNone, 0}})(p, xs);
  for (const auto& [k, v] : e1) check_close(g1[k], v);
  auto total = [&](auto fn) {
    return [fn](const Params& q, const Array& X) {
      return linum::sum(linum::vmap([&](const Array& x) { return fn(q, x); })(X));
    };
  };
  Params g2 = linum::grad(total(loss))(p, xs);
  Params e2 = linum::grad(total(plain))(p, xs);
  for (const auto& [k, v] : e2) check_close(g2[k], v);
}

TEST_CASE("checkpoint: capturing an array that grad differentiates is an error") {
  Array w = linum::array({0.5, 2.0});
  CHECK_ERROR_CONTAINS(linum::grad([&](const Array& W) {
                         return linum::sum(linum::checkpoint([&](const Array& x) { return x * W; })(w));
                       })(w),
                       "checkpoint: the function closes over an array traced by grad");
}

TEST_CASE("remat_scan equals scan in value and gradient; each step runs twice per grad") {
  int steps = 0;
  auto body = [&](const Array& h, const Array& w) {
    ++steps;
    return linum::tanh(h * w + 0.05);
  };
  Array ws = data({12, 3}, 5), h0 = data({3}, 6);
  auto plain = [&](const Array& h, const Array& W) {
    return linum::sum(linum::scan([&](const Array& c, const Array& w) { return std::make_pair(body(c, w), std::nullopt); },
                                  h, W).first);
  };
  auto remat = [&](const Array& h, const Array& W) { return linum::sum(linum::remat_scan(body, h, W, {3, 4})); };
  check_close(remat(h0, ws), plain(h0, ws));
  steps = 0;
  auto [gh, gw] = linum::grad(remat, linum::argnums<0, 1>)(h0, ws);
  CHECK(steps == 24);
  auto [eh, ew] = linum::grad(plain, linum::argnums<0, 1>)(h0, ws);
  check_close(gh, eh);
  check_close(gw, ew);
  CHECK_ERROR_CONTAINS(linum::remat_scan(body, h0, ws, {5, 2}), "must equal the product of lengths, 10");
}

}  // namespace test_custom
