// optax's linear algebra: power_iteration, matrix_inverse_pth_root and nnls, against closed
// forms and against numpy loops that follow optax's algorithms step for step (the script's
// numbers are quoted where they are used; numpy computes in float64).
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "helpers.hpp"

namespace test_linear_algebra {

using namespace linum;
using optim_test::check_close;
using optim_test::f64;
using optim_test::values;
using testing::check_error;

namespace {
Array mat(const std::vector<double>& v, const Shape& s) { return array(v, s); }
const Array kA2 = mat({2.0, 1.0, 1.0, 3.0}, {2, 2});  // eigenvalues (5 +- sqrt 5) / 2
}  // namespace

TEST_CASE("power_iteration: the dominant eigenpair of a matrix, step for step as optax") {
  // numpy, optax's loop (v = z/|z|, z = A v, eig = <v, z> until |z - eig v| / |eig| < 1e-6):
  // 13 steps give eig 3.618033988748204, v (0.5257313946945829, 0.850650633710743).
  auto [eig, v] = optim::power_iteration(kA2, {.v0 = f64({1.0, 1.0})});
  check_close(eig, {3.618033988748204}, 1e-14);
  check_close(v, {0.5257313946945829, 0.850650633710743}, 1e-13);
  CHECK(std::abs(eig.item<double>() - (5.0 + std::sqrt(5.0)) / 2.0) < 1e-11);
  // num_iters bounds the steps: 3 steps give 3.617647058823529; none leaves eig at its initial
  // 0 and the vector A v0 / |A v0| = (3, 4) / 5.
  check_close(optim::power_iteration(kA2, {.v0 = f64({1.0, 1.0}), .num_iters = 3}).first,
              {3.617647058823529}, 1e-14);
  auto [eig0, v0] = optim::power_iteration(kA2, {.v0 = f64({1.0, 1.0}), .num_iters = 0});
  check_close(eig0, {0.0});
  check_close(v0, {0.6, 0.8}, 1e-15);
}

TEST_CASE("power_iteration: v0 defaults to uniform(PRNGKey(0), (n,), -1, 1), or of the key given") {
  const Array key = random::PRNGKey(3);
  auto [e_default, v_default] = optim::power_iteration(kA2);
  auto [e_explicit, v_explicit] = optim::power_iteration(
      kA2, {.v0 = random::uniform(random::PRNGKey(0), {2}, float64, -1.0, 1.0)});
  CHECK(values(e_default) == values(e_explicit));
  CHECK(values(v_default) == values(v_explicit));
  auto [e_key, v_key] = optim::power_iteration(kA2, {.key = key});
  auto [e_key2, v_key2] =
      optim::power_iteration(kA2, {.v0 = random::uniform(key, {2}, float64, -1.0, 1.0)});
  CHECK(values(e_key) == values(e_key2));
  CHECK(e_key.dtype() == float64);
  // Whatever the start, the eigenvalue is (5 + sqrt 5) / 2 and the vector +-(its eigenvector).
  const double lambda = (5.0 + std::sqrt(5.0)) / 2.0;
  CHECK(std::abs(e_key.item<double>() - lambda) < 1e-9);
  const std::vector<double> u = values(v_default);
  CHECK(std::abs(std::abs(u[0]) - 0.5257311121191336) < 1e-5);  // (1, lambda - 2) normalised
}

TEST_CASE("power_iteration: a matrix-vector product over a pytree (optax's test)") {
  // A block-diagonal operator: 2 I on 'a', I on 'b'; the dominant eigenvalue is 2 and its
  // eigenvector lives on 'a'.
  using Tree2 = std::map<std::string, Array>;
  auto mvp = [](const Tree2& x) { return Tree2{{"a", 2.0 * x.at("a")}, {"b", x.at("b")}}; };
  Tree2 v0{{"a", ones({6}, float64)}, {"b", ones({6}, float64)}};
  auto [eig, vec] = optim::power_iteration(mvp, v0, 100, 1e-3);
  CHECK(std::abs(eig.item<double>() - 2.0) < 1e-2);
  CHECK(values(sum(vec.at("b"))).at(0) < 0.2);
}

TEST_CASE("power_iteration: runs under jit and vmap (a while_loop)") {
  auto f = [](const Array& m) { return optim::power_iteration(m, {.v0 = f64({1.0, 1.0})}).first; };
  check_close(jit(f)(kA2), {3.618033988748204}, 1e-14);
  // Two matrices at once: diag(2, 3) and kA2; each gets its own eigenvalue.
  Array batch = stack({mat({2.0, 0.0, 0.0, 3.0}, {2, 2}), kA2});
  check_close(vmap(f)(batch), {3.0, 3.618033988748204}, 1e-6);
}

TEST_CASE("power_iteration: bad matrices and v0") {
  check_error<ValueError>(
      [] {
        optim::power_iteration(ones({2, 3}));
      },
      {"power_iteration", "square", "(2, 3)"});
  check_error<TypeError>(
      [] {
        optim::power_iteration(array({{1, 2}, {3, 4}}));
      },
      {"power_iteration", "int32"});
  check_error<ValueError>(
      [] {
        optim::power_iteration(kA2, {.v0 = f64({1.0, 1.0, 1.0})});
      },
      {"power_iteration", "v0", "size 2", "(3,)"});
}

TEST_CASE("matrix_inverse_pth_root: coupled Newton iterations as optax, for p = 1, 2, 4, 8") {
  // A symmetric positive definite matrix. numpy runs optax's loop (with the dominant eigenvalue
  // from eigvalsh for the ridge 1e-6 * max_ev): p = 1 stops after 6 steps, 2 after 4, 4 after 5,
  // 8 after 7; the results are within 1e-9 of U diag((w + ridge)^(-1/p)) U^T.
  const Array m3 = mat({4.0, 1.0, 0.5, 1.0, 3.0, 0.25, 0.5, 0.25, 2.0}, {3, 3});
  const std::map<int, std::vector<double>> expected{
      {1,
       {0.27941134209964474, -0.0882350317541133, -0.058823317392125776, -0.08823503175411328,
        0.36470521355074426, -0.023529338090035243, -0.05882331739212578, -0.023529338090035237,
        0.5176457719711617}},
      {2,
       {0.5202456233561654, -0.07979804658329143, -0.0488680052921595, -0.07979804658329141,
        0.5982498735393543, -0.02084640984587424, -0.048868005292159504, -0.02084640984587424,
        0.7175114409249065}},
      {4,
       {0.7185682651032602, -0.05385125687671851, -0.031706922533366835, -0.05385125687671847,
        0.7714632631609774, -0.013940943628680378, -0.03170692253336682, -0.01394094362868038,
        0.8463522140557292}},
      {8,
       {0.8469124766984887, -0.0313091672859224, -0.018090280722029374, -0.03130916728592259,
        0.877734504568597, -0.008070861529387434, -0.018090280722029464, -0.008070861529387439,
        0.9197607390024195}}};
  const std::map<int, double> error{{1, 4.522160423903188e-12},
                                    {2, 8.455810789342877e-07},
                                    {4, 4.141785581168733e-09},
                                    {8, 2.389374254008203e-09}};
  for (const auto& [p, want] : expected) {
    INFO("p = " << p);
    auto [root, err] = optim::matrix_inverse_pth_root(m3, p);
    CHECK(root.dtype() == float64);
    check_close(root, want, 1e-9, 1e-12);
    CHECK(std::abs(err.item<double>() - error.at(p)) < 1e-9);
  }
  // p = 1 is the inverse: root @ m3 = I up to the ridge.
  auto inv = optim::matrix_inverse_pth_root(m3, 1).first;
  check_close(matmul(inv, m3), {1, 0, 0, 0, 1, 0, 0, 0, 1}, 0, 1e-5);
}

TEST_CASE("matrix_inverse_pth_root: float32, ill-conditioned matrices (optax's test)") {
  // U diag(c^(-i/15)) U^T with U a Householder reflection (orthogonal), condition number c:
  // optax asserts error < 0.1 up to c = 1e6 with ridge_epsilon 1e-12, in float32.
  const int n = 16;
  std::vector<double> v(n);
  for (int i = 0; i < n; ++i) v[i] = i + 1.0;
  Array vv = f64(v).reshape({n, 1});
  Array u = eye(n, -1, 0, float64) - 2.0 * matmul(vv, vv.T()) / sum(vv * vv);
  for (int e = 2; e < 7; ++e) {
    INFO("condition number 1e" << e);
    std::vector<double> d(n);
    for (int i = 0; i < n; ++i) d[i] = std::pow(std::pow(10.0, e), -double(i) / (n - 1));
    Array ms = astype(matmul(matmul(u, diag(f64(d))), u.T()), float32);
    auto [root, err] = optim::matrix_inverse_pth_root(ms, 4, 100, 1e-12);
    CHECK(root.dtype() == float32);
    CHECK(err.item<double>() < 0.1);
  }
}

TEST_CASE("matrix_inverse_pth_root: a 1x1 matrix, and bad input") {
  // (4 + 1e-6 * 4)^(-1/2): the ridge is 1e-6 times the dominant eigenvalue 4.
  auto [root, err] = optim::matrix_inverse_pth_root(mat({4.0}, {1, 1}), 2);
  check_close(root, {std::pow(4.0 + 4e-6, -0.5)}, 1e-15);
  check_close(err, {0.0});
  check_error<ValueError>([] { optim::matrix_inverse_pth_root(kA2, 3); },
                          {"matrix_inverse_pth_root", "1, 2, 4 or 8", "3"});
  check_error<ValueError>([] { optim::matrix_inverse_pth_root(ones({3}), 2); },
                          {"matrix_inverse_pth_root", "square", "(3,)"});
}

TEST_CASE("nnls: optax's docstring example and the constrained optimum") {
  // min |A x - b|, x >= 0: A^-1 b = (-4, 4.5) is infeasible; with x0 = 0 the optimum is
  // x1 = <a1, b> / |a1|^2 = 34 / 20 = 1.7 (optax's docstring prints 0.00, 1.70).
  Array A = array({{1.0f, 2.0f}, {3.0f, 4.0f}});
  Array x = optim::nnls(A, array({5.0f, 6.0f}), 1000);
  CHECK(x.dtype() == float32);
  check_close(x, {0.0, 1.7}, 0, 1e-5);
}

TEST_CASE("nnls: the fast projected gradient step for step, b with and without columns") {
  // numpy, optax's loop (c_0 = 0, c' = (1 + sqrt(1 + 4c^2)) / 2, s = (c - 1) / c',
  // x' = max(p - (Q p - q) / L, 0), p' = x' + s (x' - x), L = min(|Q|_F, |Q|_1) = 9.99).
  Array A = mat({1.0, -2.0, 0.5, 0.3, 1.0, -1.0, 2.0, 0.0, 1.0, -1.0, 1.0, 1.0}, {4, 3});
  Array b = mat({1.0, -1.0, 2.0, 0.5, -0.5, 1.0, 1.0, 2.0}, {4, 2});
  const std::vector<std::vector<double>> by_iters{
      {0, 0, 0, 0, 0, 0},
      {0.0, 0.0, 0.10010010010010012, 0.4504504504504505, 0.0, 0.20020020020020024},
      {0.0, 0.0, 0.10010010010010012, 0.4504504504504505, 0.0, 0.20020020020020024},
      {0.0, 0.012610207805403003, 0.14008001995989985, 0.6504001498996494, 0.0,
       0.38036034032030036},
      {0.000863879774723828, 0.06044846090749276, 0.16054700382636222, 0.7802443483241891, 0.0,
       0.5598695743875577},
      {0.006235632072862471, 0.09611742376216244, 0.16810538196521457, 0.8703804420987147, 0.0,
       0.7044858297595231}};
  for (std::size_t it = 0; it < by_iters.size(); ++it) {
    INFO("iters = " << it);
    Array x = optim::nnls(A, b, static_cast<std::int64_t>(it));
    CHECK(x.shape() == Shape{3, 2});
    check_close(x, by_iters[it], 1e-12, 1e-14);
  }
  // One right-hand side: the first column's answers.
  check_close(optim::nnls(A, take(b, Array(0), 1), 5),
              {0.006235632072862471, 0.16810538196521457, 0.0}, 1e-12, 1e-14);
  // L given: numpy with L = 100.
  check_close(optim::nnls(A, b, 5, 1, 100.0),
              {0.0, 0.0, 0.043502876395725504, 0.19737580161005763, 0.0, 0.09494224576726865},
              1e-12, 1e-14);
  // 2000 steps reach the optimum found by enumerating the active sets in numpy.
  check_close(optim::nnls(A, b, 2000),
              {0.01025641025641029, 0.10784737221022343, 0.17128205128205126, 0.9428077753779703,
               0.0, 0.8656587473002157},
              1e-9, 1e-12);
}

TEST_CASE("nnls: the objective never increases, x stays non-negative (optax's test)") {
  Array A = random::normal(random::PRNGKey(0), {10, 11});
  Array b = random::normal(random::PRNGKey(1), {10});
  double last = INFINITY;
  for (int iters = 0; iters < 5; ++iters) {
    Array x = optim::nnls(A, b, iters);
    CHECK(x.dtype() == float32);
    CHECK(all(x >= 0.0).item<bool>());
    const double obj = sum(square(matmul(A, x) - b)).item<double>();
    CHECK(obj <= last + 1e-6);
    last = obj;
  }
}

TEST_CASE("nnls: bad shapes, dtypes, iters and unroll") {
  Array A = ones({3, 2}), b = ones({3});
  check_error<ValueError>([&] { optim::nnls(ones({3}), b, 1); }, {"nnls", "A", "2-D", "(3,)"});
  check_error<ValueError>([&] { optim::nnls(A, ones({2}), 1); }, {"nnls", "M = 3", "(2,)"});
  check_error<ValueError>([&] { optim::nnls(A, ones({3, 1, 1}), 1); }, {"nnls", "(3, 1, 1)"});
  check_error<TypeError>(
      [&] {
        optim::nnls(array({{1, 2}, {3, 4}, {5, 6}}), b, 1);
      },
      {"nnls", "int32"});
  check_error<ValueError>([&] { optim::nnls(A, b, -1); }, {"nnls", "iters", "-1"});
  check_error<ValueError>([&] { optim::nnls(A, b, 1, 0); }, {"nnls", "unroll"});
}

}  // namespace test_linear_algebra
