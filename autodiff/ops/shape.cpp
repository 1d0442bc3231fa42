// Shape primitives: reshape (zero-copy), broadcast_to, transpose; and the ops built on them.
#include <linum/autodiff/ops/kernel_util.hpp>

#include <algorithm>
#include <numeric>

namespace linum {
namespace detail {
namespace {

struct Reshape final : Primitive {
  Shape shape;
  explicit Reshape(Shape s) : shape(std::move(s)) {}
  const char* name() const override { return "reshape"; }
  void print_params(std::ostream& os) const override { os << "new_sizes=" << shape_str(shape); }
  Arrays eval(std::span<const Array> in) const override {
    const auto& c = static_cast<const ConcreteImpl&>(*in[0].impl());
    if (c.owner)  // share the heap buffer: reshape is free
      return {Array(std::make_shared<ConcreteImpl>(shape, c.dtype, c.owner, c.data))};
    return {from_buffer(c.data, shape, c.dtype, c.dtype)};
  }
  Arrays jvp(std::span<const Array>, std::span<const Array> t, std::span<const Array>) const override {
    return {reshape(t[0], shape)};
  }
  Arrays vjp(std::span<const Array> p, std::span<const Array> ct, std::span<const Array>) const override {
    return {reshape(ct[0], p[0].shape())};
  }
  Batched vmap(std::span<const Array> in, std::span<const int> bdims) const override {
    Array x = move_bdim(in[0], bdims[0], 0, 0);
    Shape s = shape;
    s.insert(s.begin(), x.shape(0));
    return {{reshape(x, s)}, {0}};
  }
};

struct BroadcastTo final : Primitive {
  Shape shape;
  explicit BroadcastTo(Shape s) : shape(std::move(s)) {}
  const char* name() const override { return "broadcast_in_dim"; }
  void print_params(std::ostream& os) const override { os << "shape=" << shape_str(shape); }
  Arrays eval(std::span<const Array> in) const override {
    const Array& x = in[0];
    Array out = empty(shape, x.dtype());
    dispatch(x.dtype(), [&]<class T>() { broadcast_copy(in_ptr<T>(x), x.shape(), out_ptr<T>(out), shape); });
    return {out};
  }
  Arrays jvp(std::span<const Array>, std::span<const Array> t, std::span<const Array>) const override {
    return {broadcast_to(t[0], shape)};
  }
  Arrays vjp(std::span<const Array> p, std::span<const Array> ct, std::span<const Array>) const override {
    return {sum_to_shape(ct[0], p[0].shape())};
  }
  Batched vmap(std::span<const Array> in, std::span<const int> bdims) const override {
    Array x = move_bdim(in[0], bdims[0], 0, 0);
    const auto pad = shape.size() - (x.shape().size() - 1);
    Shape xs = x.shape();
    xs.insert(xs.begin() + 1, pad, 1);
    Shape s = shape;
    s.insert(s.begin(), x.shape(0));
    return {{broadcast_to(reshape(x, xs), s)}, {0}};
  }
};

struct Transpose final : Primitive {
  std::vector<int> perm;
  explicit Transpose(std::vector<int> p) : perm(std::move(p)) {}
  const char* name() const override { return "transpose"; }
  void print_params(std::ostream& os) const override {
    os << "permutation=" << shape_str(Shape(perm.begin(), perm.end()));
  }
  Arrays eval(std::span<const Array> in) const override {
    const Array& x = in[0];
    const int nd = x.ndim();
    Shape os(nd);
    for (int i = 0; i < nd; ++i) os[i] = x.shape()[perm[i]];
    Array out = empty(os, x.dtype());
    const auto xst = strides_of(x.shape());
    std::vector<std::int64_t> st(nd);  // input stride of each output axis
    for (int i = 0; i < nd; ++i) st[i] = xst[perm[i]];
    const std::int64_t n = x.size();
    dispatch(x.dtype(), [&]<class T>() {
      const T* a = in_ptr<T>(x);
      T* o = out_ptr<T>(out);
      if (n == 0) return;
      if (nd == 0) {
        o[0] = a[0];
        return;
      }
      std::vector<std::int64_t> idx(nd, 0);
      std::int64_t off = 0;
      const std::int64_t inner = os[nd - 1], si = st[nd - 1];
      for (std::int64_t base = 0; base < n; base += inner) {
        for (std::int64_t i = 0; i < inner; ++i) o[base + i] = a[off + i * si];
        for (int d = nd - 2; d >= 0; --d) {
          off += st[d];
          if (++idx[d] < os[d]) break;
          off -= st[d] * os[d];
          idx[d] = 0;
        }
      }
    });
    return {out};
  }
  std::vector<int> inverse() const {
    std::vector<int> inv(perm.size());
    for (std::size_t i = 0; i < perm.size(); ++i) inv[perm[i]] = static_cast<int>(i);
    return inv;
  }
  Arrays jvp(std::span<const Array>, std::span<const Array> t, std::span<const Array>) const override {
    return {transpose(t[0], perm)};
  }
  Arrays vjp(std::span<const Array>, std::span<const Array> ct, std::span<const Array>) const override {
    return {transpose(ct[0], inverse())};
  }
  Batched vmap(std::span<const Array> in, std::span<const int> bdims) const override {
    const int b = bdims[0];
    std::vector<int> p{b};  // batch axis first, then the per-example permutation
    for (int q : perm) p.push_back(q >= b ? q + 1 : q);
    return {{transpose(in[0], p)}, {0}};
  }
};

}  // namespace
}  // namespace detail

using namespace detail;

Array reshape(const Array& x, const Shape& shape) {
  check_valid(x, "reshape");
  Shape s = shape;
  std::int64_t known = 1;
  int infer = -1;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == -1) {
      if (infer >= 0) throw ValueError("reshape: can only specify one unknown dimension, got " + shape_str(shape));
      infer = static_cast<int>(i);
    } else if (s[i] < 0) {
      throw ValueError("reshape: negative dimension in new shape " + shape_str(shape));
    } else {
      known *= s[i];
    }
  }
  if (infer >= 0 && known > 0 && x.size() % known == 0) s[infer] = x.size() / known;
  if (shape_size(s) != x.size() || (infer >= 0 && known == 0))
    throw ValueError("reshape: cannot reshape array of shape " + shape_str(x.shape()) + " (size " +
                     std::to_string(x.size()) + ") into shape " + shape_str(shape));
  if (s == x.shape()) return x;
  return bind1(std::make_shared<const Reshape>(s), {x});
}

Array ravel(const Array& x) { return reshape(x, {-1}); }

Array broadcast_to(const Array& x, const Shape& shape) {
  check_valid(x, "broadcast_to");
  if (x.shape() == shape) return x;
  const Shape& xs = x.shape();
  bool ok = xs.size() <= shape.size();
  for (std::size_t i = 0; ok && i < xs.size(); ++i) {
    const auto d = xs[xs.size() - 1 - i], t = shape[shape.size() - 1 - i];
    ok = d == t || d == 1;
  }
  if (!ok)
    throw ValueError("broadcast_to: cannot broadcast an array of shape " + shape_str(xs) +
                     " to shape " + shape_str(shape));
  return bind1(std::make_shared<const BroadcastTo>(shape), {x});
}

Array transpose(const Array& x, std::vector<int> axes) {
  check_valid(x, "transpose");
  const int nd = x.ndim();
  if (axes.empty()) {
    for (int i = nd - 1; i >= 0; --i) axes.push_back(i);
  } else {
    if (static_cast<int>(axes.size()) != nd)
      throw ValueError("transpose: axes " + shape_str(Shape(axes.begin(), axes.end())) +
                       " do not match an array of rank " + std::to_string(nd));
    for (int& a : axes) a = normalize_axis(a, nd, "transpose");
    auto sorted = axes;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
      throw ValueError("transpose: repeated axis in " + shape_str(Shape(axes.begin(), axes.end())));
  }
  bool identity = true;
  for (int i = 0; i < nd; ++i) identity &= axes[i] == i;
  if (identity) return x;
  return bind1(std::make_shared<const Transpose>(std::move(axes)), {x});
}

Array moveaxis(const Array& x, int source, int destination) {
  check_valid(x, "moveaxis");
  const int nd = x.ndim();
  const int s = normalize_axis(source, nd, "moveaxis"), d = normalize_axis(destination, nd, "moveaxis");
  std::vector<int> perm;
  for (int i = 0; i < nd; ++i)
    if (i != s) perm.push_back(i);
  perm.insert(perm.begin() + d, s);
  return transpose(x, perm);
}

Array expand_dims(const Array& x, int axis) {
  check_valid(x, "expand_dims");
  const int a = normalize_axis(axis, x.ndim() + 1, "expand_dims");
  Shape s = x.shape();
  s.insert(s.begin() + a, 1);
  return reshape(x, s);
}

}  // namespace linum
