// jax.random.multivariate_normal and jax.random.orthogonal: closed-form factors applied to the
// (bit-exact) normal sample of the same key, the defining properties of the results, sample
// statistics for every factorisation method, JAX's shape rules, vmap over keys, and errors.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include <linum/autodiff/ops.hpp>
#include <linum/autodiff/random/matrix_samplers.hpp>
#include <linum/autodiff/random/random.hpp>
#include <linum/autodiff/transforms.hpp>
#include <linum/nn/initializers.hpp>

namespace test_matrix_samplers {

namespace lr = linum::random;
using linum::Array;
using linum::Shape;

namespace {

double max_abs_diff(const Array& a, const Array& b) {
  return linum::max(linum::abs(linum::astype(a, linum::float64) - linum::astype(b, linum::float64)))
      .item<double>();
}

}  // namespace

TEST_SUITE("random matrix samplers") {
  TEST_CASE("the real jax.random's multivariate_normal and orthogonal draws") {
    // Printed by scripts/reference/jax_random_values.py with JAX 0.11.2 on 2026-11-27:
    // multivariate_normal(key(17), mean, cov, (2,), method) and orthogonal(key(18), 3). They go
    // through LAPACK (cholesky, eigh, svd, QR), whose last bits depend on the BLAS kernels, so
    // they are compared to 2e-6; eigenvectors and singular vectors are LAPACK's, signs included.
    struct Case {
      bool partitionable;
      const char* name;
      std::vector<float> values;
    };
    const std::vector<Case> cases = {
        {false,
         "multivariate_normal cholesky",
         {-0.7548278570175171f, -1.8403313159942627f, -0.7411704063415527f, 0.1180959939956665f,
          -1.8764106035232544f, 0.8902057409286499f}},
        {false,
         "multivariate_normal eigh",
         {3.2062389850616455f, -1.3089652061462402f, -0.3330535888671875f, -0.03507792949676514f,
          -2.1919772624969482f, 0.0022087693214416504f}},
        {false,
         "multivariate_normal svd",
         {2.957136631011963f, -2.2943222522735596f, -0.20475250482559204f, 1.8692731857299805f,
          -1.8238216638565063f, 1.0590338706970215f}},
        {false,
         "orthogonal 3",
         {-0.07555234432220459f, 0.43684297800064087f, 0.8963594436645508f, -0.9116020798683167f,
          -0.39453208446502686f, 0.11543908715248108f, -0.40407127141952515f, 0.8084014058113098f,
          -0.4280346930027008f}},
        {true,
         "multivariate_normal cholesky",
         {0.05603504180908203f, -0.9758960008621216f, 0.6745496988296509f, 0.5393336415290833f,
          -1.4424000978469849f, -0.08732086420059204f}},
        {true,
         "multivariate_normal eigh",
         {-0.2308518886566162f, -1.3649072647094727f, -0.3913305401802063f, 1.7600905895233154f,
          -1.2641534805297852f, 0.08128169178962708f}},
        {true,
         "multivariate_normal svd",
         {2.146772861480713f, -2.6431045532226562f, 1.422386646270752f, 1.6535778045654297f,
          -2.6011433601379395f, 0.3965584635734558f}},
        {true,
         "orthogonal 3",
         {0.15790843963623047f, 0.40966302156448364f, 0.8984660506248474f, -0.9432486295700073f,
          0.33177056908607483f, 0.014505399391055107f, -0.29214227199554443f, -0.84976726770401f,
          0.43880343437194824f}},
    };
    const Array mean = linum::array({1.0f, -2.0f, 0.5f});
    const Array cov = linum::array({{2.0f, 0.3f, 0.1f}, {0.3f, 1.0f, -0.2f}, {0.1f, -0.2f, 0.5f}});
    for (const Case& c : cases) {
      lr::ThreefryPartitionableScope scope(c.partitionable);
      const std::string name = c.name;
      CAPTURE(name);
      CAPTURE(c.partitionable);
      const Array got = name == "orthogonal 3" ? lr::orthogonal(lr::key(18), 3)
                                               : lr::multivariate_normal(
                                                     lr::key(17), mean, cov, Shape{2}, std::nullopt,
                                                     name.substr(name.find(' ') + 1));
      const Array f = linum::astype(got, linum::float32);
      const std::vector<float> g(f.data<float>(), f.data<float>() + linum::shape_size(f.shape()));
      REQUIRE(g.size() == c.values.size());
      for (std::size_t i = 0; i < g.size(); ++i) {
        INFO("element " << i << ": linum " << g[i] << ", JAX " << c.values[i]);
        CHECK(std::abs(g[i] - c.values[i]) <= 2e-6f * (1.0f + std::abs(c.values[i])));
      }
    }
  }

  TEST_CASE("multivariate_normal (cholesky) is mean + L z with z = normal(key, (n,))") {
    // cov = [[4, 2], [2, 3]] has the Cholesky factor L = [[2, 0], [1, sqrt(2)]] (by hand).
    const Array mean = linum::array({1.0f, -1.0f});
    const Array cov = linum::array({{4.0f, 2.0f}, {2.0f, 3.0f}});
    const Array key = lr::key(7);
    const Array x = lr::multivariate_normal(key, mean, cov);
    const Array z = lr::normal(key, {2});
    const float z0 = z.data<float>()[0], z1 = z.data<float>()[1];
    CHECK(x.shape() == Shape{2});
    CHECK(x.dtype() == linum::float32);
    CHECK(std::abs(x.data<float>()[0] - (1.0f + 2.0f * z0)) < 1e-6);
    CHECK(std::abs(x.data<float>()[1] - (-1.0f + z0 + std::sqrt(2.0f) * z1)) < 1e-6);
    // A batch of samples: z = normal(key, shape + (n,)), the factor applied row by row.
    const Array xs = lr::multivariate_normal(key, mean, cov, Shape{5});
    const Array zs = lr::normal(key, {5, 2});
    CHECK(xs.shape() == Shape{5, 2});
    for (int i = 0; i < 5; ++i) {
      const float a = zs.data<float>()[2 * i], b = zs.data<float>()[2 * i + 1];
      CHECK(std::abs(xs.data<float>()[2 * i] - (1.0f + 2.0f * a)) < 1e-6);
      CHECK(std::abs(xs.data<float>()[2 * i + 1] - (-1.0f + a + std::sqrt(2.0f) * b)) < 1e-5);
    }
  }

  TEST_CASE("multivariate_normal: every method samples the given mean and covariance") {
    const Array mean = linum::array({0.5, -2.0, 1.0});
    const Array cov = linum::array({{2.0, 0.6, -0.4}, {0.6, 1.0, 0.2}, {-0.4, 0.2, 0.5}});
    for (const char* method : {"cholesky", "svd", "eigh"}) {
      CAPTURE(method);
      const Array x =
          lr::multivariate_normal(lr::key(3), mean, cov, Shape{40000}, std::nullopt, method);
      CHECK(x.dtype() == linum::float64);
      const Array m = linum::mean(x, 0);
      const Array c = x - m;
      const Array emp = linum::matmul(linum::transpose(c), c) / 40000.0;
      // Standard errors at n = 40000: about 0.007 for the mean, 0.015 for the covariance.
      CHECK(max_abs_diff(m, mean) < 0.03);
      CHECK(max_abs_diff(emp, cov) < 0.06);
    }
  }

  TEST_CASE("multivariate_normal: svd handles a singular covariance") {
    // cov = [[1, 1], [1, 1]]: x0 - mean0 == x1 - mean1 for every sample. (eigh may return a
    // slightly negative zero eigenvalue, whose square root is NaN, in JAX as here.)
    const Array cov = linum::array({{1.0, 1.0}, {1.0, 1.0}});
    {
      const Array x = lr::multivariate_normal(lr::key(1), linum::array({0.0, 3.0}), cov, Shape{100},
                                              std::nullopt, "svd");
      const Array d =
          linum::take(x, linum::Array(0), 1) - (linum::take(x, linum::Array(1), 1) - 3.0);
      CHECK(linum::max(linum::abs(d)).item<double>() < 1e-7);
      CHECK(linum::std(linum::take(x, linum::Array(0), 1)).item<double>() > 0.5);
    }
  }

  TEST_CASE("multivariate_normal: JAX's shapes and dtypes") {
    const Array cov = linum::eye(2);
    // The batch shape defaults to the broadcast of mean's and cov's batch shapes.
    CHECK(lr::multivariate_normal(lr::key(0), linum::zeros({3, 2}), cov).shape() == Shape{3, 2});
    CHECK(lr::multivariate_normal(lr::key(0), linum::zeros({2}), linum::zeros({4, 2, 2}) + cov)
              .shape() == Shape{4, 2});
    CHECK(lr::multivariate_normal(lr::key(0), linum::zeros({3, 2}), cov, Shape{4, 3}).shape() ==
          Shape{4, 3, 2});
    CHECK_THROWS_AS(lr::multivariate_normal(lr::key(0), linum::zeros({3, 2}), cov, Shape{4}),
                    linum::ValueError);
    // Integer mean and cov promote to float32; dtype sets the samples' dtype.
    CHECK(lr::multivariate_normal(lr::key(0), linum::array({0, 0}), linum::array({{1, 0}, {0, 1}}))
              .dtype() == linum::float32);
    CHECK(lr::multivariate_normal(lr::key(0), linum::zeros({2}, linum::float64), cov, std::nullopt,
                                  linum::float64)
              .dtype() == linum::float64);
  }

  TEST_CASE("multivariate_normal: errors name the function") {
    const Array cov = linum::eye(2);
    CHECK_THROWS_WITH_AS(lr::multivariate_normal(lr::key(0), linum::zeros({2}), cov, std::nullopt,
                                                 std::nullopt, "qr"),
                         doctest::Contains("method must be one of"), linum::ValueError);
    CHECK_THROWS_WITH_AS(lr::multivariate_normal(lr::key(0), Array(0.0f), cov),
                         doctest::Contains("mean.ndim >= 1"), linum::ValueError);
    CHECK_THROWS_WITH_AS(lr::multivariate_normal(lr::key(0), linum::zeros({2}), linum::zeros({2})),
                         doctest::Contains("cov.ndim >= 2"), linum::ValueError);
    CHECK_THROWS_WITH_AS(lr::multivariate_normal(lr::key(0), linum::zeros({2}), linum::eye(3)),
                         doctest::Contains("cov.shape == (..., n, n) for n=2"), linum::ValueError);
    CHECK_THROWS_WITH_AS(
        lr::multivariate_normal(lr::key(0), linum::zeros({2}), cov, std::nullopt, linum::int32),
        doctest::Contains("multivariate_normal"), linum::ValueError);
    CHECK_THROWS_AS(lr::multivariate_normal(linum::zeros({2}), linum::zeros({2}), cov),
                    linum::TypeError);
  }

  TEST_CASE("orthogonal: Q with Q^T z upper triangular with a positive diagonal") {
    // For z = normal(key, (n, m)) with n >= m, Q is the unique factor with orthonormal columns
    // such that R = Q^T z is upper triangular with a positive diagonal (z has full rank a.s.).
    const Array key = lr::key(11);
    const Array q = lr::orthogonal(key, 5, {}, linum::float64, 3);
    CHECK(q.shape() == Shape{5, 3});
    CHECK(max_abs_diff(linum::matmul(linum::transpose(q), q),
                       linum::eye(3, -1, 0, linum::float64)) < 1e-13);
    const Array r = linum::matmul(linum::transpose(q), lr::normal(key, {5, 3}, linum::float64));
    for (int i = 0; i < 3; ++i) {
      CHECK(r.data<double>()[i * 3 + i] > 0);
      for (int j = 0; j < i; ++j) CHECK(std::abs(r.data<double>()[i * 3 + j]) < 1e-12);
    }
    // n < m: the transpose of the (m, n) draw, with orthonormal rows.
    const Array wide = lr::orthogonal(key, 3, {}, linum::float64, 5);
    CHECK(max_abs_diff(wide, linum::transpose(q)) == 0);
    // Square, float32, batched: each (4, 4) matrix orthogonal.
    const Array qs = lr::orthogonal(key, 4, {2, 3});
    CHECK(qs.shape() == Shape{2, 3, 4, 4});
    CHECK(qs.dtype() == linum::float32);
    for (int b = 0; b < 6; ++b) {
      const Array one = linum::take(linum::reshape(qs, {6, 4, 4}), Array(b), 0);
      CHECK(max_abs_diff(linum::matmul(one, linum::transpose(one)), linum::eye(4)) < 1e-5);
    }
  }

  TEST_CASE("orthogonal: the orthogonal initializer draws it; vmap over keys matches a loop") {
    const Array key = lr::key(4);
    CHECK(max_abs_diff(linum::nn::initializers::orthogonal()(key, {6, 4}),
                       lr::orthogonal(key, 6, {}, linum::float32, 4)) == 0);
    const Array keys = lr::split(key, 3);
    const Array batched = linum::vmap([](const Array& k) { return lr::orthogonal(k, 3); })(keys);
    for (int i = 0; i < 3; ++i)
      CHECK(max_abs_diff(linum::take(batched, Array(i), 0), lr::orthogonal(keys[i], 3)) == 0);
  }

  TEST_CASE("orthogonal: errors name the function") {
    CHECK_THROWS_WITH_AS(lr::orthogonal(lr::key(0), -1), doctest::Contains("orthogonal"),
                         linum::ValueError);
    CHECK_THROWS_WITH_AS(lr::orthogonal(lr::key(0), 3, {}, linum::int32),
                         doctest::Contains("orthogonal"), linum::ValueError);
    CHECK_THROWS_AS(lr::orthogonal(linum::zeros({3}), 3), linum::TypeError);
    CHECK(lr::orthogonal(lr::key(0), 0).shape() == Shape{0, 0});
  }
}

}  // namespace test_matrix_samplers
