// dot / matmul / dot_general: hand-computed values, a loop reference for batched contractions,
// check_grads (float64), grad of grad, vmap against loops, and error messages.
#include <doctest/doctest.h>

#include "op_testing.hpp"

namespace test_linalg {

using namespace linum;
using namespace linum::optest;
using linum::testing::check_grads;

namespace {

// out[b, m, n] for x (B, M, K) and y (B, K, N) flattened: the naive triple loop.
std::vector<double> naive_bmm(const std::vector<double>& x, const std::vector<double>& y,
                              std::int64_t B, std::int64_t M, std::int64_t K, std::int64_t N) {
  std::vector<double> o(static_cast<std::size_t>(B * M * N), 0.0);
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t i = 0; i < M; ++i)
      for (std::int64_t j = 0; j < N; ++j)
        for (std::int64_t k = 0; k < K; ++k)
          o[(b * M + i) * N + j] += x[(b * M + i) * K + k] * y[(b * K + k) * N + j];
  return o;
}

Array mm(const Array& a, const Array& b) { return matmul(a, b); }

}  // namespace

TEST_CASE("matmul of small matrices matches hand-computed products in every dtype") {
  for (DType d : {float32, float64, int32}) {
    Array a = astype(array({{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}}), d);
    Array b = astype(array({{7.0, 8.0}, {9.0, 10.0}, {11.0, 12.0}}), d);
    check_array(matmul(a, b), {2, 2}, d, {58, 64, 139, 154});
    check_array(matmul(b, a), {3, 3}, d, {39, 54, 69, 49, 68, 87, 59, 82, 105});
  }
  // Mixed dtypes promote as in jnp.
  check_array(matmul(array({{1, 2}}), array({{0.5f}, {0.25f}})), {1, 1}, float32, {1.0});
}

TEST_CASE("dot covers the 1-D, matrix-vector, vector-matrix, N-D and scalar cases of jnp.dot") {
  Array v = array({1.0, 2.0, 3.0}), w = array({4.0, -5.0, 6.0});
  Array m = array({{1.0, 0.0, 2.0}, {0.0, 1.0, -1.0}});
  check_array(dot(v, w), {}, float64, {12});
  check_array(dot(m, v), {2}, float64, {7, -1});
  check_array(dot(array({1.0, -1.0}), m), {3}, float64, {1, -1, 3});
  check_array(dot(2.0, v), {3}, float64, {2, 4, 6});
  // N-D: the last axis of a against the second-to-last of b.
  Array a3 = reshape(astype(arange(12), float64), {2, 2, 3});
  Array b3 = reshape(astype(arange(6), float64), {3, 2});
  check_array(dot(a3, b3), {2, 2, 2}, float64, {10, 13, 28, 40, 46, 67, 64, 94});
  // Booleans: the logical or of ands, as numpy.
  Array t = array(std::vector<bool>{true, false}), f = array(std::vector<bool>{false, true});
  check_array(dot(t, f), {}, bool_, {0});
  check_array(dot(t, t), {}, bool_, {1});
}

TEST_CASE("matmul with 1-D operands drops the promoted axis, as numpy") {
  Array v = array({1.0, 2.0, 3.0});
  Array m = array({{1.0, 2.0}, {3.0, 4.0}, {5.0, 6.0}});
  check_array(matmul(v, m), {2}, float64, {22, 28});
  check_array(matmul(m.T(), v), {2}, float64, {22, 28});
  check_array(matmul(v, v), {}, float64, {14});
  // A 1-D operand against a stack of matrices.
  Array bm = stack0({m, multiply(m, 2.0)});
  check_array(matmul(v, bm), {2, 2}, float64, {22, 28, 44, 56});
  check_array(matmul(transpose(bm, {0, 2, 1}), v), {2, 2}, float64, {22, 28, 44, 56});
}

TEST_CASE("batched matmul broadcasts batch dims like numpy") {
  Array a = data({2, 1, 2, 3}, 1), b = data({3, 3, 4}, 2);
  Array c = matmul(a, b);
  // Reference: out[i, j] = a[i, 0] @ b[j], by the naive loop over the pairs.
  auto av = values(a), bv = values(b);
  std::vector<double> xa, yb;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) {
      xa.insert(xa.end(), av.begin() + i * 6, av.begin() + i * 6 + 6);
      yb.insert(yb.end(), bv.begin() + j * 12, bv.begin() + j * 12 + 12);
    }
  check_array(c, {2, 3, 2, 4}, float64, naive_bmm(xa, yb, 6, 2, 3, 4), 1e-12);
  // A matrix against a stack: the stack's batch dim is a free dim of one GEMM.
  Array x = data({5, 3}, 3), s = data({2, 3, 4}, 4);
  Array r = matmul(x, s);
  for (int i = 0; i < 2; ++i) check_close(index_axis(r, 0, i), matmul(x, index_axis(s, 0, i)));
  // A size-1 batch dim against a full one: out[i, j] = p[i, 0] @ q[j].
  Array p = data({3, 1, 2, 4}, 5), q = data({2, 4, 5}, 6);
  Array pq = matmul(p, q);
  REQUIRE(shape_str(pq.shape()) == "(3, 2, 2, 5)");
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 2; ++j)
      check_close(index_axis(index_axis(pq, 0, i), 0, j),
                  matmul(index_axis(index_axis(p, 0, i), 0, 0), index_axis(q, 0, j)));
}

TEST_CASE("dot_general with batch dims in any position matches the loop reference") {
  // lhs (3, 2, 4) with batch dim 1, rhs (4, 5, 2) with batch dim 2, lhs 2 contracted with rhs 0.
  Array x = data({3, 2, 4}, 6), y = data({4, 5, 2}, 7);
  Array out = dot_general(x, y, {{2}, {0}, {1}, {2}});
  REQUIRE(shape_str(out.shape()) == "(2, 3, 5)");
  for (int b = 0; b < 2; ++b)
    check_close(index_axis(out, 0, b), matmul(index_axis(x, 1, b), index_axis(y, 2, b)));
  // Two contracting dims listed in an order that differs from the memory order.
  Array p = data({2, 3, 4}, 8), q = data({4, 5, 3}, 9);
  auto pv = values(p), qv = values(q);
  std::vector<double> ref(10, 0.0);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 5; ++j)
      for (int a = 0; a < 3; ++a)
        for (int c = 0; c < 4; ++c)
          ref[i * 5 + j] += pv[(i * 3 + a) * 4 + c] * qv[(c * 5 + j) * 3 + a];
  check_array(dot_general(p, q, {{2, 1}, {0, 2}, {}, {}}), {2, 5}, float64, ref, 1e-12);
  check_array(dot_general(p, q, {{1, 2}, {2, 0}, {}, {}}), {2, 5}, float64, ref, 1e-12);
  // Integers by the plain loop; negative dims count from the end.
  Array ia = array({{1, 2}, {3, 4}}), ib = array({{5, 6}, {7, 8}});
  check_array(dot_general(ia, ib, {{-1}, {-1}, {}, {}}), {2, 2}, int32, {17, 23, 39, 53});
  // An empty contraction gives zeros.
  check_array(matmul(zeros({2, 0}), zeros({0, 3})), {2, 3}, float32, {0, 0, 0, 0, 0, 0});
}

TEST_CASE("check_grads: matmul, dot, dot_general (float64)") {
  Array a = data({3, 4}, 10), b = data({4, 2}, 11);
  auto mm2 = [](const Arrays& x) { return matmul(x[0], x[1]); };
  check_grads(mm2, Arrays{a, b});
  check_grads(mm2, Arrays{data({4}, 14), b});
  check_grads(mm2, Arrays{a, data({4}, 15)});
  check_grads(mm2, Arrays{data({2, 1, 2, 3}, 16), data({3, 3, 4}, 17)});
  check_grads([](const Arrays& x) { return dot(x[0], x[1]); },
              Arrays{data({4}, 12), data({4}, 13)});
  check_grads(
      [](const Arrays& x) {
        return dot_general(x[0], x[1], {{2}, {0}, {1}, {2}});
      },
      Arrays{data({3, 2, 4}, 18), data({4, 5, 2}, 19)});
  check_grads(
      [](const Arrays& x) {
        return dot_general(x[0], x[1], {{2, 1}, {0, 2}, {}, {}});
      },
      Arrays{data({2, 3, 4}, 20), data({4, 5, 3}, 21)});
  check_grads(
      [](const Arrays& x) {
        return dot_general(x[0], x[1], {{0}, {1}, {2}, {0}});
      },
      Arrays{data({3, 4, 2}, 22), data({2, 3, 5}, 23)});
  // Transposed layouts: x^T y and x y^T, whose cotangents take the no-transpose operand order.
  check_grads(
      [](const Arrays& x) {
        return dot_general(x[0], x[1], {{0}, {0}, {}, {}});
      },
      Arrays{data({4, 3}, 24), data({4, 2}, 25)});
  check_grads(
      [](const Arrays& x) {
        return dot_general(x[0], x[1], {{1}, {1}, {}, {}});
      },
      Arrays{data({3, 4}, 26), data({2, 4}, 27)});
}

TEST_CASE("grad of grad through matmul: the Hessian-vector product of a quadratic form") {
  // f(x) = x^T A x has gradient (A + A^T) x and Hessian A + A^T.
  Array A = data({3, 3}, 28), x = data({3}, 29), v = data({3}, 30);
  auto f = [&](const Array& z) { return dot(z, matmul(A, z)); };
  auto gv = [&](const Array& z) { return dot(grad(f)(z), v); };
  check_close(grad(gv)(x), matmul(add(A, A.T()), v), 1e-12);
  check_grads([&](const Array& z) { return grad(f)(z); }, x);
}

TEST_CASE("vmap of matmul and dot_general equals the loop over examples") {
  Array xs = data({4, 3, 5}, 31), w = data({5, 2}, 32), ws = data({4, 5, 2}, 33);
  check_vmap(mm, axes({0, kNone}), xs, w);
  check_vmap(mm, axes({0, 0}), xs, ws);
  check_vmap(mm, axes({kNone, 0}), index_axis(xs, 0, 0), ws);
  // Batch axes in the middle of the operands, and out_axes elsewhere.
  Array xm = data({3, 4, 5}, 34), wm = data({5, 4, 2}, 35);
  check_vmap(mm, axes({1, 1}), xm, wm);
  check_vmap(mm, axes({1, kNone}, 2), xm, w);
  check_vmap(mm, axes({kNone, 1}, 1), index_axis(xm, 1, 0), wm);
  check_vmap(mm, axes({0, kNone}), data({4, 3}, 36), data({3}, 37));  // matrix-vector per example
  check_vmap(mm, axes({kNone, 0}), data({3}, 38), data({4, 3, 2}, 39));
  // dot_general with its own batch dim under vmap.
  auto dg = [](const Array& a, const Array& b) { return dot_general(a, b, {{2}, {1}, {0}, {0}}); };
  check_vmap(dg, axes({0, 0}), data({4, 2, 3, 5}, 40), data({4, 2, 5, 3}, 41));
  check_vmap(dg, axes({3, kNone}), data({2, 3, 5, 4}, 42), data({2, 5, 3}, 43));
  // Per-example gradients: vmap(grad) against the loop, and vmap of the transposes' own rules.
  auto loss = [](const Array& wt, const Array& x) { return sum(tanh(matmul(x, wt))); };
  check_vmap([&](const Array& x) { return grad(loss)(w, x); }, axes({0}), xs);
  check_vmap([&](const Array& wt) { return grad(loss)(wt, xs); }, axes({0}), ws);
}

TEST_CASE("contraction errors name the op and the shapes") {
  Array a = zeros({2, 3}), b = zeros({4, 5});
  CHECK_THROWS_WITH_AS(matmul(a, b),
                       "matmul: contracting dimensions differ: lhs shape (2, 3), rhs shape (4, 5)",
                       ValueError);
  CHECK_THROWS_WITH_AS(dot(a, zeros({4})),
                       "dot: contracting dimensions differ: lhs shape (2, 3), rhs shape (4,)",
                       ValueError);
  CHECK_THROWS_WITH_AS(matmul(a, Array(1.0f)),
                       "matmul: input operand 1 must have ndim at least 1, but it has ndim 0",
                       ValueError);
  CHECK_THROWS_WITH_AS(
      matmul(zeros({2, 2, 3}), zeros({3, 3, 4})),
      "matmul: batch dimensions are incompatible for broadcasting: lhs shape (2, 2, 3), "
      "rhs shape (3, 3, 4)",
      ValueError);
  CHECK_THROWS_WITH_AS(
      dot_general(a, b, {{1}, {0}, {}, {}}),
      "dot_general: contracting dimensions differ in size; lhs shape (2, 3), rhs shape "
      "(4, 5), dimension_numbers (((1,), (0,)), ((), ()))",
      ValueError);
  LINUM_CHECK_ERROR(dot_general(a, b, {{1}, {}, {}, {}}), ValueError,
                    "same number of contracting dimensions");
  LINUM_CHECK_ERROR(dot_general(a, a, {{1}, {1}, {1}, {1}}), ValueError, "appears more than once");
  LINUM_CHECK_ERROR(dot_general(a, a, {{2}, {1}, {}, {}}), ValueError,
                    "dimension 2 is out of bounds for rank 2");
  LINUM_CHECK_ERROR(dot_general(zeros({2, 3}), zeros({3, 3}), {{1}, {1}, {0}, {0}}), ValueError,
                    "batch dimensions differ in size");
  CHECK_THROWS_WITH_AS(set_num_threads(0), "set_num_threads: expected at least 1 thread, got 0",
                       ValueError);
}

TEST_CASE("set_num_threads controls the BLAS threads") {
  const int before = num_threads();
  set_num_threads(1);
  CHECK(num_threads() == 1);
  CHECK(matmul(ones({64, 64}), ones({64, 64})).data<float>()[0] == 64.0f);
  set_num_threads(before);
  CHECK(num_threads() == before);
}

}  // namespace test_linalg
