// The optimizer test problems of tests/optim/reference_optax.py (an independent NumPy
// implementation of optax 0.2.8): the 3-step trajectory problem f = 0.5 * sum(A * p**2) over
// the leaves {"b": (3,), "w": (2, 3)} (float64), and the docstring problem f = sum(x**2) from
// [1, 2, 3] (float32) whose printed objective values optax's documentation shows.
#pragma once

#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "helpers.hpp"

namespace optim_test {

using Params = std::map<std::string, linum::Array>;

inline Params p0() {
  return {{"b", f64({0.5, -1.5, 2.0})}, {"w", linum::array({{1.0, -2.0, 0.5}, {0.25, 3.0, -1.0}})}};
}
inline Params curvature() {
  return {{"b", f64({1.0, 0.5, 2.0})}, {"w", linum::array({{1.0, 2.0, 3.0}, {0.5, 1.5, 4.0}})}};
}
inline linum::Array quad_loss(const Params& p) {
  const Params a = curvature();
  return 0.5 * (linum::sum(a.at("b") * p.at("b") * p.at("b")) +
                linum::sum(a.at("w") * p.at("w") * p.at("w")));
}

// b then w, row-major: the order the reference prints.
inline Vec flat(const Params& p) {
  Vec v = values(p.at("b")), w = values(p.at("w"));
  v.insert(v.end(), w.begin(), w.end());
  return v;
}

// Runs tx on the trajectory problem (with_value: passes the objective's value as an extra
// argument) and checks each iterate against the reference's.
template <class Tx>
void check_reference(const Tx& tx, const std::vector<Vec>& want, bool with_value = false,
                     double rtol = 1e-12) {
  Params p = p0();
  auto state = tx.init(p);
  auto vg = linum::value_and_grad(quad_loss);
  for (std::size_t t = 0; t < want.size(); ++t) {
    auto [value, g] = vg(p);
    auto [u, next] = with_value ? tx.update(g, state, p, linum::optim::ExtraArgs<Params>{value})
                                : tx.update(g, state, p);
    state = next;
    p = linum::optim::apply_updates(p, u);
    INFO("step " << t + 1);
    check_close(flat(p), want[t], rtol, 1e-14);
  }
}

// As check_reference, every update getting all of optax's extra arguments: the objective's value,
// its gradient, the objective (as value_fn and obj_fn) and its gradient function (grad_fn).
template <class Tx>
void check_reference_extra(const Tx& tx, const std::vector<Vec>& want, double rtol = 1e-12) {
  Params p = p0();
  auto state = tx.init(p);
  auto vg = linum::value_and_grad(quad_loss);
  auto grad_fn = [](const Params& q, int) { return linum::grad(quad_loss)(q); };
  for (std::size_t t = 0; t < want.size(); ++t) {
    auto [value, g] = vg(p);
    auto [u, next] = tx.update(
        g, state, p, linum::optim::ExtraArgs<Params>{value, g, quad_loss, quad_loss, grad_fn});
    state = next;
    p = linum::optim::apply_updates(p, u);
    INFO("step " << t + 1);
    check_close(flat(p), want[t], rtol, 1e-14);
  }
}

// Five steps on sum(x**2) from [1, 2, 3] in float32, the objective printed as optax's docstring
// examples print it ("%.2E").
template <class Tx>
std::vector<std::string> docstring_run(const Tx& tx, int steps = 5) {
  linum::Array x = f32({1.0, 2.0, 3.0});
  auto state = tx.init(x);
  auto f = [](const linum::Array& y) { return linum::sum(y * y); };
  std::vector<std::string> out;
  for (int i = 0; i < steps; ++i) {
    auto [u, next] = tx.update(linum::grad(f)(x), state, x);
    state = next;
    x = linum::optim::apply_updates(x, u);
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2E", f(x).template item<double>());
    out.emplace_back(buf);
  }
  return out;
}

}  // namespace optim_test
