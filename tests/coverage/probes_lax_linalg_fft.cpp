// Probes of the jax.lax, jax.numpy.linalg and jax.numpy.fft names the coverage table marks
// present: the linum function with the same semantics (its spelling is in the table).
#include "probes.hpp"

namespace {

using namespace linum;
using namespace linum::coverage;

const Probes lax("jax.lax", [](Registrar& r) {
  r.add("DotDimensionNumbers", [] {
    return dot_general(m(), m(), DotDimensionNumbers{{1}, {0}, {}, {}});
  });
  r.add("FftType", [] { return linum::lax::fft(x(), linum::lax::FftType::RFFT, {3}); });
  r.add("GatherDimensionNumbers", [] {
    return gather(m(), array({{1}, {0}}), GatherDimensionNumbers{{1}, {0}, {0}}, {1, 2});
  });
  r.add("GatherScatterMode", [] {
    return gather(x(), array({{5}}), GatherDimensionNumbers{{}, {0}, {0}}, {1},
                  {.mode = GatherScatterMode::clip});
  });
  r.add("ScatterDimensionNumbers", [] {
    return scatter_add(x(), array({{2}, {0}}), array({1.0f, 2.0f}),
                       ScatterDimensionNumbers{{}, {0}, {0}});
  });
  r.add("abs", [] { return abs(x()); });
  r.add("acos", [] { return acos(x()); });
  r.add("acosh", [] { return acosh(pos() + 1.0f); });
  r.add("add", [] { return add(x(), pos()); });
  r.add("all_gather", [] {
    return vmap([](const Array& v) { return all_gather(v, "i"); }, {.axis_name = "i"})(m());
  });
  r.add("argmax", [] { return argmax(m(), 1); });
  r.add("argmin", [] { return argmin(m(), 1); });
  r.add("asin", [] { return asin(x()); });
  r.add("asinh", [] { return asinh(x()); });
  r.add("associative_scan",
        [] { return associative_scan([](const Array& a, const Array& b) { return a + b; }, x()); });
  r.add("atan", [] { return atan(x()); });
  r.add("atan2", [] { return atan2(x(), pos()); });
  r.add("atanh", [] { return atanh(x()); });
  r.add("axis_index", [] {
    return vmap([](const Array& v) { return v + axis_index("i"); }, {.axis_name = "i"})(x());
  });
  r.add("batch_matmul", [] { return matmul(stack({m(), m()}), stack({m(), m()})); });
  r.add("bessel_i0e", [] { return i0e(x()); });
  r.add("bessel_i1e", [] { return i1e(x()); });
  r.add("bitwise_and", [] { return bitwise_and(ints(), ints()); });
  r.add("bitwise_not", [] { return bitwise_not(ints()); });
  r.add("bitwise_or", [] { return bitwise_or(ints(), ints()); });
  r.add("bitwise_xor", [] { return bitwise_xor(ints(), ints()); });
  r.add("cbrt", [] { return cbrt(x()); });
  r.add("ceil", [] { return ceil(x()); });
  r.add("clamp", [] { return clip(x(), -0.1f, 0.1f); });
  r.add("complex", [] { return complex(x(), pos()); });
  r.add("concatenate", [] { return concatenate({x(), pos()}, 0); });
  r.add("cond", [] {
    return cond(
        Array(true), [](const Array& v) { return v; }, [](const Array& v) { return -v; }, x());
  });
  r.add("conj", [] { return conj(x()); });
  r.add("conv_general_dilated", [] {
    return conv_general_dilated(ones({1, 3, 3, 1}), ones({2, 2, 1, 1}));
  });
  r.add("conv_transpose", [] {
    return conv_transpose(ones({1, 3, 3, 1}), ones({2, 2, 1, 1}), {1, 1}, "SAME");
  });
  r.add("convert_element_type", [] { return astype(x(), int32); });
  r.add("cos", [] { return cos(x()); });
  r.add("cosh", [] { return cosh(x()); });
  r.add("cumlogsumexp", [] { return cumlogsumexp(x()); });
  r.add("cummax", [] { return cummax(m(), 1); });
  r.add("cummin", [] { return cummin(m(), 0, true); });
  r.add("cumprod", [] { return lax_cumprod(x()); });
  r.add("cumsum", [] { return lax_cumsum(m(), 1); });
  r.add("digamma", [] { return digamma(pos()); });
  r.add("dot", [] { return dot(m(), m()); });
  r.add("dot_general", [] { return dot_general(m(), m(), {{1}, {0}, {}, {}}); });
  r.add("dtype", [] { return x().dtype(); });
  r.add("dynamic_slice", [] { return dynamic_slice(m(), {1, 0}, {1, 2}); });
  r.add("dynamic_update_slice", [] { return dynamic_update_slice(m(), ones({1, 2}), {1, 0}); });
  r.add("empty", [] { return empty({2}); });
  r.add("eq", [] { return equal(x(), pos()); });
  r.add("erf", [] { return erf(x()); });
  r.add("erf_inv", [] { return erfinv(x()); });
  r.add("erfc", [] { return erfc(x()); });
  r.add("exp", [] { return exp(x()); });
  r.add("exp2", [] { return exp2(x()); });
  r.add("expand_dims", [] { return expand_dims(x(), 0); });
  r.add("expm1", [] { return expm1(x()); });
  r.add("fft", [] { return linum::lax::fft(complex(m(), m()), linum::lax::FftType::FFT, {2, 2}); });
  r.add("floor", [] { return floor(x()); });
  r.add("fori_loop", [] {
    return fori_loop(
        Array(0), Array(3), [](const Array&, const Array& c) { return c * 2.0f; }, x());
  });
  r.add("full", [] { return full({2}, 1.5); });
  r.add("full_like", [] { return full_like(x(), 1.5); });
  r.add("gather", [] {
    return gather(x(), array({{2}, {0}}), GatherDimensionNumbers{{}, {0}, {0}}, {1});
  });
  r.add("ge", [] { return greater_equal(x(), pos()); });
  r.add("gt", [] { return greater(x(), pos()); });
  r.add("igamma", [] { return gammainc(pos(), pos()); });
  r.add("igammac", [] { return gammaincc(pos(), pos()); });
  r.add("imag", [] { return imag(x()); });
  r.add("integer_pow", [] { return power(x(), 3); });
  r.add("is_finite", [] { return isfinite(x()); });
  r.add("le", [] { return less_equal(x(), pos()); });
  r.add("lgamma", [] { return gammaln(pos()); });
  r.add("log", [] { return log(pos()); });
  r.add("log1p", [] { return log1p(pos()); });
  r.add("logistic", [] { return sigmoid(x()); });
  r.add("lt", [] { return less(x(), pos()); });
  r.add("max", [] { return maximum(x(), pos()); });
  r.add("min", [] { return minimum(x(), pos()); });
  r.add("mul", [] { return multiply(x(), pos()); });
  r.add("ne", [] { return not_equal(x(), pos()); });
  r.add("neg", [] { return negative(x()); });
  r.add("nextafter", [] { return nextafter(x(), pos()); });
  r.add("pad", [] { return lax_pad(x(), Array(0.0f), {PadDim{1, 2, 1}}); });
  r.add("pmax",
        [] { return vmap([](const Array& v) { return pmax(v, "i"); }, {.axis_name = "i"})(x()); });
  r.add("pmean",
        [] { return vmap([](const Array& v) { return pmean(v, "i"); }, {.axis_name = "i"})(x()); });
  r.add("pmin",
        [] { return vmap([](const Array& v) { return pmin(v, "i"); }, {.axis_name = "i"})(x()); });
  r.add("polygamma", [] { return polygamma(array({2}), pos()); });
  r.add("pow", [] { return power(pos(), x()); });
  r.add("psum",
        [] { return vmap([](const Array& v) { return psum(v, "i"); }, {.axis_name = "i"})(x()); });
  r.add("random_gamma_grad", [] { return linum::random::random_gamma_grad(pos(), pos()); });
  r.add("real", [] { return real(x()); });
  r.add("reciprocal", [] { return reciprocal(pos()); });
  r.add("reduce_and", [] { return all(x() > 0.0f, 0); });
  r.add("reduce_max", [] { return max(m(), 0); });
  r.add("reduce_min", [] { return min(m(), 0); });
  r.add("reduce_or", [] { return any(x() > 0.0f, 0); });
  r.add("reduce_prod", [] { return prod(m(), 0); });
  r.add("reduce_sum", [] { return sum(m(), 0); });
  r.add("reduce_window", [] {
    return reduce_window(ones({1, 4, 4, 1}), WindowReduce::max, {1, 2, 2, 1}, {1, 2, 2, 1});
  });
  r.add("rem", [] { return fmod(x(), pos()); });
  r.add("reshape", [] { return reshape(m(), {4}); });
  r.add("rev", [] { return rev(m(), {0}); });
  r.add("rsqrt", [] { return rsqrt(pos()); });
  r.add("scan", [] {
    return scan(
        [](const Array& c, const Array& v) {
          return std::pair{c + v, c};
        },
        Array(0.0f), x());
  });
  r.add("scatter", [] {
    return scatter(x(), array({{2}, {0}}), array({1.0f, 2.0f}),
                   ScatterDimensionNumbers{{}, {0}, {0}});
  });
  r.add("scatter_add", [] {
    return scatter_add(x(), array({{2}, {0}}), array({1.0f, 2.0f}),
                       ScatterDimensionNumbers{{}, {0}, {0}});
  });
  r.add("scatter_max", [] {
    return scatter_max(x(), array({{2}, {0}}), array({1.0f, 2.0f}),
                       ScatterDimensionNumbers{{}, {0}, {0}});
  });
  r.add("scatter_min", [] {
    return scatter_min(x(), array({{2}, {0}}), array({1.0f, 2.0f}),
                       ScatterDimensionNumbers{{}, {0}, {0}});
  });
  r.add("scatter_mul", [] {
    return scatter_mul(x(), array({{2}, {0}}), array({1.0f, 2.0f}),
                       ScatterDimensionNumbers{{}, {0}, {0}});
  });
  r.add("scatter_sub", [] {
    return scatter_sub(x(), array({{2}, {0}}), array({1.0f, 2.0f}),
                       ScatterDimensionNumbers{{}, {0}, {0}});
  });
  r.add("select", [] { return where(x() > 0.0f, x(), pos()); });
  r.add("shift_left", [] { return left_shift(ints(), 2); });
  r.add("shift_right_arithmetic", [] { return right_shift(ints(), 1); });
  r.add("sign", [] { return sign(x()); });
  r.add("sin", [] { return sin(x()); });
  r.add("sinh", [] { return sinh(x()); });
  r.add("slice", [] { return lax_slice(m(), {0, 0}, {1, 2}); });
  r.add("sort", [] { return lax_sort({x(), pos()}); });
  r.add("sort_key_val", [] { return sort_key_val(x(), pos()); });
  r.add("split", [] { return split(x(), std::vector<std::int64_t>{1}); });
  r.add("sqrt", [] { return sqrt(pos()); });
  r.add("square", [] { return square(x()); });
  r.add("squeeze", [] { return squeeze(expand_dims(x(), 0), 0); });
  r.add("stack", [] { return stack({x(), pos()}); });
  r.add("stop_gradient", [] { return stop_gradient(x()); });
  r.add("sub", [] { return subtract(x(), pos()); });
  r.add("switch", [] {
    return switch_(Array(1),
                   std::vector<std::function<Array(const Array&)>>{
                       [](const Array& v) { return v; }, [](const Array& v) { return -v; }},
                   x());
  });
  r.add("tan", [] { return tan(x()); });
  r.add("tanh", [] { return tanh(x()); });
  r.add("tile", [] { return tile(m(), {2, 1}); });
  r.add("top_k", [] { return top_k(x(), 2); });
  r.add("transpose", [] { return transpose(m(), {1, 0}); });
  r.add("while_loop", [] {
    return while_loop([](const Array& c) { return c < 10.0f; },
                      [](const Array& c) { return c * 2.0f; }, Array(1.0f));
  });
  r.add("zeta", [] { return zeta(pos() + 1.5f, pos()); });
});

// spd(): a symmetric positive definite matrix, for cholesky and eigh; rhs(): a right-hand side.
Array spd() { return array({{2.0f, 1.0f}, {1.0f, 2.0f}}); }
Array rhs() { return array({1.0f, 2.0f}); }

const Probes linalg("jax.numpy.linalg", [](Registrar& r) {
  r.add("cholesky", [] { return linum::linalg::cholesky(spd()); });
  r.add("cond", [] { return linum::linalg::cond(m()); });
  r.add("cross", [] { return linum::linalg::cross(x(), pos()); });
  r.add("det", [] { return linum::linalg::det(m()); });
  r.add("diagonal", [] { return linum::linalg::diagonal(m(), 1); });
  r.add("eigh", [] { return linum::linalg::eigh(spd()).eigenvalues; });
  r.add("eigvalsh", [] { return linum::linalg::eigvalsh(spd()); });
  r.add("inv", [] { return linum::linalg::inv(m()); });
  r.add("lstsq", [] { return linum::linalg::lstsq(m(), rhs()).x; });
  r.add("matmul", [] { return matmul(m(), m()); });
  r.add("matrix_norm", [] { return linum::linalg::matrix_norm(m()); });
  r.add("matrix_power", [] { return linum::linalg::matrix_power(m(), 3); });
  r.add("matrix_rank", [] { return linum::linalg::matrix_rank(m()); });
  r.add("matrix_transpose", [] { return linum::linalg::matrix_transpose(m()); });
  r.add("multi_dot", [] { return linum::linalg::multi_dot({rhs(), m(), m(), rhs()}); });
  r.add("norm", [] { return linum::linalg::norm(m(), "nuc"); });
  r.add("outer", [] { return linum::linalg::outer(x(), pos()); });
  r.add("pinv", [] { return linum::linalg::pinv(m()); });
  r.add("qr", [] { return linum::linalg::qr(m()).R; });
  r.add("slogdet", [] { return linum::linalg::slogdet(m()).logabsdet; });
  r.add("solve", [] { return linum::linalg::solve(m(), rhs()); });
  r.add("svd", [] { return linum::linalg::svd(m()).S; });
  r.add("svdvals", [] { return linum::linalg::svdvals(m()); });
  r.add("tensordot", [] { return tensordot(m(), m(), 1); });
  r.add("tensorinv", [] { return linum::linalg::tensorinv(m(), 1); });
  r.add("tensorsolve", [] { return linum::linalg::tensorsolve(m(), rhs()); });
  r.add("trace", [] { return linum::linalg::trace(m()); });
  r.add("vecdot", [] { return vecdot(m(), m()); });
  r.add("vector_norm", [] { return linum::linalg::vector_norm(x()); });
});

const Probes numpy_fft("jax.numpy.fft", [](Registrar& r) {
  r.add("fft", [] { return linum::fft::fft(x()); });
  r.add("fft2", [] { return linum::fft::fft2(m()); });
  r.add("fftfreq", [] { return linum::fft::fftfreq(4); });
  r.add("fftn", [] { return linum::fft::fftn(m()); });
  r.add("fftshift", [] { return linum::fft::fftshift(x()); });
  r.add("hfft", [] { return linum::fft::hfft(linum::fft::ihfft(x())); });
  r.add("ifft", [] { return linum::fft::ifft(x()); });
  r.add("ifft2", [] { return linum::fft::ifft2(m()); });
  r.add("ifftn", [] { return linum::fft::ifftn(m()); });
  r.add("ifftshift", [] { return linum::fft::ifftshift(x()); });
  r.add("ihfft", [] { return linum::fft::ihfft(x()); });
  r.add("irfft", [] { return linum::fft::irfft(linum::fft::rfft(x()), 3); });
  r.add("irfft2", [] { return linum::fft::irfft2(linum::fft::rfft2(m())); });
  r.add("irfftn", [] { return linum::fft::irfftn(linum::fft::rfftn(m())); });
  r.add("rfft", [] { return linum::fft::rfft(x()); });
  r.add("rfft2", [] { return linum::fft::rfft2(m()); });
  r.add("rfftfreq", [] { return linum::fft::rfftfreq(4); });
  r.add("rfftn", [] { return linum::fft::rfftn(m()); });
});

}  // namespace
