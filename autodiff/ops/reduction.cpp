// Reduction primitives (kernel, JVP, VJP, batching rule together) and the ops built on them.
#include <linum/autodiff/ops/kernel_util.hpp>

#include <sstream>

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
    if (j < static_cast<int>(axes.size()) && axes[j] == i) ++j;
    else r.push_back(s[i]);
  }
  return r;
}

// The shape with reduced axes kept as 1, for broadcasting a reduced value back.
Shape kept_shape(const Shape& s, const std::vector<int>& axes) {
  Shape r = s;
  for (int a : axes) r[a] = 1;
  return r;
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

// Visits x as (outer, reduced, inner) blocks after grouping: a generic strided reduction that
// handles any axis set with an odometer over the kept axes.
template <class T, class Acc, class Init, class Step>
void reduce_kernel(const T* x, const Shape& xs, const std::vector<int>& axes, Acc* out, Init init,
                   Step step) {
  const int nd = static_cast<int>(xs.size());
  const Shape os = reduced_shape(xs, axes);
  const std::int64_t no = shape_size(os);
  for (std::int64_t i = 0; i < no; ++i) out[i] = init;
  if (shape_size(xs) == 0) return;
  // Output strides placed on the input's axes (0 on reduced axes).
  std::vector<std::int64_t> ost(nd, 0);
  {
    auto st = strides_of(os);
    for (int d = 0, j = 0, k = 0; d < nd; ++d) {
      if (k < static_cast<int>(axes.size()) && axes[k] == d) ++k;
      else ost[d] = st[j++];
    }
  }
  const std::int64_t inner = xs[nd - 1], oi = ost[nd - 1];
  std::vector<std::int64_t> idx(nd, 0);
  std::int64_t off = 0;
  const std::int64_t n = shape_size(xs);
  for (std::int64_t base = 0; base < n; base += inner) {
    if (oi == 0) {
      Acc acc = out[off];
      for (std::int64_t i = 0; i < inner; ++i) acc = step(acc, x[base + i]);
      out[off] = acc;
    } else {
      for (std::int64_t i = 0; i < inner; ++i) out[off + i] = step(out[off + i], x[base + i]);
    }
    for (int d = nd - 2; d >= 0; --d) {
      off += ost[d];
      if (++idx[d] < xs[d]) break;
      off -= ost[d] * xs[d];
      idx[d] = 0;
    }
  }
}

struct Sum final : Primitive {
  std::vector<int> axes;  // sorted, unique, non-negative
  explicit Sum(std::vector<int> a) : axes(std::move(a)) {}
  const char* name() const override { return "reduce_sum"; }
  void print_params(std::ostream& os) const override { os << "axes=" << axes_str(axes); }
  Arrays eval(std::span<const Array> in) const override {
    const Array& x = in[0];
    Array out = empty(reduced_shape(x.shape(), axes), x.dtype());
    dispatch(x.dtype(), [&]<class T>() {
      // float32 accumulates in float32 per output slot, as XLA does on CPU.
      using Acc = std::conditional_t<std::is_same_v<T, std::uint8_t>, std::int32_t, T>;
      if constexpr (std::is_same_v<T, std::uint8_t>) {
        throw TypeError("reduce_sum: bool arrays are summed after astype(int32)");
      } else {
        reduce_kernel<T, Acc>(in_ptr<T>(x), x.shape(), axes, out_ptr<T>(out), Acc(0),
                              [](Acc a, T v) { return static_cast<Acc>(a + v); });
      }
    });
    return {out};
  }
  Arrays jvp(std::span<const Array>, std::span<const Array> t, std::span<const Array>) const override {
    return {sum(t[0], Axes(axes))};
  }
  Arrays vjp(std::span<const Array> p, std::span<const Array> ct, std::span<const Array>) const override {
    return {broadcast_to(reshape(ct[0], kept_shape(p[0].shape(), axes)), p[0].shape())};
  }
  Batched vmap(std::span<const Array> in, std::span<const int> bdims) const override {
    auto [a, ob] = batch_axes(axes, bdims[0]);
    return {{sum(in[0], Axes(a))}, {ob}};
  }
};

}  // namespace
}  // namespace detail

using namespace detail;

Array sum(const Array& x, const Axes& axis, bool keepdims) {
  check_valid(x, "sum");
  auto axes = normalize_axes(axis, x.ndim(), "sum");
  Array y = x.dtype() == bool_ ? astype(x, int32) : x;
  Array r = axes.empty() ? y : bind1(std::make_shared<const Sum>(axes), {y});
  return keepdims ? reshape(r, kept_shape(x.shape(), axes)) : r;
}

Array mean(const Array& x, const Axes& axis, bool keepdims) {
  check_valid(x, "mean");
  auto axes = normalize_axes(axis, x.ndim(), "mean");
  std::int64_t n = 1;
  for (int a : axes) n *= x.shape()[a];
  Array s = sum(is_floating(x.dtype()) ? x : astype(x, float32), axis, keepdims);
  return divide(s, static_cast<double>(n));
}

}  // namespace linum
