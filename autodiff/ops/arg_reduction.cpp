// argmax/argmin: the index of the first extremum along one axis (the first NaN if there is
// one), as one int32 primitive without derivative, and numpy's flattening when no axis is given.
#include <algorithm>
#include <optional>

#include <linum/autodiff/ops/reduction_util.hpp>

namespace linum {
namespace detail {
namespace {

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

Array argmax(const Array& x, std::optional<int> axis, bool keepdims) {
  return arg_reduce(x, axis, keepdims, true);
}
Array argmin(const Array& x, std::optional<int> axis, bool keepdims) {
  return arg_reduce(x, axis, keepdims, false);
}

}  // namespace linum
