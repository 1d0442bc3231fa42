// Probes of the jax.numpy names the coverage table marks present (docs/coverage/jax.numpy.tsv).
#include <linum/autodiff/ops/apply.hpp>
#include <linum/autodiff/ops/bits.hpp>
#include <linum/autodiff/ops/differences.hpp>
#include <linum/autodiff/ops/dtype_info.hpp>
#include <linum/autodiff/ops/histogram.hpp>
#include <linum/autodiff/ops/index_tricks.hpp>
#include <linum/autodiff/ops/polynomial_solve.hpp>
#include <linum/autodiff/ops/reshaping.hpp>
#include <linum/autodiff/ops/set_ops.hpp>

#include "probes.hpp"

namespace {

using namespace linum;
using namespace linum::coverage;

const Probes elementwise("jax.numpy", [](Registrar& r) {
  r.add("abs", [] { return abs(x()); });
  r.add("absolute", [] { return absolute(x()); });
  r.add("acos", [] { return acos(x()); });
  r.add("acosh", [] { return acosh(pos() + 1.0f); });
  r.add("add", [] { return add(x(), pos()); });
  r.add("angle", [] { return angle(x()); });
  r.add("arccos", [] { return arccos(x()); });
  r.add("arccosh", [] { return arccosh(pos() + 1.0f); });
  r.add("arcsin", [] { return arcsin(x()); });
  r.add("arcsinh", [] { return arcsinh(x()); });
  r.add("arctan", [] { return arctan(x()); });
  r.add("arctan2", [] { return arctan2(x(), pos()); });
  r.add("arctanh", [] { return arctanh(x()); });
  r.add("around", [] { return around(x(), 1); });
  r.add("asin", [] { return asin(x()); });
  r.add("asinh", [] { return asinh(x()); });
  r.add("atan", [] { return atan(x()); });
  r.add("atan2", [] { return atan2(x(), pos()); });
  r.add("atanh", [] { return atanh(x()); });
  r.add("bitwise_and", [] { return bitwise_and(ints(), ints()); });
  r.add("bitwise_invert", [] { return bitwise_invert(ints()); });
  r.add("bitwise_left_shift", [] { return bitwise_left_shift(ints(), 2); });
  r.add("bitwise_not", [] { return bitwise_not(ints()); });
  r.add("bitwise_or", [] { return bitwise_or(ints(), ints()); });
  r.add("bitwise_right_shift", [] { return bitwise_right_shift(ints(), 1); });
  r.add("bitwise_xor", [] { return bitwise_xor(ints(), ints()); });
  r.add("cbrt", [] { return cbrt(x()); });
  r.add("ceil", [] { return ceil(x()); });
  r.add("clip", [] { return clip(x(), -0.1f, 0.1f); });
  r.add("conj", [] { return conj(x()); });
  r.add("conjugate", [] { return conjugate(x()); });
  r.add("copysign", [] { return copysign(pos(), x()); });
  r.add("cos", [] { return cos(x()); });
  r.add("cosh", [] { return cosh(x()); });
  r.add("deg2rad", [] { return deg2rad(x()); });
  r.add("degrees", [] { return degrees(x()); });
  r.add("divide", [] { return divide(x(), pos()); });
  r.add("divmod", [] { return divmod(x(), pos()); });
  r.add("equal", [] { return equal(x(), pos()); });
  r.add("exp", [] { return exp(x()); });
  r.add("exp2", [] { return exp2(x()); });
  r.add("expm1", [] { return expm1(x()); });
  r.add("fabs", [] { return fabs(x()); });
  r.add("float_power", [] { return float_power(pos(), x()); });
  r.add("floor", [] { return floor(x()); });
  r.add("floor_divide", [] { return floor_divide(ints(), 4); });
  r.add("fmax", [] { return fmax(x(), pos()); });
  r.add("fmin", [] { return fmin(x(), pos()); });
  r.add("fmod", [] { return fmod(ints(), 4); });
  r.add("frexp", [] { return frexp(x()); });
  r.add("gcd", [] { return gcd(ints(), 4); });
  r.add("greater", [] { return greater(x(), pos()); });
  r.add("greater_equal", [] { return greater_equal(x(), pos()); });
  r.add("heaviside", [] { return heaviside(x(), 0.5f); });
  r.add("hypot", [] { return hypot(x(), pos()); });
  r.add("i0", [] { return i0(x()); });
  r.add("imag", [] { return imag(x()); });
  r.add("invert", [] { return invert(ints()); });
  r.add("isclose", [] { return isclose(x(), pos()); });
  r.add("iscomplex", [] { return iscomplex(x()); });
  r.add("iscomplexobj", [] { return is_complex(x().dtype()); });
  r.add("isfinite", [] { return isfinite(x()); });
  r.add("isinf", [] { return isinf(x()); });
  r.add("isnan", [] { return isnan(x()); });
  r.add("isneginf", [] { return isneginf(x()); });
  r.add("isposinf", [] { return isposinf(x()); });
  r.add("isreal", [] { return isreal(x()); });
  r.add("isrealobj", [] { return !is_complex(x().dtype()); });
  r.add("lcm", [] { return lcm(ints(), 4); });
  r.add("ldexp", [] { return ldexp(x(), ints()); });
  r.add("left_shift", [] { return left_shift(ints(), 3); });
  r.add("less", [] { return less(x(), pos()); });
  r.add("less_equal", [] { return less_equal(x(), pos()); });
  r.add("log", [] { return log(pos()); });
  r.add("log10", [] { return log10(pos()); });
  r.add("log1p", [] { return log1p(pos()); });
  r.add("log2", [] { return log2(pos()); });
  r.add("logaddexp", [] { return logaddexp(x(), pos()); });
  r.add("logaddexp2", [] { return logaddexp2(x(), pos()); });
  r.add("logical_and", [] { return logical_and(x(), pos()); });
  r.add("logical_not", [] { return logical_not(x()); });
  r.add("logical_or", [] { return logical_or(x(), pos()); });
  r.add("logical_xor", [] { return logical_xor(x(), pos()); });
  r.add("maximum", [] { return maximum(x(), pos()); });
  r.add("minimum", [] { return minimum(x(), pos()); });
  r.add("mod", [] { return mod(ints(), 4); });
  r.add("modf", [] { return modf(x()); });
  r.add("multiply", [] { return multiply(x(), pos()); });
  r.add("nan_to_num", [] { return nan_to_num(log(x())); });
  r.add("negative", [] { return negative(x()); });
  r.add("nextafter", [] { return nextafter(x(), pos()); });
  r.add("not_equal", [] { return not_equal(x(), pos()); });
  r.add("positive", [] { return positive(x()); });
  r.add("pow", [] { return pow(pos(), x()); });
  r.add("power", [] { return power(pos(), x()); });
  r.add("rad2deg", [] { return rad2deg(x()); });
  r.add("radians", [] { return radians(x()); });
  r.add("real", [] { return real(x()); });
  r.add("reciprocal", [] { return reciprocal(pos()); });
  r.add("remainder", [] { return remainder(ints(), 4); });
  r.add("right_shift", [] { return right_shift(ints(), 1); });
  r.add("rint", [] { return rint(x()); });
  r.add("round", [] { return round(x(), 1); });
  r.add("sign", [] { return sign(x()); });
  r.add("signbit", [] { return signbit(x()); });
  r.add("sin", [] { return sin(x()); });
  r.add("sinc", [] { return sinc(x()); });
  r.add("sinh", [] { return sinh(x()); });
  r.add("spacing", [] { return spacing(x()); });
  r.add("sqrt", [] { return sqrt(pos()); });
  r.add("square", [] { return square(x()); });
  r.add("subtract", [] { return subtract(x(), pos()); });
  r.add("tan", [] { return tan(x()); });
  r.add("tanh", [] { return tanh(x()); });
  r.add("true_divide", [] { return true_divide(x(), pos()); });
  r.add("trunc", [] { return trunc(x()); });
  r.add("where", [] { return where(x() > 0.0f, x(), pos()); });
});

const Probes reductions("jax.numpy", [](Registrar& r) {
  r.add("all", [] { return all(x() > 0.0f); });
  r.add("allclose", [] { return allclose(x(), x()); });
  r.add("amax", [] { return amax(m(), 0); });
  r.add("amin", [] { return amin(m(), 0); });
  r.add("any", [] { return any(x() > 0.0f); });
  r.add("argmax", [] { return argmax(x()); });
  r.add("argmin", [] { return argmin(x()); });
  r.add("array_equal", [] { return array_equal(x(), x()); });
  r.add("array_equiv", [] { return array_equiv(m(), array({1.0f, 2.0f})); });
  r.add("average", [] { return average(m(), 1, array({1.0f, 3.0f})); });
  r.add("count_nonzero", [] { return count_nonzero(ints()); });
  r.add("max", [] { return max(m()); });
  r.add("mean", [] { return mean(m(), 0); });
  r.add("median", [] { return median(x()); });
  r.add("min", [] { return min(m()); });
  r.add("nanargmax", [] { return nanargmax(x()); });
  r.add("nanargmin", [] { return nanargmin(x()); });
  r.add("nanmax", [] { return nanmax(x()); });
  r.add("nanmean", [] { return nanmean(x()); });
  r.add("nanmedian", [] { return nanmedian(x()); });
  r.add("nanmin", [] { return nanmin(x()); });
  r.add("nanpercentile", [] { return nanpercentile(x(), 50.0f); });
  r.add("nanprod", [] { return nanprod(x()); });
  r.add("nanquantile", [] { return nanquantile(x(), 0.5f); });
  r.add("nanstd", [] { return nanstd(x()); });
  r.add("nansum", [] { return nansum(x()); });
  r.add("nanvar", [] { return nanvar(x()); });
  r.add("percentile", [] { return percentile(x(), array({25.0f, 75.0f})); });
  r.add("prod", [] { return prod(x()); });
  r.add("ptp", [] { return ptp(m(), 1); });
  r.add("quantile", [] { return quantile(x(), 0.25f, {}, "nearest"); });
  r.add("std", [] { return linum::std(x()); });
  r.add("sum", [] { return sum(m(), 1); });
  r.add("var", [] { return var(x()); });
});

const Probes contractions("jax.numpy", [](Registrar& r) {
  r.add("dot", [] { return dot(m(), m()); });
  r.add("einsum", [] { return einsum("ij,jk->ik", m(), m()); });
  r.add("inner", [] { return inner(m(), m()); });
  r.add("kron", [] { return kron(m(), m()); });
  r.add("matmul", [] { return matmul(m(), m()); });
  r.add("matvec", [] { return matvec(m(), array({1.0f, 2.0f})); });
  r.add("outer", [] { return outer(x(), pos()); });
  r.add("tensordot", [] { return tensordot(m(), m(), 1); });
  r.add("vdot", [] { return vdot(x(), pos()); });
  r.add("vecdot", [] { return vecdot(m(), m()); });
  r.add("vecmat", [] { return vecmat(array({1.0f, 2.0f}), m()); });
});

const Probes creation_and_shape("jax.numpy", [](Registrar& r) {
  r.add("arange", [] { return arange(5); });
  r.add("array", [] { return array({1.0f, 2.0f}); });
  r.add("array_repr", [] { return repr(x()); });
  r.add("asarray", [] { return array(ints(), float32); });
  r.add("astype", [] { return astype(x(), int32); });
  r.add("broadcast_to", [] { return broadcast_to(x(), {2, 3}); });
  r.add("concat", [] { return concatenate({x(), pos()}); });
  r.add("concatenate", [] { return concatenate({x(), pos()}); });
  r.add("copy", [] { return array(x(), x().dtype()); });
  r.add("empty", [] { return empty({2, 2}); });
  r.add("expand_dims", [] { return expand_dims(x(), 0); });
  r.add("eye", [] { return eye(3); });
  r.add("full", [] { return full({2}, 1.5); });
  r.add("full_like", [] { return full_like(x(), 2.0); });
  r.add("identity", [] { return eye(3); });
  r.add("linspace", [] { return linspace(0, 1, 5); });
  r.add("moveaxis", [] { return moveaxis(m(), 0, 1); });
  r.add("ndim", [] { return x().ndim(); });
  r.add("ones", [] { return ones({2}); });
  r.add("ones_like", [] { return ones_like(x()); });
  r.add("permute_dims", [] { return transpose(m(), {1, 0}); });
  r.add("promote_types", [] { return promote_types(int32, float32); });
  r.add("ravel", [] { return ravel(m()); });
  r.add("reshape", [] { return reshape(m(), {4}); });
  r.add("result_type", [] { return result_type(int32, false, float32, true).dtype; });
  r.add("shape", [] { return m().shape(); });
  r.add("size", [] { return m().size(); });
  r.add("split", [] { return split(x(), 3); });
  r.add("squeeze", [] { return squeeze(expand_dims(x(), 0)); });
  r.add("stack", [] { return stack({x(), pos()}); });
  r.add("take", [] { return take(x(), array({0, 2})); });
  r.add("take_along_axis", [] { return take_along_axis(m(), array({{1}, {0}}), 1); });
  r.add("transpose", [] { return transpose(m()); });
  r.add("zeros", [] { return zeros({2}); });
  r.add("zeros_like", [] { return zeros_like(x()); });
});

const Probes polynomials_and_windows("jax.numpy", [](Registrar& r) {
  r.add("bartlett", [] { return bartlett(5); });
  r.add("blackman", [] { return blackman(5); });
  r.add("convolve", [] { return convolve(x(), pos()); });
  r.add("corrcoef", [] { return corrcoef(m()); });
  r.add("correlate", [] { return correlate(x(), pos()); });
  r.add("cov", [] { return cov(m()); });
  r.add("empty_like", [] { return empty_like(x()); });
  r.add("geomspace", [] { return geomspace(1, 8, 4); });
  r.add("hamming", [] { return hamming(5); });
  r.add("hanning", [] { return hanning(5); });
  r.add("kaiser", [] { return kaiser(5, Array(2.0f)); });
  r.add("logspace", [] { return logspace(0, 2, 3); });
  r.add("polyadd", [] { return polyadd(x(), pos()); });
  r.add("polyder", [] { return polyder(x()); });
  r.add("polyint", [] { return polyint(x()); });
  r.add("polymul", [] { return polymul(x(), pos()); });
  r.add("polysub", [] { return polysub(x(), pos()); });
  r.add("polyval", [] { return polyval(x(), pos()); });
  r.add("select", [] { return select({x() > 0.0f}, {pos()}, Array(0.0f)); });
  r.add("trapezoid", [] { return trapezoid(x()); });
  r.add("vander", [] { return vander(x()); });
});

const Probes sorting_and_searching("jax.numpy", [](Registrar& r) {
  r.add("argpartition", [] { return argpartition(x(), 1); });
  r.add("argsort", [] { return argsort(x()); });
  r.add("argwhere", [] { return argwhere(m() > 1.5f); });
  r.add("compress", [] { return compress(x() > 0.0f, x()); });
  r.add("cumprod", [] { return cumprod(m(), 1); });
  r.add("cumsum", [] { return cumsum(m()); });
  r.add("cumulative_prod", [] { return cumulative_prod(x()); });
  r.add("cumulative_sum", [] { return cumulative_sum(m(), 0, std::nullopt, true); });
  r.add("extract", [] { return extract(x() > 0.0f, x()); });
  r.add("flatnonzero", [] { return flatnonzero(m() > 1.5f); });
  r.add("lexsort", [] { return lexsort({x(), pos()}); });
  r.add("nancumprod", [] { return nancumprod(x()); });
  r.add("nancumsum", [] { return nancumsum(x()); });
  r.add("nonzero", [] { return nonzero(x() > 0.0f); });
  r.add("partition", [] { return partition(x(), 1); });
  r.add("searchsorted", [] { return searchsorted(array({0.0f, 0.5f, 1.0f}), x()); });
  r.add("sort", [] { return sort(x()); });
  r.add("top_k", [] { return top_k(x(), 2); });
  r.add("unique", [] { return unique(array({3, 1, 3})); });
});

const Probes manipulation("jax.numpy", [](Registrar& r) {
  r.add("append", [] { return append(x(), pos()); });
  r.add("array_split", [] { return array_split(x(), 2); });
  r.add("atleast_1d", [] { return atleast_1d(Array(1.0f)); });
  r.add("atleast_2d", [] { return atleast_2d(x()); });
  r.add("atleast_3d", [] { return atleast_3d(m()); });
  r.add("column_stack", [] { return column_stack({x(), pos()}); });
  r.add("delete", [] { return delete_(x(), 1); });
  r.add("diag", [] { return diag(x()); });
  r.add("diagflat", [] { return diagflat(m()); });
  r.add("diagonal", [] { return diagonal(m()); });
  r.add("dsplit", [] { return dsplit(ones({1, 2, 4}), 2); });
  r.add("dstack", [] { return dstack({x(), pos()}); });
  r.add("flip", [] { return flip(m()); });
  r.add("fliplr", [] { return fliplr(m()); });
  r.add("flipud", [] { return flipud(m()); });
  r.add("hsplit", [] { return hsplit(m(), 2); });
  r.add("hstack", [] { return hstack({x(), pos()}); });
  r.add("indices", [] { return indices({2, 3}); });
  r.add("insert", [] { return insert(x(), 1, Array(5.0f)); });
  r.add("matrix_transpose", [] { return linalg::matrix_transpose(m()); });
  r.add("meshgrid", [] { return meshgrid({x(), pos()}); });
  r.add("pad", [] { return pad(m(), 1, {.mode = PadMode::edge}); });
  r.add("repeat", [] { return repeat(x(), 2); });
  r.add("roll", [] { return roll(x(), 1); });
  r.add("rot90", [] { return rot90(m()); });
  r.add("swapaxes", [] { return swapaxes(m(), 0, 1); });
  r.add("tile", [] { return tile(x(), {2}); });
  r.add("trace", [] { return trace(m()); });
  r.add("tri", [] { return tri(3); });
  r.add("tril", [] { return tril(m()); });
  r.add("triu", [] { return triu(m()); });
  r.add("vsplit", [] { return vsplit(m(), 2); });
  r.add("vstack", [] { return vstack({x(), pos()}); });
});

const Probes reshaping("jax.numpy", [](Registrar& r) {
  r.add("block", [] { return block(std::vector<Arrays>{{m(), m()}, {m(), m()}}); });
  r.add("broadcast_arrays", [] { return broadcast_arrays({x(), m()[0][0]}); });
  r.add("broadcast_shapes", [] { return broadcast_shapes({{2, 1}, {3}}); });
  r.add("resize", [] { return resize(x(), {2, 2}); });
  r.add("rollaxis", [] { return rollaxis(m(), 1); });
  r.add("trim_zeros", [] { return trim_zeros(array({0, 1, 0})); });
  r.add("unstack", [] { return unstack(m()); });
});

const Probes set_operations("jax.numpy", [](Registrar& r) {
  r.add("intersect1d", [] { return intersect1d(ints(), array({9, 3})); });
  r.add("isin", [] { return isin(ints(), array({9, 3})); });
  r.add("setdiff1d", [] { return setdiff1d(ints(), array({9, 3})); });
  r.add("setxor1d", [] { return setxor1d(ints(), array({9, 3})); });
  r.add("sort_complex", [] { return sort_complex(x()); });
  r.add("union1d", [] { return union1d(ints(), array({9, 3})); });
  r.add("unique_all", [] { return unique_all(array({3, 1, 3})).counts; });
  r.add("unique_counts", [] { return unique_counts(array({3, 1, 3})).counts; });
  r.add("unique_inverse", [] { return unique_inverse(array({3, 1, 3})).inverse_indices; });
  r.add("unique_values", [] { return unique_values(array({3, 1, 3})); });
});

const Probes index_tricks("jax.numpy", [](Registrar& r) {
  r.add("choose", [] { return choose(array({1, 0, 1}), {x(), pos()}); });
  r.add("diag_indices", [] { return diag_indices(3); });
  r.add("diag_indices_from", [] { return diag_indices_from(m()); });
  r.add("fill_diagonal", [] { return fill_diagonal(m(), Array(0.0f)); });
  r.add("ix_", [] { return ix_({array({0, 1}), array({1})}); });
  r.add("mask_indices",
        [] { return mask_indices(3, [](const Array& a, std::int64_t k) { return triu(a, k); }); });
  r.add("place", [] { return place(x(), x() > 0.0f, Array(1.0f)); });
  r.add("put", [] { return put(x(), array({0, 2}), pos()); });
  r.add("put_along_axis", [] { return put_along_axis(m(), array({{1}, {0}}), Array(9.0f), 1); });
  r.add("ravel_multi_index", [] {
    return ravel_multi_index({array({1, 0}), array({0, 1})}, {2, 2});
  });
  r.add("tril_indices", [] { return tril_indices(3); });
  r.add("tril_indices_from", [] { return tril_indices_from(m()); });
  r.add("triu_indices", [] { return triu_indices(3, 1); });
  r.add("triu_indices_from", [] { return triu_indices_from(m()); });
  r.add("unravel_index", [] { return unravel_index(array({3, 1}), {2, 2}); });
});

const Probes binning_and_differences("jax.numpy", [](Registrar& r) {
  r.add("bincount", [] { return bincount(array({0, 2, 2})); });
  r.add("cross", [] { return cross(x(), pos()); });
  r.add("diff", [] { return diff(x()); });
  r.add("digitize", [] { return digitize(x(), array({-1.0f, 0.0f, 1.0f})); });
  r.add("ediff1d", [] { return ediff1d(m()); });
  r.add("gradient", [] { return gradient(m()); });
  r.add("histogram", [] { return histogram(x(), 2).first; });
  r.add("histogram2d", [] { return std::get<0>(histogram2d(x(), pos(), {2})); });
  r.add("histogram_bin_edges", [] { return histogram_bin_edges(x(), 2); });
  r.add("histogramdd", [] { return histogramdd(m(), {2}).first; });
  r.add("interp", [] { return interp(x(), pos(), unit()); });
  r.add("unwrap", [] { return unwrap(x() * 10.0f); });
});

const Probes functions_and_polynomial_solvers("jax.numpy", [](Registrar& r) {
  r.add("apply_along_axis",
        [] { return apply_along_axis([](const Array& v) { return sum(v); }, 0, m()); });
  r.add("apply_over_axes", [] {
    return apply_over_axes([](const Array& a, int axis) { return sum(a, axis); }, m(), {0});
  });
  r.add("fromfunction", [] {
    return fromfunction([](const Arrays& i) { return i[0] + i[1]; }, {2, 2});
  });
  r.add("piecewise", [] { return piecewise(x(), {x() > 0.0f}, {1.0, -1.0}); });
  r.add("poly", [] { return poly(x()); });
  r.add("polydiv", [] { return polydiv(x(), pos()); });
  r.add("polyfit", [] { return polyfit(x(), pos(), 1); });
});

const Probes dtype_queries("jax.numpy", [](Registrar& r) {
  r.add("bitwise_count", [] { return bitwise_count(ints()); });
  r.add("can_cast", [] { return can_cast(int32, float64); });
  r.add("finfo", [] { return finfo(float32).eps; });
  r.add("iinfo", [] { return iinfo(int32).max; });
  r.add("isdtype", [] { return isdtype(float32, "real floating"); });
  r.add("issubdtype", [] { return issubdtype(int32, DTypeCategory::integer); });
});

}  // namespace
