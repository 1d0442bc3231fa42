// optax.microbatching: reshape_batch_axis's column-major split, microbatch's accumulations (SUM,
// MEAN, RUNNING_MEAN, CONCAT) against the function on the whole batch and against sums worked
// out in the comments, and its errors.
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "helpers.hpp"

namespace test_microbatching {

using namespace linum;
using optim_test::check_close;
using optim_test::f64;
using optim_test::values;
using testing::check_error;
namespace mb = optim::microbatching;
using mb::AccumulationType;

TEST_CASE("reshape_batch_axis: (B, ...) -> (B / m, m, ...) in column-major order, as optax") {
  // arange(6) with m = 2: n = 3 rows, row i holds examples i and i + 3.
  Array r = mb::reshape_batch_axis(arange(6), 2);
  CHECK(r.shape() == Shape{3, 2});
  CHECK(values(r) == std::vector<double>{0, 3, 1, 4, 2, 5});
  // Axis 1 of a (2, 4) leaf with m = 2: [[0 1 2 3], [4 5 6 7]] -> row i of the new axis 1 holds
  // columns i and i + 2.
  Array r1 = mb::reshape_batch_axis(arange(8).reshape({2, 4}), 2, 1);
  CHECK(r1.shape() == Shape{2, 2, 2});
  CHECK(values(r1) == std::vector<double>{0, 2, 1, 3, 4, 6, 5, 7});
  // Every leaf of a tree.
  std::map<std::string, Array> t{{"a", arange(4)}, {"b", zeros({4, 3})}};
  auto rt = mb::reshape_batch_axis(t, 2);
  CHECK(rt.at("b").shape() == Shape{2, 2, 3});
  check_error<ValueError>([] { mb::reshape_batch_axis(arange(5), 2); },
                          {"reshape_batch_axis", "5", "microbatch_size=2"});
  check_error<ValueError>([] { mb::reshape_batch_axis(arange(4), 2, 1); },
                          {"reshape_batch_axis", "axis 1", "(4,)"});
}

TEST_CASE("microbatch: optax's docstring example, CONCAT and SUM") {
  // fun(x) = (x + 1, sum(3x)) on [1, 2, 3, 4]: ([2, 3, 4, 5], 30), microbatched or not.
  auto fun = [](const Array& x) { return std::make_pair(x + 1, sum(3 * x)); };
  auto mf = mb::microbatch(fun, argnums<0>, 2, {AccumulationType::CONCAT, AccumulationType::SUM});
  auto [y, s] = mf(array({1, 2, 3, 4}));
  CHECK(y.dtype() == int32);
  CHECK(values(y) == std::vector<double>{2, 3, 4, 5});
  CHECK(values(s) == std::vector<double>{30});
  // Without microbatch_size it is fun itself.
  auto plain = mb::microbatch(fun, argnums<0>, std::nullopt);
  CHECK(values(plain(array({1, 2})).second) == std::vector<double>{9});
}

TEST_CASE("microbatch: MEAN, RUNNING_MEAN and num_real_microbatches") {
  // sum over the microbatches of [1, 2, 3, 4] with m = 2: microbatch 0 holds rows 0 and 2
  // (1 + 3 = 4), microbatch 1 rows 1 and 3 (2 + 4 = 6).
  auto total = [](const Array& x) { return sum(x); };
  const Array data = f64({1.0, 2.0, 3.0, 4.0});
  check_close(mb::microbatch(total, argnums<0>, 2, AccumulationType::SUM)(data), {10.0});
  check_close(mb::microbatch(total, argnums<0>, 2, AccumulationType::MEAN)(data), {5.0});
  check_close(mb::microbatch(total, argnums<0>, 2, AccumulationType::RUNNING_MEAN)(data), {5.0});
  // Only the first microbatch runs: SUM 4, MEAN 4 / 2 (optax divides by every microbatch),
  // RUNNING_MEAN 4 (the mean of those that ran), CONCAT leaves the other rows zero.
  check_close(mb::microbatch(total, argnums<0>, 2, AccumulationType::SUM, {0}, 1)(data), {4.0});
  check_close(mb::microbatch(total, argnums<0>, 2, AccumulationType::MEAN, {0}, 1)(data), {2.0});
  check_close(mb::microbatch(total, argnums<0>, 2, AccumulationType::RUNNING_MEAN, {0}, 1)(data),
              {4.0});
  auto ident = [](const Array& x) { return x * 10.0; };
  check_close(mb::microbatch(ident, argnums<0>, 2, AccumulationType::CONCAT, {0}, 1)(data),
              {10.0, 0.0, 30.0, 0.0});
  // Three microbatches of one: the running mean of 1, 2, 3 after each step is 1, 1.5, 2.
  check_close(mb::microbatch(total, argnums<0>, 1, AccumulationType::RUNNING_MEAN)(f64({1, 2, 3})),
              {2.0}, 1e-15);
}

TEST_CASE("microbatch: summed per-microbatch gradients equal the full-batch gradient") {
  // loss(w, x, y) = sum((x w - y)^2) is a sum over examples, so SUM over microbatches of its
  // gradient is the gradient on the whole batch; the batch arguments are x and y (axis 0).
  auto loss = [](const Array& w, const Array& x, const Array& y) {
    return sum(square(matmul(x, w) - y));
  };
  auto g = grad(loss);
  Array w = f64({0.5, -1.0});
  Array x = array({{1.0, 2.0}, {0.5, -1.0}, {3.0, 0.0}, {-2.0, 1.0}, {0.0, 1.0}, {1.0, 1.0}});
  Array y = f64({1.0, 0.0, -1.0, 2.0, 0.5, 0.25});
  Array full = g(w, x, y);
  auto micro = mb::microbatch(g, argnums<1, 2>, 2, AccumulationType::SUM);
  check_close(micro(w, x, y), values(full), 1e-14);
  // in_axes per argument: x given transposed (features, batch).
  auto loss_t = [](const Array& w, const Array& xt, const Array& y) {
    return sum(square(matmul(w, xt) - y));
  };
  auto micro_t = mb::microbatch(grad(loss_t), argnums<1, 2>, 3, AccumulationType::SUM, {1, 0});
  check_close(micro_t(w, x.T(), y), values(full), 1e-14);
}

TEST_CASE("microbatch: bad batches, accumulators and arguments") {
  auto total = [](const Array& a, const Array& b) { return sum(a) + sum(b); };
  check_error<ValueError>([&] { mb::microbatch(total, argnums<0, 1>, 2)(ones({4}), ones({6})); },
                          {"Batch Arguments must have equal-size batch axes", "4, 6"});
  check_error<ValueError>([&] { mb::microbatch(total, argnums<0, 1>, 3)(ones({4}), ones({4})); },
                          {"batch_size=4", "microbatch_size=3"});
  check_error<ValueError>([&] { mb::microbatch(total, argnums<0, 1>, 0); },
                          {"microbatch_size", "positive"});
  check_error<ValueError>(
      [&] {
        mb::microbatch(total, argnums<0, 1>, 2, AccumulationType::SUM, {0, 0, 0});
      },
      {"in_axes", "3 entries", "2 batch arguments"});
  auto count = [](const Array& a) { return sum(astype(a > 0, int32)); };
  check_error<ValueError>(
      [&] { mb::microbatch(count, argnums<0>, 2, AccumulationType::MEAN)(ones({4})); },
      {"MEAN and RUNNING_MEAN Accumulators require floating-point values."});
  auto pair = [](const Array& a) { return std::make_pair(a, sum(a)); };
  check_error<ValueError>(
      [&] {
        mb::microbatch(
            pair, argnums<0>, 2,
            {AccumulationType::SUM, AccumulationType::SUM, AccumulationType::SUM})(ones({4}));
      },
      {"3 accumulation types", "2 leaves"});
  check_error<ValueError>(
      [&] { mb::microbatch(count, argnums<0>, 2, AccumulationType::SUM, {0}, 3)(ones({4})); },
      {"num_real_microbatches", "[0, 2]", "3"});
}

TEST_CASE("Accumulator: a user's init / update / finalize, alone or beside AccumulationTypes") {
  // The largest microbatch sum of [1, 2, 3, 4, 5, 6] in microbatches of 2 (rows i, i + 3):
  // {1, 4}, {2, 5}, {3, 6} sum to 5, 7, 9.
  mb::Accumulator max_acc{
      [](const ShapeDtype& s) { return Tree(full(s.shape, -1e30, s.dtype)); },
      [](const Tree& c, const Array& v, const Array&) { return Tree(maximum(c.leaf(), v)); },
      [](const Tree& c) { return c.leaf(); }, [](const Array& v) { return max(v, 0); }};
  auto total = [](const Array& x) { return sum(x); };
  const Array data = f64({1, 2, 3, 4, 5, 6});
  check_close(mb::microbatch(total, argnums<0>, 2, max_acc)(data), {9.0});
  // A carry of two arrays (sum and sum of squares, a tuple Tree): the variance of the sums.
  mb::Accumulator var_acc{[](const ShapeDtype& s) {
                            return Tree::tuple({zeros(s.shape, s.dtype), zeros(s.shape, s.dtype)});
                          },
                          [](const Tree& c, const Array& v, const Array&) {
                            return Tree::tuple({c[0].leaf() + v, c[1].leaf() + v * v});
                          },
                          [](const Tree& c) {
                            Array m = c[0].leaf() / 3.0;
                            return c[1].leaf() / 3.0 - m * m;
                          },
                          [](const Array& v) { return var(v, 0); }};
  check_close(mb::microbatch(total, argnums<0>, 2, var_acc)(data), {(25 + 49 + 81) / 3.0 - 49.0},
              1e-12);
  // One per output leaf: the max and the sum.
  auto both = [](const Array& x) { return std::make_pair(sum(x), sum(x)); };
  auto [mx, sm] = mb::microbatch(both, argnums<0>, 2, {max_acc, AccumulationType::SUM})(data);
  check_close(mx, {9.0});
  check_close(sm, {21.0});
  check_error<ValueError>([&] { mb::microbatch(total, argnums<0>, 2, mb::Accumulator{})(data); },
                          {"Accumulator needs all of init, update, finalize and aggregate"});
}

TEST_CASE("micro_vmap: optax's docstring, accumulators, unbatched arguments") {
  // micro_vmap(lambda x: x**2)(arange(8)): vmap's result, int32.
  auto sq = [](const Array& x) { return x * x; };
  Array r = mb::micro_vmap(sq)(arange(8));
  CHECK(r.dtype() == int32);
  CHECK(values(r) == std::vector<double>{0, 1, 4, 9, 16, 25, 36, 49});
  // In microbatches of 2: the same (CONCAT), the sum, the mean.
  CHECK(values(mb::micro_vmap(sq, 0, 0, 2)(arange(8))) == values(r));
  CHECK(values(mb::micro_vmap(sq, 0, 0, 2, AccumulationType::SUM)(arange(8))) ==
        std::vector<double>{140});
  const Array xs = f64({0, 1, 2, 3, 4, 5, 6, 7});
  check_close(mb::micro_vmap(sq, 0, 0, 4, AccumulationType::MEAN)(xs), {17.5});
  check_close(mb::micro_vmap(sq, 0, 0, std::nullopt, AccumulationType::MEAN)(xs), {17.5});
  // Only the first of four microbatches (rows 0 and 4) runs.
  check_close(mb::micro_vmap(sq, 0, 0, 2, AccumulationType::SUM, 1)(xs), {16.0});
  // An unbatched argument (None) and a batch on axis 1.
  auto affine = [](const Array& w, const Array& x) { return sum(w * x); };
  Array w = f64({1.0, -1.0});
  Array x = f64({1, 2, 3, 4, 5, 6}).reshape({2, 3});  // three examples as columns
  check_close(mb::micro_vmap(affine, {VmapOptions::kNone, 1}, 0, 3)(w, x), {-3, -3, -3});
  check_close(mb::micro_vmap(affine, {VmapOptions::kNone, 1}, 0, 1, AccumulationType::SUM)(w, x),
              {-9.0});
  check_error<NotImplementedError>([&] { mb::micro_vmap(sq, 0, 1); }, {"out_axis != 0"});
  check_error<ValueError>([&] { mb::micro_vmap(affine, 0)(w, x); },
                          {"micro_vmap", "1 axes", "2 arguments"});
  check_error<ValueError>(
      [&] {
        mb::micro_vmap(affine, AxisSpec::seq({AxisSpec{0, 0}, 0}));
      },
      {"micro_vmap", "one axis or None per argument"});
}

TEST_CASE("micro_grad: optax's docstring, has_aux, keep_batch_dim") {
  // 0.5 mean((features @ params - targets)**2) per example: the per-example gradients are
  // -targets = [0, -2, -4, -6]; transform_fn (g, g**2) averaged: (-3, 14); the values
  // 0.5 targets**2 and the metrics |g| come back per example.
  auto loss = [](const Array& params, const Array& features, const Array& targets) {
    Array diff = matmul(features, params) - targets;
    return 0.5 * mean(diff * diff);
  };
  Array params = zeros({1});
  Array features = ones({4, 1});
  Array targets = array({0.0f, 2.0f, 4.0f, 6.0f});
  auto both = [](const Array& g) { return std::make_pair(g, g * g); };
  auto norm = [](const Array& g) { return linalg::norm(g); };
  for (std::optional<std::int64_t> size :
       {std::optional<std::int64_t>(), std::optional<std::int64_t>(2)}) {
    INFO("microbatch_size " << size.value_or(0));
    mb::MicroGradOptions o;
    o.accumulator = AccumulationType::MEAN;
    o.microbatch_size = size;
    auto [grads, aux] =
        mb::micro_grad(loss, argnums<0>, argnums<1, 2>, o, both, norm)(params, features, targets);
    check_close(grads.first, {-3.0}, 1e-6, 0.0);
    check_close(grads.second, {14.0}, 1e-6, 0.0);
    check_close(aux.values, {0.0, 2.0, 8.0, 18.0}, 1e-6, 0.0);
    check_close(aux.metrics, {0.0, 2.0, 4.0, 6.0}, 1e-6, 0.0);
    CHECK(!aux.aux.has_value());
  }
  // has_aux: the aux per example; SUM (the default) of the plain gradients; without
  // keep_batch_dim each example is a row (features (1,), targets a scalar).
  auto loss_aux = [&](const Array& p, const Array& f, const Array& t) {
    return std::make_pair(loss(p, f, t), t * 10.0f);
  };
  auto [g, aux] =
      mb::micro_grad(loss_aux, has_aux, argnums<0>, argnums<1, 2>)(params, features, targets);
  check_close(g, {-12.0}, 1e-6, 0.0);
  check_close(aux.aux, {0.0, 20.0, 40.0, 60.0}, 1e-6, 0.0);
  auto row_loss = [](const Array& p, const Array& f, const Array& t) {
    Array d = sum(f * p) - t;
    return 0.5 * d * d;
  };
  mb::MicroGradOptions flat;
  flat.keep_batch_dim = false;
  auto [g2, aux2] =
      mb::micro_grad(row_loss, argnums<0>, argnums<1, 2>, flat)(params, features, targets);
  check_close(g2, {-12.0}, 1e-6, 0.0);
  check_close(aux2.values, {0.0, 2.0, 8.0, 18.0}, 1e-6, 0.0);
}

}  // namespace test_microbatching
