// jit's rewrites of unrolled loops (scan under jit): the products of every slice of xs by one
// operand batched into one product, sums of products (gradients accumulated over the steps) into
// one product of concatenated operands, and a weight every step reads transposed transposed once.
// Each is checked against eager evaluation (the unrewritten ops) within float rounding, since
// the batched GEMMs sum in another order, and by the products left in the program.
#include <doctest/doctest.h>

#include <string>
#include <utility>

#include <linum/linum.hpp>

#include "transform_testing.hpp"

namespace test_jit_rewrite {

using namespace linum;
using namespace transform_testing;

namespace {

// Occurrences of " = name" (an eqn of that primitive) in a program's text.
int count_eqns(const std::string& text, const std::string& name) {
  int n = 0;
  const std::string key = " = " + name;
  for (auto at = text.find(key); at != std::string::npos; at = text.find(key, at + 1))
    n += text.compare(at + key.size(), 1, "[") == 0 || text.compare(at + key.size(), 1, " ") == 0;
  return n;
}

Array rand(const Shape& s, int seed, DType dt) { return astype(data(s, seed), dt); }

using Carry = std::pair<Array, Array>;

// An LSTM-like cell over xs (steps, batch, in): the input projection x·wx of every step, the
// recurrent h·wh, the gates' elementwise math.
Array lstm(const Array& wx, const Array& wh, const Array& xs) {
  const std::int64_t batch = xs.shape(1), hidden = wh.shape(0);
  auto cell = [&](const Carry& hc, const Array& x) {
    const Array z = matmul(x, wx) + matmul(hc.first, wh);
    const Arrays g = split(z, 4, -1);
    const Array c = sigmoid(g[1]) * hc.second + sigmoid(g[0]) * tanh(g[2]);
    const Array h = sigmoid(g[3]) * tanh(c);
    return std::make_pair(Carry(h, c), std::nullopt);
  };
  const Carry init(zeros({batch, hidden}, xs.dtype()), zeros({batch, hidden}, xs.dtype()));
  return sum(scan(cell, init, xs).first.first);
}

}  // namespace

TEST_SUITE("jit") {
  TEST_CASE("the products of every slice of xs by one weight run as one product") {
    for (DType dt : {float32, float64}) {
      const double tol = dt == float32 ? 1e-5 : 1e-12;
      const Array wx = rand({6, 20}, 1, dt), wh = rand({5, 20}, 2, dt),
                  xs = rand({12, 3, 6}, 3, dt);
      auto jf = jit(lstm);
      check_close(jf(wx, wh, xs), lstm(wx, wh, xs), tol);
      // 12 products by wx became one; the 12 recurrent ones (h changes each step) stay.
      CHECK(count_eqns(jf.program_text(), "dot_general") == 13);
    }
    // The slice on the right: w·x[t] for x[t] of shape (in, cols).
    auto right = [](const Array& w, const Array& xs) {
      auto step = [&](const Array& acc, const Array& x) {
        return std::make_pair(Array(acc + tanh(matmul(w, x))), std::nullopt);
      };
      return scan(step, zeros({4, 3}, float64), xs).first;
    };
    const Array w = rand({4, 5}, 4, float64), xs = rand({7, 5, 3}, 5, float64);
    auto jr = jit(right);
    check_close(jr(w, xs), right(w, xs), 1e-12);
    CHECK(count_eqns(jr.program_text(), "dot_general") == 1);
  }

  TEST_CASE("products whose other operand differs per step, or that miss a slice, stay per step") {
    auto varying = [](const Array& w, const Array& xs) {
      auto step = [&](const Array& acc, const Array& x) {
        return std::make_pair(Array(acc * 0.5 + matmul(x, w * acc[0][0])), std::nullopt);
      };
      return scan(step, ones({2, 3}, float64), xs).first;
    };
    const Array w = rand({4, 3}, 1, float64), xs = rand({5, 2, 4}, 2, float64);
    auto jv = jit(varying);
    check_close(jv(w, xs), varying(w, xs), 1e-12);
    CHECK(count_eqns(jv.program_text(), "dot_general") == 5);
    // The last slice is not multiplied by w (the body, a C++ loop step, counts its calls): no
    // batched product.
    auto partial = [](const Array& w, const Array& xs) {
      int t = 0;
      auto step = [&](const Array& acc, const Array& x) {
        const Array term = t++ < 4 ? matmul(x, w) : sum(x) + zeros({2, 3}, float64);
        return std::make_pair(Array(acc + term), std::nullopt);
      };
      return scan(step, zeros({2, 3}, float64), xs).first;
    };
    auto jp = jit(partial);
    check_close(jp(w, xs), partial(w, xs), 1e-12);
    CHECK(count_eqns(jp.program_text(), "dot_general") == 4);
  }

  TEST_CASE("gradients summed over the steps run as one product of the concatenated operands") {
    for (DType dt : {float32, float64}) {
      const double tol = dt == float32 ? 2e-5 : 1e-11;
      const Array wx = rand({6, 20}, 1, dt), wh = rand({5, 20}, 2, dt),
                  xs = rand({12, 3, 6}, 3, dt);
      auto g = linum::grad(lstm, argnums<0, 1>);
      auto jg = jit(g);
      const auto got = jg(wx, wh, xs), want = g(wx, wh, xs);
      check_close(std::get<0>(got), std::get<0>(want), tol);
      check_close(std::get<1>(got), std::get<1>(want), tol);
      const std::string text = jg.program_text();
      // Forward: one batched x·wx and 12 h·wh. Backward: 11 cotangents of h (the first h is a
      // constant) and one product each for the sums over the steps of xᵀ·dz and hᵀ·dz.
      CHECK(count_eqns(text, "dot_general") == 1 + 12 + 11 + 2);
      // wh, read transposed by each step's cotangent of h, is transposed once.
      CHECK(count_eqns(text, "transpose") == 1);
    }
    // A sum with other terms: the gradient of wx also has wx's own term.
    auto with_decay = [](const Array& wx, const Array& wh, const Array& xs) {
      return lstm(wx, wh, xs) + 0.5 * sum(wx * wx);
    };
    const Array wx = rand({6, 20}, 1, float64), wh = rand({5, 20}, 2, float64),
                xs = rand({9, 3, 6}, 3, float64);
    auto jg = jit(linum::grad(with_decay));
    check_close(jg(wx, wh, xs), linum::grad(with_decay)(wx, wh, xs), 1e-11);
  }

  TEST_CASE("a weight the function closes over is transposed once, as a constant of the program") {
    // The weight is no argument but a constant of the program, so its transpose (which every
    // step's cotangent reads) runs at trace time and is a constant too. This used to crash: the
    // rewrite took the transpose for a traced value.
    for (DType dt : {float32, float64}) {
      const double tol = dt == float32 ? 1e-5 : 1e-12;
      const Array w = rand({16, 16}, 2, dt) * 0.2, x = rand({4, 16}, 1, dt);
      auto loss = [&](const Array& xx) {
        Array h = xx;
        for (int t = 0; t < 4; ++t) h = tanh(matmul(h, w));
        return sum(h);
      };
      auto jl = jit(linum::grad(loss));
      check_close(jl(x), linum::grad(loss)(x), tol);
      CHECK(count_eqns(jl.program_text(), "transpose") == 0);
    }
  }
}

}  // namespace test_jit_rewrite
