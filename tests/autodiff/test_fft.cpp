// jnp.fft / lax.fft: values against numpy.fft (numpy 1.24, float64, printed to 17 digits; noted
// per test), norm modes, n / s cropping and padding, axes, frequencies and shifts; derivatives
// (finite differences, and the transpose identity <u, fft(v)> = <fft^T(u), v> with JAX's
// bilinear pairing Re(sum(a b))); vmap against a loop; jit against eager; bad input.
#include <doctest/doctest.h>

#include <complex>

#include "op_testing.hpp"
#include "transform_testing.hpp"

namespace test_fft {

using namespace linum;
using namespace linum::optest;
using linum::testing::check_error;
using linum::testing::check_grads;
using C = std::complex<double>;

namespace {

Array carray(const std::vector<C>& v, const Shape& s) { return array(v, s); }

void check_complex(const Array& z, const Shape& shape, DType dtype, const std::vector<C>& want,
                   double tol = 1e-12) {
  INFO("got " << z);
  REQUIRE(z.shape() == shape);
  CHECK(z.dtype() == dtype);
  const auto re = values(real(z)), im = values(imag(z));
  REQUIRE(re.size() == want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    INFO("element " << i);
    CHECK(std::abs(re[i] - want[i].real()) <= tol * (1 + std::abs(want[i])));
    CHECK(std::abs(im[i] - want[i].imag()) <= tol * (1 + std::abs(want[i])));
  }
}

void check_same(const Array& a, const Array& b, double tol = 1e-12) {
  INFO("a = " << a << "\nb = " << b);
  REQUIRE(a.shape() == b.shape());
  CHECK(a.dtype() == b.dtype());
  const auto ar = values(real(a)), br = values(real(b)), ai = values(imag(a)), bi = values(imag(b));
  for (std::size_t i = 0; i < ar.size(); ++i) {
    CHECK(std::abs(ar[i] - br[i]) <= tol * (1 + std::abs(br[i])));
    CHECK(std::abs(ai[i] - bi[i]) <= tol * (1 + std::abs(bi[i])));
  }
}

// JAX's pairing of a cotangent with a tangent: Re(sum(u * t)) (bilinear, no conjugate).
double pair(const Array& u, const Array& t) { return sum(real(multiply(u, t))).item<double>(); }

const std::vector<C> kZ{{1, 2}, {-1, 0.5}, {3, -1}, {0.25, 0}};
const std::vector<C> kH{{2, 0}, {1, -1}, {0.5, 2}, {-1, 0}};

}  // namespace

TEST_CASE("fft, ifft and rfft match numpy for odd, even and composite lengths in both precisions") {
  const Array x = array<double>({1, 2, 0, -1, 3});
  // numpy.fft.fft([1, 2, 0, -1, 3]).
  const std::vector<C> fft5{{5.0, 0.0},
                            {3.3541019662496847, 0.3632712640026804},
                            {-3.3541019662496847, 1.5388417685876266},
                            {-3.3541019662496847, -1.5388417685876266},
                            {3.3541019662496847, -0.3632712640026804}};
  check_complex(fft::fft(x), {5}, complex128, fft5);
  check_complex(fft::rfft(x), {3}, complex128, {fft5[0], fft5[1], fft5[2]});
  check_complex(fft::fft(astype(x, float32)), {5}, complex64, fft5, 2e-6);
  check_complex(fft::fft(array({1, 2, 0, -1, 3})), {5}, complex64, fft5, 2e-6);  // ints: complex64
  // numpy.fft.rfft([0.5, -1, 2, 3, -2, 1]).
  check_complex(fft::rfft(array<double>({0.5, -1, 2, 3, -2, 1})), {4}, complex128,
                {{3.5, 0.0},
                 {-2.4999999999999996, -1.7320508075688767},
                 {3.4999999999999996, 5.196152422706632},
                 {-2.5, 0.0}});
  // numpy.fft.ifft(kZ).
  check_complex(fft::ifft(carray(kZ, {4})), {4}, complex128,
                {{0.8125, 0.375}, {-0.625, 0.4375}, {1.1875, 0.125}, {-0.375, 1.0625}});
  // A prime length and a long power of two round-trip to the input.
  for (std::int64_t n : {1, 2, 13, 64, 97}) {
    const Array v = transform_testing::data({n}, static_cast<int>(n));
    check_same(fft::ifft(fft::fft(v)), astype(v, complex128), 1e-12);
    check_close(fft::irfft(fft::rfft(v), n), v, 1e-9);
  }
}

TEST_CASE("norm modes and n crop or zero-pad as numpy does") {
  const Array z = carray(kZ, {4});
  // numpy.fft.fft(kZ, norm="ortho"), norm="forward", n=6, n=3.
  check_complex(fft::fft(z, std::nullopt, -1, "ortho"), {4}, complex128,
                {{1.625, 0.75}, {-0.75, 2.125}, {2.375, 0.25}, {-1.25, 0.875}});
  check_complex(fft::fft(z, std::nullopt, -1, "forward"), {4}, complex128,
                {{0.8125, 0.375}, {-0.375, 1.0625}, {1.1875, 0.125}, {-0.625, 0.4375}});
  check_complex(fft::fft(z, 6), {6}, complex128,
                {{3.25, 1.5},
                 {-1.6830127018922192, 1.0179491924311226},
                 {1.549038105676658, 5.714101615137754},
                 {4.75, 0.5000000000000007},
                 {-1.049038105676658, -1.2141016151377544},
                 {-0.8169872981077806, 4.482050807568877}});
  check_complex(fft::fft(z, 3), {3}, complex128,
                {{3.0, 1.5},
                 {1.299038105676658, 5.714101615137754},
                 {-1.299038105676658, -1.2141016151377544}});
  const Array h = carray(kH, {4});
  // numpy.fft.irfft(kH), irfft(kH, n=7), irfft(kH, n=5, norm="ortho").
  check_array(fft::irfft(h), {6}, float64,
              {0.6666666666666666, 0.29465819873852045, 0.7826920704511053, 0.3333333333333333,
               -0.949358737117772, 0.8720084679281461},
              1e-12);
  check_array(fft::irfft(h, 7), {7}, float64,
              {0.42857142857142855, 0.3557639602535365, 0.4417714916144806, 0.7516696202962514,
               -0.38978563916295883, -0.6111973029094848, 1.0232064413367465},
              1e-12);
  check_array(fft::irfft(h, 5, -1, "ortho"), {5}, float64,
              {2.23606797749979, 0.6082055784887201, 2.5360497231981607, -1.918015734448266,
               1.0098284102611745},
              1e-12);
  // numpy.fft.hfft(kH) and ihfft([1, 2, 0, -1, 3]).
  check_array(
      fft::hfft(h), {6}, float64,
      {4.0, 5.232050807568877, -5.696152422706632, 2.0, 4.696152422706632, 1.7679491924311228},
      1e-12);
  check_complex(fft::ihfft(array<double>({1, 2, 0, -1, 3})), {3}, complex128,
                {{1.0, 0},
                 {0.670820393249937, -0.07265425280053608},
                 {-0.670820393249937, -0.3077683537175253}});
  check_error<ValueError>([&] { fft::fft(z, std::nullopt, -1, "half"); }, {"fft", "norm", "half"});
  check_error<ValueError>([&] { fft::fft(z, 0); }, {"fft", "positive"});
}

TEST_CASE("fft2, rfft2, fftn, rfftn, irfftn and axis arguments match numpy") {
  const Array m = array<double>({{1, 2, 3}, {4, -5, 6}});
  // numpy.fft.fft2(m), rfft2(m), fftn(m, axes=[0]) (= fft(m, axis=0)).
  check_complex(fft::fft2(m), {2, 3}, complex128,
                {{11.0, 0.0},
                 {2.0, 10.392304845413264},
                 {2.0, -10.392304845413264},
                 {1.0, 0.0},
                 {-5.0, -8.660254037844386},
                 {-5.0, 8.660254037844386}});
  check_complex(fft::rfft2(m), {2, 2}, complex128,
                {{11.0, 0.0}, {2.0, 10.392304845413264}, {1.0, 0.0}, {-5.0, -8.660254037844386}});
  const std::vector<C> axis0{{5, 0}, {-3, 0}, {9, 0}, {-3, 0}, {7, 0}, {-3, 0}};
  check_complex(fft::fftn(m, std::nullopt, std::vector<int>{0}), {2, 3}, complex128, axis0);
  check_complex(fft::fft(m, std::nullopt, 0), {2, 3}, complex128, axis0);
  check_same(fft::ifft2(fft::fft2(m)), astype(m, complex128));
  // numpy.fft.rfftn of arange(24).reshape(2, 3, 4) * 0.5 - 3, and its inverse.
  const Array t = arange(24.0) * 0.5 - 3.0;
  const Array m3 = reshape(astype(t, float64), {2, 3, 4});
  const Array r = fft::rfftn(m3);
  CHECK(r.shape() == Shape{2, 3, 3});
  check_complex(lax_slice(r, {0, 0, 0}, {1, 3, 3}), {1, 3, 3}, complex128,
                {{66.0, 0.0},
                 {-6.0, 6.0},
                 {-6.0, 0.0},
                 {-24.0, 13.856406460551018},
                 {0, 0},
                 {0, 0},
                 {-24.0, -13.856406460551018},
                 {0, 0},
                 {0, 0}});
  check_close(fft::irfftn(r, std::vector<std::int64_t>{2, 3, 4}), m3, 1e-12);
  check_close(fft::irfft2(fft::rfft2(m), std::vector<std::int64_t>{2, 3}), m, 1e-12);
  // The transformed axes may be any, in any order; others stay in place.
  check_same(fft::fftn(m3, std::nullopt, std::vector<int>{2, 0}),
             fft::fft(fft::fft(m3, std::nullopt, 0), std::nullopt, 2), 1e-12);
  check_error<ValueError>([&] { fft::fft2(m3, std::nullopt, {0, 1, 2}); }, {"fft2", "2 axes"});
  check_error<ValueError>(
      [&] {
        fft::fftn(m3, std::nullopt, std::vector<int>{1, 1});
      },
      {"repeated axes"});
  check_error<ValueError>([&] { fft::rfft(carray(kZ, {4})); }, {"rfft", "real"});
  check_error<IndexError>([&] { fft::fft(m, std::nullopt, 2); }, {"axis 2"});
}

TEST_CASE("fftfreq, rfftfreq, fftshift and ifftshift match numpy") {
  // numpy.fft.fftfreq(8, 0.1), fftfreq(7), rfftfreq(7, 2.0).
  check_array(fft::fftfreq(8, 0.1), {8}, float32, {0.0, 1.25, 2.5, 3.75, -5.0, -3.75, -2.5, -1.25},
              1e-6);
  check_array(fft::fftfreq(7, 1.0, float64), {7}, float64,
              {0.0, 0.14285714285714285, 0.2857142857142857, 0.42857142857142855,
               -0.42857142857142855, -0.2857142857142857, -0.14285714285714285},
              1e-15);
  check_array(fft::rfftfreq(7, 2.0, float64), {4}, float64,
              {0.0, 0.07142857142857142, 0.14285714285714285, 0.21428571428571427}, 1e-15);
  // numpy.fft.fftshift(arange(10).reshape(2, 5)), ifftshift(arange(5)).
  check_array(fft::fftshift(reshape(arange(10.0), {2, 5})), {2, 5}, float32,
              {8, 9, 5, 6, 7, 3, 4, 0, 1, 2});
  check_array(fft::ifftshift(arange(5.0)), {5}, float32, {2, 3, 4, 0, 1});
  const Array z = carray(kZ, {4});
  check_same(fft::ifftshift(fft::fftshift(z)), z);  // complex arrays roll too
}

TEST_CASE("fft derivatives: finite differences through every transform, norm and axis") {
  const Array x = transform_testing::data({7}, 2);
  check_grads([](const Array& v) { return abs(fft::rfft(v)); }, x);
  check_grads(
      [](const Array& v) {
        return concatenate({real(fft::fft(v)), imag(fft::ifft(v, 9))});
      },
      x);
  check_grads([](const Array& v) { return abs(fft::fft(v, 10, -1, "ortho")); }, x);
  check_grads([](const Array& v) { return fft::irfft(complex(v, 0.5 * v), 12); }, x);
  check_grads([](const Array& v) { return fft::irfft(complex(v, v), 13, -1, "forward"); }, x);
  const Array m = transform_testing::data({3, 4}, 5);
  check_grads([](const Array& v) { return abs(fft::rfft2(v)); }, m);
  // A circular autocorrelation: complex products of spectra, then back to real.
  check_grads(
      [](const Array& v) {
        const Array f = fft::rfftn(v);
        return fft::irfftn(f * conj(f), std::vector<std::int64_t>{3, 4});
      },
      m);
}

TEST_CASE("fft VJPs are JAX's transposes: <u, J v> = <J^T u, v> with the pairing Re(sum(a b))") {
  const Array zc = carray(kZ, {4}), hc = carray(kH, {4});
  const Array xr = transform_testing::data({6}, 3), ur = transform_testing::data({6}, 4);
  auto check_transpose = [](auto f, const Array& at, const Array& v, const Array& u) {
    auto [y, t] = jvp(f, std::tuple{at}, std::tuple{v});
    auto [y2, pull] = vjp(f, at);
    const Array ct = std::get<0>(pull(u));
    CHECK(ct.dtype() == at.dtype());
    CHECK(pair(u, t) == doctest::Approx(pair(ct, v)).epsilon(1e-12));
  };
  const Array vz = carray({{0.3, -1}, {2, 0.1}, {-0.5, 0.5}, {1, 1}}, {4});
  check_transpose([](const Array& a) { return fft::fft(a); }, zc, vz, hc);
  check_transpose([](const Array& a) { return fft::ifft(a, 6); }, zc, vz, fft::fft(xr));
  check_transpose([](const Array& a) { return fft::rfft(a); }, xr, ur, hc);
  check_transpose([](const Array& a) { return fft::rfft(a, 7); }, xr, ur, fft::rfft(ur, 7));
  check_transpose([](const Array& a) { return fft::irfft(a); }, hc, vz, ur);  // n = 6 (even)
  check_transpose([](const Array& a) { return fft::irfft(a, 7); }, hc, vz,
                  transform_testing::data({7}, 6));  // odd
  const Array m = transform_testing::data({3, 4}, 8);
  check_transpose([](const Array& a) { return fft::rfft2(a); }, m,
                  transform_testing::data({3, 4}, 9), fft::rfft2(m));
}

TEST_CASE("vmap of the transforms equals a loop, and jit equals eager") {
  const Array xs = transform_testing::data({5, 6}, 7);
  auto loop = [&](auto f) {
    Arrays outs;
    for (std::int64_t i = 0; i < 5; ++i) outs.push_back(f(transform_testing::row(xs, i)));
    return stack(outs);
  };
  auto f1 = [](const Array& v) { return fft::rfft(v, 8); };
  auto f2 = [](const Array& v) { return fft::irfft(fft::fft(v), 9, -1, "ortho"); };
  auto f3 = [](const Array& v) { return fft::fftshift(fft::ifft(v)); };
  check_same(vmap(f1)(xs), loop(f1));
  check_close(vmap(f2)(xs), loop(f2), 1e-12);
  check_same(vmap(f3)(xs), loop(f3));
  // Batched over an inner axis: vmap's axis moves in front of the transformed ones.
  check_same(vmap(f1, {.in_axes = 1})(transpose(xs)), loop(f1));
  check_same(jit(f1)(xs), f1(xs));
  check_close(jit(f2)(xs), f2(xs), 1e-14);
  auto loss = [](const Array& v) { return sum(abs(fft::rfft(v))); };
  check_close(jit(grad(loss))(xs), grad(loss)(xs), 1e-14);
}

}  // namespace test_fft
