// optax.projections: closed forms and hand-worked cases, optax's own test values, numpy
// references (/usr/bin/python3, float32, mirroring optax's sort-based simplex algorithm step for
// step, and an independent float64 bisection on theta with sum(max(v - theta, 0)) = scale), the
// Jacobian's closed form against jacrev / jacfwd and central finite differences, vmap against a
// loop, jit against eager, and set membership / idempotence / nearest-point properties.
#include <cmath>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "helpers.hpp"

namespace test_projections {

using namespace linum;
using optim_test::check_close;
using optim_test::f32;
using optim_test::f64;
using optim_test::values;
using testing::check_error;
namespace pj = optim::projections;
using Params = std::map<std::string, Array>;

namespace {
double l1(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += std::abs(x);
  return s;
}
double l2(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x * x;
  return std::sqrt(s);
}
double total(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s;
}
// optax's test Jacobian of the simplex projection: diag(S) - S S^T / |S|, S = (p > 0).
std::vector<double> simplex_jacobian(const std::vector<double>& p) {
  const std::size_t n = p.size();
  double card = 0;
  for (double x : p) card += x > 0;
  std::vector<double> j(n * n);
  for (std::size_t r = 0; r < n; ++r)
    for (std::size_t c = 0; c < n; ++c)
      j[r * n + c] = (r == c && p[r] > 0) - (p[r] > 0) * (p[c] > 0) / card;
  return j;
}
const Array kX2 = f32({0.3, 0.1, 0.45, -0.2, 0.25, 0.6});
}  // namespace

TEST_CASE("projection_non_negative and projection_box: jnp.relu / jnp.clip leafwise") {
  check_close(pj::projection_non_negative(f32({-1.0, 2.0, 3.0})), {0.0, 2.0, 3.0});
  const std::tuple<Array, Params> tree{f32({-1.0}), {{"k1", f32({1.0, -2.0})}}};
  const auto nn = pj::projection_non_negative(tree);
  check_close(std::get<0>(nn), {0.0});
  check_close(std::get<1>(nn).at("k1"), {1.0, 0.0});

  // optax's test: scalar bounds for one array, array bounds, and bounds shaped like a tree.
  const Array x = f32({-1.0, 2.0, 3.0});
  check_close(pj::projection_box(x, 0.0, 2.0), {0.0, 2.0, 2.0});
  check_close(pj::projection_box(x, zeros({3}), full({3}, 2.0)), {0.0, 2.0, 2.0});
  const Params t{{"a", f32({-1.0, 2.0})}, {"b", f32({3.0})}};
  const Params lo{{"a", Array(0.0)}, {"b", Array(0.0)}},
      hi{{"a", f32({1.0, 1.5})}, {"b", Array(2.0)}};
  const Params boxed = pj::projection_box(t, lo, hi);
  check_close(boxed.at("a"), {0.0, 1.5});
  check_close(boxed.at("b"), {2.0});
  CHECK(boxed.at("a").dtype() == float32);
  check_error<ValueError>(
      [&] {
        pj::projection_box(t, Params{{"a", Array(0.0)}}, hi);
      },
      {"projection_box", "lower", "structure"});
  check_error<ValueError>(
      [&] {
        pj::projection_box(t, lo, Params{{"c", Array(0.0)}, {"b", Array(1.0)}});
      },
      {"projection_box", "upper"});
}

TEST_CASE("projection_hypercube: box(0, scale), scale 1 by default, scalar or array") {
  const Array x = f32({-1.0, 2.0, 0.5});  // optax's test values
  check_close(pj::projection_hypercube(x), {0.0, 1.0, 0.5});
  check_close(pj::projection_hypercube(x, 0.8), {0.0, optim_test::f32v(0.8), 0.5});
  check_close(pj::projection_hypercube(x, f32({0.8, 0.8, 0.8})), {0.0, optim_test::f32v(0.8), 0.5});
  CHECK(pj::projection_hypercube(x).dtype() == float32);
}

TEST_CASE("projection_simplex: optax's algorithm, as numpy runs it, and the nearest point") {
  // numpy (float32, optax's steps): scale 1 -> [0.15000003576278687, 0, 0.30000001192092896, 0,
  // 0.10000002384185791, 0.4500000476837158]; scale 0.8 -> [0.10000000149011612, 0, 0.25, 0,
  // 0.05000000074505806, 0.4000000059604645]. The float64 bisection (an independent algorithm)
  // gives the same points to 1e-7: [0.15, 0, 0.3, 0, 0.1, 0.45] and [0.1, 0, 0.25, 0, 0.05, 0.4].
  const Array p1 = pj::projection_simplex(kX2);
  CHECK(p1.dtype() == float32);
  check_close(
      p1,
      {0.15000003576278687, 0.0, 0.30000001192092896, 0.0, 0.10000002384185791, 0.4500000476837158},
      0, 1e-7);
  check_close(p1, {0.15, 0.0, 0.3, 0.0, 0.1, 0.45}, 0, 1e-6);
  const Array p08 = pj::projection_simplex(kX2, 0.8);
  check_close(p08, {0.10000000149011612, 0.0, 0.25, 0.0, 0.05000000074505806, 0.4000000059604645},
              0, 1e-7);
  // In the set, and idempotent (a point of the simplex is its own projection).
  CHECK(std::abs(total(values(p08)) - 0.8) < 1e-6);
  for (double v : values(p08)) CHECK(v >= 0.0);
  check_close(pj::projection_simplex(p08, 0.8), values(p08), 0, 1e-7);
  // Nearest: no point of a grid over the simplex's support face is closer (KKT: the residual x - p
  // is theta on the support and <= theta off it, theta = 0.15 here).
  const std::vector<double> xv = values(kX2), pv = values(p1);
  const double theta = xv[0] - pv[0];
  for (std::size_t i = 0; i < xv.size(); ++i) {
    if (pv[i] > 0)
      CHECK(std::abs(xv[i] - pv[i] - theta) < 1e-6);
    else
      CHECK(xv[i] <= theta + 1e-6);
  }
  // float64 in, float64 out (numpy's float64 run: [0, 0, 0.55, 0, 0.44999999999999996, 0, 0, 0]).
  const Array p64 = pj::projection_simplex(f64({0.3, -1.2, 2.0, 0.7, 1.9, -0.4, 0.05, 1.1}));
  CHECK(p64.dtype() == float64);
  check_close(p64, {0.0, 0.0, 0.55, 0.0, 0.44999999999999996, 0.0, 0.0, 0.0}, 1e-15, 1e-16);
}

TEST_CASE("projection_simplex: a whole pytree is one vector (optax's docstring example)") {
  // Leaves in flattening order b = 0.5, w = (2.5, 3.2): sorted 3.2, 2.5, 0.5, k = 2 (0.5 + 2.5 -
  // 5.7 / 2 = 0.15 > 0, 1/3 + 0.5 - 6.2 / 3 < 0), theta = (5.7 - 1) / 2 = 2.35.
  const Params tree{{"w", f32({2.5, 3.2})}, {"b", Array(0.5f)}};
  const Params p = pj::projection_simplex(tree);
  check_close(p.at("w"), {0.15, 0.85}, 0, 2e-7);
  check_close(p.at("b"), {0.0});
  CHECK(p.at("b").ndim() == 0);
  const Params p08 = pj::projection_simplex(tree, 0.8);
  CHECK(std::abs(total(values(p08.at("w"))) + p08.at("b").item<float>() - 0.8) < 1e-6);
  // optax's edge case: -inf never enters the support and the rest share the mass equally.
  const float inf = std::numeric_limits<float>::infinity();
  check_close(pj::projection_simplex(array({0.0f, 0.0f, -inf})), {0.5, 0.5, 0.0});
  check_close(pj::projection_simplex(array({0.0f, 0.0f, -inf}), 0.8), {0.4, 0.4, 0.0}, 0, 1e-7);
  check_error<ValueError>(
      [&] {
        pj::projection_simplex(kX2, f32({1.0, 2.0}));
      },
      {"projection_simplex", "scale", "scalar", "(2,)"});
}

TEST_CASE("projection_simplex: its derivative is optax's custom JVP, in every mode") {
  const std::vector<double> jac_true = simplex_jacobian(values(pj::projection_simplex(kX2)));
  auto proj = [](const Array& x) { return pj::projection_simplex(x); };
  check_close(jacrev(proj)(kX2), jac_true, 0, 1e-6);
  check_close(jacfwd(proj)(kX2), jac_true, 0, 1e-6);
  // Central finite differences of the JVP (eps 1e-3 in float64: the support is unchanged).
  const Array x64 = astype(kX2, float64), v = f64({0.5, -1.0, 0.25, 2.0, -0.75, 1.5});
  const Array jvp_v = std::get<1>(jvp(proj, std::make_tuple(x64), std::make_tuple(v)));
  const double eps = 1e-3;
  const Array fd = (proj(x64 + eps * v) - proj(x64 - eps * v)) / (2 * eps);
  check_close(jvp_v, values(fd), 0, 1e-9);
  // The second derivative is zero, as differentiating optax's custom JVP rule gives.
  auto first = [](const Array& x) { return pj::projection_simplex(x)[0] * 3.0; };
  check_close(jacfwd(grad(first))(x64), std::vector<double>(36, 0.0));
  // grad of a scalar of the projection also differentiates the scale (d sum(p) / d scale = 1).
  auto mass = [](const Array& x, const Array& s) { return sum(pj::projection_simplex(x, s)); };
  check_close(grad(mass, argnums<1>)(x64, Array(0.8)), {1.0}, 0, 1e-12);
}

TEST_CASE("projection_simplex under vmap (scale batched too) and jit agrees with the eager loop") {
  // numpy per row: [0.35, 0.15, 0.5, 0], [0, 0, 0, 0.5], [0.5, 0.5, 0.5, 0.5].
  const Array xs = astype(
      array(std::vector<double>{0.3, 0.1, 0.45, -0.2, 1.0, -1.0, 0.5, 2.0, 0.0, 0.0, 0.0, 0.0},
            {3, 4}),
      float32);
  const Array scales = f32({1.0, 0.5, 2.0});
  const Array batched =
      vmap([](const Array& x, const Array& s) { return pj::projection_simplex(x, s); })(xs, scales);
  const std::vector<double> b = values(batched);
  check_close(b, {0.35, 0.15, 0.5, 0.0, 0.0, 0.0, 0.0, 0.5, 0.5, 0.5, 0.5, 0.5}, 0, 1e-7);
  for (std::int64_t r = 0; r < 3; ++r) {
    const Array row = pj::projection_simplex(xs[r], scales[r]);
    check_close(row, std::vector<double>(b.begin() + 4 * r, b.begin() + 4 * r + 4), 0, 0);
  }
  auto jitted = jit([](const Array& x) { return pj::projection_simplex(x); });
  check_close(jitted(kX2), values(pj::projection_simplex(kX2)), 0, 0);
}

TEST_CASE("projection_l1_sphere / l1_ball: sign * simplex(|x|), the ball only outside it") {
  // numpy (float32, optax's steps): y = (1.5, -2, 0.5, -0.25, 2.25), |y|_1 = 6.5, radius 2 ->
  // (0.25, -0.75, 0, 0, 1); the float64 bisection agrees.
  const Array y = f32({1.5, -2.0, 0.5, -0.25, 2.25});
  check_close(pj::projection_l1_ball(y, 2.0), {0.25, -0.75, 0.0, 0.0, 1.0}, 0, 1e-7);
  check_close(pj::projection_l1_sphere(y, 2.0), {0.25, -0.75, 0.0, 0.0, 1.0}, 0, 1e-7);
  // Inside (and on the boundary of) the ball: unchanged; the sphere still scales up to it.
  check_close(pj::projection_l1_ball(y, 13.0), values(y));
  check_close(pj::projection_l1_ball(y, 6.5), values(y));
  CHECK(std::abs(l1(values(pj::projection_l1_sphere(y, 13.0))) - 13.0) < 1e-5);
  // optax's tree: (a, a) with a = (0.5, 2.1, -3.5): the norms land on the radius.
  const Array a = f32({0.5, 2.1, -3.5});
  const std::tuple<Array, Array> tree{a, a};
  for (double r : {1.0, 3.21}) {
    const auto p = pj::projection_l1_sphere(tree, r);
    CHECK(std::abs(l1(values(std::get<0>(p))) + l1(values(std::get<1>(p))) - r) < 1e-5);
  }
  const auto half = pj::projection_l1_ball(tree, 6.1);  // |tree|_1 = 12.2
  CHECK(std::abs(l1(values(std::get<0>(half))) + l1(values(std::get<1>(half))) - 6.1) < 1e-5);
  // optax's test: the ball's gradient at 0 is 1 (the identity branch), not NaN.
  auto f = [](const Array& x) { return pj::projection_l1_ball(x); };
  check_close(grad(f)(Array(0.0f)), {1.0});
  // A batched radius under vmap: each row takes its own branch.
  const Array rows =
      vmap([&](const Array& r) { return pj::projection_l1_ball(y, r); })(f32({2.0, 13.0}));
  check_close(rows[0], {0.25, -0.75, 0.0, 0.0, 1.0}, 0, 1e-7);
  check_close(rows[1], values(y));
}

TEST_CASE("projection_l2_sphere / l2_ball: x * scale / |x|, the ball only outside it") {
  // x = (3, 4), |x| = 5: the sphere of radius 2 gives (1.2, 1.6); so does the ball, and the
  // ball of radius 10 leaves x alone.
  const Array x = f64({3.0, 4.0});
  check_close(pj::projection_l2_sphere(x, 2.0), {1.2, 1.6}, 1e-15);
  check_close(pj::projection_l2_ball(x, 2.0), {1.2, 1.6}, 1e-15);
  check_close(pj::projection_l2_ball(x, 10.0), {3.0, 4.0});
  check_close(pj::projection_l2_ball(x), {0.6, 0.8}, 1e-15);
  // The Jacobian outside the ball is s / |x| (I - x x^T / |x|^2) = 0.4 (I - [9 12; 12 16] / 25).
  auto f = [](const Array& v) { return pj::projection_l2_ball(v, 2.0); };
  check_close(jacrev(f)(x), {0.4 * 16 / 25, -0.4 * 12 / 25, -0.4 * 12 / 25, 0.4 * 9 / 25}, 1e-14,
              1e-15);
  auto g = [](const Array& v) { return sum(pj::projection_l2_ball(v)); };
  check_close(grad(g)(Array(0.0f)), {1.0});  // optax's test: not NaN at 0
  const Array a = f32({0.5, 2.1, -3.5});
  const Params tree{{"u", a}, {"v", reshape(a, {3, 1})}};
  const Params p = pj::projection_l2_sphere(tree, 3.21);
  CHECK(std::abs(std::hypot(l2(values(p.at("u"))), l2(values(p.at("v")))) - 3.21) < 1e-5);
  CHECK(p.at("v").shape() == Shape{3, 1});
}

TEST_CASE("projection_linf_ball: clip to [-scale, scale] in each leaf's dtype") {
  const Params tree{{"a", f32({0.5, 2.1, -3.5})}, {"b", f64({-0.2})}};
  const Params p = pj::projection_linf_ball(tree, 1.0);
  check_close(p.at("a"), {0.5, 1.0, -1.0});
  check_close(p.at("b"), {-0.2});
  CHECK(p.at("a").dtype() == float32);
  CHECK(p.at("b").dtype() == float64);
  check_close(pj::projection_linf_ball(f32({0.5, 2.1, -3.5}), 4.0), {0.5, 2.1, -3.5}, 1e-7);
  // d/dscale of sum(clip(x, -s, s)) counts the entries clipped to +s minus those clipped to -s:
  // 1 at s = 1 for (2.1, 0.5).
  auto f = [](const Array& s) { return sum(pj::projection_linf_ball(f64({2.1, 0.5}), s)); };
  check_close(grad(f)(Array(1.0)), {1.0});
}

TEST_CASE("projection_vector / hyperplane / halfspace: optax's test values and closed forms") {
  // optax's tests: x = (1, 2), a = (3, 4), b = 5 (a tuple of scalars).
  using T2 = std::tuple<Array, Array>;
  const T2 x{Array(1.0), Array(2.0)}, a{Array(3.0), Array(4.0)};
  const T2 pv = pj::projection_vector(x, a);  // <x, a> / <a, a> = 11 / 25
  check_close(std::get<0>(pv), {33.0 / 25}, 1e-15);
  check_close(std::get<1>(pv), {44.0 / 25}, 1e-15);
  const T2 ph = pj::projection_hyperplane(x, a, 5.0);  // x + (5 - 11) / 25 a
  check_close(std::get<0>(ph), {7.0 / 25}, 1e-15);
  check_close(std::get<1>(ph), {26.0 / 25}, 1e-15);
  const T2 hs = pj::projection_halfspace(x, a, 5.0);
  check_close(std::get<0>(hs), {7.0 / 25}, 1e-15);
  check_close(std::get<1>(hs), {26.0 / 25}, 1e-15);
  const T2 x2{Array(1.0), Array(-2.0)};  // <x2, a> = -5 <= 5: already inside
  const T2 hs2 = pj::projection_halfspace(x2, a, 5.0);
  check_close(std::get<0>(hs2), {1.0});
  check_close(std::get<1>(hs2), {-2.0});
  // Idempotent: the hyperplane point projects to itself; <a, y> = b.
  const T2 again = pj::projection_hyperplane(ph, a, 5.0);
  check_close(std::get<0>(again), {7.0 / 25}, 1e-14);
  check_close(std::get<1>(again), {26.0 / 25}, 1e-14);
  // Errors: leaf shapes must match (optax asserts it), b is a scalar, structures agree.
  check_error<ValueError>(
      [] {
        pj::projection_vector(f32({1.0, 2.0}), f32({1.0, 2.0, 3.0}));
      },
      {"projection_vector", "(2,)", "(3,)"});
  check_error<ValueError>(
      [] {
        pj::projection_hyperplane(f32({1.0}), f32({1.0}), f32({1.0, 2.0}));
      },
      {"projection_hyperplane", "b", "scalar"});
  check_error<ValueError>(
      [] {
        pj::projection_halfspace(Params{{"w", Array(1.0)}}, Params{{"v", Array(1.0)}}, 0.0);
      },
      {"projection_halfspace", "a", "structure"});
  check_error<ValueError>(
      [] {
        pj::projection_l2_ball(f32({1.0}), f32({1.0, 2.0}));
      },
      {"projection_l2_ball", "scale", "scalar"});
}

}  // namespace test_projections
