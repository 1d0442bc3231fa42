// jit's fused elementwise chains beyond test_jit.cpp's: one-element chains run as register code
// (every operation form, constants folded into the code, several outputs), compared bit for bit
// with eager evaluation, which runs each primitive's own kernel; chains reading and writing
// splits and concatenations in place, counted by the buffers a replay allocates.
#include <doctest/doctest.h>

#include <utility>

#include <linum/linum.hpp>

#include "transform_testing.hpp"

namespace test_jit_fusion {

using namespace linum;
using namespace transform_testing;

namespace {

bool same(const Array& a, const Array& b) {
  return a.shape() == b.shape() && a.dtype() == b.dtype() && all(equal(a, b)).item<bool>();
}

// Each line reads the value the line before wrote as its first operand, its second, or neither,
// so the register code holds every form of every operation: inline arithmetic, unary and binary
// calls. Returns an intermediate value too, so the chain has two outputs.
std::pair<Array, Array> every_form(const Array& x, const Array& y) {
  Array z = x, mid;
  for (int i = 0; i < 3; ++i) {
    z = 1.5f - z;            // sub, the previous value on the right
    z = z / 3.0f;            // div, on the left
    z = 2.0f / (z + 4.0f);   // add on the left, then div on the right
    z = -z;                  // neg of the previous value
    const Array u = x * y;   // mul of two older values
    z = z + u;               // add, the previous value on the right
    z = u - z;               // sub, on the right
    z = z * u;               // mul, on the left
    z = u * z;               // mul, on the right
    z = tanh(z);             // a unary call of the previous value
    const Array v = sin(y);  // a unary call of an older value
    z = maximum(z, v);       // a binary call, the previous value on the right
    z = arctan2(z, y);       // on the left
    z = minimum(y, x);       // neither
    z = z - (-x);            // neg of an older value, sub on the right
    if (i == 1) mid = z;
    z = exp(z) - x / y;  // div of two older values, sub on the left
  }
  return {z, mid};
}

}  // namespace

TEST_SUITE("jit") {
  TEST_CASE("one-element chains run as register code, eager results bit for bit") {
    for (DType dt : {float32, float64}) {
      for (auto [xv, yv] : {std::pair{0.3, 0.7}, std::pair{-1.25, 2.5}, std::pair{4.0, -0.5}}) {
        const Array x = astype(Array(xv), dt), y = astype(Array(yv), dt);
        auto jf = jit(every_form);
        jf(x, y);  // trace
        const auto got = jf(x, y);
        const auto want = every_form(x, y);
        INFO(dtype_name(dt) << " x " << xv << " y " << yv);
        CHECK(same(got.first, want.first));
        CHECK(same(got.second, want.second));
      }
    }
    // A shape of one element that is not rank 0 takes the same code.
    const Array x = astype(data({1, 1}, 1), float32), y = astype(data({1, 1}, 2), float32);
    const auto got = jit(every_form)(x, y), want = every_form(x, y);
    CHECK(same(got.first, want.first));
    CHECK(same(got.second, want.second));
  }

  TEST_CASE("a scalar program and its gradient replay as register code with its constants") {
    // The constants of each line are folded into the code; 4,000 primitives forward, the
    // backward about as many again, all in one chain.
    auto f = [](const Array& x0) {
      Array x = x0;
      for (int i = 0; i < 1000; ++i) x = sin(x) * 1.0001f + 0.5f * x;
      return x;
    };
    auto jf = jit(f);
    auto jg = jit(linum::grad(f));
    for (float v : {0.3f, -2.0f, 7.5f}) {
      const Array x = Array(v);
      CHECK(same(jf(x), f(x)));
      CHECK(same(jg(x), linum::grad(f)(x)));
    }
    CHECK(jf.program_size() == 4000);
  }

  TEST_CASE("a bias broadcast along the leading dims and integer_pow's square join a chain") {
    auto layer = [](const Array& x, const Array& b) {
      const Array y = tanh(x * 1.5f + b);
      return square(y) - y * b + square(x);
    };
    for (DType dt : {float32, float64}) {
      // A bias of 64 elements: whole SIMD batches, fused; of 10: its own kernel, unfused.
      for (std::int64_t cols : {64, 10}) {
        const Array x = astype(data({6, cols}, 1), dt), b = astype(data({cols}, 2), dt);
        auto jl = jit(layer);
        jl(x, b);  // trace
        const std::uint64_t before = memory_stats().num_allocs;
        const Array got = jl(x, b);
        const std::uint64_t allocs = memory_stats().num_allocs - before;
        INFO(dtype_name(dt) << " cols " << cols);
        CHECK(same(got, layer(x, b)));
        CHECK(jl.program_size() == 8);
        // One chain of all 8 primitives: the output is its only buffer.
        if (cols == 64) CHECK(allocs == 1);
      }
    }
  }

  TEST_CASE("chains read a split's pieces in place and write a concatenation of their outputs") {
    // An LSTM cell's gates: one chain makes z, a split cuts it into the four gates, a chain
    // computes the cell, and a concatenation joins three of its values.
    auto gates = [](const Array& x, const Array& b) {
      const Arrays g = split(x * 2.0f + b, 4, -1);
      const Array c = sigmoid(g[0]) * tanh(g[1]) + g[2];
      const Array h = sigmoid(g[3]) * tanh(c);
      return concatenate({h * 2.0f, c * 3.0f, h - c}, -1);
    };
    auto count = [](const std::string& text, const std::string& name) {
      return text.find(" = " + name) != std::string::npos;
    };
    for (DType dt : {float32, float64}) {
      // Pieces of 16 columns: whole SIMD batches, read and written in place; of 10: copied.
      for (std::int64_t cols : {16, 10}) {
        const Array x = astype(data({8, 4 * cols}, 1), dt), b = astype(data({4 * cols}, 2), dt);
        auto jg = jit(gates);
        jg(x, b);  // trace
        const std::uint64_t before = memory_stats().num_allocs;
        const Array got = jg(x, b);
        const std::uint64_t allocs = memory_stats().num_allocs - before;
        INFO(dtype_name(dt) << " cols " << cols);
        CHECK(same(got, gates(x, b)));
        const std::string text = jg.program_text();
        CHECK(count(text, "split") == (cols == 10));
        CHECK(count(text, "concatenate") == (cols == 10));
        if (cols == 16) CHECK(allocs == 2);  // z and the concatenation
        // The backward pass concatenates the gates' cotangents (split's transpose): written in
        // place by the chain that computes them.
        auto loss = [&](const Array& xx) { return sum(gates(xx, b) * gates(xx, b)); };
        auto jl = jit(linum::grad(loss));
        CHECK(same(jl(x), linum::grad(loss)(x)));
        CHECK(count(jl.program_text(), "concatenate") == (cols == 10));
      }
    }
  }

  TEST_CASE("chains write the pieces of a leading-axis concatenation into its buffer") {
    // An unrolled recurrence: each step's chain makes h, which the next step's product reads and
    // a concatenation of every step's h (after a constant first row block) collects, as scan's
    // stacked outputs do under jit.
    auto steps = [](const Array& x, const Array& w, int n) {
      Arrays hs{zeros(x.shape(), x.dtype())};
      Array h = x;
      for (int t = 0; t < n; ++t) {
        h = tanh(matmul(h, w) + 0.5f) * 2.0f;
        hs.push_back(h);
      }
      hs.push_back(hs[2]);  // a piece twice: its second place is a copy
      return std::make_pair(concatenate(hs, 0), sum(h));
    };
    for (DType dt : {float32, float64}) {
      // Rows of 16 columns: every piece starts 64-byte aligned and is written in place; of 5
      // columns (60 or 120 bytes a piece) most are not, and are copied.
      for (std::int64_t cols : {16, 5}) {
        const Array x = astype(data({4, cols}, 1), dt);
        const Array w = astype(data({cols, cols}, 2) * 0.1f, dt);
        auto run = [&](const Array& xx, const Array& ww) { return steps(xx, ww, 5); };
        auto js = jit(run);
        js(x, w);  // trace
        const std::uint64_t before = memory_stats().num_allocs;
        const auto got = js(x, w);
        const std::uint64_t allocs = memory_stats().num_allocs - before;
        const auto want = run(x, w);
        INFO(dtype_name(dt) << " cols " << cols);
        CHECK(same(got.first, want.first));
        CHECK(same(got.second, want.second));
        // Aligned: the 5 products and the one concatenated buffer (the steps' chains write into
        // it); unaligned: each chain's output too.
        if (cols == 16) CHECK(allocs == 6);
        // The gradient reads the pieces back (its products of a weight the function closes over
        // are batched, so it equals eager's up to rounding).
        auto loss = [&](const Array& xx) { return sum(square(run(xx, w).first)); };
        auto jl = jit(linum::grad(loss));
        check_close(jl(x), linum::grad(loss)(x), dt == float32 ? 1e-5 : 1e-12);
      }
    }
  }
}

}  // namespace test_jit_fusion
