// dot_general of bfloat16 / float16 operands on both paths: oneDNN's native kernel (float32
// accumulation, one rounding) where native_reduced_gemm says so, else float32 GEMM on converted
// operands and one rounding. Both agree with an explicit float64 loop within the float32 sum's
// error bound plus one rounding. preferred_element_type follows JAX: the result's dtype (bfloat16
// x bfloat16 -> float32 unrounded), its validation, and a VJP that gives cotangents back in the
// operands' dtypes.
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include <linum/autodiff/ops/backends.hpp>
#include <linum/linum.hpp>

#include "support/testing.hpp"

namespace test_reduced_float_gemm {

using namespace linum;
using linum::testing::check_error;
using linum::testing::values;

namespace {

// Sets the GEMM and convolution backends for a scope: blas + im2col, or onednn for both.
struct BackendScope {
  GemmBackend saved_gemm = gemm_backend();
  ConvBackend saved_conv = conv_backend();
  explicit BackendScope(GemmBackend b) {
    set_gemm_backend(b);
    set_conv_backend(b == GemmBackend::onednn ? ConvBackend::onednn : ConvBackend::im2col);
  }
  ~BackendScope() {
    set_gemm_backend(saved_gemm);
    set_conv_backend(saved_conv);
  }
};

std::vector<GemmBackend> gemm_backends() {
  std::vector<GemmBackend> b{GemmBackend::blas};
  if (onednn_available()) b.push_back(GemmBackend::onednn);
  return b;
}

// Uniform values in [-1, 1) of `shape`, rounded to dtype d.
Array uniform(const Shape& shape, DType d, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::int64_t n = 1;
  for (auto s : shape) n *= s;
  std::vector<float> v(static_cast<std::size_t>(n));
  for (float& x : v) x = u(gen);
  return array(v, shape).astype(d);
}

// The spacing of d's values at magnitude |v| (its smallest subnormal near zero).
double spacing(DType d, double v) {
  const int mantissa = d == bfloat16 ? 7 : d == float16 ? 10 : 23;
  const double tiny = d == float16 ? 0x1p-24 : d == bfloat16 ? 0x1p-133 : 0x1p-149;
  if (v == 0) return tiny;
  return std::max(tiny, std::ldexp(1.0, std::ilogb(std::abs(v)) - mantissa));
}

// C[b, m, n] = sum_k A[b, m, k] B[b, k, n] in float64, with the sums of |products| beside it;
// `a` and `b` are read as (B, M, K) and (B, K, N) row-major value lists.
struct Exact {
  std::vector<double> c, abs_sum;
};
Exact exact_product(const std::vector<double>& a, const std::vector<double>& b, int B, int M, int N,
                    int K) {
  Exact r{std::vector<double>(static_cast<std::size_t>(B) * M * N, 0.0),
          std::vector<double>(static_cast<std::size_t>(B) * M * N, 0.0)};
  for (int z = 0; z < B; ++z)
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < N; ++j)
        for (int k = 0; k < K; ++k) {
          const double p = a[(z * M + i) * K + k] * b[(z * K + k) * N + j];
          r.c[(z * M + i) * N + j] += p;
          r.abs_sum[(z * M + i) * N + j] += std::abs(p);
        }
  return r;
}

void check_sums(const std::vector<double>& g, DType d, const Exact& want, int K);

// got (of dtype d) is the exact product summed in float32 (any order: K * 2^-24 of the sum of
// |products|) and rounded once to d.
void check_product(const Array& got, DType d, const Exact& want, int K) {
  REQUIRE(got.dtype() == d);
  const auto g = values(got);
  REQUIRE(g.size() == want.c.size());
  check_sums(g, d, want, K);
}
void check_sums(const std::vector<double>& g, DType d, const Exact& want, int K) {
  int bad = 0;
  for (std::size_t i = 0; i < g.size(); ++i) {
    const double acc = 1.01 * K * 0x1p-24 * want.abs_sum[i];
    const double tol = acc + spacing(d, std::abs(want.c[i]) + acc);
    if (std::abs(g[i] - want.c[i]) > tol && ++bad <= 3)
      FAIL_CHECK("element " << i << ": got " << g[i] << ", exact " << want.c[i] << ", tol " << tol);
  }
  CHECK(bad == 0);
}

}  // namespace

TEST_CASE("native_reduced_gemm / _conv follow the backends and the CPU") {
  for (GemmBackend b : gemm_backends()) {
    BackendScope scope(b);
    INFO(to_string(b));
    for (auto native : {native_reduced_gemm, native_reduced_conv}) {
      CHECK_FALSE(native(float32));
      CHECK_FALSE(native(float64));
      if (b == GemmBackend::blas) {
        CHECK_FALSE(native(bfloat16));
        CHECK_FALSE(native(float16));
      } else {
        // oneDNN multiplies bfloat16 natively exactly where the CPU has AVX512_BF16 (or AMX,
        // which comes with it).
        CHECK(native(bfloat16) == (blas_info().cpu_isa == BlasIsa::avx512_bf16));
      }
    }
  }
}

TEST_CASE("dot_general of 2-byte floats sums in float32 and rounds once, on every backend") {
  struct Case {
    const char* what;
    Shape x, y;
    DotDimensionNumbers d;
    int B, M, N, K;
    bool trans_x, trans_y;  // x stored (K, M) / y stored (N, K)
  };
  // Large enough for the GEMM libraries (small products stay on linum's own kernel).
  const Case cases[] = {
      {"x.y", {48, 96}, {96, 40}, {{1}, {0}, {}, {}}, 1, 48, 40, 96, false, false},
      {"xT.y", {96, 48}, {96, 40}, {{0}, {0}, {}, {}}, 1, 48, 40, 96, true, false},
      {"x.yT", {48, 96}, {40, 96}, {{1}, {1}, {}, {}}, 1, 48, 40, 96, false, true},
      {"batched", {3, 40, 72}, {3, 72, 36}, {{2}, {1}, {0}, {0}}, 3, 40, 36, 72, false, false},
  };
  for (DType dt : {bfloat16, float16})
    for (GemmBackend backend : gemm_backends())
      for (const Case& c : cases) {
        BackendScope scope(backend);
        INFO(dtype_name(dt) << " " << to_string(backend) << " " << c.what);
        const Array x = uniform(c.x, dt, 1), y = uniform(c.y, dt, 2);
        // The operands as (B, M, K) and (B, K, N) value lists for the float64 loop.
        const Array xm = c.trans_x ? transpose(x, {1, 0}) : x;
        const Array ym = c.trans_y ? transpose(y, {1, 0}) : y;
        const Exact want = exact_product(values(xm), values(ym), c.B, c.M, c.N, c.K);
        check_product(dot_general(x, y, c.d), dt, want, c.K);
        // preferred float32: the same float32 sums, unrounded.
        check_product(dot_general(x, y, c.d, float32), float32, want, c.K);
      }
}

TEST_CASE("the native and converting paths agree and keep float32 untouched") {
  const Array x = uniform({64, 80}, bfloat16, 3), y = uniform({80, 56}, bfloat16, 4);
  const DotDimensionNumbers d{{1}, {0}, {}, {}};
  Array by_backend[2];
  for (GemmBackend b : gemm_backends()) {
    BackendScope scope(b);
    by_backend[b == GemmBackend::onednn] = dot_general(x, y, d, float32);
  }
  // The converting path is the float32 product of the widened operands, bit for bit.
  {
    BackendScope scope(GemmBackend::blas);
    const Array wide = dot_general(x.astype(float32), y.astype(float32), d);
    CHECK(values(by_backend[0]) == values(wide));
    CHECK(values(dot_general(x, y, d)) == values(wide.astype(bfloat16)));
  }
  if (onednn_available()) {
    // Both paths sum the same exact products in float32, in their own orders.
    const auto a = values(by_backend[0]), b = values(by_backend[1]);
    const Exact want = exact_product(values(x), values(y), 1, 64, 56, 80);
    for (std::size_t i = 0; i < a.size(); ++i)
      CHECK(std::abs(a[i] - b[i]) <= 2 * 1.01 * 80 * 0x1p-24 * want.abs_sum[i]);
  }
}

TEST_CASE("preferred_element_type: JAX's dtypes and errors") {
  const Array xf = uniform({5, 7}, float32, 5), yf = uniform({7, 3}, float32, 6);
  const DotDimensionNumbers d{{1}, {0}, {}, {}};
  // float32 operands accumulated in float64: the float64 product of the widened operands.
  const Array r64 = dot_general(xf, yf, d, float64);
  CHECK(r64.dtype() == float64);
  CHECK(values(r64) == values(dot_general(xf.astype(float64), yf.astype(float64), d)));
  // Its own dtype: the plain product.
  CHECK(values(dot_general(xf, yf, d, float32)) == values(dot_general(xf, yf, d)));
  // Integers may accumulate in floats; small integers multiply exactly.
  const Array xi = array(std::vector<std::int32_t>{1, -2, 3, 4, 5, -6}, {2, 3});
  const Array yi = array(std::vector<std::int32_t>{7, 8, -9, 10, 11, 12}, {3, 2});
  const Array rf = dot_general(xi, yi, d, float32);
  CHECK(rf.dtype() == float32);
  CHECK(values(rf) == std::vector<double>{58, 24, -83, 10});
  const Array u = array(std::vector<std::uint32_t>{1, 2}),
              v = array(std::vector<std::uint32_t>{3, 4});
  CHECK(dot_general(u, v, {{0}, {0}, {}, {}}, int32).item<std::int32_t>() == 11);
  // bfloat16 operands into float16 (same width) are allowed.
  CHECK(dot_general(xf.astype(bfloat16), yf.astype(bfloat16), d, float16).dtype() == float16);
  // The errors, as JAX's TypeErrors.
  check_error<TypeError>(
      [&] { dot_general(xf, yf, d, bfloat16); },
      {"dot_general", "preferred_element_type bfloat16", "float32", "must not be narrower"});
  check_error<TypeError>([&] { dot_general(xf, yf, d, int32); },
                         {"dot_general", "(floating, floating)"});
  check_error<TypeError>([&] { dot_general(xi, yi, d, uint32); }, {"same signedness"});
  check_error<TypeError>([&] { dot_general(xf.astype(complex64), yf, d, float64); },
                         {"(complex, complex)"});
}

TEST_CASE("preferred_element_type under grad, jvp, vmap and jit") {
  const Array x = uniform({40, 64}, bfloat16, 7), y = uniform({64, 48}, bfloat16, 8);
  const DotDimensionNumbers d{{1}, {0}, {}, {}};
  for (GemmBackend backend : gemm_backends()) {
    BackendScope scope(backend);
    INFO(to_string(backend));
    auto f = [&](const Array& a, const Array& b) { return dot_general(a, b, d, float32); };
    // grad of sum(x.y): x_bar[i, k] = sum_j y[k, j], computed in float32 and rounded to x's
    // bfloat16; y_bar[k, j] = sum_i x[i, k] likewise.
    auto [gx, gy] =
        grad([&](const Array& a, const Array& b) { return sum(f(a, b)); }, argnums<0, 1>)(x, y);
    CHECK(gx.dtype() == bfloat16);
    CHECK(gy.dtype() == bfloat16);
    const auto yv = values(y), xv = values(x);
    // x_bar = 1 (40x48) . y^T, y_bar = x^T . 1 (40x48), as products against ones.
    std::vector<double> ones(40 * 48, 1.0);
    std::vector<double> yt(48 * 64), xt(64 * 40);
    for (int k = 0; k < 64; ++k)
      for (int j = 0; j < 48; ++j) yt[j * 64 + k] = yv[k * 48 + j];
    for (int i = 0; i < 40; ++i)
      for (int k = 0; k < 64; ++k) xt[k * 40 + i] = xv[i * 64 + k];
    check_product(gx, bfloat16, exact_product(ones, yt, 1, 40, 64, 48), 48);
    check_product(gy, bfloat16, exact_product(xt, ones, 1, 64, 48, 40), 40);
    // jvp: the tangent of a bilinear product, in the preferred dtype.
    auto [out, tan] =
        linum::jvp([&](const Array& a) { return f(a, y); }, std::tuple{x}, std::tuple{x});
    CHECK(out.dtype() == float32);
    CHECK(tan.dtype() == float32);
    CHECK(values(tan) == values(out));
    // vmap over a leading batch of x (one GEMM of the stacked rows): each slice's product.
    const Array xs = uniform({3, 40, 64}, bfloat16, 9);
    const Array batched = linum::vmap([&](const Array& a) { return f(a, y); })(xs);
    CHECK(batched.dtype() == float32);
    for (std::int64_t i = 0; i < 3; ++i)
      check_product(batched[i], float32, exact_product(values(xs[i]), yv, 1, 40, 48, 64), 64);
    // jit: the program keeps the parameter, and replays the eager result.
    auto jf = jit([&](const Array& a) { return f(a, y); });
    CHECK(values(jf(x)) == values(f(x, y)));
    CHECK(jf.program_text().find("preferred_element_type=float32") != std::string::npos);
  }
}

TEST_CASE("conv_general_dilated of bfloat16 and its VJPs sum in float32 and round once") {
  // SAME 3x3 over 8 channels, strided and grouped: oneDNN takes all three products (the lhs
  // cotangent too, with 4+ channels per group).
  struct Case {
    const char* what;
    Shape x, w;
    std::vector<std::int64_t> strides;
    std::int64_t groups;
  };
  const Case cases[] = {{"plain", {2, 9, 9, 8}, {3, 3, 8, 16}, {1, 1}, 1},
                        {"strided, grouped", {2, 10, 10, 8}, {3, 3, 4, 12}, {2, 2}, 2}};
  for (GemmBackend backend : gemm_backends())
    for (const Case& c : cases) {
      BackendScope scope(backend);
      INFO(to_string(backend) << " " << c.what);
      ConvOptions o;
      o.padding = "SAME";
      o.window_strides = c.strides;
      o.feature_group_count = c.groups;
      const Array x = uniform(c.x, bfloat16, 11), w = uniform(c.w, bfloat16, 12);
      const int K = static_cast<int>(c.w[0] * c.w[1] * c.w[2]);
      // The exact sums in float64, and the sums of |terms| from the same op on |operands|.
      auto exact = [&](const Array& a, const Array& b) {
        return Exact{
            values(conv_general_dilated(a.astype(float64), b.astype(float64), o)),
            values(conv_general_dilated(abs(a.astype(float64)), abs(b.astype(float64)), o))};
      };
      const Array y = conv_general_dilated(x, w, o);
      CHECK(y.dtype() == bfloat16);
      check_sums(values(y), bfloat16, exact(x, w), K);
      // Both cotangents of <conv(x, w), ct>, each a float64 VJP for the reference.
      const Array ct = uniform(y.shape(), bfloat16, 13);
      auto [gx, gw] = grad(
          [&](const Array& a, const Array& b) {
            return sum(conv_general_dilated(a, b, o).astype(float32) * ct.astype(float32));
          },
          argnums<0, 1>)(x, w);
      CHECK(gx.dtype() == bfloat16);
      CHECK(gw.dtype() == bfloat16);
      auto vjp64 = [&](const Array& a, const Array& b, const Array& g, int arg) {
        auto f = [&](const Array& p, const Array& q) {
          return sum(conv_general_dilated(p, q, o) * g);
        };
        auto [da, db] = grad(f, argnums<0, 1>)(a.astype(float64), b.astype(float64));
        return values(arg == 0 ? da : db);
      };
      const Array cta = abs(ct.astype(float64));
      const Exact want_x{vjp64(x, w, ct.astype(float64), 0), vjp64(abs(x), abs(w), cta, 0)};
      const Exact want_w{vjp64(x, w, ct.astype(float64), 1), vjp64(abs(x), abs(w), cta, 1)};
      // Terms per sum: the output window positions times channels (x_bar), the batch times
      // the output pixels (w_bar).
      check_sums(values(gx), bfloat16, want_x, static_cast<int>(c.w[0] * c.w[1] * c.w[3]));
      check_sums(values(gw), bfloat16, want_w, static_cast<int>(y.size() / y.shape(3)));
    }
}

}  // namespace test_reduced_float_gemm
