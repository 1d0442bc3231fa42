// Reduction primitives (kernel, JVP, VJP, batching rule together) and the ops built on them:
// sum/mean/max/min/prod/all/any/var, argmax/argmin, and the jax.nn functions logsumexp,
// softmax, log_softmax and one_hot.
#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include <linum/autodiff/ops/simd.hpp>

#include <linum/autodiff/ops/complex_arith.hpp>
#include <linum/autodiff/ops/kernel_util.hpp>

namespace linum {
namespace detail {
namespace {

std::string axes_str(const std::vector<int>& axes) {
  Shape s(axes.begin(), axes.end());
  return shape_str(s);
}

// Output shape of reducing `axes` (sorted, unique) away.
Shape reduced_shape(const Shape& s, const std::vector<int>& axes) {
  Shape r;
  for (int i = 0, j = 0; i < static_cast<int>(s.size()); ++i) {
    if (j < static_cast<int>(axes.size()) && axes[j] == i)
      ++j;
    else
      r.push_back(s[i]);
  }
  return r;
}

// The shape with reduced axes kept as 1, for broadcasting a reduced value back.
Shape kept_shape(const Shape& s, const std::vector<int>& axes) {
  Shape r = s;
  for (int a : axes) r[a] = 1;
  return r;
}

std::int64_t reduced_count(const Shape& s, const std::vector<int>& axes) {
  std::int64_t n = 1;
  for (int a : axes) n *= s[a];
  return n;
}

// Batching rule shared by reductions: per-example axes shift past the batch axis.
std::pair<std::vector<int>, int> batch_axes(const std::vector<int>& axes, int bdim) {
  std::vector<int> r;
  int out_bdim = bdim;
  for (int a : axes) {
    r.push_back(a >= bdim ? a + 1 : a);
    if (a < bdim) --out_bdim;
  }
  return {r, out_bdim};
}

// ---- kernels --------------------------------------------------------------------------------

// Adjacent axes that are both reduced or both kept merge, and size-1 axes drop out, so that a
// reduction sees a few alternating groups: the last axis of (B, T, D) is (B*T rows) x D, and the
// leading axes of (B, T, D) are B*T blocks of D (bias gradients) -- each one tight loop.
struct Groups {
  std::vector<std::int64_t> dims;
  std::vector<char> red;
};
Groups group_axes(const Shape& xs, const std::vector<int>& axes) {
  Groups g;
  for (int d = 0, k = 0; d < static_cast<int>(xs.size()); ++d) {
    const bool r = k < static_cast<int>(axes.size()) && axes[k] == d;
    if (r) ++k;
    if (xs[d] == 1) continue;
    if (!g.dims.empty() && g.red.back() == r)
      g.dims.back() *= xs[d];
    else {
      g.dims.push_back(xs[d]);
      g.red.push_back(r);
    }
  }
  return g;
}

// out[0..k) = R::step folded over nr contiguous rows of k elements. Narrow rows (bias gradients
// of a few features) are read as one flat window of several rows, so the per-row overhead
// vanishes; wide rows are read four at a time.
template <class R, class T>
void reduce_cols(const T* x, std::int64_t nr, std::int64_t k, typename R::Acc* out) {
  using Acc = typename R::Acc;
  if constexpr (requires { typename R::Wide::Acc; }) {
    // Long float32 columns add up in float64: left to right in float32, the sum over 2^24 rows of
    // 0.1f was off by 1.7%. Short ones stay float32 so they round as XLA's (Flax's printed sums).
    if (nr > 256) {
      using W = typename R::Wide;
      thread_local std::vector<typename W::Acc> wide;
      wide.assign(static_cast<std::size_t>(k), W::init());
      reduce_cols<W>(x, nr, k, wide.data());
      for (std::int64_t i = 0; i < k; ++i) out[i] = R::combine(out[i], static_cast<Acc>(wide[i]));
      return;
    }
  }
  constexpr std::int64_t kWindow = 64;
  std::int64_t r = 0;
  if (k < kWindow) {
    const std::int64_t m = kWindow / k, w = m * k;  // m rows per window
    if (nr >= 2 * m) {
      Acc acc[kWindow];
      std::fill(acc, acc + w, R::init());
      for (; r + m <= nr; r += m) {
        const T* a = x + r * k;
        for (std::int64_t i = 0; i < w; ++i) acc[i] = R::step(acc[i], a[i]);
      }
      for (std::int64_t j = 0; j < m; ++j)
        for (std::int64_t i = 0; i < k; ++i) out[i] = R::combine(out[i], acc[j * k + i]);
    }
  } else {
    for (; r + 4 <= nr; r += 4) {
      const T* __restrict a = x + r * k;
      Acc* __restrict o = out;
      for (std::int64_t i = 0; i < k; ++i)
        o[i] = R::step(R::step(R::step(R::step(o[i], a[i]), a[k + i]), a[2 * k + i]), a[3 * k + i]);
    }
  }
  for (; r < nr; ++r) {
    const T* __restrict a = x + r * k;
    Acc* __restrict o = out;
    for (std::int64_t i = 0; i < k; ++i) o[i] = R::step(o[i], a[i]);
  }
}

// out[kept] = R::step folded over the reduced axes, starting from R::init(). R::row reduces one
// contiguous run; R::combine merges a partial result into an output slot.
template <class R, class T>
void reduce_kernel(const T* x, const Shape& xs, const std::vector<int>& axes,
                   typename R::Acc* out) {
  const std::int64_t no = shape_size(reduced_shape(xs, axes)), n = shape_size(xs);
  std::fill(out, out + no, R::init());
  if (n == 0) return;
  const Groups g = group_axes(xs, axes);
  const int ng = static_cast<int>(g.dims.size());
  if (ng == 0) {  // a single element
    out[0] = R::step(R::init(), x[0]);
    return;
  }
  std::vector<std::int64_t> ost(ng, 0);  // output strides of the groups (0 for reduced ones)
  for (std::int64_t i = ng, acc = 1; i-- > 0;)
    if (!g.red[i]) {
      ost[i] = acc;
      acc *= g.dims[i];
    }
  // Each block is one reduced row (..., K, R), one reduced-then-kept panel (..., R, K), or a
  // kept run when every reduced axis has size 1.
  const std::int64_t inner = g.dims[ng - 1];
  const bool rows = g.red[ng - 1], panel = !rows && ng >= 2;
  const std::int64_t nr = panel ? g.dims[ng - 2] : 1, block = nr * inner;
  const int outer = ng - (panel ? 2 : 1);
  std::vector<std::int64_t> idx(ng, 0);
  std::int64_t off = 0;
  for (std::int64_t base = 0; base < n; base += block) {
    if (rows)
      out[off] = R::combine(out[off], R::row(x + base, inner));
    else
      reduce_cols<R>(x + base, nr, inner, out + off);
    for (int d = outer - 1; d >= 0; --d) {  // odometer over the outer groups
      off += ost[d];
      if (++idx[d] < g.dims[d]) break;
      off -= ost[d] * g.dims[d];
      idx[d] = 0;
    }
  }
}

// Integer sums and products wrap (as XLA's) without signed-overflow UB.
template <class T>
T wrap_add(T a, T b) {
  if constexpr (std::is_integral_v<T>)
    return static_cast<T>(static_cast<std::uint32_t>(a) + static_cast<std::uint32_t>(b));
  else
    return a + b;
}
template <class T>
T wrap_mul(T a, T b) {
  if constexpr (std::is_integral_v<T>)
    return static_cast<T>(static_cast<std::uint32_t>(a) * static_cast<std::uint32_t>(b));
  else
    return a * b;
}

template <class T>
struct SumR {
  using Acc = T;
  // The reduction its column path (reduce_cols) runs in: float64 for float32.
  using Wide = std::conditional_t<std::is_same_v<T, float>, SumR<double>, void>;
  static T init() { return T(0); }
  static T step(T a, T v) { return wrap_add(a, v); }
  static T combine(T a, T b) { return wrap_add(a, b); }
  // Pairwise above a block of 256 (16 adds per SIMD lane): the rounding error grows with log n,
  // not n (the mean of 2^25 copies of 0.1f was off by 1.7% when summed left to right).
  static T row(const T* x, std::int64_t n) {
    if constexpr (std::is_floating_point_v<T>) {
      constexpr std::int64_t kBlock = 256;
      if (n > kBlock) {
        const std::int64_t h = (n / 2 + kBlock - 1) / kBlock * kBlock;
        return row(x, h) + row(x + h, n - h);
      }
    }
    return row_block(x, n);
  }
  // Not inlined into row()'s recursion, where GCC cannot see the bound on n and warns.
  [[gnu::noinline]] static T row_block(const T* x, std::int64_t n) {
    std::int64_t i = 0;
    T s = 0;
    if constexpr (std::is_floating_point_v<T>) {  // two SIMD accumulators, float32 stays float32
      using B = xsimd::batch<T>;
      constexpr std::int64_t w = B::size;
      if (n >= 2 * w) {
        B a0(T(0)), a1(T(0));
        for (; i + 2 * w <= n; i += 2 * w) {
          a0 += B::load_unaligned(x + i);
          a1 += B::load_unaligned(x + i + w);
        }
        s = xsimd::hadd(a0 + a1);
      }
    }
    for (; i < n; ++i) s = wrap_add(s, x[i]);
    return s;
  }
};

template <class T>
struct ProdR {
  using Acc = T;
  static T init() { return T(1); }
  static T step(T a, T v) { return wrap_mul(a, v); }
  static T combine(T a, T b) { return wrap_mul(a, b); }
  static T row(const T* x, std::int64_t n) {
    T p = 1;
    for (std::int64_t i = 0; i < n; ++i) p = wrap_mul(p, x[i]);
    return p;
  }
};

// max/min propagate NaN, as XLA's reduce_max.
template <class T, bool IsMax>
struct ChooseR {
  using Acc = T;
  static T init() {
    if constexpr (std::is_floating_point_v<T>)
      return IsMax ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::infinity();
    else
      return IsMax ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
  }
  static T step(T a, T v) {
    if (a != a) return a;
    if (v != v) return v;
    return (IsMax ? v > a : v < a) ? v : a;
  }
  static T combine(T a, T b) { return step(a, b); }
  static T row(const T* x, std::int64_t n) {
    std::int64_t i = 0;
    T r = init();
    if constexpr (std::is_floating_point_v<T>) {  // SIMD max with the NaNs tracked on the side
      using B = xsimd::batch<T>;
      constexpr std::int64_t w = B::size;
      if (n >= w) {
        B acc(init());
        auto nan = xsimd::isnan(acc);  // (v != v is an ordered compare in xsimd: false for NaN)
        for (; i + w <= n; i += w) {
          const B v = B::load_unaligned(x + i);
          nan = nan | xsimd::isnan(v);
          acc = IsMax ? xsimd::max(acc, v) : xsimd::min(acc, v);
        }
        if (xsimd::any(nan)) return std::numeric_limits<T>::quiet_NaN();
        alignas(64) T lanes[w];
        acc.store_aligned(lanes);
        for (std::int64_t k = 0; k < w; ++k) r = step(r, lanes[k]);
      }
    }
    for (; i < n; ++i) r = step(r, x[i]);
    return r;
  }
};
template <class T>
using MaxR = ChooseR<T, true>;
template <class T>
using MinR = ChooseR<T, false>;

template <class T>
struct AndR {
  using Acc = T;
  static T init() { return T(1); }
  static T step(T a, T v) { return a && v; }
  static T combine(T a, T b) { return a && b; }
  static T row(const T* x, std::int64_t n) {
    for (std::int64_t i = 0; i < n; ++i)
      if (!x[i]) return 0;
    return 1;
  }
};
template <class T>
struct OrR {
  using Acc = T;
  static T init() { return T(0); }
  static T step(T a, T v) { return a || v; }
  static T combine(T a, T b) { return a || b; }
  static T row(const T* x, std::int64_t n) {
    for (std::int64_t i = 0; i < n; ++i)
      if (x[i]) return 1;
    return 0;
  }
};

template <template <class> class R>
Array run_reduce(const Array& x, const std::vector<int>& axes) {
  Array out = empty(reduced_shape(x.shape(), axes), x.dtype());
  dispatch(x.dtype(),
           [&]<class T>() { reduce_kernel<R<T>>(in_ptr<T>(x), x.shape(), axes, out_ptr<T>(out)); });
  return out;
}

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

  Arrays eval(std::span<const Array> in) const override { return {run_reduce<SumR>(in[0], axes)}; }
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
  Arrays eval(std::span<const Array> in) const override { return {run_reduce<MaxR>(in[0], axes)}; }
};
struct ReduceMin final : Chooser<ReduceMin> {
  static constexpr const char* kName = "reduce_min";
  using Chooser::Chooser;
  Arrays eval(std::span<const Array> in) const override { return {run_reduce<MinR>(in[0], axes)}; }
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
  Arrays eval(std::span<const Array> in) const override { return {run_reduce<ProdR>(in[0], axes)}; }
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
  Arrays eval(std::span<const Array> in) const override { return {run_reduce<AndR>(in[0], axes)}; }
};
struct ReduceOr final : Reduce<ReduceOr> {
  static constexpr const char* kName = "reduce_or";
  using Reduce::Reduce;
  bool differentiable() const override { return false; }
  Arrays eval(std::span<const Array> in) const override { return {run_reduce<OrR>(in[0], axes)}; }
};

// argmax/argmin over one axis as numpy: the first extremum, and the first NaN if there is one.
template <class T, bool IsMax>
void arg_kernel(const T* x, std::int64_t outer, std::int64_t n, std::int64_t inner,
                std::int32_t* out) {
  auto better = [](T v, T best) {
    if (best != best) return false;
    if (v != v) return true;
    return IsMax ? v > best : v < best;
  };
  if (inner == 1) {
    for (std::int64_t o = 0; o < outer; ++o) {
      const T* r = x + o * n;
      std::int32_t bi = 0;
      T b = r[0];
      for (std::int64_t i = 1; i < n; ++i)
        if (better(r[i], b)) {
          b = r[i];
          bi = static_cast<std::int32_t>(i);
        }
      out[o] = bi;
    }
    return;
  }
  std::vector<T> best(inner);  // the running extremum of each column, read row by row
  for (std::int64_t o = 0; o < outer; ++o) {
    const T* blk = x + o * n * inner;
    std::int32_t* oi = out + o * inner;
    std::copy(blk, blk + inner, best.begin());
    std::fill(oi, oi + inner, 0);
    for (std::int64_t i = 1; i < n; ++i) {
      const T* row = blk + i * inner;
      for (std::int64_t j = 0; j < inner; ++j)
        if (better(row[j], best[j])) {
          best[j] = row[j];
          oi[j] = static_cast<std::int32_t>(i);
        }
    }
  }
}

struct ArgChoose final : Primitive {
  int axis;
  bool is_max;
  ArgChoose(int a, bool m) : axis(a), is_max(m) {}
  const char* name() const override { return is_max ? "argmax" : "argmin"; }
  Avals abstract_eval(std::span<const ShapeDtype> in) const override {
    return {{reduced_shape(in[0].shape, {axis}), int32}};
  }
  bool weak_type_rule(bool) const override { return false; }  // indices are never weak
  void print_params(std::ostream& os) const override {
    os << "axes=(" << axis << ",) index_dtype=int32";
  }
  bool differentiable() const override { return false; }
  Arrays eval(std::span<const Array> in) const override {
    const Array& x = in[0];
    const Shape& xs = x.shape();
    Array out = empty(reduced_shape(xs, {axis}), int32);
    std::int64_t outer = 1, inner = 1;
    for (int d = 0; d < axis; ++d) outer *= xs[d];
    for (int d = axis + 1; d < x.ndim(); ++d) inner *= xs[d];
    if (out.size() == 0) return {out};
    dispatch(x.dtype(), [&]<class T>() {
      if (is_max)
        arg_kernel<T, true>(in_ptr<T>(x), outer, xs[axis], inner, out_ptr<std::int32_t>(out));
      else
        arg_kernel<T, false>(in_ptr<T>(x), outer, xs[axis], inner, out_ptr<std::int32_t>(out));
    });
    return {out};
  }
  Batched vmap(std::span<const Array> in, std::span<const int> bdims) const override {
    auto [a, ob] = batch_axes({axis}, bdims[0]);
    return {{bind1(std::make_shared<const ArgChoose>(a[0], is_max), {in[0]})}, {ob}};
  }
};

// ---- op plumbing ------------------------------------------------------------------------------

template <class P>
Array reduce(const Array& x, const std::vector<int>& axes, bool keepdims) {
  Array r = axes.empty() ? x : bind1(std::make_shared<const P>(axes), {x});
  return keepdims ? reshape(r, kept_shape(x.shape(), axes)) : r;
}

// max/min/argmax have no identity: numpy's error for an empty reduction.
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

Array arg_reduce(const Array& x, std::optional<int> axis, bool keepdims, bool is_max) {
  const char* op = is_max ? "argmax" : "argmin";
  check_valid(x, op);
  const int a = axis ? normalize_axis(*axis, x.ndim(), op) : 0;
  Array v = axis ? x : reshape(x, {-1});
  if (v.shape()[a] == 0)
    throw ValueError(std::string(op) + ": attempt to get " + op + " of an empty sequence (shape " +
                     shape_str(x.shape()) + ")");
  Array r = bind1(std::make_shared<const ArgChoose>(a, is_max), {v});
  if (!keepdims) return r;
  return reshape(r, axis ? kept_shape(x.shape(), {a}) : Shape(x.shape().size(), 1));
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
  Array xf = to_float(x);
  Array centered = xf - mean(xf, axis, true);
  const double n = static_cast<double>(reduced_count(x.shape(), axes) - ddof);
  // Complex values: numpy's |x - mean|^2, a real variance.
  const Array sq = is_complex(centered.dtype()) ? real(centered * conj(centered)) : square(centered);
  Array r = sum(sq, axis, keepdims) / n;
  return n > 0 ? r : where(Array(false), r, std::numeric_limits<double>::quiet_NaN());
}

Array argmax(const Array& x, std::optional<int> axis, bool keepdims) {
  return arg_reduce(x, axis, keepdims, true);
}
Array argmin(const Array& x, std::optional<int> axis, bool keepdims) {
  return arg_reduce(x, axis, keepdims, false);
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
