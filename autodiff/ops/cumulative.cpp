// Cumulative reductions: one primitive whose kernel accumulates along an axis in order, and
// lax.associative_scan. As in JAX, cumsum is linear (its transpose is the reversed cumsum) and
// the other reductions differentiate through associative_scan with their combiner, which keeps
// cumprod's gradient exact where the input has zeros.
#include <linum/autodiff/ops/cumulative.hpp>

#include <cmath>
#include <functional>
#include <limits>

#include <linum/autodiff/ops/index_util.hpp>
#include <linum/autodiff/ops/manipulation.hpp>
#include <linum/autodiff/transforms.hpp>

namespace linum {
namespace detail {
namespace {

enum class CumOp { sum, prod, max, min, logsumexp };

const char* cum_name(CumOp op) {
  switch (op) {
    case CumOp::sum: return "cumsum";
    case CumOp::prod: return "cumprod";
    case CumOp::max: return "cummax";
    case CumOp::min: return "cummin";
    case CumOp::logsumexp: return "cumlogsumexp";
  }
  return "cumsum";
}

// The elementwise combiner of each reduction, as linum ops (for associative_scan).
Array combine(CumOp op, const Array& a, const Array& b) {
  switch (op) {
    case CumOp::sum: return add(a, b);
    case CumOp::prod: return multiply(a, b);
    case CumOp::max: return maximum(a, b);
    case CumOp::min: return minimum(a, b);
    case CumOp::logsumexp: return logaddexp(a, b);
  }
  return add(a, b);
}

// The same combiner on scalars, for the kernel (NaN propagates through max and min as lax's).
template <class T>
T combine_scalar(CumOp op, T acc, T x) {
  switch (op) {
    case CumOp::sum: return static_cast<T>(acc + x);
    case CumOp::prod: return static_cast<T>(acc * x);
    case CumOp::max: return (acc != acc || x != x) ? (acc != acc ? acc : x) : (x > acc ? x : acc);
    case CumOp::min: return (acc != acc || x != x) ? (acc != acc ? acc : x) : (x < acc ? x : acc);
    case CumOp::logsumexp:
      if constexpr (std::is_floating_point_v<T>) {
        // JAX's logaddexp: amax + log1p(exp(-|a - b|)), and a + b where a - b is NaN (infinities
        // of equal sign, or a NaN).
        const T delta = acc - x;
        if (delta != delta) return acc + x;
        return std::max(acc, x) + std::log1p(std::exp(-std::abs(delta)));
      }
      return x;
  }
  return x;
}

Array cumulative_bind(CumOp op, const Array& x, int axis, bool reverse);

struct Cumulative final : Primitive {
  CumOp op;
  int axis;
  bool reverse;
  Cumulative(CumOp o, int a, bool r) : op(o), axis(a), reverse(r) {}
  const char* name() const override { return cum_name(op); }
  Avals abstract_eval(std::span<const ShapeDtype> in) const override { return {in[0]}; }
  void print_params(std::ostream& os) const override {
    os << "axis=" << axis << " reverse=" << (reverse ? "true" : "false");
  }
  bool vjp_reads_input(std::size_t) const override { return op != CumOp::sum; }
  bool vjp_reads_output(std::size_t) const override { return false; }
  Arrays eval(std::span<const Array> in) const override {
    const Array& x = in[0];
    Array out = empty(x.shape(), x.dtype());
    const Shape& s = x.shape();
    std::int64_t outer = 1, inner = 1;
    for (int a = 0; a < axis; ++a) outer *= s[a];
    for (std::size_t a = axis + 1; a < s.size(); ++a) inner *= s[a];
    const std::int64_t n = s[axis];
    dispatch(x.dtype(), [&]<class T>() {
      const T* p = in_ptr<T>(x);
      T* o = out_ptr<T>(out);
      for (std::int64_t r = 0; r < outer; ++r)
        for (std::int64_t q = 0; q < inner; ++q) {
          const std::int64_t base = r * n * inner + q;
          for (std::int64_t k = 0; k < n; ++k) {
            const std::int64_t i = base + (reverse ? n - 1 - k : k) * inner;
            o[i] = k == 0 ? p[i] : combine_scalar<T>(op, o[i + (reverse ? inner : -inner)], p[i]);
          }
        }
    });
    return {out};
  }
  // JAX's rule for the non-linear reductions: the derivative of associative_scan(combiner).
  Array scan(const Array& x) const {
    return associative_scan([this](const Array& a, const Array& b) { return combine(op, a, b); }, x,
                            reverse, axis);
  }
  Arrays jvp(std::span<const Array> p, std::span<const Array> t,
             std::span<const Array>) const override {
    if (!t[0].valid()) return {Array()};
    if (op == CumOp::sum) return {cumulative_bind(op, t[0], axis, reverse)};
    return {
        linum::jvp([this](const Array& x) { return scan(x); }, std::tuple{p[0]}, std::tuple{t[0]})
            .second};
  }
  Arrays vjp(std::span<const Array> p, std::span<const Array> ct,
             std::span<const Array>) const override {
    if (!ct[0].valid()) return {Array()};
    if (op == CumOp::sum) return {cumulative_bind(op, ct[0], axis, !reverse)};
    auto [y, pull] = linum::vjp([this](const Array& x) { return scan(x); }, p[0]);
    return {std::get<0>(pull(ct[0]))};
  }
  Batched vmap(std::span<const Array> in, std::span<const int> bdims) const override {
    return {{cumulative_bind(op, move_bdim(in[0], bdims[0], 0, 0), axis + 1, reverse)}, {0}};
  }
};

Array cumulative_bind(CumOp op, const Array& x, int axis, bool reverse) {
  return bind1(std::make_shared<const Cumulative>(op, axis, reverse), {x});
}

Array lax_cumulative(CumOp op, const Array& x, int axis, bool reverse) {
  const char* name = cum_name(op);
  check_valid(x, name);
  if (x.dtype() == bool_ || (op == CumOp::logsumexp && !is_floating(x.dtype())))
    throw TypeError(std::string(name) + " does not accept dtype " +
                    std::string(dtype_name(x.dtype())) + ". Accepted dtypes are subtypes of " +
                    (op == CumOp::logsumexp ? "floating" : "number") + ".");
  if (x.ndim() == 0)
    throw ValueError(std::string(name) + ": the operand must have at least one dimension");
  const int a = normalize_axis(axis, x.ndim(), name);
  if (x.shape()[a] == 0) return x;
  return cumulative_bind(op, x, a, reverse);
}

// jnp's wrapper: flatten for axis=None, accumulate in dtype (bool in int32), NaN replaced by
// nan_as when given.
Array jnp_cumulative(CumOp op, const char* name, const Array& a, std::optional<int> axis,
                     std::optional<DType> dtype, std::optional<double> nan_as = std::nullopt) {
  check_valid(a, name);
  Array x = (!axis || a.ndim() == 0) ? ravel(a) : a;
  const int ax = axis ? normalize_axis(*axis, x.ndim(), name) : 0;
  if (nan_as && is_floating(x.dtype())) x = where(isnan(x), full({}, *nan_as, x.dtype()), x);
  DType result = dtype.value_or(x.dtype() == bool_ ? int32 : x.dtype());
  DType compute = result;
  if (result == bool_) {  // bool output: accumulate whether entries are nonzero, in int32
    if (x.dtype() != bool_) x = not_equal(x, zeros({}, x.dtype()));
    compute = int32;
  }
  x = astype(x, compute);
  if (x.shape()[ax] == 0) return astype(x, result);
  return astype(cumulative_bind(op, x, ax, false), result);
}

Array with_initial(const Array& out, int axis, double identity) {
  Shape s = out.shape();
  s[axis] = 1;
  return concatenate({full(s, identity, out.dtype()), out}, axis);
}

Array jnp_cumulative_fn(CumOp op, const char* name, const Array& x, std::optional<int> axis,
                        std::optional<DType> dtype, bool include_initial) {
  check_valid(x, name);
  if (x.ndim() == 0)
    throw ValueError(std::string(name) +
                     ": the input must be non-scalar to take a cumulative reduction, however a "
                     "scalar value or scalar array was given");
  if (!axis && x.ndim() > 1)
    throw ValueError(std::string(name) + ": the input array has rank " + std::to_string(x.ndim()) +
                     ", however axis was not set to an explicit value. The axis argument is only "
                     "optional for one-dimensional arrays");
  const int ax = normalize_axis(axis.value_or(0), x.ndim(), name);
  Array out = jnp_cumulative(op, name, x, ax, dtype);
  return include_initial ? with_initial(out, ax, op == CumOp::sum ? 0 : 1) : out;
}

// [a0, b0, a1, b1, ...] along axis, a having as many entries as b or one more.
Array interleave(const Array& a, const Array& b, int axis) {
  const std::int64_t na = a.shape()[axis], nb = b.shape()[axis];
  if (na == nb + 1)
    return concatenate({interleave(slice_in_dim(a, 0, nb, axis), b, axis),
                        slice_in_dim(a, nb, std::nullopt, axis)},
                       axis);
  Shape s = a.shape();
  s[axis] = na + nb;
  return reshape(stack({a, b}, axis + 1), s);
}

}  // namespace
}  // namespace detail

using namespace detail;

Array cumsum(const Array& a, std::optional<int> axis, std::optional<DType> dtype) {
  return jnp_cumulative(CumOp::sum, "cumsum", a, axis, dtype);
}
Array cumprod(const Array& a, std::optional<int> axis, std::optional<DType> dtype) {
  return jnp_cumulative(CumOp::prod, "cumprod", a, axis, dtype);
}
Array nancumsum(const Array& a, std::optional<int> axis, std::optional<DType> dtype) {
  return jnp_cumulative(CumOp::sum, "nancumsum", a, axis, dtype, 0.0);
}
Array nancumprod(const Array& a, std::optional<int> axis, std::optional<DType> dtype) {
  return jnp_cumulative(CumOp::prod, "nancumprod", a, axis, dtype, 1.0);
}
Array cumulative_sum(const Array& x, std::optional<int> axis, std::optional<DType> dtype,
                     bool include_initial) {
  return jnp_cumulative_fn(CumOp::sum, "cumulative_sum", x, axis, dtype, include_initial);
}
Array cumulative_prod(const Array& x, std::optional<int> axis, std::optional<DType> dtype,
                      bool include_initial) {
  return jnp_cumulative_fn(CumOp::prod, "cumulative_prod", x, axis, dtype, include_initial);
}

Array lax_cumsum(const Array& x, int axis, bool reverse) {
  return lax_cumulative(CumOp::sum, x, axis, reverse);
}
Array lax_cumprod(const Array& x, int axis, bool reverse) {
  return lax_cumulative(CumOp::prod, x, axis, reverse);
}
Array cummax(const Array& x, int axis, bool reverse) {
  return lax_cumulative(CumOp::max, x, axis, reverse);
}
Array cummin(const Array& x, int axis, bool reverse) {
  return lax_cumulative(CumOp::min, x, axis, reverse);
}
Array cumlogsumexp(const Array& x, int axis, bool reverse) {
  return lax_cumulative(CumOp::logsumexp, x, axis, reverse);
}

Arrays associative_scan(ScanFn<Arrays> fn, const Arrays& elems, bool reverse, int axis) {
  if (elems.empty()) return {};
  for (const Array& e : elems) check_valid(e, "associative_scan");
  const int ax = normalize_axis(axis, elems[0].ndim(), "associative_scan");
  const std::int64_t n = elems[0].shape()[ax];
  for (const Array& e : elems)
    if (e.ndim() <= ax || e.shape()[ax] != n)
      throw ValueError("associative_scan: array inputs must have the same length " +
                       std::to_string(n) + " along axis " + std::to_string(ax) + ", got shape " +
                       shape_str(e.shape()));
  auto call = [&](const Arrays& a, const Arrays& b) {
    Arrays c = fn(a, b);
    if (c.size() != a.size())
      throw ValueError("associative_scan: fn returned " + std::to_string(c.size()) +
                       " arrays for " + std::to_string(a.size()) + " inputs");
    return c;
  };
  auto each = [](const Arrays& xs, auto f) {
    Arrays r;
    for (const Array& x : xs) r.push_back(f(x));
    return r;
  };
  // JAX's recursion: scan the pairwise-combined half, then fill in the even positions.
  std::function<Arrays(const Arrays&)> scan = [&](const Arrays& es) -> Arrays {
    const std::int64_t m = es[0].shape()[ax];
    if (m < 2) return es;
    const Arrays reduced =
        call(each(es, [&](const Array& e) { return slice_in_dim(e, 0, -1, ax, 2); }),
             each(es, [&](const Array& e) { return slice_in_dim(e, 1, std::nullopt, ax, 2); }));
    const Arrays odd = scan(reduced);
    const Arrays rest =
        each(es, [&](const Array& e) { return slice_in_dim(e, 2, std::nullopt, ax, 2); });
    Arrays even =
        m % 2 == 0
            ? call(each(odd, [&](const Array& e) { return slice_in_dim(e, 0, -1, ax); }), rest)
            : call(odd, rest);
    Arrays out;
    for (std::size_t i = 0; i < es.size(); ++i)
      out.push_back(
          interleave(concatenate({slice_in_dim(es[i], 0, 1, ax), even[i]}, ax), odd[i], ax));
    return out;
  };
  Arrays xs = reverse ? each(elems, [&](const Array& e) { return flip(e, ax); }) : elems;
  Arrays r = scan(xs);
  return reverse ? each(r, [&](const Array& e) { return flip(e, ax); }) : r;
}

Array associative_scan(ScanFn<Array> fn, const Array& elems, bool reverse, int axis) {
  auto pairwise = [&](const Arrays& a, const Arrays& b) { return Arrays{fn(a[0], b[0])}; };
  return associative_scan(pairwise, Arrays{elems}, reverse, axis)[0];
}

}  // namespace linum
