// complex64 / complex128 arrays: JAX's promotion, numpy's printing, conversions, the complex
// ops (real, imag, conj, abs, angle, lax.complex) and arithmetic against numpy (numpy 1.24;
// noted per test), JAX's cotangent convention, transforms, and clear errors from real-only ops.
#include <doctest/doctest.h>

#include <complex>
#include <sstream>

#include "op_testing.hpp"
#include "transform_testing.hpp"

namespace test_complex {

using namespace linum;
using namespace linum::optest;
using linum::testing::check_error;
using linum::testing::check_grads;
using CF = std::complex<float>;
using CD = std::complex<double>;

namespace {

void check_parts(const Array& z, const std::vector<double>& re, const std::vector<double>& im,
                 double eps = 1e-6) {
  INFO("z = " << z);
  REQUIRE(is_complex(z.dtype()));
  check_array(real(z), z.shape(), real_dtype(z.dtype()), re, eps);
  check_array(imag(z), z.shape(), real_dtype(z.dtype()), im, eps);
}

const Array kA = array(std::vector<CF>{{1, 2}, {-3, 0.5}});
const Array kB = array(std::vector<CF>{{0.5, -1}, {2, 2}});

}  // namespace

TEST_CASE("complex dtypes: sizes, names, JAX promotion and weak scalars") {
  CHECK(itemsize(complex64) == 8);
  CHECK(itemsize(complex128) == 16);
  CHECK(dtype_name(complex64) == "complex64");
  CHECK(promote_types(float32, complex64) == complex64);
  CHECK(promote_types(float64, complex64) == complex128);
  CHECK(promote_types(int32, complex64) == complex64);
  CHECK(promote_types(complex64, complex128) == complex128);
  CHECK(kA.dtype() == complex64);
  CHECK((kA * 2.0).dtype() == complex64);  // a weak float scalar keeps complex64
  CHECK((kA + array<double>({1, 2})).dtype() == complex128);
  CHECK((kA + array<float>({1, 2})).dtype() == complex64);
  CHECK(kA.data<CF>()[1] == CF(-3, 0.5));
  CHECK(array(std::vector<CD>{{1, -2}}).item<CD>() == CD(1, -2));
  check_error<TypeError>(
      [] {
        (void)array(std::vector<CD>{{1, -2}}).item<double>();
      },
      {"item", "complex128", "real()"});
}

TEST_CASE("complex arrays print as numpy's repr does") {
  // repr(numpy.array([1+2j, 3-4.5j], dtype=complex64)) with "array" spelled "Array".
  CHECK(repr(array(std::vector<CF>{{1, 2}, {3, -4.5}})) ==
        "Array([1.+2.j , 3.-4.5j], dtype=complex64)");
  CHECK(repr(array(std::vector<CD>{{3, -1.5}}).reshape({})) == "Array(3.-1.5j, dtype=complex128)");
  // numpy: array([[ 1.5e+00+0.j  , -0.0e+00-2.j  ], [ 1.0e-05+1.j  ,  1.0e+02+0.25j]]).
  CHECK(
      repr(array(std::vector<CF>{{1.5, 0}, {-0.0, -2}, {1e-5f, 1}, {100, 0.25}}).reshape({2, 2})) ==
      "Array([[ 1.5e+00+0.j  , -0.0e+00-2.j  ],\n       [ 1.0e-05+1.j  ,  1.0e+02+0.25j]], "
      "dtype=complex64)");
}

TEST_CASE("real, imag, conj, abs, angle and lax.complex match numpy") {
  check_parts(kA, {1, -3}, {2, 0.5});
  check_parts(conj(kA), {1, -3}, {-2, -0.5});
  // numpy.abs and numpy.angle of [1+2j, -3+0.5j] (complex64).
  check_array(abs(kA), {2}, float32, {2.2360680103302, 3.0413811206817627});
  check_array(angle(kA), {2}, float32, {1.1071487665176392, 2.9764440059661865});
  check_array(angle(kA, true), {2}, float32, {63.43494882292201, 170.53767779197437});
  check_array(angle(array<float>({-2, 0, 3})), {3}, float32, {M_PI, 0, 0});
  check_parts(complex(array<float>({1, 2}), 3.0f), {1, 2}, {3, 3});
  CHECK(complex(array<double>({1}), array<double>({2})).dtype() == complex128);
  // Real arrays: real and conj pass through, imag is zeros.
  const Array r = array<float>({1, -2});
  check_array(imag(r), {2}, float32, {0, 0});
  CHECK(real(r).impl() == r.impl());
  check_error<TypeError>([&] { complex(kA, kA); }, {"complex", "real arrays"});
}

TEST_CASE("complex arithmetic, sum, mean, where and astype match numpy") {
  // numpy (complex64): a * b, a / b.
  check_parts(kA * kB, {2.5, -7.0}, {0.0, -5.0});
  check_parts(kA / kB, {-1.2000000476837158, -0.625}, {1.600000023841858, 0.875});
  check_parts(kA + kB, {1.5, -1}, {1, 2.5});
  check_parts(kA - kB, {0.5, -5}, {3, -1.5});
  check_parts(-kA, {-1, 3}, {-2, -0.5});
  check_parts(kA * 2.0, {2, -6}, {4, 1});
  check_parts(kA / array<float>({2, 4}), {0.5, -0.75}, {1, 0.125});
  check_parts(array<float>({2, 4}) - kA, {1, 7}, {-2, -0.5});
  check_parts(sum(kA), {-2}, {2.5});
  check_parts(mean(kA), {-1}, {1.25});
  // numpy.var([1+2j, -3+0.5j]): the mean of |x - mean|^2, real.
  check_array(var(kA), {}, float32, {4.5625});
  check_parts(sum(reshape(concatenate({kA, kB}, 0), {2, 2}), 0), {1.5, -1}, {1, 2.5});
  check_parts(where(array<bool>({true, false}), kA, kB), {1, 2}, {2, 2});
  check_parts(astype(array<float>({1.5, -2}), complex128), {1.5, -2}, {0, 0});
  check_array(astype(kA, float32), {2}, float32, {1, -3});  // the real part, as numpy's cast
  check_array(astype(kA, bool_), {2}, bool_, {1, 1});
  check_parts(broadcast_to(kA, {3, 2}), {1, -3, 1, -3, 1, -3}, {2, 0.5, 2, 0.5, 2, 0.5});
  check_parts(transpose(reshape(concatenate({kA, kB}, 0), {2, 2})), {1, 0.5, -3, 2},
              {2, -1, 0.5, 2});
  check_parts(zeros({2}, complex64) + ones({2}, complex64), {1, 1}, {0, 0});
}

TEST_CASE("gradients through complex intermediates follow JAX's convention") {
  // f(x, y) = |(x + iy) w|^2 + angle(x + iy): real inputs and output, complex in between.
  const Array w = array(std::vector<CD>{{0.5, -1}, {2, 0.25}, {-1, 1}});
  auto f = [&](const Arrays& in) {
    const Array z = complex(in[0], in[1]);
    return square(abs(z * w)) + angle(z) + real(z / (z + 3.0)) * imag(conj(z) * z + z);
  };
  check_grads(f, Arrays{array<double>({1, -0.5, 2}), array<double>({0.3, 1, -1})});
  // JAX: grad of a real function of a complex input is the conjugate of the Wirtinger gradient
  // times 2: grad(|z|^2)(z) = 2 conj(z).
  const Array z0 = array(std::vector<CD>{{1, 2}, {-3, 0.5}});
  check_parts(grad([](const Array& z) { return sum(square(abs(z))); })(z0), {2, -6}, {-4, -1},
              1e-12);
  // The VJP of real is complex(ct, 0), of imag complex(0, -ct), as JAX's transposes.
  auto [y, pull] = vjp([](const Array& z) { return imag(z); }, z0);
  check_parts(std::get<0>(pull(array<double>({1, 2}))), {0, 0}, {-1, -2}, 1e-15);
}

TEST_CASE("vmap and jit of complex ops equal eager loops") {
  const Array re = transform_testing::data({4, 3}, 2), im = transform_testing::data({4, 3}, 3);
  auto f = [](const Array& a, const Array& b) {
    const Array z = complex(a, b);
    return abs(sum(z * conj(z) + z / (z + 2.0)));
  };
  Arrays loop;
  for (std::int64_t i = 0; i < 4; ++i)
    loop.push_back(f(transform_testing::row(re, i), transform_testing::row(im, i)));
  check_close(vmap(f)(re, im), stack(loop), 1e-12);
  check_close(jit(f)(re, im), f(re, im), 1e-14);
  check_close(vmap(f, {.in_axes = {0, AxisSpec::kNone}})(re, transform_testing::row(im, 0)),
              stack({f(transform_testing::row(re, 0), transform_testing::row(im, 0)),
                     f(transform_testing::row(re, 1), transform_testing::row(im, 0)),
                     f(transform_testing::row(re, 2), transform_testing::row(im, 0)),
                     f(transform_testing::row(re, 3), transform_testing::row(im, 0))}),
              1e-12);
}

TEST_CASE("real-only ops refuse complex inputs with a TypeError naming the op") {
  check_error<TypeError>([] { exp(kA); }, {"exp", "complex64"});
  check_error<TypeError>([] { max(kA); }, {"complex64"});
  check_error<TypeError>([] { matmul(reshape(kA, {1, 2}), reshape(kA, {2, 1})); }, {"complex64"});
  check_error<TypeError>([] { less(kA, kB); }, {"lt", "complex64"});
  check_error<TypeError>([] { floor(kA); }, {"floor", "complex64"});
  check_error<TypeError>([] { sqrt(kA); }, {"sqrt", "complex64"});
}

}  // namespace test_complex
