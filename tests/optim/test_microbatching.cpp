// optax.microbatching: reshape_batch_axis's column-major split, microbatch's accumulations (SUM,
// MEAN, RUNNING_MEAN, CONCAT) against the function on the whole batch and against sums worked
// out in the comments, and its errors.
#include <map>
#include <string>

#include "helpers.hpp"

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
