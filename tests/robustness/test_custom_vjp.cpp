// custom_vjp rules that disagree with their function: JAX's errors for fwd's primal output and
// bwd's cotangents; residuals of any structure; unbatched residuals stay unbatched under vmap.
#include <doctest/doctest.h>

#include <linum/autodiff/custom.hpp>
#include <linum/autodiff/ops.hpp>
#include <linum/autodiff/transforms.hpp>

#include <map>
#include <optional>
#include <string>
#include <tuple>

#include "support.hpp"

namespace test_custom_vjp {

using namespace linum;

namespace {
using Params = std::map<std::string, Array>;
// Same shape and values within 1e-12.
bool allclose(const Array& a, const Array& b) {
  return a.shape() == b.shape() && max(abs(a - b)).item<double>() < 1e-12;
}
const char* kFwdHead =
    "Custom VJP fwd rule must produce a pair (list or tuple of length two) where the first element "
    "represents the primal output";
}  // namespace

TEST_CASE("custom_vjp: fwd's primal output must have f's structure, shapes and dtypes") {
  const Array x = array<double>({1.0, 2.0});
  auto bwd = [](const Array&, const Arrays& g) { return std::make_tuple(g[0]); };
  auto loss = [](const auto& fn) { return [fn](const Array& v) { return sum(fn(v)[0]); }; };
  // Two outputs where f has one: the C++ type is the same (a list), the structure is not.
  auto extra = custom_vjp([](const Array& v) { return Arrays{v}; },
                          [](const Array& v) {
                            return std::make_pair(Arrays{v, v}, v);
                          },
                          bwd);
  robust::check_error<TypeError>([&] { grad(loss(extra))(x); },
                                 {kFwdHead, "container/pytree structure:\n    PyTreeDef([*, *])",
                                  "had output container/pytree structure:\n    PyTreeDef([*])"});
  auto shape = custom_vjp(
      [](const Array& v) { return Arrays{v}; },
      [](const Array& v) { return std::make_pair(Arrays{zeros({3}, float64)}, v); }, bwd);
  robust::check_error<TypeError>([&] { grad(loss(shape))(x); },
                                 {kFwdHead, "shapes/dtypes of:\n    [float64[3]]",
                                  "had output shapes/dtypes of:\n    [float64[2]]"});
  auto dtype =
      custom_vjp([](const Array& v) { return Arrays{v}; },
                 [](const Array& v) { return std::make_pair(Arrays{v.astype(float32)}, v); }, bwd);
  robust::check_error<TypeError>(
      [&] { grad(loss(dtype))(x); },
      {"[float32[2]]", "had output shapes/dtypes of:\n    [float64[2]]"});
  // Under vmap the check is per example, and a correct rule still passes.
  auto ok = custom_vjp([](const Array& v) { return Arrays{v * 2.0}; },
                       [](const Array& v) { return std::make_pair(Arrays{v * 2.0}, v); },
                       [](const Array&, const Arrays& g) { return std::make_tuple(g[0] * 3.0); });
  CHECK(allclose(vmap(grad(loss(ok)))(ones({4, 2}, float64)), full({4, 2}, 3.0)));
  robust::check_error<TypeError>(
      [&] {
        vmap(grad(loss(shape)))(ones({4, 2}, float64));
      },
      {"[float64[3]]", "[float64[2]]"});
}

TEST_CASE("custom_vjp: bwd must give each argument a cotangent of its structure, shape and dtype") {
  const Params p{{"a", array<double>({1.0, 2.0})}};
  const Array x = array<double>({3.0, 4.0});
  auto f = [](const Params& q, const Array& v) { return sum(q.at("a") * v); };
  auto fwd = [f](const Params& q, const Array& v) { return std::make_pair(f(q, v), v); };
  // Same leaf count under another key: before, the cotangent was silently given to "a".
  auto renamed = custom_vjp(f, fwd, [](const Array& v, const Array& g) {
    return std::make_tuple(Params{{"b", v * g}}, v * g);
  });
  robust::check_error<TypeError>(
      [&] { grad([&](const Params& q) { return renamed(q, x); })(p); },
      {"Custom VJP bwd rule must produce an output with the same container (pytree) structure",
       "but got bwd output structure PyTreeDef({'b': *}) for primal input structure "
       "PyTreeDef({'a': *})"});
  auto wrong_dtype = custom_vjp(f, fwd, [](const Array& v, const Array& g) {
    return std::make_tuple(Params{{"a", v * g}}, (v * g).astype(float32));
  });
  robust::check_error<ValueError>(
      [&] { grad([&](const Array& v) { return wrong_dtype(p, v); })(x); },
      {"Custom VJP bwd rule must produce an output with the same shape/dtypes as the args tuple",
       "at input leaf 1 the bwd rule produced an output of shape/dtype float32[2] corresponding "
       "to an input of shape/dtype float64[2]"});
  // A whole-argument None (empty Array) is zeros of that argument, dict or not.
  auto none = custom_vjp(
      f, fwd, [](const Array& v, const Array& g) { return std::make_tuple(Array(), v * g); });
  auto [gp, gx] =
      grad([&](const Params& q, const Array& v) { return none(q, v); }, argnums<0, 1>)(p, x);
  CHECK(allclose(gp.at("a"), zeros({2}, float64)));
  CHECK(allclose(gx, x));
}

TEST_CASE("custom_vjp: residuals may be std::nullopt, an empty tuple or an empty dict") {
  const Array x = array<double>({0.5, -1.5});
  auto twice = [](const auto& res) {
    using R = std::decay_t<decltype(res)>;
    return custom_vjp([](const Array& v) { return v * v; },
                      [res](const Array& v) { return std::make_pair(v * v, res); },
                      [](const R&, const Array& g) { return std::make_tuple(g * 5.0); });
  };
  auto loss = [](const auto& fn) { return [fn](const Array& v) { return sum(fn(v)); }; };
  CHECK(allclose(grad(loss(twice(std::nullopt)))(x), full({2}, 5.0)));
  CHECK(allclose(grad(loss(twice(std::tuple<>{})))(x), full({2}, 5.0)));
  CHECK(allclose(grad(loss(twice(Params{})))(x), full({2}, 5.0)));
  CHECK(allclose(grad(loss(twice(std::optional<Array>{})))(x), full({2}, 5.0)));
  CHECK(allclose(grad([&](const Array& X) { return sum(vmap(twice(std::nullopt))(X)); })(
                     ones({3, 2}, float64)),
                 full({3, 2}, 5.0)));
}

TEST_CASE(
    "custom_vjp under vmap: a residual that does not depend on the mapped input stays unbatched") {
  // w * x with residuals (w, x): vmapped over x only, w must reach bwd unbatched (JAX keeps it
  // so; before, it was broadcast to axis_size copies) while x arrives batched.
  std::optional<bool> w_batched, x_batched;
  auto mul = custom_vjp(
      [](const Array& w, const Array& x) { return w * x; },
      [](const Array& w, const Array& x) { return std::make_pair(w * x, std::make_pair(w, x)); },
      [&](const std::pair<Array, Array>& r, const Array& g) {
        w_batched = r.first.is_tracer();
        x_batched = r.second.is_tracer();
        return std::make_tuple(g * r.second, g * r.first);
      });
  const Array w = array<double>({0.5, -1.0, 2.0});
  const Array xs = reshape(arange(12, float64), {4, 3});
  const Array gw = grad(
      [&](const Array& W) { return sum(vmap([&](const Array& x) { return mul(W, x); })(xs)); })(w);
  CHECK(allclose(gw, sum(xs, 0)));
  REQUIRE(w_batched.has_value());
  CHECK_FALSE(*w_batched);
  CHECK(*x_batched);
  // The per-example cotangent of the batched input still uses the unbatched w.
  const Array gx = grad(
      [&](const Array& X) { return sum(vmap([&](const Array& x) { return mul(w, x); })(X)); })(xs);
  CHECK(allclose(gx, broadcast_to(w, {4, 3})));
}

}  // namespace test_custom_vjp
