// Reduction primitives (JVP, VJP and batching rule together; their loops are in
// reduction_kernels.cpp) and the ops built on them: sum/mean/max/min/prod/all/any/var, and the
// jax.nn functions logsumexp, softmax, log_softmax and one_hot. argmax/argmin: arg_reduction.cpp.
#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include <linum/autodiff/ops/complex_arith.hpp>
#include <linum/autodiff/ops/reduction_util.hpp>

namespace linum {
namespace detail {
namespace {

// ---- primitives -------------------------------------------------------------------------------

// A reduction over `axes` (sorted, unique, non-negative, never empty); D supplies the rules.
template <class D>
struct Reduce : Primitive {
  std::vector<int> axes;
  explicit Reduce(std::vector<int> a) : axes(std::move(a)) {}
  const char* name() const override { return D::kName; }
  void print_params(std::ostream& os) const override { os << "axes=" << axes_str(axes); }
  Avals abstract_eval(std::span<const ShapeDtype> in) const override {
    return {{reduced_shape(in[0].shape, axes), in[0].dtype}};
  }
  Batched vmap(std::span<const Array> in, std::span<const int> bdims) const override {
    auto [a, ob] = batch_axes(axes, bdims[0]);
    return {{bind1(std::make_shared<const D>(std::move(a)), {in[0]})}, {ob}};
  }
  Array kept(const Array& r, const Shape& xs) const { return reshape(r, kept_shape(xs, axes)); }
};

struct Sum final : Reduce<Sum> {
  static constexpr const char* kName = "reduce_sum";
  using Reduce::Reduce;
  bool vjp_reads_input(std::size_t) const override { return false; }
  bool vjp_reads_output(std::size_t) const override { return false; }

  Arrays eval(std::span<const Array> in) const override {
    return {reduce_loop(ReduceOp::sum, in[0], axes)};
  }
  Arrays jvp(std::span<const Array>, std::span<const Array> t,
             std::span<const Array>) const override {
    return {sum(t[0], Axes(axes))};
  }
  Arrays vjp(std::span<const Array> p, std::span<const Array> ct,
             std::span<const Array>) const override {
    return {broadcast_to(kept(ct[0], p[0].shape()), p[0].shape())};
  }
};

// reduce_max / reduce_min with JAX's chooser rule: the derivative is shared equally among the
// tied extrema (location mask / count).
template <class D>
struct Chooser : Reduce<D> {
  using Reduce<D>::Reduce;
  Array mask(const Array& x, const Array& out) const {
    return astype(equal(x, this->kept(out, x.shape())), x.dtype());
  }
  Arrays jvp(std::span<const Array> p, std::span<const Array> t,
             std::span<const Array> o) const override {
    Array m = mask(p[0], o[0]);
    const Axes ax(this->axes);
    return {divide(sum(multiply(t[0], m), ax), sum(m, ax))};
  }
  Arrays vjp(std::span<const Array> p, std::span<const Array> ct,
             std::span<const Array> o) const override {
    Array m = mask(p[0], o[0]);
    return {multiply(m, divide(this->kept(ct[0], p[0].shape()), sum(m, Axes(this->axes), true)))};
  }
};
struct ReduceMax final : Chooser<ReduceMax> {
  static constexpr const char* kName = "reduce_max";
  using Chooser::Chooser;
  Arrays eval(std::span<const Array> in) const override {
    return {reduce_loop(ReduceOp::max, in[0], axes)};
  }
};
struct ReduceMin final : Chooser<ReduceMin> {
  static constexpr const char* kName = "reduce_min";
  using Chooser::Chooser;
  Arrays eval(std::span<const Array> in) const override {
    return {reduce_loop(ReduceOp::min, in[0], axes)};
  }
};

bool has_zero(const Array& x) {
  return dispatch(x.dtype(), [&]<class T>() {
    const T* p = in_ptr<T>(x);
    return std::any_of(p, p + x.size(), [](T v) { return v == T(0); });
  });
}

// d prod / d x_i = product of the others. Zeros are handled exactly for first derivatives:
// with no zero it is prod / x_i; with one zero only that entry gets the product of the rest;
// with two or more all are 0. (Second derivatives at zeros are not exact; JAX's are.)
struct ReduceProd final : Reduce<ReduceProd> {
  static constexpr const char* kName = "reduce_prod";
  using Reduce::Reduce;
  Arrays eval(std::span<const Array> in) const override {
    return {reduce_loop(ReduceOp::prod, in[0], axes)};
  }
  Array others(const Array& x, const Array& out) const {
    if (!x.is_tracer() && !has_zero(x)) return divide(kept(out, x.shape()), x);
    const Axes ax(axes);
    Array z = equal(x, 0);
    Array zeros = sum(z, ax, true);
    Array safe = where(z, 1, x);
    Array p = prod(safe, ax, true);
    return where(equal(zeros, 0), divide(p, safe), where(logical_and(equal(zeros, 1), z), p, 0));
  }
  Arrays jvp(std::span<const Array> p, std::span<const Array> t,
             std::span<const Array> o) const override {
    return {sum(multiply(t[0], others(p[0], o[0])), Axes(axes))};
  }
  Arrays vjp(std::span<const Array> p, std::span<const Array> ct,
             std::span<const Array> o) const override {
    return {multiply(kept(ct[0], p[0].shape()), others(p[0], o[0]))};
  }
};

struct ReduceAnd final : Reduce<ReduceAnd> {
  static constexpr const char* kName = "reduce_and";
  using Reduce::Reduce;
  bool differentiable() const override { return false; }
  Arrays eval(std::span<const Array> in) const override {
    return {reduce_loop(ReduceOp::all, in[0], axes)};
  }
};
struct ReduceOr final : Reduce<ReduceOr> {
  static constexpr const char* kName = "reduce_or";
  using Reduce::Reduce;
  bool differentiable() const override { return false; }
  Arrays eval(std::span<const Array> in) const override {
    return {reduce_loop(ReduceOp::any, in[0], axes)};
  }
};

// ---- op plumbing ------------------------------------------------------------------------------

template <class P>
Array reduce(const Array& x, const std::vector<int>& axes, bool keepdims) {
  Array r = axes.empty() ? x : bind1(std::make_shared<const P>(axes), {x});
  return keepdims ? reshape(r, kept_shape(x.shape(), axes)) : r;
}

// max/min have no identity: numpy's error for an empty reduction.
void check_nonempty(const Array& x, const std::vector<int>& axes, const char* op) {
  if (!axes.empty() && reduced_count(x.shape(), axes) == 0)
    throw ValueError(std::string(op) + ": zero-size array to reduction operation " + op +
                     " which has no identity (shape " + shape_str(x.shape()) + ", axes " +
                     axes_str(axes) + ")");
}

Array to_float(const Array& x) { return is_inexact(x.dtype()) ? x : astype(x, float32); }

// What a public reduction reduces: bools summed as int32 (numpy's sum/prod), any value tested
// against zero (all/any), or the operand itself.
enum class Operand { as_is, bool_as_int, truth };

// jnp.<op>(x, axis, keepdims) for a reduction primitive P; `no_identity` (max/min) makes an
// empty reduction numpy's error.
template <class P>
Array public_reduce(const char* op, const Array& x, const Axes& axis, bool keepdims, Operand how,
                    bool no_identity = false) {
  check_valid(x, op);
  auto axes = normalize_axes(axis, x.ndim(), op);
  if (no_identity) check_nonempty(x, axes, op);
  const bool is_bool = x.dtype() == bool_;
  Array v = x;
  if (how == Operand::bool_as_int && is_bool) v = astype(x, int32);
  if (how == Operand::truth && !is_bool) v = not_equal(x, 0);
  return reduce<P>(v, axes, keepdims);
}

}  // namespace
}  // namespace detail

using namespace detail;

Array sum(const Array& x, const Axes& axis, bool keepdims) {
  if (x.valid() && is_complex(x.dtype())) return complex_sum(x, axis, keepdims);
  return public_reduce<Sum>("sum", x, axis, keepdims, Operand::bool_as_int);
}

Array mean(const Array& x, const Axes& axis, bool keepdims) {
  check_valid(x, "mean");
  auto axes = normalize_axes(axis, x.ndim(), "mean");
  // As jnp (_upcast_f16): 2-byte floats are averaged in float32 and rounded once.
  if (is_reduced_float(x.dtype()))
    return astype(mean(astype(x, float32), axis, keepdims), x.dtype());
  return sum(to_float(x), axis, keepdims) / static_cast<double>(reduced_count(x.shape(), axes));
}

Array max(const Array& x, const Axes& axis, bool keepdims) {
  return public_reduce<ReduceMax>("max", x, axis, keepdims, Operand::as_is, true);
}

Array min(const Array& x, const Axes& axis, bool keepdims) {
  return public_reduce<ReduceMin>("min", x, axis, keepdims, Operand::as_is, true);
}

Array prod(const Array& x, const Axes& axis, bool keepdims) {
  return public_reduce<ReduceProd>("prod", x, axis, keepdims, Operand::bool_as_int);
}

Array all(const Array& x, const Axes& axis, bool keepdims) {
  return public_reduce<ReduceAnd>("all", x, axis, keepdims, Operand::truth);
}

Array any(const Array& x, const Axes& axis, bool keepdims) {
  return public_reduce<ReduceOr>("any", x, axis, keepdims, Operand::truth);
}

// jnp.var: mean squared deviation with N - ddof in the denominator; NaN where N - ddof <= 0.
Array var(const Array& x, const Axes& axis, bool keepdims, int ddof) {
  check_valid(x, "var");
  auto axes = normalize_axes(axis, x.ndim(), "var");
  if (is_reduced_float(x.dtype()))  // computed in float32, as jnp's var
    return astype(var(astype(x, float32), axis, keepdims, ddof), x.dtype());
  Array xf = to_float(x);
  Array centered = xf - mean(xf, axis, true);
  const double n = static_cast<double>(reduced_count(x.shape(), axes) - ddof);
  // Complex values: numpy's |x - mean|^2, a real variance.
  const Array sq =
      is_complex(centered.dtype()) ? real(centered * conj(centered)) : square(centered);
  Array r = sum(sq, axis, keepdims) / n;
  return n > 0 ? r : where(Array(false), r, std::numeric_limits<double>::quiet_NaN());
}

// The stable form of jax.nn.logsumexp: shift by the (finite) max, which carries no gradient, so
// the gradient is exactly softmax. An empty reduction gives -inf.
Array logsumexp(const Array& x, const Axes& axis, bool keepdims) {
  check_valid(x, "logsumexp");
  auto axes = normalize_axes(axis, x.ndim(), "logsumexp");
  Array xf = to_float(x);
  if (axes.empty()) return xf;
  if (reduced_count(x.shape(), axes) == 0)
    return full(keepdims ? kept_shape(x.shape(), axes) : reduced_shape(x.shape(), axes),
                -std::numeric_limits<double>::infinity(), xf.dtype());
  Array amax = max(stop_gradient(xf), axis, true);
  amax = where(isfinite(amax), amax, 0);
  Array s = log(sum(exp(xf - amax), axis, keepdims));
  return s + (keepdims ? amax : reshape(amax, reduced_shape(x.shape(), axes)));
}

Array softmax(const Array& x, const Axes& axis) {
  check_valid(x, "softmax");
  normalize_axes(axis, x.ndim(), "softmax");
  Array xf = to_float(x);
  if (xf.size() == 0) return xf;
  Array e = exp(xf - max(stop_gradient(xf), axis, true));
  return e / sum(e, axis, true);
}

Array log_softmax(const Array& x, const Axes& axis) {
  check_valid(x, "log_softmax");
  normalize_axes(axis, x.ndim(), "log_softmax");
  Array xf = to_float(x);
  if (xf.size() == 0) return xf;
  Array shifted = xf - max(stop_gradient(xf), axis, true);
  return shifted - log(sum(exp(shifted), axis, true));
}

// jax.nn.one_hot: labels == arange(num_classes) along a new last axis; out-of-range labels give
// an all-zero row.
Array one_hot(const Array& labels, std::int64_t num_classes, DType dtype) {
  check_valid(labels, "one_hot");
  if (num_classes < 0)
    throw ValueError("one_hot: num_classes must be non-negative, got " +
                     std::to_string(num_classes));
  Array classes = arange(num_classes, is_floating(labels.dtype()) ? labels.dtype() : int32);
  return astype(equal(expand_dims(labels, -1), classes), dtype);
}

}  // namespace linum
