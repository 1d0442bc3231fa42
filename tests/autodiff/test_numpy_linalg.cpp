// jnp.linalg's composite functions (norms, pinv, lstsq, powers, rank, cond, products, tensor
// solves, cross, trace, diagonal) and jax.scipy.linalg's factor / solve pairs: values against
// numpy (numpy 1.24, float64, printed to 17 digits; noted per test) or against the direct
// solve, derivatives by check_grads, and JAX's errors.
#include <doctest/doctest.h>

#include <cmath>

#include "op_testing.hpp"
#include "transform_testing.hpp"

namespace test_numpy_linalg {

using namespace linum;
using namespace linum::optest;
using linum::testing::check_error;
using linum::testing::check_grads;
namespace la = linum::linalg;
namespace sla = linum::scipy::linalg;

namespace {

const Array B4 = array<double>({{2, -1, 0, 1}, {1, 3, -2, 0}, {0, 1, 4, -1}, {3, 0, 1, 2}});
const Array C32 = array<double>({{1, 2}, {3, 4}, {5, 6.5}});

double scalar(const Array& a) { return a.item<double>(); }

}  // namespace

TEST_CASE("norm, vector_norm and matrix_norm match numpy for every ord") {
  // numpy.linalg.norm(B4, ord) for None, 'fro', 'nuc', 1, -1, 2, -2, inf, -inf.
  CHECK(scalar(la::norm(B4)) == doctest::Approx(7.211102550927978).epsilon(1e-14));
  CHECK(scalar(la::norm(B4, "fro")) == doctest::Approx(7.211102550927978).epsilon(1e-14));
  CHECK(scalar(la::norm(B4, "nuc")) == doctest::Approx(12.851038303038644).epsilon(1e-13));
  CHECK(scalar(la::norm(B4, 1.0)) == doctest::Approx(7.0));
  CHECK(scalar(la::norm(B4, -1.0)) == doctest::Approx(4.0));
  CHECK(scalar(la::norm(B4, 2.0)) == doctest::Approx(4.642455096328925).epsilon(1e-13));
  CHECK(scalar(la::norm(B4, -2.0)) == doctest::Approx(0.5015958443984447).epsilon(1e-12));
  CHECK(scalar(la::norm(B4, INFINITY)) == doctest::Approx(6.0));
  CHECK(scalar(la::norm(B4, -INFINITY)) == doctest::Approx(4.0));
  // numpy.linalg.norm([3, -4, 1, 0], ord) for None, 1, 0, inf, -inf, 3, 0.5.
  const Array v = array<double>({3, -4, 1, 0});
  CHECK(scalar(la::norm(v)) == doctest::Approx(5.0990195135927845).epsilon(1e-14));
  CHECK(scalar(la::vector_norm(v, std::nullopt, false, 1)) == doctest::Approx(8.0));
  CHECK(scalar(la::vector_norm(v, std::nullopt, false, 0)) == doctest::Approx(3.0));
  CHECK(scalar(la::vector_norm(v, std::nullopt, false, INFINITY)) == doctest::Approx(4.0));
  CHECK(scalar(la::vector_norm(v, std::nullopt, false, -INFINITY)) == doctest::Approx(0.0));
  CHECK(scalar(la::norm(v, 3.0)) == doctest::Approx(4.514357435474001).epsilon(1e-13));
  CHECK(scalar(la::norm(v, 0.5)) == doctest::Approx(22.392304845413257).epsilon(1e-13));
  // Axes and keepdims: row norms of B4, and a matrix norm over a stack.
  check_array(la::norm(B4, {}, std::vector<int>{1}), {4}, float64,
              {std::sqrt(6.0), std::sqrt(14.0), std::sqrt(18.0), std::sqrt(14.0)});
  CHECK(la::norm(B4, {}, std::vector<int>{0, 1}, true).shape() == Shape{1, 1});
  CHECK(la::norm(B4, "nuc", std::vector<int>{0, 1}, true).shape() == Shape{1, 1});
  const Array stack2 = stack({B4, 2.0 * B4});
  check_array(la::matrix_norm(stack2, false, 1.0), {2}, float64, {7.0, 14.0});
  check_array(la::matrix_norm(stack2), {2}, float64, {7.211102550927978, 14.422205101855956},
              1e-14);
  check_array(la::norm(array(std::vector<std::complex<double>>{{3, 4}})), {}, float64, {5.0});
  check_grads([](const Array& x) { return la::norm(x); }, B4);
  check_grads([](const Array& x) { return la::norm(x, "nuc"); }, B4);
  check_error<ValueError>([] { la::norm(B4, "inf"); }, {"norm", "inf", "matrix"});
  check_error<ValueError>([&] { la::norm(v, "fro"); }, {"norm", "fro", "vector"});
  check_error<ValueError>(
      [] {
        la::norm(reshape(arange(8.0), {2, 2, 2}), 2.0);
      },
      {"norm", "number of axes"});
}

TEST_CASE("pinv, lstsq, matrix_power, matrix_rank and cond match numpy") {
  // numpy.linalg.pinv(C32).
  check_array(la::pinv(C32), {2, 3}, float64,
              {-1.8636363636363635, 0.045454545454546164, 0.5454545454545454, 1.4242424242424243,
               0.030303030303029783, -0.303030303030303},
              1e-12);
  check_grads([](const Array& x) { return la::pinv(x); }, C32);
  check_grads([](const Array& x) { return la::pinv(x); }, transpose(C32));
  // numpy.linalg.lstsq(C32, [1, 0, 2]): x, residuals, rank.
  const auto r = la::lstsq(C32, array<double>({1, 0, 2}));
  check_array(r.x, {2}, float64, {-0.7727272727272726, 0.8181818181818179}, 1e-12);
  check_array(r.residuals, {1}, float64, {1.2272727272727273}, 1e-12);
  CHECK(r.rank.item<int>() == 2);
  check_error<ValueError>(
      [] {
        la::lstsq(C32, array<double>({1, 2}));
      },
      {"lstsq", "leading dimensions"});
  // numpy.linalg.matrix_power(B4, 3) and (B4, -2).
  check_array(la::matrix_power(B4, 3), {4, 4}, float64,
              {19, -18, 26, 11, 25, -1, -65, 25, -15, 36, 32, -27, 40, -12, 34, 18}, 1e-14);
  check_array(la::matrix_power(B4, -2), {4, 4}, float64,
              {1.1314878892733564, 0.33564013840830453, 0.3598615916955018, -0.5622837370242214,
               -0.7837370242214534, -0.1453287197231834, -0.17128027681660904, 0.4238754325259515,
               -0.38927335640138416, -0.1384083044982699, -0.09169550173010384, 0.2370242214532872,
               -2.1349480968858137, -0.5813148788927336, -0.6851211072664363, 1.1955017301038062},
              1e-12);
  check_close(la::matrix_power(B4, 0), eye(4, -1, 0, float64));
  check_close(la::matrix_power(B4, 5), matmul(matmul(matmul(matmul(B4, B4), B4), B4), B4), 1e-12);
  check_error<TypeError>([] { la::matrix_power(C32, 2); }, {"matrix_power", "square"});
  // numpy.linalg.matrix_rank of a rank-2 3x3 matrix.
  CHECK(la::matrix_rank(array<double>({{1, 2, 3}, {2, 4, 6}, {1, 0, 1}})).item<int>() == 2);
  CHECK(la::matrix_rank(B4).item<int>() == 4);
  // numpy.linalg.cond(B4) for p = None, 1, 'fro', -2.
  CHECK(scalar(la::cond(B4)) == doctest::Approx(9.25536993213439).epsilon(1e-12));
  CHECK(scalar(la::cond(B4, 1.0)) == doctest::Approx(19.764705882352946).epsilon(1e-12));
  CHECK(scalar(la::cond(B4, "fro")) == doctest::Approx(14.712469113131363).epsilon(1e-12));
  CHECK(scalar(la::cond(B4, -2.0)) == doctest::Approx(0.10804538417508602).epsilon(1e-12));
  CHECK(std::isinf(scalar(la::cond(array<double>({{1, 2}, {2, 4}}), 1.0))));  // JAX: inf, not NaN
}

TEST_CASE("multi_dot, tensorinv, tensorsolve, cross, outer, trace, diagonal and vecdot") {
  const Array a = transform_testing::data({2, 5}, 1), b = transform_testing::data({5, 7}, 2),
              c = transform_testing::data({7, 3}, 3);
  check_close(la::multi_dot({a, b, c}), matmul(matmul(a, b), c), 1e-12);
  const Array v = transform_testing::data({2}, 4), w = transform_testing::data({3}, 5);
  check_close(la::multi_dot({v, a, b, c, w}), matmul(matmul(matmul(matmul(v, a), b), c), w), 1e-12);
  check_error<ValueError>([&] { la::multi_dot({a, c}); }, {"multi_dot", "last dimension"});
  check_error<ValueError>([&] { la::multi_dot({a}); }, {"multi_dot", "at least two"});
  // numpy.linalg.tensorinv / tensorsolve of T = arange(1, 17).reshape(4, 4) + 5 I as (2, 2, 2, 2).
  const Array T =
      reshape(astype(reshape(arange(1.0, 17.0), {4, 4}), float64) + 5.0 * eye(4, -1, 0, float64),
              {2, 2, 2, 2});
  check_array(
      reshape(la::tensorinv(T), {16}), {16}, float64,
      {0.28869565217391296, 0.03826086956521731, -0.012173913043478321, -0.06260869565217382,
       0.012173913043478266, 0.1895652173913044, -0.033043478260869584, -0.055652173913043494,
       -0.06434782608695651, -0.0591304347826087, 0.1460869565217392, -0.04869565217391308,
       -0.14086956521739127, -0.10782608695652171, -0.07478260869565218, 0.15826086956521737},
      1e-12);
  check_array(la::tensorsolve(T, array<double>({{1, 2}, {3, 4}})), {2, 2}, float64,
              {0.07826086956521741, 0.06956521739130432, 0.060869565217391314, 0.05217391304347826},
              1e-12);
  check_error<ValueError>(
      [] {
        la::tensorinv(reshape(arange(8.0), {2, 4}), 1);
      },
      {"tensorinv", "product"});
  // numpy.cross([1, 2, 3], [4, 5, -6]); along axis 0 of stacked vectors too.
  check_array(la::cross(array<double>({1, 2, 3}), array<double>({4, 5, -6})), {3}, float64,
              {-27, 18, -3});
  check_array(la::cross(array<double>({{1, 4}, {2, 5}, {3, 6}}),
                        array<double>({{4, 1}, {5, 0}, {-6, 0}}), 0),
              {3, 2}, float64, {-27, 0, 18, 6, -3, -5});
  check_error<ValueError>(
      [] {
        la::cross(array<double>({1, 2}), array<double>({1, 2}));
      },
      {"cross", "3-dimensional"});
  check_array(la::outer(array<double>({1, 2}), array<double>({3, 4, 5})), {2, 3}, float64,
              {3, 4, 5, 6, 8, 10});
  // numpy: trace(B4, 1) = -4, diagonal(B4, -1) = [1, 1, 1], diagonal(B4, 2) = [0, 0].
  CHECK(scalar(la::trace(B4, 1)) == -4.0);
  CHECK(scalar(la::trace(B4)) == 11.0);
  check_array(la::diagonal(B4, -1), {3}, float64, {1, 1, 1});
  check_array(la::diagonal(B4, 2), {2}, float64, {0, 0});
  check_array(la::vecdot(B4, B4), {4}, float64, {6, 14, 18, 14});
  check_array(la::matrix_transpose(C32), {2, 3}, float64, {1, 3, 5, 2, 4, 6.5});
  check_error<ValueError>(
      [] {
        la::matrix_transpose(array<double>({1, 2}));
      },
      {"matrix_transpose", "2 dimensions"});
}

TEST_CASE("scipy.linalg's cho_factor/cho_solve and lu_factor/lu_solve solve as solve does") {
  const Array spd = matmul(B4, transpose(B4)) + eye(4, -1, 0, float64);
  const Array b = transform_testing::data({4, 2}, 6);
  for (bool lower : {true, false}) {
    const auto cf = sla::cho_factor(spd, lower);
    check_close(sla::cho_solve(cf, b), la::solve(spd, b), 1e-12);
  }
  const auto lf = sla::lu_factor(B4);
  check_close(sla::lu_solve(lf, b), la::solve(B4, b), 1e-12);
  check_close(sla::lu_solve(lf, b, 1), la::solve(transpose(B4), b), 1e-12);
  check_close(sla::lu_solve(lf, array<double>({1, 2, 3, 4})),
              la::solve(B4, array<double>({1, 2, 3, 4})), 1e-12);
  check_close(sla::solve_triangular(la::cholesky(spd), b, 0, true), la::solve(la::cholesky(spd), b),
              1e-12);
  check_close(sla::solve_triangular(la::cholesky(spd), b, 1, true),
              la::solve(transpose(la::cholesky(spd)), b), 1e-12);
  // cho_factor reads one triangle and JAX's Cholesky rule assumes a symmetric tangent: the check
  // differentiates through a symmetric parametrization.
  check_grads([&](const Array& m) { return sla::cho_solve(sla::cho_factor(0.5 * (m + transpose(m)), true), b); }, spd);
  check_grads([&](const Array& m) { return sla::lu_solve(sla::lu_factor(m), b); }, B4);
  check_error<ValueError>([&] { sla::lu_solve(lf, b, 3); }, {"lu_solve", "trans"});
}

}  // namespace test_numpy_linalg
