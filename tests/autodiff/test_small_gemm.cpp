// The small-matrix GEMM kernel (ops/small_gemm.cpp) and the gemm dispatch in front of it: a plain
// triple loop in double as the reference over shapes around every tile and SIMD-width edge, and
// dot_general's outer products, batches, grad and vmap(grad) through it.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <random>

#include <linum/autodiff/ops/kernel_util.hpp>
#include <linum/autodiff/ops/small_gemm.hpp>

#include "check_grads.hpp"
#include "op_testing.hpp"

namespace test_small_gemm {

using namespace linum;
using namespace linum::optest;
using linum::testing::check_grads;

namespace {

// Sizes on both sides of the kernel's tiles (6 rows, 8 with AVX-512), of SIMD widths 2-16 and, with
// B transposed, of the choice between copying B and computing Cᵀ (n·k against m·k + m·n).
const std::int64_t kM[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 15, 16, 17};
const std::int64_t kN[] = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 49};
const std::int64_t kK[] = {1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 64, 65};

// Runs f(c) for C = op(A)·op(B) (+ C) on padded leading dimensions and checks every entry against
// the double triple loop, within k rounding errors of T per entry, and that the padding between
// rows of C is untouched.
template <class T, class F>
void check_product(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, bool acc,
                   std::mt19937& rng, F f) {
  const std::int64_t lda = (ta ? m : k) + 3, ldb = (tb ? k : n) + 2, ldc = n + 5;
  std::normal_distribution<double> nd;
  std::vector<T> a(static_cast<std::size_t>((ta ? k : m) * lda)),
      b(static_cast<std::size_t>((tb ? n : k) * ldb)), c(static_cast<std::size_t>(m * ldc));
  for (auto& v : a) v = static_cast<T>(nd(rng));
  for (auto& v : b) v = static_cast<T>(nd(rng));
  const T sentinel = T(1234.5);
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < ldc; ++j)
      c[i * ldc + j] =
          j < n ? (acc ? static_cast<T>(nd(rng)) : std::numeric_limits<T>::quiet_NaN()) : sentinel;
  const std::vector<T> c0 = c;
  f(a.data(), lda, b.data(), ldb, c.data(), ldc);
  const double eps = std::numeric_limits<T>::epsilon();
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < ldc; ++j) {
      const T got = c[i * ldc + j];
      if (j >= n) {
        REQUIRE(got == sentinel);
        continue;
      }
      double ref = acc ? double(c0[i * ldc + j]) : 0.0, mag = std::abs(ref);
      for (std::int64_t p = 0; p < k; ++p) {
        const double x = ta ? a[p * lda + i] : a[i * lda + p];
        const double y = tb ? b[j * ldb + p] : b[p * ldb + j];
        ref += x * y;
        mag += std::abs(x * y);
      }
      INFO("trans " << ta << tb << " m " << m << " n " << n << " k " << k << " acc " << acc
                    << " at (" << i << ", " << j << ")");
      REQUIRE(std::abs(got - ref) <= 2.0 * double(k + 1) * eps * mag + 1e-300);
    }
}

template <class T>
void check_all_shapes() {
  std::mt19937 rng(7);
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      for (std::int64_t m : kM)
        for (std::int64_t n : kN)
          for (std::int64_t k : kK) {
            const bool acc = (m + n + k) % 2 == 0;
            check_product<T>(ta, tb, m, n, k, acc, rng,
                             [&](const T* a, std::int64_t lda, const T* b, std::int64_t ldb, T* c,
                                 std::int64_t ldc) {
                               detail::small_gemm<T>(ta, tb, m, n, k, a, lda, b, ldb, c, ldc, acc);
                             });
          }
}

// out[b, i, j] = x[b, i]·y[b, j]: the batched outer product by a loop.
std::vector<double> loop_outer(const std::vector<double>& x, const std::vector<double>& y,
                               std::int64_t B, std::int64_t M, std::int64_t N) {
  std::vector<double> o(static_cast<std::size_t>(B * M * N));
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t i = 0; i < M; ++i)
      for (std::int64_t j = 0; j < N; ++j) o[(b * M + i) * N + j] = x[b * M + i] * y[b * N + j];
  return o;
}

}  // namespace

TEST_CASE("small_gemm matches the double triple loop on every tile edge, float32") {
  check_all_shapes<float>();
}

TEST_CASE("small_gemm matches the double triple loop on every tile edge, float64") {
  check_all_shapes<double>();
}

TEST_CASE("small_gemm's last columns short of a vector, under more rows than one chunk") {
  std::mt19937 rng(9);
  for (bool ta : {false, true})
    for (std::int64_t m : {63, 64, 65, 130})
      for (std::int64_t n : {1, 3, 17})
        for (std::int64_t k : {1, 5, 8, 9, 40})
          for (bool acc : {false, true})
            check_product<float>(ta, false, m, n, k, acc, rng,
                                 [&](const float* a, std::int64_t lda, const float* b,
                                     std::int64_t ldb, float* c, std::int64_t ldc) {
                                   detail::small_gemm<float>(ta, false, m, n, k, a, lda, b, ldb, c,
                                                             ldc, acc);
                                 });
}

TEST_CASE("small_gemm gives back scratch grown past 2^20 elements and works on after it") {
  std::mt19937 rng(13);
  // Bᵀ of a 2 x 1.1M outer product is copied to a buffer of 1.1M elements, which is then freed.
  for (bool acc : {false, true}) {
    const std::int64_t m = 2, n = 1100000, k = 1;
    check_product<float>(false, true, m, n, k, acc, rng,
                         [&](const float* a, std::int64_t lda, const float* b, std::int64_t ldb,
                             float* c, std::int64_t ldc) {
                           detail::small_gemm<float>(false, true, m, n, k, a, lda, b, ldb, c, ldc,
                                                     acc);
                         });
    check_product<float>(false, true, 3, 5, 2, acc, rng,
                         [&](const float* a, std::int64_t lda, const float* b, std::int64_t ldb,
                             float* c, std::int64_t ldc) {
                           detail::small_gemm<float>(false, true, 3, 5, 2, a, lda, b, ldb, c, ldc,
                                                     acc);
                         });
  }
}

TEST_CASE("gemm matches the triple loop on both sides of the small-kernel size thresholds") {
  std::mt19937 rng(11);
  // k around 8 (short contractions always take the small kernel), n and m around 8 and 16 (a
  // kernel strip in double and float), m·n·k around 2^20 (the BLAS boundary), and narrow
  // columns under many rows, for each transpose pair.
  const std::int64_t shapes[][3] = {{64, 64, 8},    {64, 64, 9},    {16, 7, 64},    {16, 8, 64},
                                    {7, 64, 64},    {8, 64, 64},    {16, 15, 64},   {16, 16, 64},
                                    {15, 64, 64},   {16, 64, 64},   {16, 128, 512}, {16, 128, 513},
                                    {16, 512, 128}, {16, 512, 129}, {128, 512, 16}, {128, 513, 16},
                                    {300, 300, 1},  {33, 1, 1},     {64, 1, 1},     {130, 3, 5}};
  for (auto [m, n, k] : shapes)
    for (bool ta : {false, true})
      for (bool tb : {false, true})
        for (bool acc : {false, true}) {
          auto run_f = [&](const float* a, std::int64_t lda, const float* b, std::int64_t ldb,
                           float* c, std::int64_t ldc) {
            detail::gemm<float>(ta, tb, m, n, k, a, lda, b, ldb, c, ldc, acc);
          };
          check_product<float>(ta, tb, m, n, k, acc, rng, run_f);
          auto run_d = [&](const double* a, std::int64_t lda, const double* b, std::int64_t ldb,
                           double* c, std::int64_t ldc) {
            detail::gemm<double>(ta, tb, m, n, k, a, lda, b, ldb, c, ldc, acc);
          };
          check_product<double>(ta, tb, m, n, k, acc, rng, run_d);
        }
}

TEST_CASE("batched dot_general outer products (k = 1) match the loop in float32 and float64") {
  for (DType d : {float32, float64}) {
    // 9 batches of a 13-vector times a 17-vector: odd sizes, no contraction.
    Array x = astype(data({9, 13}, 3), d), y = astype(data({9, 17}, 4), d);
    Array out = dot_general(x, y, {{}, {}, {0}, {0}});
    check_array(out, {9, 13, 17}, d, loop_outer(values(x), values(y), 9, 13, 17),
                d == float32 ? 1e-6 : 1e-15);
  }
}

TEST_CASE("grad and vmap(grad) through small dot_generals match finite differences and loops") {
  // Outer product with batch dims, and a contraction over 9 (tails of every SIMD width).
  check_grads(
      [](const Arrays& a) {
        return dot_general(a[0], a[1], {{}, {}, {0}, {0}});
      },
      Arrays{data({5, 7}, 30), data({5, 9}, 31)});
  check_grads(
      [](const Arrays& a) {
        return dot_general(a[0], a[1], {{2}, {1}, {0}, {0}});
      },
      Arrays{data({3, 5, 9}, 32), data({3, 9, 11}, 33)});
  // Per-example gradients of a tiny tanh MLP: vmap(grad) against grad of each example.
  Array w1 = data({5, 11}, 34), w2 = data({11, 3}, 35), xs = data({7, 5}, 36);
  auto loss = [](const Array& w1, const Array& w2, const Array& x) {
    return sum(square(matmul(tanh(matmul(x, w1)), w2)));
  };
  auto per_example = vmap(grad(loss, argnums<0, 1>), {{VmapOptions::kNone, VmapOptions::kNone, 0}});
  auto [g1, g2] = per_example(w1, w2, xs);
  REQUIRE(shape_str(g1.shape()) == "(7, 5, 11)");
  for (int e = 0; e < 7; ++e) {
    auto [r1, r2] = grad(loss, argnums<0, 1>)(w1, w2, index_axis(xs, 0, e));
    check_close(index_axis(g1, 0, e), r1, 1e-12);
    check_close(index_axis(g2, 0, e), r2, 1e-12);
  }
  check_grads([&](const Array& w) { return grad(loss)(w, w2, xs); }, w1);
}

}  // namespace test_small_gemm
