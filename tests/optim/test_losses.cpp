// optax's softmax cross-entropy losses: optax's doc values, the fused kernels against the
// log_softmax composition they replace (values, VJPs, JVPs, second derivatives, vmap), finite
// differences, and the errors.
#include <cmath>
#include <limits>

#include "autodiff/check_grads.hpp"
#include "helpers.hpp"

namespace test_losses {

using namespace linum;
using optim_test::check_close;
using optim_test::values;
using testing::check_error;
using testing::check_grads;

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();

// The composition optax writes, which the fused primitives must equal.
Array composite(const Array& logits, const Array& labels) {
  return negative(sum(labels * log_softmax(logits, -1), -1));
}

// x[i] along the first axis.
Array at(const Array& x, std::int64_t i) { return take(x, Array(static_cast<int>(i)), 0); }

Array normal64(const Shape& s, int seed) { return random::normal(random::key(seed), s, float64); }

// Nonnegative labels whose rows do not sum to 1 (the fused VJP must use the row sum).
Array soft_labels(const Shape& s, int seed) {
  return random::uniform(random::key(seed), s, float64);
}
}  // namespace

TEST_CASE("softmax_cross_entropy and the integer-label form give optax's doc values") {
  Array logits = array(std::vector<double>{1.2, -0.8, -0.5, 0.9, -1.2, 1.1}, {2, 3});
  Array onehot = array(std::vector<double>{1.0, 0.0, 0.0, 0.0, 1.0, 0.0}, {2, 3});
  Array ce = optim::softmax_cross_entropy(astype(logits, float32), astype(onehot, float32));
  CHECK(ce.shape() == Shape{2});
  CHECK(ce.dtype() == float32);
  check_close(ce, {0.2761, 2.9518}, 0, 5e-5);
  check_close(optim::softmax_cross_entropy_with_integer_labels(logits, array({0, 1})),
              {0.2761, 2.9518}, 0, 5e-5);
  // Several class axes are flattened row-major: optax's (1, 2, 3, 4) example with axis=(2, 3).
  Array x = reshape(arange(24, float32), {1, 2, 3, 4});
  Array ce2 = optim::softmax_cross_entropy_with_integer_labels(
      x, array(std::vector<int>{5, 11}, {1, 2}), {2, 3});
  CHECK(ce2.shape() == Shape{1, 2});
  check_close(ce2, {6.4587, 0.4587}, 0, 5e-5);
}

TEST_CASE(
    "fused softmax_cross_entropy equals the log_softmax composition, in value and gradients") {
  Array x = normal64({6, 5}, 1), l = soft_labels({6, 5}, 2);
  check_close(optim::softmax_cross_entropy(x, l), values(composite(x, l)), 1e-13, 1e-13);
  auto fused = [](const Array& a, const Array& b) {
    return sum(optim::softmax_cross_entropy(a, b) * arange(6.0));
  };
  auto plain = [](const Array& a, const Array& b) { return sum(composite(a, b) * arange(6.0)); };
  auto [gx, gl] = grad(fused, argnums<0, 1>)(x, l);
  auto [hx, hl] = grad(plain, argnums<0, 1>)(x, l);
  check_close(gx, values(hx), 1e-12, 1e-13);
  check_close(gl, values(hl), 1e-12, 1e-13);
  // float32 runs the same kernel in single precision.
  Array x32 = astype(x, float32), l32 = astype(l, float32);
  check_close(optim::softmax_cross_entropy(x32, l32), values(composite(x32, l32)), 1e-5, 1e-6);
  check_close(grad(fused)(x32, l32), values(grad(plain)(x32, l32)), 1e-5, 1e-6);
  // Rows longer than a SIMD batch, with a tail: the batched and scalar parts of the kernels.
  for (DType dt : {float32, float64}) {
    Array xw = astype(normal64({3, 37}, 15), dt), lw = astype(soft_labels({3, 37}, 16), dt);
    const double tol = dt == float32 ? 1e-5 : 1e-13;
    check_close(optim::softmax_cross_entropy(xw, lw), values(composite(xw, lw)), tol, tol);
    auto f = [](const Array& a, const Array& b) { return sum(optim::softmax_cross_entropy(a, b)); };
    auto g = [](const Array& a, const Array& b) { return sum(composite(a, b)); };
    check_close(grad(f)(xw, lw), values(grad(g)(xw, lw)), tol, tol);
  }
  // Finite differences and the transposition identity, in both operands.
  check_grads([](const Arrays& a) { return optim::softmax_cross_entropy(a[0], a[1]); },
              Arrays{x, l});
}

TEST_CASE("integer labels equal the one-hot composition; a -inf logit off the label stays finite") {
  Array x = normal64({4, 7}, 3);
  Array k = array({0, 6, 3, 3});
  Array onehot = one_hot(k, 7, float64);
  check_close(optim::softmax_cross_entropy_with_integer_labels(x, k), values(composite(x, onehot)),
              1e-13, 1e-13);
  check_close(optim::softmax_cross_entropy_with_integer_labels(x, astype(k, uint32)),
              values(composite(x, onehot)), 1e-13, 1e-13);
  auto fused = [&](const Array& a) {
    return sum(optim::softmax_cross_entropy_with_integer_labels(a, k));
  };
  check_close(grad(fused)(x),
              values(grad([&](const Array& a) { return sum(composite(a, onehot)); })(x)), 1e-12,
              1e-13);
  check_grads(
      [&](const Array& a) { return optim::softmax_cross_entropy_with_integer_labels(a, k); }, x);
  // optax reads only the label's logit: a -inf elsewhere is a zero probability, not a NaN. The
  // dense form multiplies 0 * -inf as optax's softmax_cross_entropy does, and gives NaN.
  Array y = array(std::vector<double>{0.5, -kInf, 1.0}, {1, 3});
  check_close(optim::softmax_cross_entropy_with_integer_labels(y, array({0})),
              {std::log(std::exp(0.5) + std::exp(1.0)) - 0.5}, 1e-14);
  CHECK(
      std::isnan(optim::softmax_cross_entropy(y, array(std::vector<double>{1.0, 0.0, 0.0}, {1, 3}))
                     .item<double>()));
}

TEST_CASE("second derivatives and jvp through the fused loss equal the composition's") {
  Array x = normal64({3, 4}, 4), l = soft_labels({3, 4}, 5), v = normal64({3, 4}, 6);
  // Hessian-vector products: grad of <grad(loss), v>, in the logits and in the labels.
  auto hvp = [&](auto loss) {
    return grad(
        [&](const Array& a, const Array& b) {
          auto [ga, gb] = grad([&](const Array& p, const Array& q) { return sum(loss(p, q)); },
                               argnums<0, 1>)(a, b);
          return sum(ga * v) + sum(gb * v);
        },
        argnums<0, 1>)(x, l);
  };
  auto fused = [](const Array& a, const Array& b) { return optim::softmax_cross_entropy(a, b); };
  auto [fx, fl] = hvp(fused);
  auto [cx, cl] = hvp(composite);
  check_close(fx, values(cx), 1e-11, 1e-12);
  check_close(fl, values(cl), 1e-11, 1e-12);
  // The gradient primitive itself passes the finite-difference check in all its inputs.
  check_grads(
      [](const Arrays& a) {
        return grad([&](const Array& p) {
          return sum(optim::softmax_cross_entropy(p, a[1]) * a[2]);
        })(a[0]);
      },
      Arrays{x, l, normal64({3}, 7)});
  Array k = array({1, 0, 3});
  check_grads(
      [&](const Arrays& a) {
        return grad([&](const Array& p) {
          return sum(optim::softmax_cross_entropy_with_integer_labels(p, k) * a[1]);
        })(a[0]);
      },
      Arrays{x, normal64({3}, 8)});
  auto [y, ty] = jvp(fused, std::tuple{x, l}, std::tuple{v, v});
  auto [y2, ty2] = jvp(composite, std::tuple{x, l}, std::tuple{v, v});
  check_close(ty, values(ty2), 1e-12, 1e-13);
}

TEST_CASE("vmap of the fused loss and of its gradient equals a loop over examples") {
  Array x = normal64({5, 3, 4}, 9), l = soft_labels({3, 4}, 10);
  Array k = array({2, 0, 3});
  auto loss = [&](const Array& a) { return sum(optim::softmax_cross_entropy(a, l)); };
  auto iloss = [&](const Array& a) {
    return sum(optim::softmax_cross_entropy_with_integer_labels(a, k));
  };
  Array batched = vmap(grad(loss))(x), ibatched = vmap(grad(iloss))(x);
  Array ls = vmap([&](const Array& a) { return optim::softmax_cross_entropy(a, l); })(x);
  for (std::int64_t b = 0; b < 5; ++b) {
    Array xb = at(x, b);
    check_close(at(batched, b), values(grad(loss)(xb)), 1e-14, 1e-14);
    check_close(at(ibatched, b), values(grad(iloss)(xb)), 1e-14, 1e-14);
    check_close(at(ls, b), values(optim::softmax_cross_entropy(xb, l)), 1e-14, 1e-14);
  }
  // Batched integer labels next to unbatched logits.
  Array ks = array(std::vector<int>{0, 1, 2, 3, 0, 1}, {2, 3});
  Array per = vmap([&](const Array& kk) {
    return optim::softmax_cross_entropy_with_integer_labels(at(x, 0), kk);
  })(ks);
  check_close(at(per, 1),
              values(optim::softmax_cross_entropy_with_integer_labels(at(x, 0), at(ks, 1))), 1e-14,
              1e-14);
}

TEST_CASE("softmax_cross_entropy: class axis other than the last, broadcast labels") {
  Array x = normal64({4, 3}, 11), l = soft_labels({4, 3}, 12);
  check_close(optim::softmax_cross_entropy(x, l, 0),
              values(negative(sum(l * log_softmax(x, 0), 0))), 1e-13, 1e-13);
  // One label row broadcast against every row of logits.
  Array row = soft_labels({3}, 13);
  check_close(optim::softmax_cross_entropy(x, row), values(composite(x, broadcast_to(row, {4, 3}))),
              1e-13, 1e-13);
  // axis None: the whole array is one distribution.
  Array all = optim::softmax_cross_entropy(x, l, Axes());
  CHECK(all.ndim() == 0);
  check_close(all, {-sum(l * log_softmax(reshape(x, {12}), -1).reshape({4, 3})).item<double>()},
              1e-13);
}

TEST_CASE("softmax_cross_entropy errors name the function and what came") {
  Array x = normal64({2, 3}, 14);
  check_error<TypeError>(
      [&] {
        optim::softmax_cross_entropy(array({1, 2}), array({1, 0}));
      },
      {"softmax_cross_entropy", "floating", "int32"});
  check_error<ValueError>(
      [&] {
        optim::softmax_cross_entropy(x, ones({2, 4}, float64));
      },
      {"softmax_cross_entropy", "(2, 3)", "(2, 4)"});
  check_error<TypeError>(
      [&] {
        optim::softmax_cross_entropy_with_integer_labels(x, array({0.0, 1.0}));
      },
      {"softmax_cross_entropy_with_integer_labels", "integer", "float64"});
  check_error<ValueError>(
      [&] {
        optim::softmax_cross_entropy_with_integer_labels(x, array({0, 1, 2}));
      },
      {"softmax_cross_entropy_with_integer_labels", "(3,)", "(2, 3)"});
  check_error<IndexError>(
      [&] {
        optim::softmax_cross_entropy_with_integer_labels(x, array({0, 3}));
      },
      {"softmax_cross_entropy_with_integer_labels", "label 3", "row 1", "3 classes"});
  check_error<IndexError>(
      [&] {
        optim::softmax_cross_entropy_with_integer_labels(x, array({-1, 0}));
      },
      {"label -1", "row 0"});
  // The gradient's kernel checks the labels too (under grad the forward pass has run first).
  check_error<IndexError>(
      [&] {
        grad([&](const Array& a) {
          return sum(optim::softmax_cross_entropy_with_integer_labels(a, array({0, 5})));
        })(x);
      },
      {"label 5"});
  check_error<IndexError>([&] { optim::softmax_cross_entropy(x, x, 2); },
                          {"softmax_cross_entropy"});
}

}  // namespace test_losses
