// cond/switch_/while_loop under jit with a grad, jvp or vmap between jit and the predicate: they
// are staged as one primitive whose rules transform the branches. One trace serves every
// branch choice; results equal the eager transforms bit for bit and finite differences.
#include <doctest/doctest.h>

#include <functional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <linum/linum.hpp>

#include "transform_testing.hpp"

namespace test_jit_control {

using namespace linum;
using namespace transform_testing;

namespace {

bool same(const Array& a, const Array& b) {
  return a.shape() == b.shape() && a.dtype() == b.dtype() && all(equal(a, b)).item<bool>();
}
template <class T>
bool same_leaves(const T& a, const T& b) {
  const Arrays la = linum::detail::tree_arrays(a), lb = linum::detail::tree_arrays(b);
  if (la.size() != lb.size()) return false;
  for (std::size_t i = 0; i < la.size(); ++i)
    if (!same(la[i], lb[i])) return false;
  return true;
}

// Central differences of a scalar f at x (float64), one entry at a time.
Array fd_grad(const std::function<Array(const Array&)>& f, const Array& x) {
  const double h = 1e-6;
  std::vector<double> v = values(x), g(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    std::vector<double> p = v, m = v;
    p[i] += h;
    m[i] -= h;
    g[i] =
        (f(array(p, x.shape())).item<double>() - f(array(m, x.shape())).item<double>()) / (2 * h);
  }
  return array(g, x.shape());
}

// The branches close over w, an argument that grad differentiates: it becomes an input of the
// staged primitive (closure conversion), so its cotangent flows.
Array branchy(const Array& x, const Array& w) {
  return sum(cond(
      sum(x) > 0.0, [&](const Array& a) { return sin(a) * w; },
      [&](const Array& a) { return a * a - w; }, x));
}

// Three branches picked by floor(sum(x)), clamped as switch_ clamps.
Array three(const Array& x) {
  std::vector<std::function<Array(const Array&)>> br{[](const Array& a) { return a * a * a; },
                                                     [](const Array& a) { return sin(a) * a; },
                                                     [](const Array& a) { return exp(a * 0.5); }};
  return sum(switch_(astype(floor(sum(x)), int32), br, x));
}

const Array kX = array({0.4, -1.3, 2.1});

}  // namespace

TEST_CASE("jit(grad) and jit(value_and_grad) of cond and switch_ on x: one trace, eager bits") {
  const Array w = array({0.5, -2.0, 1.5});
  auto g = grad(branchy, argnums<0, 1>);
  auto jg = jit(g);
  auto vg = value_and_grad(branchy, argnums<0, 1>);
  auto jvg = jit(vg);
  for (double s : {1.0, -1.0, 3.0, -0.2}) {  // sum(kX) = 1.2: both branches
    CAPTURE(s);
    const Array x = kX * s;
    CHECK(same_leaves(jg(x, w), g(x, w)));
    CHECK(same_leaves(jvg(x, w), vg(x, w)));
    check_close(std::get<0>(jg(x, w)), fd_grad([&](const Array& a) { return branchy(a, w); }, x),
                1e-6);
    check_close(std::get<1>(jg(x, w)), fd_grad([&](const Array& b) { return branchy(x, b); }, w),
                1e-6);
  }
  CHECK(jg.trace_count() == 1);
  CHECK(jvg.trace_count() == 1);

  // No operands at all: everything the branches use is captured (as lift::cond's branches).
  auto captured = [](const Array& x, const Array& w) {
    return cond(
        sum(x) > 0.0, [&] { return sum(sin(x) * w); }, [&] { return sum(w * w); });
  };
  auto jc = jit(grad(captured, argnums<0, 1>));
  for (double s : {1.0, -1.0}) {
    CHECK(same_leaves(jc(kX * s, w), grad(captured, argnums<0, 1>)(kX * s, w)));
  }
  CHECK(same(std::get<1>(jc(-kX, w)), w * 2.0));
  CHECK(jc.trace_count() == 1);

  auto jt = jit(grad(three));
  for (double shift : {-3.0, -0.5, 0.1, 0.5, 1.2, 4.0}) {  // indices below, in and above range
    CAPTURE(shift);
    const Array x = kX * 0.5 + shift / 3.0;
    CHECK(same(jt(x), grad(three)(x)));
    check_close(jt(x), fd_grad(three, x), 1e-6);
  }
  CHECK(jt.trace_count() == 1);
}

TEST_CASE("jit(grad(grad)) of cond and switch_ on x: second derivatives per branch") {
  auto h = [](const Array& x) {
    return cond(
        x > 0.0, [](const Array& a) { return sin(a) * a; },
        [](const Array& a) { return a * a * a; }, x);
  };
  auto hh = jit(grad(grad(h)));
  for (double x : {0.7, -0.4, 2.0, -1.5}) {
    CAPTURE(x);
    const Array ax(x);
    CHECK(same(hh(ax), grad(grad(h))(ax)));
    const double want = x > 0 ? 2 * std::cos(x) - x * std::sin(x) : 6 * x;
    CHECK(hh(ax).item<double>() == doctest::Approx(want).epsilon(1e-12));
  }
  CHECK(hh.trace_count() == 1);
  // The diagonal of switch_'s Hessian: grad of sum(grad(three)).
  auto diag = [](const Array& x) {
    return grad([](const Array& z) { return sum(grad(three)(z)); })(x);
  };
  auto jd = jit(diag);
  for (double shift : {-3.0, 0.5, 1.2, 4.0}) {
    CAPTURE(shift);
    const Array x = kX * 0.5 + shift / 3.0;
    CHECK(same(jd(x), diag(x)));
    check_close(jd(x), fd_grad([](const Array& z) { return sum(grad(three)(z)); }, x), 1e-5);
  }
  CHECK(jd.trace_count() == 1);
}

TEST_CASE("jit(jvp) of cond and switch_ on x equals eager jvp") {
  const Array w = array({0.5, -2.0, 1.5});
  const Array v = array({1.0, 0.25, -0.5});
  auto fwd = [](const Array& x, const Array& w, const Array& v) {
    return jvp([&](const Array& a, const Array& b) { return branchy(a, b); }, std::tuple{x, w},
               std::tuple{v, v});
  };
  auto jf = jit(fwd);
  auto fwd3 = [](const Array& x, const Array& v) {
    return jvp(three, std::tuple{x}, std::tuple{v});
  };
  auto jf3 = jit(fwd3);
  for (double s : {1.0, -1.0, 2.5}) {
    CAPTURE(s);
    const Array x = kX * s;
    CHECK(same_leaves(jf(x, w, v), fwd(x, w, v)));
    CHECK(same_leaves(jf3(x, v), fwd3(x, v)));
    const double fd = sum(fd_grad([&](const Array& a) { return branchy(a, w); }, x) * v +
                          fd_grad([&](const Array& b) { return branchy(x, b); }, w) * v)
                          .item<double>();
    CHECK(jf(x, w, v).second.item<double>() == doctest::Approx(fd).epsilon(1e-6));
  }
  CHECK(jf.trace_count() == 1);
  CHECK(jf3.trace_count() == 1);
}

TEST_CASE("jit(vmap) of cond on an unbatched traced predicate: a switch over vmapped branches") {
  // s is not mapped: one branch for every example, chosen by each call's s.
  auto f = [](const Array& x, const Array& s) {
    return cond(
        s > 0.0, [](const Array& a) { return sin(a) * 2.0; },
        [](const Array& a) { return zeros_like(a) + 1.0; }, x);  // unbatched under vmap
  };
  auto vf = vmap(f, {.in_axes = AxisSpec::seq({0, std::nullopt})});
  auto jvf = jit(vf);
  const Array X = data({4, 3}, 3);
  for (double s : {1.0, -1.0}) {
    CHECK(same(jvf(X, Array(s)), vf(X, Array(s))));
  }
  CHECK(jvf.trace_count() == 1);
  CHECK(same(jvf(X, Array(-1.0)), ones({4, 3}, float64)));
  // An output no branch batches stays unbatched (out_axes None accepts it), as eagerly.
  auto pair = [](const Array& x, const Array& s) {
    return cond(
        s > 0.0, [&](const Array& a) { return std::make_pair(a * 2.0, s * 3.0); },
        [&](const Array& a) { return std::make_pair(a, s); }, x);
  };
  auto vp = vmap(pair, {.in_axes = AxisSpec::seq({0, std::nullopt}),
                        .out_axes = AxisSpec::seq({0, std::nullopt})});
  auto jvp_ = jit(vp);
  for (double s : {1.0, -1.0}) CHECK(same_leaves(jvp_(X, Array(s)), vp(X, Array(s))));
  CHECK(same(jvp_(X, Array(2.0)).second, Array(6.0)));
  // vmap of grad inside jit: the tape's backward switch is vmapped too.
  auto loss = [](const Array& x, const Array& s) {
    return sum(cond(
        s > 0.0, [](const Array& a) { return sin(a) * a; }, [](const Array& a) { return a * a; },
        x));
  };
  auto vg = vmap(grad(loss), {.in_axes = AxisSpec::seq({0, std::nullopt})});
  auto jvg = jit(vg);
  for (double s : {1.0, -1.0}) {
    CHECK(same(jvg(X, Array(s)), vg(X, Array(s))));
  }
  CHECK(same(jvg(X, Array(-1.0)), X * 2.0));
  CHECK(jvg.trace_count() == 1);
  // A nested cond on a per-example predicate inside the staged branch: the batched-index rule
  // runs every inner branch and selects per example.
  auto nested = [](const Array& x, const Array& s) {
    return cond(
        s > 0.0,
        [](const Array& a) {
          return cond(
              sum(a) > 0.0, [](const Array& b) { return b * 3.0; },
              [](const Array& b) { return -b; }, a);
        },
        [](const Array& a) { return a; }, x);
  };
  auto vn = vmap(nested, {.in_axes = AxisSpec::seq({0, std::nullopt})});
  auto jvn = jit(vn);
  for (double s : {1.0, -1.0}) {
    CHECK(same(jvn(X, Array(s)), vn(X, Array(s))));
  }
  Arrays rows;
  for (int i = 0; i < 4; ++i) rows.push_back(nested(row(X, i), Array(1.0)));
  CHECK(same(jvn(X, Array(1.0)), stack_rows(rows)));
  CHECK(jvn.trace_count() == 1);
}

TEST_CASE("jit(vmap) of cond and switch_ on a batched predicate selects per example") {
  auto f = [](const Array& x) {
    return cond(
        sum(x) > 0.0, [](const Array& a) { return sin(a); }, [](const Array& a) { return a * a; },
        x);
  };
  const Array X = data({5, 3}, 2);
  auto jf = jit(vmap(f));
  Arrays rows;
  for (int i = 0; i < 5; ++i) rows.push_back(f(row(X, i)));
  CHECK(same(jf(X), vmap(f)(X)));
  CHECK(same(jf(X), stack_rows(rows)));
  auto jg = jit(vmap(grad(three)));
  CHECK(same(jg(X * 2.0), vmap(grad(three))(X * 2.0)));
}

namespace {
using Carry = std::pair<Array, Array>;
// Grows x until its sum reaches limit: the trip count depends on x and limit.
Array grow(const Array& x, const Array& limit) {
  return while_loop([&](const Carry& c) { return sum(c.first) < limit; },
                    [&](const Carry& c) { return Carry(c.first * 1.5 + 0.1, c.second + 1); },
                    Carry(x, Array(0)))
      .first;
}
}  // namespace

TEST_CASE("jit(jvp) and jit(vmap) of while_loop on a traced predicate") {
  const Array x = array({0.5, 1.0, 0.25});
  const Array v = array({1.0, -1.0, 2.0});
  auto tangent = [](const Array& x, const Array& v, const Array& limit) {
    return jvp([&](const Array& a) { return grow(a, limit); }, std::tuple{x}, std::tuple{v});
  };
  auto jt = jit(tangent);
  for (double limit : {1.0, 5.0, 40.0}) {  // 0, 3 and 8 steps
    CAPTURE(limit);
    CHECK(same_leaves(jt(x, v, Array(limit)), tangent(x, v, Array(limit))));
  }
  CHECK(jt.trace_count() == 1);
  // 3 steps: the tangent is v * 1.5^3.
  CHECK(same(jt(x, v, Array(5.0)).second, v * 1.5 * 1.5 * 1.5));
  // The predicate becomes per example under vmap: the loop runs until every example is done.
  auto vgrow = vmap(grow, {.in_axes = AxisSpec::seq({0, std::nullopt})});
  auto jv = jit(vgrow);
  const Array X = abs(data({4, 3}, 5)) + reshape(array({0.0, 1.0, 3.0, 10.0}), {4, 1});
  for (double limit : {2.0, 30.0}) {
    CAPTURE(limit);
    CHECK(same(jv(X, Array(limit)), vgrow(X, Array(limit))));
    Arrays rows;
    for (int i = 0; i < 4; ++i) rows.push_back(grow(row(X, i), Array(limit)));
    CHECK(same(jv(X, Array(limit)), stack_rows(rows)));
  }
  CHECK(jv.trace_count() == 1);
  // An unbatched predicate (a counter against an unmapped bound): the counter stays unbatched
  // (out_axes None accepts it), and acc, unbatched at the start, is batched by the body.
  using Count = std::tuple<Array, Array, Array>;
  auto count = [](const Array& x, const Array& n) {
    return while_loop([&](const Count& c) { return std::get<2>(c) < n; },
                      [](const Count& c) {
                        const auto& [y, acc, i] = c;
                        return Count(y * 1.5, acc + y, i + 1);
                      },
                      Count(x, zeros({3}, float64), Array(0)));
  };
  auto vc = vmap(count, {.in_axes = AxisSpec::seq({0, std::nullopt}),
                         .out_axes = AxisSpec::seq({0, 0, std::nullopt})});
  auto jvc = jit(vc);
  for (int n : {0, 2, 5}) {
    CAPTURE(n);
    CHECK(same_leaves(jvc(X, Array(n)), vc(X, Array(n))));
    CHECK(std::get<2>(jvc(X, Array(n))).item<int>() == n);
  }
  CHECK(jvc.trace_count() == 1);
}

TEST_CASE("jit(grad) of a while_loop or fori_loop with a traced trip count is a clear error") {
  auto g = jit(grad([](const Array& x, const Array& limit) { return sum(grow(x, limit)); }));
  CHECK_THROWS_AS(g(array({0.5, 1.0}), Array(3.0)), ValueError);
  CHECK_ERROR_CONTAINS(g(array({0.5, 1.0}), Array(3.0)),
                       "while_loop: reverse-mode differentiation");
  CHECK_ERROR_CONTAINS(g(array({0.5, 1.0}), Array(3.0)), "fori_loop with concrete bounds");
  auto steps = [](const Array& x, const Array& n) {
    return sum(fori_loop(
        Array(0), n, [](const Array&, const Array& a) { return sin(a); }, x));
  };
  auto gf = jit(grad(steps));
  CHECK_THROWS_AS(gf(array({0.5, 1.0}), Array(3)), ValueError);
  // Concrete bounds (a static argument) unroll eagerly under grad: fine.
  auto fixed = jit(grad([](const Array& x, int n) {
    return sum(fori_loop(
        Array(0), Array(n), [](const Array&, const Array& a) { return sin(a); }, x));
  }));
  const Array x = array({0.5, 1.0});
  CHECK(same(fixed(x, 3), grad([](const Array& a) { return sum(sin(sin(sin(a)))); })(x)));
  CHECK(g.trace_count() == 0);  // failed traces are not cached
  // Branches whose outputs differ are the eager error under grad too, raised at trace time.
  auto bad = jit(grad([](const Array& x) {
    return sum(cond(
        sum(x) > 0.0, [](const Array& a) { return a; },
        [](const Array& a) {
          return concatenate({a, a}, 0);
        },
        x));
  }));
  CHECK_THROWS_AS(bad(kX), TypeError);
  CHECK_ERROR_CONTAINS(bad(kX), "cond: true_fun and false_fun output must have identical types");
}

TEST_CASE("jit(grad) of a staged cond keeps custom_vjp and checkpoint rules inside its branches") {
  // bwd is deliberately not the derivative of sin: a branch differentiated through fwd's ops
  // instead of the custom rule would give cos.
  auto half = custom_vjp([](const Array& x) { return sin(x); },
                         [](const Array& x) { return std::make_pair(sin(x), x); },
                         [](const Array&, const Array& ct) { return std::make_tuple(ct * 0.5); });
  auto remat_sq = checkpoint([](const Array& a) { return a * a * a; });
  auto f = [&](const Array& x, const Array& s) {
    return sum(cond(
        s > 0.0, [&](const Array& a) { return half(a) * a; },
        [&](const Array& a) { return remat_sq(a); }, x));
  };
  auto jg = jit(grad(f));
  for (double s : {1.0, -1.0}) CHECK(same(jg(kX, Array(s)), grad(f)(kX, Array(s))));
  check_close(jg(kX, Array(1.0)), kX * 0.5 + sin(kX));
  check_close(jg(kX, Array(-1.0)), kX * kX * 3.0);
  CHECK(jg.trace_count() == 1);
  const Array X = data({4, 3}, 7);
  auto vg = vmap(grad(f), {.in_axes = AxisSpec::seq({0, std::nullopt})});
  auto jvg = jit(vg);
  for (double s : {1.0, -1.0}) CHECK(same(jvg(X, Array(s)), vg(X, Array(s))));
  check_close(jvg(X, Array(1.0)), X * 0.5 + sin(X));
  CHECK(jvg.trace_count() == 1);
}

}  // namespace test_jit_control
