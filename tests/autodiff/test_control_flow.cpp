// scan, cond, switch_, while_loop, fori_loop: values against explicit loops and closed forms,
// derivatives by finite differences, vmap against loops over examples, JAX's errors.
#include <doctest/doctest.h>

#include <map>

#include "check_grads.hpp"
#include "transform_testing.hpp"

namespace test_control_flow {

using linum::Array;
using linum::Arrays;
using linum::VmapOptions;
using transform_testing::check_close;
using transform_testing::data;
using transform_testing::row;
using transform_testing::stack_rows;
using linum::testing::values;

namespace {
constexpr int kNone = VmapOptions::kNone;
using Params = std::map<std::string, Array>;
}  // namespace

// ---- scan ---------------------------------------------------------------------------------------

TEST_CASE("scan: cumulative sum, final carry and stacked ys equal a loop") {
  Array xs = data({5, 3}, 1);
  auto [c, ys] = linum::scan([](const Array& c, const Array& x) { return std::make_pair(c + x, c * x); },
                             linum::zeros({3}, linum::float64), xs);
  Array acc = linum::zeros({3}, linum::float64);
  Arrays want;
  for (int t = 0; t < 5; ++t) {
    want.push_back(acc * row(xs, t));
    acc = acc + row(xs, t);
  }
  check_close(c, acc);
  check_close(ys, stack_rows(want));

  // reverse: the steps run from the last slice to the first, ys stay aligned with xs.
  auto [cr, yr] = linum::scan([](const Array& c, const Array& x) { return std::make_pair(c + x, c); },
                              linum::zeros({3}, linum::float64), xs, {.reverse = true});
  Array a = linum::zeros({3}, linum::float64);
  Arrays wr(5);
  for (int t = 4; t >= 0; --t) {
    wr[t] = a;
    a = a + row(xs, t);
  }
  check_close(cr, a);
  check_close(yr, stack_rows(wr));
}

TEST_CASE("scan: pytree carry, pytree xs and ys; length without xs; zero length") {
  using Carry = std::pair<Array, Params>;
  std::tuple<Array, Array> xs{data({4, 2}, 2), data({4}, 3)};
  Carry init{linum::zeros({2}, linum::float64), Params{{"n", linum::array(0.0)}}};
  auto step = [](const Carry& c, const std::tuple<Array, Array>& x) {
    Carry next{c.first + std::get<0>(x) * std::get<1>(x), Params{{"n", c.second.at("n") + 1.0}}};
    return std::make_pair(next, Params{{"y", linum::sum(next.first)}});
  };
  auto [c, ys] = linum::scan(step, init, xs);
  CHECK(values(c.second["n"])[0] == 4.0);
  Array acc = linum::zeros({2}, linum::float64);
  Arrays want;
  for (int t = 0; t < 4; ++t) {
    acc = acc + row(std::get<0>(xs), t) * row(std::get<1>(xs), t);
    want.push_back(linum::sum(acc));
  }
  check_close(c.first, acc);
  check_close(ys["y"], stack_rows(want));

  auto [p, pows] = linum::scan([](const Array& c, std::nullopt_t) { return std::make_pair(c * 2.0, c); },
                               linum::array(1.0), std::nullopt, {.length = 4});
  CHECK(values(p)[0] == 16.0);
  check_close(pows, linum::array({1.0, 2.0, 4.0, 8.0}));

  auto [c0, y0] = linum::scan([](const Array& c, const Array& x) { return std::make_pair(c + x, x * 2.0); },
                              linum::zeros({3}, linum::float64), linum::zeros({0, 3}, linum::float64));
  check_close(c0, linum::zeros({3}, linum::float64));
  CHECK(y0.shape() == linum::Shape{0, 3});
}

TEST_CASE("scan errors: carry changing shape or dtype, lengths") {
  auto grow = [](const std::pair<Array, Array>& c, const Array& x) {
    return std::make_pair(std::make_pair(c.first + x, linum::concatenate({c.second, x}, 0)), x);
  };
  std::pair<Array, Array> init{linum::zeros({1}, linum::float64), linum::zeros({3}, linum::float64)};
  const std::string e = linum::testing::message_of([&] { linum::scan(grow, init, data({2, 1})); });
  CHECK(e.find("scan body function carry input and carry output must have equal types") != std::string::npos);
  CHECK(e.find("the input carry component carry[1] has type float64[3] but the corresponding output "
               "carry component has type float64[4], so the shapes do not match") != std::string::npos);
  CHECK_THROWS_AS(linum::scan(grow, init, data({2, 1})), linum::TypeError);
  CHECK_ERROR_CONTAINS(linum::scan([](const Array& c, const Array& x) {
                         return std::make_pair(linum::astype(c + x, linum::float32), x);
                       }, linum::zeros({2}, linum::float64), data({3, 2})),
                       "has type float64[2] but the corresponding output carry component has type "
                       "float32[2], so the dtypes do not match");
  auto id = [](const Array& c, const std::pair<Array, Array>&) { return std::make_pair(c, c); };
  CHECK_ERROR_CONTAINS(linum::scan(id, linum::array(0.0), std::make_pair(data({3}), data({4}))),
                       "scan got values with different leading axis sizes: 3, 4.");
  auto id1 = [](const Array& c, const Array&) { return std::make_pair(c, c); };
  CHECK_ERROR_CONTAINS(linum::scan(id1, linum::array(0.0), data({3}), {.length = 5}),
                       "scan got `length` argument of 5 which disagrees with leading axis sizes [3].");
  CHECK_ERROR_CONTAINS(linum::scan(id1, linum::array(0.0), linum::array(1.0)),
                       "scan got value with no leading axis to scan over: float64[]");
  auto id2 = [](const Array& c, std::nullopt_t) { return std::make_pair(c, c); };
  CHECK_ERROR_CONTAINS(linum::scan(id2, linum::array(0.0), std::nullopt),
                       "scan got no values to scan over and `length` was not provided.");
}

TEST_CASE("scan differentiates (jvp, vjp against finite differences) and vmaps like a loop") {
  auto rnn = [](const Arrays& a) {  // a = {h0, W, xs}
    auto [h, hs] = linum::scan(
        [&](const Array& h, const Array& x) {
          Array n = linum::tanh(linum::matmul(a[1], h) + x);
          return std::make_pair(n, linum::sum(n * n));
        },
        a[0], a[2]);
    return linum::concatenate({h, hs}, 0);
  };
  Arrays args{data({3}, 4), data({3, 3}, 5) * 0.5, data({6, 3}, 6)};
  linum::testing::check_grads(rnn, args);
  // vmap over a batch of initial states, the weights shared.
  Array h0s = data({4, 3}, 7);
  Array got = linum::vmap([&](const Array& h0) { return rnn({h0, args[1], args[2]}); })(h0s);
  Arrays want;
  for (int i = 0; i < 4; ++i) want.push_back(rnn({row(h0s, i), args[1], args[2]}));
  check_close(got, stack_rows(want));
  // vmap over the sequences (xs batched along axis 1 of a (T, B, 3) array).
  Array xb = data({6, 2, 3}, 8);
  Array got2 = linum::vmap([&](const Array& xs) { return rnn({args[0], args[1], xs}); }, {{1}})(xb);
  for (int i = 0; i < 2; ++i)
    check_close(row(got2, i), rnn({args[0], args[1], row(linum::moveaxis(xb, 1, 0), i)}));
}

// ---- cond / switch ---------------------------------------------------------------------------

TEST_CASE("cond: a concrete predicate runs one branch; ints mean != 0") {
  int t_calls = 0, f_calls = 0;
  // Runs for real; the branch not taken is also evaluated abstractly, to check its types.
  auto tf = [&](const Array& x, const Array& y) { t_calls += !linum::detail::is_abstract(x); return x + y; };
  auto ff = [&](const Array& x, const Array& y) { f_calls += !linum::detail::is_abstract(x); return x * y; };
  Array x = linum::array({1.0, 2.0}), y = linum::array({3.0, 4.0});
  check_close(linum::cond(linum::array(true), tf, ff, x, y), x + y);
  check_close(linum::cond(false, tf, ff, x, y), x * y);
  check_close(linum::cond(linum::array(3), tf, ff, x, y), x + y);
  CHECK(t_calls == 2);
  CHECK(f_calls == 1);
  // Under grad the predicate is still concrete.
  Array g = linum::grad([&](const Array& v) {
    return linum::cond(linum::sum(v) > 0.0, [](const Array& a) { return linum::sum(linum::sin(a)); },
                       [](const Array& a) { return linum::sum(a * a); }, v);
  })(x);
  check_close(g, linum::cos(x));
  CHECK(t_calls == 2);
}

TEST_CASE("cond under vmap: a batched predicate runs both branches and selects per example") {
  Array xs = data({6, 2}, 9);
  auto f = [](const Array& x) {
    return linum::cond(linum::sum(x) > 0.0,
                       [](const Array& a) { return std::make_pair(linum::sin(a), linum::sum(a)); },
                       [](const Array& a) { return std::make_pair(a * a, linum::sum(a) * -1.0); }, x);
  };
  auto [a, b] = linum::vmap(f)(xs);
  Arrays wa, wb;
  for (int i = 0; i < 6; ++i) {
    auto [p, q] = f(row(xs, i));
    wa.push_back(p);
    wb.push_back(q);
  }
  check_close(a, stack_rows(wa));
  check_close(b, stack_rows(wb));
  // Per-example gradients through the batched cond, and grad of the vmapped cond.
  auto h = [](const Array& x) {
    return linum::cond(linum::sum(x) > 0.0, [](const Array& v) { return linum::sum(linum::sin(v)); },
                       [](const Array& v) { return linum::sum(v * v * v); }, x);
  };
  Array g = linum::vmap(linum::grad(h))(xs);
  Arrays wg;
  for (int i = 0; i < 6; ++i) wg.push_back(linum::grad(h)(row(xs, i)));
  check_close(g, stack_rows(wg));
  Array g2 = linum::grad([&](const Array& X) { return linum::sum(linum::vmap(h)(X)); })(xs);
  check_close(g2, stack_rows(wg));
  linum::testing::check_grads([&](const Array& X) { return linum::vmap(h)(X); }, xs);
}

TEST_CASE("cond errors: predicate type and shape, branches of different types") {
  auto id = [](const Array& a) { return a; };
  CHECK_ERROR_CONTAINS(linum::cond(linum::array(1.0), id, id, data({2})),
                       "cond: pred type must be either boolean or number, got float64");
  CHECK_ERROR_CONTAINS(linum::cond(linum::array({true, false}), id, id, data({2})),
                       "cond: pred must be a scalar, got shape (2,)");
  auto bad = [](const Array& x) {
    return linum::cond(linum::sum(x) > 0.0, [](const Array& a) { return a; },
                       [](const Array& a) { return linum::sum(a); }, x);
  };
  const std::string e = linum::testing::message_of([&] { linum::vmap(bad)(data({3, 2})); });
  CHECK(e.find("cond: true_fun and false_fun output must have identical types") != std::string::npos);
  CHECK(e.find("the true_fun output component output has type float64[2] but the corresponding "
               "false_fun output component has type float64[]") != std::string::npos);
}

TEST_CASE("switch_: clamped index, vectors and tuples of branches, batched index") {
  std::vector<std::function<Array(const Array&)>> br{
      [](const Array& x) { return x + 1.0; }, [](const Array& x) { return x * 10.0; },
      [](const Array& x) { return -x; }};
  Array x = linum::array({1.0, 2.0});
  check_close(linum::switch_(linum::array(1), br, x), x * 10.0);
  check_close(linum::switch_(linum::array(-4), br, x), x + 1.0);   // clamped to 0
  check_close(linum::switch_(linum::array(17), br, x), -x);        // clamped to n - 1
  auto tup = std::make_tuple([](const Array& a, const Array& b) { return a + b; },
                             [](const Array& a, const Array& b) { return a - b; });
  check_close(linum::switch_(linum::array(1), tup, x, x * 3.0), x - x * 3.0);

  Array idx = linum::array({0, 2, 1, 5, -1});
  Array xs = data({5, 2}, 10);
  Array got = linum::vmap([&](const Array& i, const Array& v) { return linum::switch_(i, br, v); })(idx, xs);
  Arrays want;
  const int clamped[] = {0, 2, 1, 2, 0};
  for (int k = 0; k < 5; ++k) want.push_back(br[clamped[k]](row(xs, k)));
  check_close(got, stack_rows(want));
  Array g = linum::vmap(linum::grad([&](const Array& v, const Array& i) {
    return linum::sum(linum::switch_(i, br, v * v));
  }))(xs, idx);
  const double scale[] = {1.0, -1.0, 10.0, -1.0, 1.0};
  for (int k = 0; k < 5; ++k) check_close(row(g, k), row(xs, k) * (2.0 * scale[k]));

  CHECK_ERROR_CONTAINS(linum::switch_(linum::array(1.0), br, x), "switch: index type must be an integer, got float64");
  CHECK_ERROR_CONTAINS(linum::switch_(linum::array({1, 2}), br, x), "switch: branch index must be scalar");
  std::vector<std::function<Array(const Array&)>> none;
  CHECK_ERROR_CONTAINS(linum::switch_(linum::array(0), none, x), "switch: empty branch sequence");
}

// ---- while_loop / fori_loop --------------------------------------------------------------------

TEST_CASE("while_loop: concrete loop with a pytree carry; errors") {
  using C = std::pair<Array, Array>;
  C out = linum::while_loop([](const C& c) { return c.first < 10; },
                            [](const C& c) { return C(c.first + 1, c.second * 2.0); },
                            C(linum::array(0), linum::array(1.0)));
  CHECK(values(out.first)[0] == 10);
  CHECK(values(out.second)[0] == 1024.0);
  CHECK_ERROR_CONTAINS(linum::while_loop([](const Array& v) { return v; }, [](const Array& v) { return v; },
                                         linum::array(1.0)),
                       "while_loop: cond_fun must return a boolean scalar, but got float64");
  CHECK_ERROR_CONTAINS(linum::while_loop([](const Array& v) { return linum::sum(v) < 5.0; },
                                         [](const Array& v) { return linum::concatenate({v, v}, 0); },
                                         linum::array({1.0})),
                       "while_loop: body_fun output and input must have identical types, but they differ");
}

TEST_CASE("while_loop under vmap: per-example trip counts, finished examples frozen") {
  using C = std::pair<Array, Array>;
  auto f = [](const Array& x) {
    return linum::while_loop([](const C& c) { return c.second < 100.0; },
                             [](const C& c) { return C(c.first + 1, c.second * 2.0); },
                             C(linum::array(0), x));
  };
  Array xs = linum::array({1.0, 3.0, 50.0, 200.0, 99.0});
  auto [n, v] = linum::vmap(f)(xs);
  check_close(n, linum::array({7, 6, 1, 0, 1}));
  check_close(v, linum::array({128.0, 192.0, 100.0, 200.0, 198.0}));
  // Per-example gradients through loops of different lengths: d/dx (x * 2^k) = 2^k.
  auto g = linum::vmap(linum::grad([&](const Array& x) { return f(x).second; }))(xs);
  check_close(g, linum::array({128.0, 64.0, 2.0, 1.0, 2.0}));
}

TEST_CASE("while_loop and fori_loop are reverse-differentiable") {
  // v <- sin(v) * w while the counter runs: grad against finite differences.
  auto f = [](const Arrays& a) {
    using C = std::pair<Array, Array>;
    C out = linum::while_loop([](const C& c) { return c.first < 4; },
                              [&](const C& c) { return C(c.first + 1, linum::sin(c.second) * a[1]); },
                              C(linum::array(0), a[0]));
    return out.second;
  };
  linum::testing::check_grads(f, {data({3}, 11), data({3}, 12) + 1.5});
  auto g = [](const Arrays& a) {
    return linum::fori_loop(0, 5, [&](const Array& i, const Array& v) {
      return v * a[1] + linum::astype(i, linum::float64);
    }, a[0]);
  };
  linum::testing::check_grads(g, {data({2}, 13), data({2}, 14)});
  // Closed form: sum_{i<10} i * x = 45 x.
  Array s = linum::fori_loop(0, 10, [](const Array& i, const Array& acc) {
    return acc + linum::astype(i, linum::float64) * 2.0;
  }, linum::array(0.0));
  CHECK(values(s)[0] == 90.0);
}

TEST_CASE("fori_loop with batched bounds under vmap runs as a masked while_loop") {
  Array ns = linum::array({0, 3, 1, 5});
  Array got = linum::vmap([](const Array& n) {
    return linum::fori_loop(0, n, [](const Array& i, const Array& acc) {
      return acc + linum::astype(i, linum::float64);
    }, linum::array(0.0));
  })(ns);
  check_close(got, linum::array({0.0, 3.0, 0.0, 10.0}));
  CHECK_ERROR_CONTAINS(linum::fori_loop(linum::array(0.5), 3, [](const Array&, const Array& v) { return v; },
                                        linum::array(0.0)),
                       "fori_loop: bounds must be integers, got float64");
}

}  // namespace test_control_flow
