// lax.linalg / jnp.linalg decompositions and solvers: values against numpy.linalg (numpy 1.24,
// float64, printed to 17 digits; noted per test), identities (reconstructions, orthogonality),
// JAX's NaN/inf behaviour on bad matrices, check_grads (finite differences and the vjp/jvp
// transpose identity), closed-form derivatives, vmap against a loop, jit against eager.
#include <doctest/doctest.h>

#include "op_testing.hpp"
#include "transform_testing.hpp"

namespace test_linalg_decomp {

using namespace linum;
using namespace linum::optest;
using linum::testing::check_error;
using linum::testing::check_grads;
namespace la = linum::linalg;
namespace lla = linum::lax::linalg;

namespace {

const Array A3 = array<double>({{4, 1, 2}, {1, 5, 3}, {2, 3, 6}});  // SPD
const Array B4 =
    array<double>({{2, -1, 0, 1}, {1, 3, -2, 0}, {0, 1, 4, -1}, {3, 0, 1, 2}});  // general

// The i-th matrix of a stack, read from the buffer (independent of the ops under test).
Array nth(const Array& x, std::int64_t i) { return transform_testing::row(x, i); }

// The triangle of a 2-D a that a triangular solve reads, from its buffer; ones on the diagonal
// when unit.
Array triangle(const Array& a, bool lower, bool unit) {
  auto v = values(a);
  const std::int64_t n = a.shape(0);
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < n; ++j) {
      if (lower ? j > i : j < i) v[i * n + j] = 0;
      if (unit && i == j) v[i * n + j] = 1;
    }
  return array(v, a.shape());
}

void check_close64(const Array& got, const Array& want, double tol = 1e-10) {
  INFO("got " << got << "\nwant " << want);
  REQUIRE(got.shape() == want.shape());
  const auto g = values(got), w = values(want);
  for (std::size_t i = 0; i < g.size(); ++i)
    CHECK(std::abs(g[i] - w[i]) <= tol * (1 + std::abs(w[i])));
}

// (m, n) float64: ones where j - i <= k.
Array tril_ones(std::int64_t m, std::int64_t n, int k) {
  std::vector<double> v(static_cast<std::size_t>(m * n));
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) v[i * n + j] = j - i <= k ? 1.0 : 0.0;
  return array(v, {m, n});
}

}  // namespace

TEST_CASE(
    "cholesky matches numpy, zeroes the upper triangle and gives NaNs when not positive definite") {
  // numpy.linalg.cholesky(A3).
  check_array(
      la::cholesky(A3), {3, 3}, float64,
      {2.0, 0.0, 0.0, 0.5, 2.179449471770337, 0.0, 1.0, 1.1470786693528088, 1.9194297398747862},
      1e-14);
  check_close64(la::cholesky(A3, true), transpose(la::cholesky(A3)));
  const Array L = la::cholesky(astype(A3, float32));
  CHECK(L.dtype() == float32);
  check_close64(astype(matmul(L, transpose(L)), float64), A3, 1e-6);
  // symmetrize_input reads (a + a^T) / 2; without it only the lower triangle is read.
  const Array skew = array<double>({{4, 9, 2}, {1, 5, 7}, {2, 3, 6}});
  check_close64(lla::cholesky(skew, false), la::cholesky(A3));
  // Not positive definite: NaN on and below the diagonal, zeros above (jnp.tril of NaNs).
  check_array(la::cholesky(array<double>({{1, 2}, {2, 1}})), {2, 2}, float64, {NAN, 0, NAN, NAN});
  check_error<ValueError>(
      [] {
        la::cholesky(array<double>({{1, 2, 3}, {4, 5, 6}}));
      },
      {"cholesky", "square", "(2, 3)"});
  check_error<ValueError>(
      [] {
        la::cholesky(array<double>({1, 2}));
      },
      {"cholesky", "two dimensions"});
  check_error<TypeError>([] { la::cholesky(complex(A3, A3)); }, {"cholesky", "complex"});
}

TEST_CASE("cholesky's gradients: check_grads, and d log det = tr(A^-1 dA) through the factor") {
  check_grads([](const Array& a) { return la::cholesky(a); }, A3);
  // log det A = 2 sum log diag(L), so its gradient is A^-1 (symmetric A).
  const Array g =
      grad([](const Array& a) { return 2.0 * sum(log(la::diagonal(la::cholesky(a)))); })(A3);
  check_close64(g, la::inv(A3), 1e-12);
}

TEST_CASE(
    "triangular_solve: every side / triangle / transpose / unit-diagonal combination solves "
    "op(a)") {
  const Array a = array<double>({{2, 0.5, -1}, {0.3, 3, 0.7}, {-0.4, 1.1, 1.5}});
  const Array b = transform_testing::data({3, 2}, 3), br = transform_testing::data({2, 3}, 4);
  for (bool left : {true, false})
    for (bool lower : {true, false})
      for (bool trans : {true, false})
        for (bool unit : {true, false}) {
          CAPTURE(left);
          CAPTURE(lower);
          CAPTURE(trans);
          CAPTURE(unit);
          const Array t = triangle(a, lower, unit);
          const Array op = trans ? transpose(t) : t;
          const lla::TriangularSolveOptions o{
              .left_side = left, .lower = lower, .transpose_a = trans, .unit_diagonal = unit};
          const Array x = lla::triangular_solve(a, left ? b : br, o);
          check_close64(left ? matmul(op, x) : matmul(x, op), left ? b : br, 1e-12);
          check_grads([&](const Arrays& in) { return lla::triangular_solve(in[0], in[1], o); },
                      Arrays{a, left ? b : br});
        }
  // A vector right-hand side is one rank lower than a.
  const Array v = array<double>({1, 2, 3});
  check_close64(
      linum::scipy::linalg::solve_triangular(a, v, 0, true),
      squeeze(lla::triangular_solve(a, expand_dims(v, 1), {.left_side = true, .lower = true}), 1));
  check_error<ValueError>(
      [&] {
        lla::triangular_solve(a, array<double>({{1, 2}}));
      },
      {"triangular_solve", "(3, 3)", "(1, 2)"});
}

TEST_CASE("solve and inv match numpy; singular matrices give infs or NaNs as in JAX") {
  // numpy.linalg.solve(B4, [1, 2, 3, 4]) and numpy.linalg.inv(B4).
  check_array(la::solve(B4, array<double>({1, 2, 3, 4})), {4}, float64,
              {0.5882352941176473, 0.9411764705882352, 0.7058823529411764, 0.7647058823529409},
              1e-13);
  check_array(la::inv(B4), {4, 4}, float64,
              {0.911764705882353, 0.23529411764705882, 0.20588235294117652, -0.3529411764705882,
               -0.44117647058823534, 0.1764705882352941, 0.02941176470588236, 0.2352941176470588,
               -0.20588235294117652, -0.11764705882352942, 0.14705882352941177, 0.1764705882352941,
               -1.2647058823529413, -0.29411764705882354, -0.3823529411764707, 0.9411764705882353},
              1e-13);
  // Batch dims broadcast: one matrix, a stack of right-hand sides.
  const Array bs = transform_testing::data({5, 4, 2});
  const Array xs = la::solve(B4, bs);
  CHECK(xs.shape() == Shape{5, 4, 2});
  for (std::int64_t i = 0; i < 5; ++i) check_close64(nth(xs, i), la::solve(B4, nth(bs, i)), 1e-12);
  const auto s = values(la::solve(array<double>({{1, 2}, {2, 4}}), array<double>({1, 1})));
  CHECK((!std::isfinite(s[0]) || !std::isfinite(s[1])));
  check_error<ValueError>(
      [] {
        la::solve(array<double>({1, 2}), array<double>({1, 2}));
      },
      {"solve", "two dimensional"});
  check_error<ValueError>(
      [&] {
        la::solve(B4, array<double>({1, 2, 3}));
      },
      {"solve", "(4, 4)", "(3,)"});
  check_error<ValueError>(
      [] {
        la::inv(array<double>({{1, 2, 3}}));
      },
      {"inv", "[..., n, n]", "(1, 3)"});
}

TEST_CASE(
    "solve's gradients: check_grads and the closed forms b_bar = A^-T g, A_bar = -b_bar x^T") {
  const Array b = array<double>({{1, -2}, {0.5, 3}, {2, 1}, {-1, 0}});
  check_grads([](const Arrays& in) { return la::solve(in[0], in[1]); }, Arrays{B4, b});
  check_grads([](const Array& a) { return la::inv(a); }, B4);
  const Array w = transform_testing::data({4, 2}, 7);
  auto [x, pull] = vjp([](const Array& a, const Array& rhs) { return la::solve(a, rhs); }, B4, b);
  auto [ga, gb] = pull(w);
  const Array bb = la::solve(transpose(B4), w);
  check_close64(gb, bb, 1e-12);
  check_close64(ga, -matmul(bb, transpose(x)), 1e-12);
}

TEST_CASE("det and slogdet match numpy for 1x1 to 4x4; singular matrices give 0 and (0, -inf)") {
  // numpy.linalg.det(B4) = 34, numpy.linalg.slogdet(B4) = (1, 3.5263605246161616).
  check_array(la::det(B4), {}, float64, {34.0}, 1e-13);
  const auto sl = la::slogdet(B4);
  check_array(sl.sign, {}, float64, {1.0});
  check_array(sl.logabsdet, {}, float64, {3.5263605246161616}, 1e-14);
  check_array(la::det(A3), {}, float64, {70.0}, 1e-14);  // the 3x3 expansion
  check_array(la::det(array<double>({{1, 2}, {3, 4}})), {}, float64, {-2.0});
  check_array(la::det(array<double>({{-3}})), {}, float64, {-3.0}, 1e-15);
  const auto neg = la::slogdet(array<double>({{0, 1}, {1, 0}}));  // one row swap: det -1
  check_array(neg.sign, {}, float64, {-1.0});
  check_array(neg.logabsdet, {}, float64, {0.0});
  const Array sing = array<double>({{1, 2, 3, 4}, {2, 4, 6, 8}, {1, 0, 1, 0}, {0, 1, 1, 2}});
  check_array(la::det(sing), {}, float64, {0.0});
  check_array(la::slogdet(sing).sign, {}, float64, {0.0});
  check_array(la::slogdet(sing).logabsdet, {}, float64, {-INFINITY});
  check_error<ValueError>([] { la::det(array<double>({{1, 2, 3}})); }, {"det", "[..., n, n]"});
  check_error<ValueError>([] { la::slogdet(array<double>({1.0})); }, {"slogdet", "[..., n, n]"});
}

TEST_CASE(
    "det's gradient is the cofactor matrix, also at singular matrices (JAX's cofactor solve)") {
  check_grads([](const Array& a) { return la::det(a); }, B4);
  check_grads([](const Array& a) { return la::det(a); }, A3);
  check_grads([](const Array& a) { return la::slogdet(a).logabsdet; }, B4);
  // d det / dA = det(A) A^-T.
  check_close64(grad([](const Array& a) { return la::det(a); })(B4), 34.0 * transpose(la::inv(B4)),
                1e-12);
  // A rank-3 4x4 matrix (last row = row0 + 2 row1 - row2): the gradient is its cofactor
  // matrix, computed here from the 3x3 minors; det(A) A^-T would be NaN.
  const Array sing = array<double>({{2, -1, 0, 1}, {1, 3, -2, 0}, {0, 1, 4, -1}, {4, 4, -8, 2}});
  const Array g = grad([](const Array& a) { return la::det(a); })(sing);
  std::vector<double> want(16, 0.0);
  auto minor = [&](int r, int c) {
    std::vector<double> m;
    const auto v = values(sing);
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j)
        if (i != r && j != c) m.push_back(v[i * 4 + j]);
    return m[0] * (m[4] * m[8] - m[5] * m[7]) - m[1] * (m[3] * m[8] - m[5] * m[6]) +
           m[2] * (m[3] * m[7] - m[4] * m[6]);
  };
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) want[i * 4 + j] = ((i + j) % 2 ? -1 : 1) * minor(i, j);
  check_array(g, {4, 4}, float64, want, 1e-12);
  CHECK(std::abs(want[0]) > 1);  // the adjugate of a rank n-1 matrix is not zero
  // 2x2: the closed form [[d, -c], [-b, a]] at a singular matrix.
  check_array(grad([](const Array& a) { return la::det(a); })(array<double>({{1, 2}, {2, 4}})),
              {2, 2}, float64, {4, -2, -2, 1});
}

TEST_CASE("lu: P a = L U with unit-diagonal L, for square and rectangular matrices, and its JVP") {
  for (const Array& a :
       {B4, transform_testing::data({5, 3}, 2), transform_testing::data({3, 5}, 5)}) {
    const auto f = lla::lu(a);
    const std::int64_t m = a.shape(0), n = a.shape(1), k = std::min(m, n);
    CHECK(f.pivots.dtype() == int32);
    CHECK(f.permutation.shape() == Shape{m});
    const Array L = lax_slice(f.lu, {0, 0}, {m, k}) * (tril_ones(m, k, -1)) + eye(m, k, 0, float64);
    const Array U = lax_slice(f.lu, {0, 0}, {k, n}) * (1.0 - tril_ones(k, n, -1));
    check_close64(matmul(L, U), take(a, f.permutation, 0), 1e-12);
    check_grads([](const Array& x) { return lla::lu(x).lu; }, a);
  }
}

TEST_CASE("qr matches numpy's Householder factors; reduced, complete and r modes; gradients") {
  const Array c = array<double>({{1, 2}, {3, 4}, {5, 6.5}});
  // numpy.linalg.qr(c) (the same LAPACK geqrf/orgqr).
  const auto f = la::qr(c);
  check_array(f.Q, {3, 2}, float64,
              {-0.16903085094570325, 0.9778941948273628, -0.50709255283711, 0.020806259464411614,
               -0.8451542547285166, -0.2080625946441197},
              1e-12);
  check_array(f.R, {2, 2}, float64,
              {-5.916079783099616, -7.859934568975204, 0.0, 0.6866065623255952}, 1e-12);
  const auto full = la::qr(c, "complete");
  CHECK(full.Q.shape() == Shape{3, 3});
  CHECK(full.R.shape() == Shape{3, 2});
  check_close64(matmul(transpose(full.Q), full.Q), eye(3, -1, 0, float64), 1e-12);
  check_close64(matmul(full.Q, full.R), c, 1e-12);
  CHECK(!la::qr(c, "r").Q.valid());
  check_error<ValueError>([&] { la::qr(c, "economic"); }, {"qr", "economic"});
  for (const Array& a : {c, transpose(c), A3}) {
    check_grads([](const Array& x) { return la::qr(x).Q; }, a);
    check_grads([](const Array& x) { return la::qr(x).R; }, a);
  }
  check_grads([](const Array& x) { return la::qr(x, "complete").Q; }, c);
}

TEST_CASE("eigh matches numpy's eigenvalues, diagonalizes, and has JAX's derivatives") {
  // numpy.linalg.eigvalsh(A3).
  const auto e = la::eigh(A3);
  check_array(e.eigenvalues, {3}, float64,
              {2.194397167422409, 3.3867701566075485, 9.418832675970037}, 1e-13);
  const Array& V = e.eigenvectors;
  check_close64(matmul(matmul(transpose(V), A3), V),
                expand_dims(e.eigenvalues, 0) * eye(3, -1, 0, float64), 1e-12);
  check_close64(la::eigvalsh(A3, "U"), e.eigenvalues);
  check_error<ValueError>([] { la::eigh(A3, "X"); }, {"UPLO", "X"});
  check_grads([](const Array& a) { return la::eigh(a).eigenvalues; }, A3);
  // Eigenvectors up to sign: squares are sign-invariant.
  check_grads([](const Array& a) { return square(la::eigh(a).eigenvectors); }, A3);
  // d lambda_i = v_i^T dA v_i.
  const Array g = grad([](const Array& a) {
    return sum(la::eigh(a).eigenvalues * array<double>({1, 0, 0}));
  })(A3);
  const Array v0 = lax_slice(V, {0, 0}, {3, 1});
  check_close64(g, matmul(v0, transpose(v0)), 1e-12);
}

TEST_CASE("svd matches numpy's singular values, reconstructs, and has JAX's derivatives") {
  const Array c = array<double>({{1, 2}, {3, 4}, {5, 6.5}});
  const auto f = la::svd(c, false);
  // numpy.linalg.svd(c, compute_uv=False).
  check_array(f.S, {2}, float64, {9.852920234522092, 0.41226551170948406}, 1e-13);
  check_close64(matmul(f.U * expand_dims(f.S, 0), f.Vh), c, 1e-12);
  check_close64(la::svdvals(c), f.S);
  const auto full = la::svd(c);
  CHECK(full.U.shape() == Shape{3, 3});
  CHECK(full.Vh.shape() == Shape{2, 2});
  for (const Array& a : {c, transpose(c), B4}) {
    check_grads([](const Array& x) { return la::svdvals(x); }, a);
    check_grads([](const Array& x) { return square(la::svd(x, false).U); }, a);
    check_grads([](const Array& x) { return square(la::svd(x, false).Vh); }, a);
  }
  // JAX has no derivative for full factors of a non-square matrix.
  check_error<NotImplementedError>(
      [&] { grad([](const Array& x) { return sum(la::svd(x).U); })(c); }, {"svd", "full_matrices"});
}

TEST_CASE("vmap of every decomposition equals a loop over the batch") {
  const Array spd = transform_testing::data({4, 3, 3}, 8);
  const Array batch = spd + transpose(spd, {0, 2, 1}) + 6.0 * eye(3, -1, 0, float64);
  const Array rhs = transform_testing::data({4, 3, 2}, 9);
  auto per_example = [&](auto f) {
    Arrays outs;
    for (std::int64_t i = 0; i < 4; ++i) outs.push_back(f(nth(batch, i), nth(rhs, i)));
    return stack(outs);
  };
  auto both = [&](auto f) { check_close64(vmap(f)(batch, rhs), per_example(f), 1e-12); };
  both([](const Array& a, const Array&) { return la::cholesky(a); });
  both([](const Array& a, const Array& b) { return la::solve(a, b); });
  both([](const Array& a, const Array&) { return la::det(a); });
  both([](const Array& a, const Array&) { return la::slogdet(a).logabsdet; });
  both([](const Array& a, const Array&) { return la::eigh(a).eigenvalues; });
  both([](const Array& a, const Array&) { return la::svdvals(a); });
  both([](const Array& a, const Array&) { return la::qr(a).R; });
  both([](const Array& a, const Array&) { return lla::lu(a).lu; });
  both([](const Array& a, const Array&) { return la::pinv(a); });
  both([](const Array& a, const Array& b) {
    return lla::triangular_solve(a, b, {.left_side = true, .lower = true});
  });
  // One triangular matrix for the whole batch of right-hand sides (the batch joins b's columns).
  const Array L = la::cholesky(A3);
  Arrays loop;
  for (std::int64_t i = 0; i < 4; ++i)
    loop.push_back(lla::triangular_solve(L, nth(rhs, i), {.left_side = true, .lower = true}));
  check_close64(vmap([&](const Array& b) {
                  return lla::triangular_solve(L, b, {.left_side = true, .lower = true});
                })(rhs),
                stack(loop), 1e-12);
  // Gradients of batched decompositions: per-example grads through vmap.
  auto g = vmap(grad([](const Array& a) { return la::slogdet(a).logabsdet; }))(batch);
  for (std::int64_t i = 0; i < 4; ++i)
    check_close64(nth(g, i), transpose(la::inv(nth(batch, i))), 1e-10);
}

TEST_CASE(
    "jit of a Gaussian log-likelihood through cholesky and triangular_solve equals eager, grads "
    "too") {
  auto nll = [](const Array& k, const Array& y) {
    const Array L = la::cholesky(k);
    const Array alpha = lla::triangular_solve(L, y, {.left_side = true, .lower = true});
    return 0.5 * sum(square(alpha)) + sum(log(la::diagonal(L)));
  };
  const Array y = array<double>({0.5, -1, 2});
  auto jf = jit(nll);
  check_close64(jf(A3, y), nll(A3, y), 1e-14);
  auto g = grad(nll);
  check_close64(jit(g)(A3, y), g(A3, y), 1e-12);
  // grad of grad: the second derivative along a direction equals a finite difference of grads.
  const Array dir = transform_testing::data({3, 3}, 11);
  auto gd = [&](const Array& k) { return sum(grad(nll)(k, y) * dir); };
  const double eps = 1e-6;
  const Array h = grad(gd)(A3);
  const double fd =
      (gd(A3 + eps * dir).item<double>() - gd(A3 - eps * dir).item<double>()) / (2 * eps);
  CHECK(sum(h * dir).item<double>() == doctest::Approx(fd).epsilon(1e-6));
}

}  // namespace test_linalg_decomp
