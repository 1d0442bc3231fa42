// The softmax cross-entropy primitives: the loss of each row of logits against dense or integer
// labels, and its VJP in the logits, each one sweep per row. Their own derivatives are written
// with linum ops, so grad of grad and jvp through the loss work as on the composition.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include <linum/autodiff/ops/simd.hpp>

#include <linum/autodiff/ops/kernel_util.hpp>
#include <linum/autodiff/ops/reduction.hpp>
#include <linum/autodiff/ops/shape.hpp>
#include <linum/optim/losses.hpp>
#include <linum/optim/losses_detail.hpp>

namespace linum::optim {
namespace {

using detail::dispatch_float;
using detail::in_ptr;
using detail::out_ptr;

// Σ exp(x[j] - m) over a row, with xsimd's exp on full batches (the exp primitive's kernel).
template <class T>
T sum_exp(const T* x, std::int64_t c, T m) {
  using B = xsimd::batch<T>;
  constexpr std::int64_t w = B::size;
  const B mb(m);
  B acc(T(0));
  std::int64_t j = 0;
  for (; j + w <= c; j += w) acc += xsimd::exp(B::load_unaligned(x + j) - mb);
  T s = xsimd::hadd(acc);
  for (; j < c; ++j) s += std::exp(x[j] - m);
  return s;
}

// o[j] = a * exp(x[j] - lse): a times the row's softmax.
template <class T>
void scaled_softmax(const T* x, std::int64_t c, T lse, T a, T* o) {
  using B = xsimd::batch<T>;
  constexpr std::int64_t w = B::size;
  const B lb(lse), ab(a);
  std::int64_t j = 0;
  for (; j + w <= c; j += w)
    (ab * xsimd::exp(B::load_unaligned(x + j) - lb)).store_unaligned(o + j);
  for (; j < c; ++j) o[j] = a * std::exp(x[j] - lse);
}

// The max of a row, by batches then across the lanes (NaNs propagate through the sum_exp).
template <class T>
T row_max(const T* x, std::int64_t c) {
  using B = xsimd::batch<T>;
  constexpr std::int64_t w = B::size;
  T m = -std::numeric_limits<T>::infinity();
  std::int64_t j = 0;
  if (c >= w) {
    B mb = B::load_unaligned(x);
    for (j = w; j + w <= c; j += w) mb = xsimd::max(mb, B::load_unaligned(x + j));
    alignas(B::arch_type::alignment()) T lanes[w];
    mb.store_aligned(lanes);
    for (T v : lanes) m = v > m ? v : m;
  }
  for (; j < c; ++j) m = x[j] > m ? x[j] : m;
  return m;
}

// Σ a[j] over a row.
template <class T>
T row_sum(const T* a, std::int64_t c) {
  using B = xsimd::batch<T>;
  constexpr std::int64_t w = B::size;
  B acc(T(0));
  std::int64_t j = 0;
  for (; j + w <= c; j += w) acc += B::load_unaligned(a + j);
  T s = xsimd::hadd(acc);
  for (; j < c; ++j) s += a[j];
  return s;
}

// Σ a[j] (b - x[j]) over a row.
template <class T>
T row_dot_gap(const T* a, const T* x, T b, std::int64_t c) {
  using B = xsimd::batch<T>;
  constexpr std::int64_t w = B::size;
  B acc(T(0));
  const B bb(b);
  std::int64_t j = 0;
  for (; j + w <= c; j += w) acc += B::load_unaligned(a + j) * (bb - B::load_unaligned(x + j));
  T s = xsimd::hadd(acc);
  for (; j < c; ++j) s += a[j] * (b - x[j]);
  return s;
}

// logsumexp of one row, shifted by its max as jax.nn.logsumexp is (a non-finite max shifts by 0).
template <class T>
T row_logsumexp(const T* x, std::int64_t c) {
  T m = row_max(x, c);
  if (!std::isfinite(m)) m = T(0);
  return m + std::log(sum_exp(x, c, m));
}

void check_label(std::int32_t k, std::int64_t row, std::int64_t classes) {
  if (k < 0 || k >= classes)
    throw IndexError("softmax_cross_entropy_with_integer_labels: label " + std::to_string(k) +
                     " at row " + std::to_string(row) + " is out of range for " +
                     std::to_string(classes) + " classes");
}

Shape drop_last(const Shape& s) { return Shape(s.begin(), s.end() - 1); }

// The labels of a row, as the rules see them: dense labels l with their sum L, or integer labels
// k as one_hot(k) with L = 1. p is softmax(x) over the class (last) axis.
struct RowTerms {
  Array p, l, L;
};
RowTerms row_terms(const Array& x, const Array& labels, bool sparse) {
  RowTerms r{softmax(x, -1), labels, Array()};
  if (sparse) {
    r.l = one_hot(labels, x.shape().back(), x.dtype());
    r.L = detail::weak(1.0, x);
  } else {
    r.L = sum(labels, -1, true);
  }
  return r;
}

// Moves both operands' batch axes to the front (the rows are the leading axes, classes last).
Batched batch_rows(const PrimPtr& self, std::span<const Array> in, std::span<const int> bdims) {
  std::int64_t n = 0;
  for (std::size_t i = 0; i < in.size(); ++i)
    if (bdims[i] >= 0) n = in[i].shape()[bdims[i]];
  Arrays moved;
  for (std::size_t i = 0; i < in.size(); ++i)
    moved.push_back(detail::move_bdim(in[i], bdims[i], 0, n));
  return {{bind1(self, moved)}, {0}};
}

// g = c * (softmax(x) * L - l) per row: the VJP of the loss in the logits for cotangent c.
template <bool kSparse>
struct SoftmaxCrossEntropyGrad final : Primitive {
  const char* name() const override { return "softmax_cross_entropy_grad"; }
  Avals abstract_eval(std::span<const ShapeDtype> in) const override { return {in[0]}; }
  Arrays eval(std::span<const Array> in) const override {
    const Array &x = in[0], &l = in[1], &c = in[2];
    Array out = empty(x.shape(), x.dtype());
    const std::int64_t nc = x.shape().back(), rows = nc ? x.size() / nc : 0;
    dispatch_float(x.dtype(), name(), [&]<class T>() {
      const T* xp = in_ptr<T>(x);
      const T* cp = in_ptr<T>(c);
      T* o = out_ptr<T>(out);
      for (std::int64_t r = 0; r < rows; ++r, xp += nc, o += nc) {
        const T lse = row_logsumexp(xp, nc);
        if constexpr (kSparse) {
          const std::int32_t k = in_ptr<std::int32_t>(l)[r];
          check_label(k, r, nc);
          scaled_softmax(xp, nc, lse, cp[r], o);
          o[k] -= cp[r];
        } else {
          const T* lp = in_ptr<T>(l) + r * nc;
          const T L = row_sum(lp, nc);
          scaled_softmax(xp, nc, lse, cp[r] * L, o);
          for (std::int64_t j = 0; j < nc; ++j) o[j] -= cp[r] * lp[j];
        }
      }
    });
    return {out};
  }
  // dg = dc (pL - l) + c (L p (dx - sum(p dx)) + p dL - dl).
  Arrays jvp(std::span<const Array> p, std::span<const Array> t,
             std::span<const Array>) const override {
    RowTerms r = row_terms(p[0], p[1], kSparse);
    Array c = expand_dims(p[2], -1), out;
    auto acc = [&](const Array& term) { out = out.valid() ? add(out, term) : term; };
    if (t[2].valid()) acc(expand_dims(t[2], -1) * (r.p * r.L - r.l));
    if (t[0].valid()) acc(c * r.L * r.p * (t[0] - sum(r.p * t[0], -1, true)));
    if (!kSparse && t[1].valid()) acc(c * (r.p * sum(t[1], -1, true) - t[1]));
    return {out};
  }
  Arrays vjp(std::span<const Array> p, std::span<const Array> ct,
             std::span<const Array>) const override {
    if (!ct[0].valid()) return {Array(), Array(), Array()};
    RowTerms r = row_terms(p[0], p[1], kSparse);
    const Array& u = ct[0];
    Array c = expand_dims(p[2], -1), up = sum(u * r.p, -1, true);
    Array ct_l = kSparse ? Array() : c * (up - u);
    return {c * r.L * r.p * (u - up), ct_l, sum(u * (r.p * r.L - r.l), -1)};
  }
  Batched vmap(std::span<const Array> in, std::span<const int> bdims) const override {
    return batch_rows(singleton<SoftmaxCrossEntropyGrad>(), in, bdims);
  }
};

// loss = sum(l * (logsumexp(x) - x)) per row (dense), or logsumexp(x) - x[k] (integer labels).
template <bool kSparse>
struct SoftmaxCrossEntropy final : Primitive {
  const char* name() const override { return "softmax_cross_entropy"; }
  Avals abstract_eval(std::span<const ShapeDtype> in) const override {
    return {{drop_last(in[0].shape), in[0].dtype}};
  }
  Arrays eval(std::span<const Array> in) const override {
    const Array &x = in[0], &l = in[1];
    Array out = empty(drop_last(x.shape()), x.dtype());
    const std::int64_t nc = x.shape().back(), rows = out.size();
    dispatch_float(x.dtype(), name(), [&]<class T>() {
      const T* xp = in_ptr<T>(x);
      T* o = out_ptr<T>(out);
      for (std::int64_t r = 0; r < rows; ++r, xp += nc) {
        const T lse = row_logsumexp(xp, nc);
        if constexpr (kSparse) {
          const std::int32_t k = in_ptr<std::int32_t>(l)[r];
          check_label(k, r, nc);
          o[r] = lse - xp[k];
        } else {
          const T* lp = in_ptr<T>(l) + r * nc;
          o[r] = row_dot_gap(lp, xp, lse, nc);
        }
      }
    });
    return {out};
  }
  Array grad(const Array& x, const Array& l, const Array& c) const {
    return bind1(singleton<SoftmaxCrossEntropyGrad<kSparse>>(), {x, l, c});
  }
  Arrays jvp(std::span<const Array> p, std::span<const Array> t,
             std::span<const Array> o) const override {
    Array out;
    if (t[0].valid()) out = sum(grad(p[0], p[1], ones_like(o[0])) * t[0], -1);
    if (!kSparse && t[1].valid()) {
      Array dl = sum((logsumexp(p[0], -1, true) - p[0]) * t[1], -1);
      out = out.valid() ? add(out, dl) : dl;
    }
    return {out};
  }
  Arrays vjp_needed(std::span<const Array> p, std::span<const Array> ct, std::span<const Array>,
                    std::span<const bool> needed) const override {
    if (!ct[0].valid()) return {Array(), Array()};
    Array ct_x = needed[0] ? grad(p[0], p[1], ct[0]) : Array();
    Array ct_l = !kSparse && needed[1] ? expand_dims(ct[0], -1) * (logsumexp(p[0], -1, true) - p[0])
                                       : Array();
    return {ct_x, ct_l};
  }
  Arrays vjp(std::span<const Array> p, std::span<const Array> ct,
             std::span<const Array> o) const override {
    const bool all[2] = {true, true};
    return vjp_needed(p, ct, o, all);
  }
  Batched vmap(std::span<const Array> in, std::span<const int> bdims) const override {
    return batch_rows(singleton<SoftmaxCrossEntropy>(), in, bdims);
  }
};

// Moves the class axes of x (of rank nd) last and flattens them into one: rows x classes.
Array classes_last(const Array& x, const std::vector<int>& cls) {
  const int nd = x.ndim();
  if (cls.size() == 1 && cls[0] == nd - 1) return x;
  std::vector<int> order;
  Shape rows;
  for (int d = 0; d < nd; ++d)
    if (std::find(cls.begin(), cls.end(), d) == cls.end()) {
      order.push_back(d);
      rows.push_back(x.shape()[d]);
    }
  std::int64_t nc = 1;
  for (int d : cls) {
    order.push_back(d);
    nc *= x.shape()[d];
  }
  rows.push_back(nc);
  return reshape(transpose(x, order), rows);
}

void check_float_logits(const Array& logits, const char* fn) {
  detail::check_valid(logits, fn);
  if (!is_floating(logits.dtype()))
    throw TypeError(std::string(fn) +
                    ": logits must have a floating dtype (float32 or float64), got " +
                    std::string(dtype_name(logits.dtype())));
}

}  // namespace

Array softmax_cross_entropy(const Array& logits, const Array& labels, const Axes& axis,
                            const std::optional<Array>& where) {
  constexpr const char* fn = "softmax_cross_entropy";
  check_float_logits(logits, fn);
  if (where) return loss_detail::masked_softmax_cross_entropy(logits, labels, axis, *where);
  detail::check_valid(labels, fn);
  const Shape s = detail::broadcast_shapes(logits.shape(), labels.shape(), fn);
  const ResultType r = detail::result_type(logits, labels);
  Array x = detail::promote_to(logits, r), l = detail::promote_to(labels, r);
  if (x.shape() != s) x = broadcast_to(x, s);
  if (l.shape() != s) l = broadcast_to(l, s);
  const std::vector<int> cls = detail::normalize_axes(axis, static_cast<int>(s.size()), fn);
  return bind1(singleton<SoftmaxCrossEntropy<false>>(),
               {classes_last(x, cls), classes_last(l, cls)});
}

Array softmax_cross_entropy_with_integer_labels(const Array& logits, const Array& labels,
                                                const Axes& axis,
                                                const std::optional<Array>& where) {
  constexpr const char* fn = "softmax_cross_entropy_with_integer_labels";
  check_float_logits(logits, fn);
  detail::check_valid(labels, fn);
  if (labels.dtype() != int32 && labels.dtype() != uint32)
    throw TypeError(std::string(fn) + ": labels must have an integer dtype, got " +
                    std::string(dtype_name(labels.dtype())));
  const std::vector<int> cls = detail::normalize_axes(axis, logits.ndim(), fn);
  Array x = classes_last(logits, cls);
  if (labels.shape() != drop_last(x.shape()))
    throw ValueError(std::string(fn) + ": labels of shape " + shape_str(labels.shape()) +
                     " do not match logits of shape " + shape_str(logits.shape()) +
                     " without the class axes " + shape_str(drop_last(x.shape())));
  if (where) {
    Array w = *where;
    if (w.ndim() != logits.ndim()) {
      if (axis.all || axis.axes.size() != 1)
        throw ValueError(std::string(fn) +
                         ": a `where` without the class axis needs one class "
                         "axis to expand it at");
      w = expand_dims(w, cls[0]);
    }
    w = classes_last(broadcast_to(w, logits.shape()), cls);
    return loss_detail::masked_integer_cross_entropy(x, astype(labels, int32), w);
  }
  // uint32 labels above 2^31 wrap to negative int32 and are caught by the kernel's range check.
  return bind1(singleton<SoftmaxCrossEntropy<true>>(), {x, astype(labels, int32)});
}

}  // namespace linum::optim
