// optax.second_order (hvp, hessian_diag, fisher_diag) on a loss whose Hessian and gradient have
// closed forms computed here by explicit loops, against central finite differences of the
// gradient, and hessian_diag's vmapped path against a loop of hvp over the unit vectors.
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "helpers.hpp"

namespace test_second_order {

using namespace linum;
using optim_test::check_close;
using optim_test::f64;
using optim_test::values;
using testing::check_error;
namespace so = optim::second_order;
using Params = std::map<std::string, Array>;

namespace {
// Three examples with two features; params flatten as (b, w0, w1) (dict keys sorted).
const std::vector<double> kX{0.5, -1.0, 1.5, 0.25, -0.75, 2.0}, kY{1.0, 2.0, 0.5};
Array inputs() { return array(kX, {3, 2}); }
Array targets() { return f64(kY); }
Params params() { return {{"w", f64({0.3, -0.2})}, {"b", Array(0.7)}}; }

// loss = sum_i y_i exp(x_i . w) + b^3: Hessian blockdiag(6 b, sum_i y_i e_i x_i x_i^T).
Array loss(const Params& p, const Array& x, const Array& y) {
  return sum(y * exp(matmul(x, p.at("w")))) + p.at("b") * p.at("b") * p.at("b");
}
// The Hessian of loss at params(), in (b, w0, w1) order, by explicit loops.
std::vector<double> hessian() {
  const double w0 = 0.3, w1 = -0.2, b = 0.7;
  std::vector<double> h(9, 0.0);
  h[0] = 6 * b;
  for (int i = 0; i < 3; ++i) {
    const double x0 = kX[2 * i], x1 = kX[2 * i + 1], e = kY[i] * std::exp(x0 * w0 + x1 * w1);
    h[4] += e * x0 * x0, h[5] += e * x0 * x1, h[7] += e * x1 * x0, h[8] += e * x1 * x1;
  }
  return h;
}
std::vector<double> ravel(const Params& p) {
  std::vector<double> out = values(p.at("b")), w = values(p.at("w"));
  out.insert(out.end(), w.begin(), w.end());
  return out;
}
}  // namespace

TEST_CASE("hvp: the Hessian times a flat vector, shaped like params") {
  const std::vector<double> h = hessian(), v{0.5, -1.0, 2.0};
  std::vector<double> hv(3, 0.0);
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) hv[r] += h[r * 3 + c] * v[c];
  const Params out = so::hvp(loss, f64(v), params(), inputs(), targets());
  CHECK(out.at("w").shape() == Shape{2});
  CHECK(out.at("b").ndim() == 0);
  check_close(ravel(out), hv, 1e-13, 1e-14);
  // Central finite differences of the gradient along v (eps 1e-5: error O(eps^2)).
  const double eps = 1e-5;
  auto shifted = [&](double s) {
    Params p = params();
    p["b"] = p["b"] + s * v[0];
    p["w"] = p["w"] + s * f64({v[1], v[2]});
    return ravel(grad(loss)(p, inputs(), targets()));
  };
  const std::vector<double> gp = shifted(eps), gm = shifted(-eps);
  std::vector<double> fd(3);
  for (int i = 0; i < 3; ++i) fd[i] = (gp[i] - gm[i]) / (2 * eps);
  check_close(ravel(out), fd, 1e-8, 1e-8);
  // v is ravel_pytree's vector: its size and dtype are checked as JAX's unravel checks them.
  check_error<ValueError>(
      [] {
        so::hvp(loss, f64({1.0, 2.0}), params(), inputs(), targets());
      },
      {"hvp", "expected an array of shape (3,)", "(2,)"});
  check_error<TypeError>(
      [] {
        so::hvp(loss, astype(f64({1.0, 2.0, 3.0}), float32), params(), inputs(), targets());
      },
      {"hvp", "float32", "float64"});
}

TEST_CASE("hessian_diag: the Hessian's diagonal, vmapped, equals a loop of hvp") {
  const std::vector<double> h = hessian();
  const Array diag = so::hessian_diag(loss, params(), inputs(), targets());
  CHECK(diag.shape() == Shape{3});
  CHECK(diag.dtype() == float64);
  check_close(diag, {h[0], h[4], h[8]}, 1e-13);
  std::vector<double> looped;
  for (int i = 0; i < 3; ++i) {
    std::vector<double> e(3, 0.0);
    e[i] = 1.0;
    looped.push_back(ravel(so::hvp(loss, f64(e), params(), inputs(), targets()))[i]);
  }
  check_close(diag, looped, 1e-15);
  // float32 params: the identity rows are float32 too, and so is the diagonal.
  Params p32{{"w", astype(f64({0.3, -0.2}), float32)}, {"b", Array(0.7f)}};
  const Array d32 =
      so::hessian_diag(loss, p32, astype(inputs(), float32), astype(targets(), float32));
  CHECK(d32.dtype() == float32);
  check_close(d32, {h[0], h[4], h[8]}, 1e-5);
}

TEST_CASE("fisher_diag: the squared gradient of the negative log-likelihood, raveled") {
  // Gaussian NLL 0.5 sum (x.w + b - y)^2: gradient (sum r, sum r x0, sum r x1), r the residuals.
  auto nll = [](const Params& p, const Array& x, const Array& y) {
    return 0.5 * sum(square(matmul(x, p.at("w")) + p.at("b") - y));
  };
  std::vector<double> g(3, 0.0);
  for (int i = 0; i < 3; ++i) {
    const double r = kX[2 * i] * 0.3 + kX[2 * i + 1] * -0.2 + 0.7 - kY[i];
    g[0] += r, g[1] += r * kX[2 * i], g[2] += r * kX[2 * i + 1];
  }
  check_close(so::fisher_diag(nll, params(), inputs(), targets()),
              {g[0] * g[0], g[1] * g[1], g[2] * g[2]}, 1e-13);
  // A bare Array of params is a tree of one leaf.
  auto nll_vec = [](const Array& w, const Array& x, const Array& y) {
    return 0.5 * sum(square(matmul(x, w) - y));
  };
  const Array fd = so::fisher_diag(nll_vec, f64({0.3, -0.2}), inputs(), targets());
  CHECK(fd.shape() == Shape{2});
}

}  // namespace test_second_order
