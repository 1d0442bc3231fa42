// The loops of the reduction primitives: one fold per monoid (sum, prod, max, min, and, or)
// over the reduced axes, with the axes grouped into a few long runs, SIMD rows, pairwise float
// sums and float64 accumulation of long float32 columns, so that sums round as XLA's do.
#include <algorithm>
#include <cmath>
#include <limits>

#include <linum/autodiff/ops/simd.hpp>

#include <linum/autodiff/ops/reduction_util.hpp>

namespace linum::detail {
namespace {

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
Array reduce_with(const Array& x, const std::vector<int>& axes) {
  Array out = empty(reduced_shape(x.shape(), axes), x.dtype());
  dispatch(x.dtype(),
           [&]<class T>() { reduce_kernel<R<T>>(in_ptr<T>(x), x.shape(), axes, out_ptr<T>(out)); });
  return out;
}

}  // namespace

Array reduce_loop(ReduceOp op, const Array& x, const std::vector<int>& axes) {
  switch (op) {
    case ReduceOp::sum: return reduce_with<SumR>(x, axes);
    case ReduceOp::prod: return reduce_with<ProdR>(x, axes);
    case ReduceOp::max: return reduce_with<MaxR>(x, axes);
    case ReduceOp::min: return reduce_with<MinR>(x, axes);
    case ReduceOp::all: return reduce_with<AndR>(x, axes);
    case ReduceOp::any: return reduce_with<OrR>(x, axes);
  }
  throw ValueError("reduce_loop: unknown reduction");
}

}  // namespace linum::detail
