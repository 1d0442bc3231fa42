// jnp.einsum: against matmul/transpose/sum, an explicit loop for a contraction with a summed-out
// index, numpy's implicit output, ellipsis broadcasting, gradients, errors.
#include <doctest/doctest.h>

#include "op_testing.hpp"

namespace test_einsum {

using namespace linum;
using linum::testing::check_error;
using linum::testing::check_grads;
using linum::testing::values;

namespace {
void check_close(const Array& a, const Array& b) {
  REQUIRE(a.shape() == b.shape());
  const auto x = values(a), y = values(b);
  for (std::size_t i = 0; i < x.size(); ++i) CHECK(x[i] == doctest::Approx(y[i]).epsilon(1e-5));
}
}  // namespace

TEST_CASE("einsum equals matmul, batched matmul, transpose and sums") {
  const Array a = random::normal(random::key(0), {3, 4}),
              b = random::normal(random::key(1), {4, 5});
  check_close(einsum("ij,jk->ik", a, b), matmul(a, b));
  check_close(einsum("ij,jk", a, b), matmul(a, b));  // implicit: once-used letters, sorted
  check_close(einsum("ij->ji", a), transpose(a));
  check_close(einsum("ba", a), transpose(a));  // implicit output "ab"
  check_close(einsum("ij->", a), sum(a));
  check_close(einsum("ij->j", a), sum(a, 0));
  const Array p = random::normal(random::key(2), {2, 3, 4}),
              q = random::normal(random::key(3), {2, 4, 5});
  check_close(einsum("bij,bjk->bik", p, q), matmul(p, q));
  check_close(einsum("bij,bjk->kbi", p, q), transpose(matmul(p, q), {2, 0, 1}));
  check_close(einsum("...ij,jk->...ik", p, b), matmul(p, b));
}

TEST_CASE("einsum: outer products and a summed-out index against explicit loops") {
  const Array u = array({1.0f, 2.0f, 3.0f}), v = array({4.0f, 5.0f});
  check_close(einsum("i,j->ij", u, v),
              array({4.0f, 5.0f, 8.0f, 10.0f, 12.0f, 15.0f}).reshape({3, 2}));
  // "abc,cd->da": b appears only in the first operand and not in the output, so it is summed.
  const Array x = random::normal(random::key(4), {2, 3, 4}, float64);
  const Array w = random::normal(random::key(5), {4, 5}, float64);
  const Array y = einsum("abc,cd->da", x, w);
  REQUIRE(y.shape() == Shape{5, 2});
  const auto xv = values(x), wv = values(w), yv = values(y);
  for (int d = 0; d < 5; ++d)
    for (int a = 0; a < 2; ++a) {
      double acc = 0;
      for (int b = 0; b < 3; ++b)
        for (int c = 0; c < 4; ++c) acc += xv[(a * 3 + b) * 4 + c] * wv[c * 5 + d];
      CHECK(yv[d * 2 + a] == doctest::Approx(acc));
    }
}

TEST_CASE("einsum: ellipsis dims align on the right and broadcast size 1, as numpy") {
  const Array a = random::normal(random::key(6), {2, 1, 3}),
              b = random::normal(random::key(7), {4, 3});
  check_close(einsum("...i,...i->...i", a, b), multiply(a, b));
  check_close(einsum("...i,...i->...", a, b), sum(multiply(a, b), -1));
}

TEST_CASE("einsum differentiates in both operands (finite differences)") {
  const Array p = random::normal(random::key(8), {2, 3, 4}, float64);
  const Array q = random::normal(random::key(9), {4, 5}, float64);
  check_grads([](const Arrays& a) { return einsum("bij,jk->kbi", a[0], a[1]); }, {p, q});
  check_grads([](const Arrays& a) { return einsum("abc,cd->da", a[0], a[1]); }, {p, q});
}

TEST_CASE("einsum: bad subscripts name the problem and the subscripts") {
  const Array a = ones({2, 3}), b = ones({4, 5});
  check_error<ValueError>(
      [&] {
        einsum("ii->i", ones({3, 3}));
      },
      {"einsum", "'i' repeats", "ii->i"});
  check_error<ValueError>([&] { einsum("ij,jk->il", a, ones({3, 2})); }, {"einsum", "'l'"});
  check_error<ValueError>([&] { einsum("ij->", ones({2, 3, 4})); }, {"einsum", "(2, 3, 4)"});
  check_error<ValueError>([&] { einsum("ij,jk->ik", a, b); }, {"einsum", "'j' has sizes 3 and 4"});
  check_error<ValueError>(
      [&] {
        einsum("i,i,i->i", Arrays{ones({2}), ones({2}), ones({2})});
      },
      {"einsum", "one or two operands"});
  check_error<ValueError>([&] { einsum("i$->i", ones({2})); }, {"einsum", "'$'"});
}

}  // namespace test_einsum
