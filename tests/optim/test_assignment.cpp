// optax.assignment's Hungarian algorithms (assignment.hpp): optax's docstring examples, the
// assignments (optax's tie-breaking) of matrices with many optimal assignments as
// tests/optim/reference_optax_contrib_more.py computes them (a NumPy port of optax 0.2.8's two
// loops; run it with /usr/bin/python3 to reprint them), the brute-force optimum over
// permutations on random matrices, optax's shape and dtype checks, vmap and jit, and errors.
#include <algorithm>
#include <functional>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "helpers.hpp"

namespace test_assignment {

namespace as = linum::optim::assignment;
using namespace optim_test;
using linum::Array;
using linum::Shape;
using linum::testing::check_error;

namespace {

using Matrix = std::vector<std::vector<double>>;
using Indices = std::vector<double>;
using Fn = std::pair<Array, Array> (*)(const Array&);

Array from_rows(const Matrix& m) {
  Vec flat;
  for (const auto& r : m) flat.insert(flat.end(), r.begin(), r.end());
  const auto cols = static_cast<std::int64_t>(m.empty() ? 0 : m[0].size());
  return linum::array(flat).reshape({static_cast<std::int64_t>(m.size()), cols});
}

// The minimum of sum cost[r, c] over assignments of min(n, m) pairs: every injective map of the
// smaller side into the larger.
double brute_force(const Vec& c, std::int64_t n, std::int64_t m) {
  const bool rows = n <= m;
  const std::int64_t k = std::min(n, m), big = std::max(n, m);
  std::vector<int> pick(static_cast<std::size_t>(big));
  std::iota(pick.begin(), pick.end(), 0);
  double best = std::numeric_limits<double>::infinity();
  do {
    double total = 0;
    for (std::int64_t a = 0; a < k; ++a) total += rows ? c[a * m + pick[a]] : c[pick[a] * m + a];
    best = std::min(best, total);
  } while (std::next_permutation(pick.begin(), pick.end()));
  return best;
}

// optax's checks: shapes (r,), integer dtype, indices in range and distinct; the cost.
double check_assignment(const Array& cost, const Array& i, const Array& j) {
  const std::int64_t n = cost.shape(0), m = cost.shape(1), r = std::min(n, m);
  CHECK(i.shape() == Shape{r});
  CHECK(j.shape() == Shape{r});
  CHECK(i.dtype() == linum::int32);
  CHECK(j.dtype() == linum::int32);
  const Vec iv = values(i), jv = values(j), c = values(cost);
  std::vector<int> row_used(static_cast<std::size_t>(n)), col_used(static_cast<std::size_t>(m));
  double total = 0;
  for (std::int64_t k = 0; k < r; ++k) {
    const auto a = static_cast<std::int64_t>(iv[k]), b = static_cast<std::int64_t>(jv[k]);
    REQUIRE(a >= 0);
    REQUIRE(a < n);
    REQUIRE(b >= 0);
    REQUIRE(b < m);
    CHECK(++row_used[a] == 1);
    CHECK(++col_used[b] == 1);
    total += c[a * m + b];
  }
  return total;
}

}  // namespace

TEST_CASE("the docstrings' examples") {
  Array cost = from_rows({{8, 4, 7}, {5, 2, 3}, {9, 6, 7}, {9, 4, 8}});
  auto [i, j] = as::base_hungarian_algorithm(cost);
  CHECK(check_assignment(cost, i, j) == 15);
  CHECK(values(i) == Indices{0, 1, 3});
  CHECK(values(j) == Indices{0, 2, 1});
  auto [i2, j2] = as::hungarian_algorithm(cost);
  CHECK(check_assignment(cost, i2, j2) == 15);
  Array cost2 = from_rows({{90, 80, 75, 70},
                           {35, 85, 55, 65},
                           {125, 95, 90, 95},
                           {45, 110, 95, 115},
                           {50, 100, 90, 100}});
  for (Fn fn : {Fn(as::base_hungarian_algorithm), Fn(as::hungarian_algorithm)}) {
    auto [a, b] = fn(cost2);
    CHECK(check_assignment(cost2, a, b) == 265);
    CHECK(values(a) == Indices{0, 1, 2, 3});
    CHECK(values(b) == Indices{3, 2, 1, 0});
  }
}

TEST_CASE("tie-breaking: optax's choice among equally cheap assignments") {
  struct Case {
    std::string name;
    Matrix cost;
    Indices base_i, base_j, i, j;
  };
  const std::vector<Case> cases{
      {"zeros 3x3", {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}}, {0, 1, 2}, {0, 1, 2}, {0, 1, 2}, {0, 1, 2}},
      {"ones 2x4", {{1, 1, 1, 1}, {1, 1, 1, 1}}, {0, 1}, {0, 1}, {1, 0}, {1, 0}},
      {"ties 3x3", {{1, 1, 2}, {1, 1, 2}, {2, 2, 1}}, {0, 1, 2}, {0, 1, 2}, {0, 1, 2}, {0, 1, 2}},
      {"ties 4x3",
       {{0, 1, 1}, {1, 0, 0}, {1, 0, 0}, {0, 1, 1}},
       {0, 1, 2},
       {0, 1, 2},
       {2, 1, 0},
       {2, 1, 0}},
      {"ties 3x5",
       {{2, 1, 1, 3, 1}, {1, 2, 2, 1, 3}, {3, 1, 1, 1, 2}},
       {0, 1, 2},
       {1, 0, 2},
       {2, 1, 0},
       {2, 0, 1}},
      {"checker 4x4",
       {{0, 1, 0, 1}, {1, 0, 1, 0}, {0, 1, 0, 1}, {1, 0, 1, 0}},
       {0, 1, 2, 3},
       {0, 1, 2, 3},
       {0, 1, 2, 3},
       {0, 1, 2, 3}},
      {"ints 4x4",
       {{2, 1, 2, 2}, {1, 2, 2, 0}, {0, 0, 0, 2}, {2, 0, 1, 2}},
       {0, 1, 2, 3},
       {1, 3, 0, 2},
       {2, 0, 3, 1},
       {0, 1, 2, 3}},
      {"ints 5x5",
       {{0, 2, 0, 1, 2}, {0, 1, 0, 2, 0}, {2, 1, 1, 1, 1}, {1, 1, 2, 2, 2}, {2, 1, 1, 2, 1}},
       {0, 1, 2, 3, 4},
       {0, 2, 3, 1, 4},
       {0, 3, 1, 2, 4},
       {0, 1, 2, 3, 4}},
      {"ints 3x5",
       {{0, 2, 0, 2, 1}, {0, 0, 1, 0, 0}, {1, 2, 1, 2, 2}},
       {0, 1, 2},
       {0, 1, 2},
       {2, 1, 0},
       {2, 1, 0}},
      {"ints 5x3",
       {{2, 1, 1}, {1, 0, 1}, {1, 0, 2}, {0, 0, 0}, {2, 2, 2}},
       {1, 2, 3},
       {1, 0, 2},
       {0, 1, 3},
       {2, 1, 0}},
      {"ints 6x4",
       {{0, 2, 1, 1}, {0, 1, 2, 1}, {0, 1, 0, 2}, {2, 0, 1, 2}, {2, 2, 1, 0}, {2, 1, 0, 0}},
       {0, 2, 3, 4},
       {0, 2, 1, 3},
       {4, 2, 3, 0},
       {3, 2, 1, 0}},
      {"doc 4x3",
       {{8, 4, 7}, {5, 2, 3}, {9, 6, 7}, {9, 4, 8}},
       {0, 1, 3},
       {0, 2, 1},
       {1, 3, 0},
       {2, 1, 0}},
      {"doc 5x4",
       {{90, 80, 75, 70},
        {35, 85, 55, 65},
        {125, 95, 90, 95},
        {45, 110, 95, 115},
        {50, 100, 90, 100}},
       {0, 1, 2, 3},
       {3, 2, 1, 0},
       {0, 1, 2, 3},
       {3, 2, 1, 0}},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    Array cost = from_rows(c.cost);
    auto [bi, bj] = as::base_hungarian_algorithm(cost);
    CHECK(values(bi) == c.base_i);
    CHECK(values(bj) == c.base_j);
    auto [i, j] = as::hungarian_algorithm(cost);
    CHECK(values(i) == c.i);
    CHECK(values(j) == c.j);
    const double best = brute_force(values(cost), cost.shape(0), cost.shape(1));
    CHECK(check_assignment(cost, bi, bj) == best);
    CHECK(check_assignment(cost, i, j) == best);
  }
}

TEST_CASE("the optimum over every assignment, on random matrices (optax's test, brute force)") {
  Array key = linum::random::PRNGKey(0);
  for (std::int64_t n = 1; n <= 6; ++n)
    for (std::int64_t m = 1; m <= 6; ++m) {
      key = linum::random::split(key)[0];
      Array cost = linum::random::normal(key, {n, m});
      const double best = brute_force(values(cost), n, m);
      for (Fn fn : {Fn(as::base_hungarian_algorithm), Fn(as::hungarian_algorithm)}) {
        INFO(n << " x " << m);
        auto [i, j] = fn(cost);
        CHECK(check_assignment(cost, i, j) == doctest::Approx(best).epsilon(1e-6));
      }
    }
}

TEST_CASE("empty matrices, integer and float64 costs, infinite entries") {
  for (Fn fn : {Fn(as::base_hungarian_algorithm), Fn(as::hungarian_algorithm)}) {
    for (const Shape& s : {Shape{0, 3}, Shape{3, 0}, Shape{0, 0}}) {
      auto [i, j] = fn(linum::zeros(s));
      CHECK(i.shape() == Shape{0});
      CHECK(j.dtype() == linum::int32);
    }
    Array ints = linum::array({{4, 1, 3}, {2, 0, 5}, {3, 2, 2}});
    auto [i, j] = fn(ints);
    CHECK(check_assignment(ints, i, j) == 5);
    Array wide = linum::array({{1.0, 1.0 + 1e-12}, {1.0, 1.0}});  // float64 sees the 1e-12
    auto [wi, wj] = fn(wide);
    CHECK(check_assignment(wide, wi, wj) == 2.0);
    const double inf = std::numeric_limits<double>::infinity();
    Array holes = from_rows({{inf, 1, inf}, {2, inf, 3}, {inf, 5, 0}});
    auto [hi, hj] = fn(holes);
    CHECK(check_assignment(holes, hi, hj) == 2 + 1 + 0);
  }
}

TEST_CASE("vmap solves each matrix of a batch; jit") {
  Array batch = linum::random::normal(linum::random::PRNGKey(3), {4, 3, 5});
  for (Fn fn : {Fn(as::base_hungarian_algorithm), Fn(as::hungarian_algorithm)}) {
    auto [bi, bj] = linum::vmap([fn](const Array& c) { return fn(c); })(batch);
    CHECK(bi.shape() == Shape{4, 3});
    for (std::int64_t b = 0; b < 4; ++b) {
      auto [i, j] = fn(batch[b]);
      CHECK(values(bi[b]) == values(i));
      CHECK(values(bj[b]) == values(j));
    }
    // The same batch on axis 2.
    Array moved = linum::moveaxis(batch, 0, 2);
    auto [ti, tj] = linum::vmap([fn](const Array& c) { return fn(c); }, {.in_axes = 2})(moved);
    CHECK(values(ti) == values(bi));
    CHECK(values(tj) == values(bj));
    auto jitted = linum::jit([fn](const Array& c) { return fn(c); });
    auto [ji, jj] = jitted(batch[1]);
    CHECK(values(ji) == values(bi[1]));
    CHECK(values(jj) == values(bj[1]));
  }
}

TEST_CASE("errors") {
  const double inf = std::numeric_limits<double>::infinity();
  for (Fn fn : {Fn(as::base_hungarian_algorithm), Fn(as::hungarian_algorithm)}) {
    check_error<linum::ValueError>(
        [&] {
          fn(linum::zeros({2, 2, 2}));
        },
        {"hungarian_algorithm", "rank 2", "(2, 2, 2)"});
    check_error<linum::ValueError>(
        [&] {
          fn(from_rows({{1, std::nan("")}, {0, 1}}));
        },
        {"hungarian_algorithm", "NaN or -inf"});
    check_error<linum::ValueError>([&] { fn(from_rows({{1, -inf}, {0, 1}})); }, {"NaN or -inf"});
    check_error<linum::ValueError>(
        [&] {
          fn(from_rows({{inf, inf}, {0, 1}}));
        },
        {"hungarian_algorithm", "infeasible"});
    check_error<linum::TypeError>(
        [&] {
          fn(linum::complex(linum::zeros({2, 2}), linum::zeros({2, 2})));
        },
        {"hungarian_algorithm", "real", "complex64"});
  }
}

}  // namespace test_assignment
