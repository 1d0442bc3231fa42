// Shape primitives: reshape (zero-copy), broadcast_to, transpose, concatenate; and the ops built
// on them (squeeze, expand_dims, moveaxis, stack, split). Slicing and gathers are in indexing.cpp.
#include <linum/autodiff/ops/kernel_util.hpp>
#include <linum/autodiff/ops/recorded_params.hpp>
#include <linum/autodiff/trace.hpp>

#include <algorithm>
#include <cstring>
#include <numeric>

namespace linum {
namespace detail {
namespace {

struct Reshape final : Primitive {
  bool vjp_reads_input(std::size_t) const override { return false; }
  bool vjp_reads_output(std::size_t) const override { return false; }
  Shape shape;
  explicit Reshape(Shape s) : shape(std::move(s)) {}
  const char* name() const override { return "reshape"; }
  bool handles_reduced_floats() const override { return true; }  // moves bits only
  Avals abstract_eval(std::span<const ShapeDtype> in) const override {
    return {{shape, in[0].dtype}};
  }
  void print_params(std::ostream& os) const override { os << "new_sizes=" << shape_str(shape); }
  Arrays eval(std::span<const Array> in) const override {
    const auto& c = static_cast<const ConcreteImpl&>(*in[0].impl());
    if (c.owner)  // share the heap buffer: reshape is free
      return {Array(std::make_shared<ConcreteImpl>(shape, c.dtype, c.owner, c.data))};
    return {from_buffer(c.data, shape, c.dtype, c.dtype)};
  }
  Arrays jvp(std::span<const Array>, std::span<const Array> t,
             std::span<const Array>) const override {
    return {reshape(t[0], shape)};
  }
  Arrays vjp(std::span<const Array> p, std::span<const Array> ct,
             std::span<const Array>) const override {
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
  bool vjp_reads_input(std::size_t) const override { return false; }
  bool vjp_reads_output(std::size_t) const override { return false; }
  Shape shape;
  explicit BroadcastTo(Shape s) : shape(std::move(s)) {}
  const char* name() const override { return "broadcast_in_dim"; }
  bool handles_reduced_floats() const override { return true; }  // moves bits only
  Avals abstract_eval(std::span<const ShapeDtype> in) const override {
    return {{shape, in[0].dtype}};
  }
  void print_params(std::ostream& os) const override { os << "shape=" << shape_str(shape); }
  Arrays eval(std::span<const Array> in) const override {
    const Array& x = in[0];
    Array out = empty(shape, x.dtype());
    dispatch_with_complex(x.dtype(), [&]<class T>() {
      broadcast_copy(in_ptr<T>(x), x.shape(), out_ptr<T>(out), shape);
    });
    return {out};
  }
  Arrays jvp(std::span<const Array>, std::span<const Array> t,
             std::span<const Array>) const override {
    return {broadcast_to(t[0], shape)};
  }
  Arrays vjp(std::span<const Array> p, std::span<const Array> ct,
             std::span<const Array>) const override {
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
  bool vjp_reads_input(std::size_t) const override { return false; }
  bool vjp_reads_output(std::size_t) const override { return false; }
  std::vector<int> perm;
  explicit Transpose(std::vector<int> p) : perm(std::move(p)) {}
  const char* name() const override { return "transpose"; }
  bool handles_reduced_floats() const override { return true; }  // moves bits only
  Avals abstract_eval(std::span<const ShapeDtype> in) const override {
    Shape os(perm.size());
    for (std::size_t i = 0; i < perm.size(); ++i) os[i] = in[0].shape[perm[i]];
    return {{os, in[0].dtype}};
  }
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
    dispatch_with_complex(x.dtype(), [&]<class T>() {
      const T* a = in_ptr<T>(x);
      T* o = out_ptr<T>(out);
      if (n == 0) return;
      if (nd == 0) {
        o[0] = a[0];
        return;
      }
      if (swaps_last_two()) {
        // A batch of matrix transpositions (a weight's .T, the most common case), tiled.
        const std::int64_t r = x.shape(nd - 2), c = x.shape(nd - 1);
        for (std::int64_t b = 0; b < n; b += r * c) transpose_into(r, c, a + b, c, o + b);
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
  // The last two axes swapped and the others kept.
  bool swaps_last_two() const {
    const auto nd = perm.size();
    if (nd < 2 || perm[nd - 1] != static_cast<int>(nd) - 2 ||
        perm[nd - 2] != static_cast<int>(nd) - 1)
      return false;
    for (std::size_t i = 0; i + 2 < nd; ++i)
      if (perm[i] != static_cast<int>(i)) return false;
    return true;
  }
  std::vector<int> inverse() const {
    std::vector<int> inv(perm.size());
    for (std::size_t i = 0; i < perm.size(); ++i) inv[perm[i]] = static_cast<int>(i);
    return inv;
  }
  Arrays jvp(std::span<const Array>, std::span<const Array> t,
             std::span<const Array>) const override {
    return {transpose(t[0], perm)};
  }
  Arrays vjp(std::span<const Array>, std::span<const Array> ct,
             std::span<const Array>) const override {
    return {transpose(ct[0], inverse())};
  }
  Batched vmap(std::span<const Array> in, std::span<const int> bdims) const override {
    const int b = bdims[0];
    std::vector<int> p{b};  // batch axis first, then the per-example permutation
    for (int q : perm) p.push_back(q >= b ? q + 1 : q);
    return {{transpose(in[0], p)}, {0}};
  }
};

Arrays split_pieces(const Array& x, int axis, const std::vector<std::int64_t>& starts,
                    const std::vector<std::int64_t>& sizes);

struct Concatenate final : Primitive {
  int axis;
  explicit Concatenate(int a) : axis(a) {}
  const char* name() const override { return "concatenate"; }
  bool handles_reduced_floats() const override { return true; }  // moves bits only
  Avals abstract_eval(std::span<const ShapeDtype> in) const override {
    Shape os = in[0].shape;
    os[axis] = 0;
    for (const auto& x : in) os[axis] += x.shape[axis];
    return {{os, in[0].dtype}};
  }
  void print_params(std::ostream& os) const override { os << "dimension=" << axis; }
  Arrays eval(std::span<const Array> in) const override {
    Shape os = in[0].shape();
    os[axis] = 0;
    for (const auto& x : in) os[axis] += x.shape()[axis];
    Array out = empty(os, in[0].dtype());
    const std::size_t isz = itemsize(in[0].dtype());
    // Row-major: each input contributes one contiguous block per index of the leading axes.
    const std::int64_t outer = shape_size(Shape(os.begin(), os.begin() + axis));
    const std::int64_t row =
        shape_size(Shape(os.begin() + axis, os.end())) * static_cast<std::int64_t>(isz);
    auto* o = out_ptr<std::uint8_t>(out);
    std::int64_t col = 0;
    for (const auto& x : in) {
      const std::int64_t block =
          x.size() / std::max<std::int64_t>(outer, 1) * static_cast<std::int64_t>(isz);
      const auto* a = in_ptr<std::uint8_t>(x);
      if (block > 0)
        for (std::int64_t r = 0; r < outer; ++r)
          std::memcpy(o + r * row + col, a + r * block, static_cast<std::size_t>(block));
      col += block;
    }
    return {out};
  }
  Arrays jvp(std::span<const Array> p, std::span<const Array> t,
             std::span<const Array>) const override {
    Arrays ts;
    bool any = false;
    for (std::size_t i = 0; i < p.size(); ++i) {
      any |= t[i].valid();
      ts.push_back(t[i].valid() ? t[i] : zeros_like(p[i]));
    }
    if (!any) return {Array()};
    return {bind(std::make_shared<const Concatenate>(axis), ts)[0]};
  }
  Arrays vjp(std::span<const Array> p, std::span<const Array> ct,
             std::span<const Array>) const override {
    return vjp_needed(p, ct, {}, std::span<const bool>());
  }
  // Only the pieces of inputs that want a cotangent are cut out (one split op).
  Arrays vjp_needed(std::span<const Array> p, std::span<const Array> ct, std::span<const Array>,
                    std::span<const bool> needed) const override {
    Arrays r(p.size());
    if (!ct[0].valid()) return r;
    std::vector<std::int64_t> starts, sizes;
    std::vector<std::size_t> which;
    std::int64_t at = 0;
    for (std::size_t i = 0; i < p.size(); ++i) {
      if (needed.empty() || needed[i]) {
        starts.push_back(at);
        sizes.push_back(p[i].shape()[axis]);
        which.push_back(i);
      }
      at += p[i].shape()[axis];
    }
    if (which.empty()) return r;
    Arrays pieces = split_pieces(ct[0], axis, starts, sizes);
    for (std::size_t k = 0; k < which.size(); ++k) r[which[k]] = pieces[k];
    return r;
  }
  Batched vmap(std::span<const Array> in, std::span<const int> bdims) const override {
    std::int64_t n = 0;
    for (std::size_t i = 0; i < in.size(); ++i)
      if (bdims[i] >= 0) n = in[i].shape(bdims[i]);
    Arrays xs;
    for (std::size_t i = 0; i < in.size(); ++i) xs.push_back(move_bdim(in[i], bdims[i], 0, n));
    return {bind(std::make_shared<const Concatenate>(axis + 1), xs), {0}};
  }
};

// Pieces [start_i, start_i + size_i) of one axis in one op (lax.split, generalised to the
// overlapping pieces numpy.split allows); the transpose of concatenate and vice versa.
struct Split final : Primitive {
  int axis;
  std::vector<std::int64_t> starts, sizes;
  Split(int a, std::vector<std::int64_t> st, std::vector<std::int64_t> sz)
      : axis(a), starts(std::move(st)), sizes(std::move(sz)) {}
  const char* name() const override { return "split"; }
  bool handles_reduced_floats() const override { return true; }  // moves bits only
  Avals abstract_eval(std::span<const ShapeDtype> in) const override {
    Avals outs;
    for (auto n : sizes) {
      outs.push_back(in[0]);
      outs.back().shape[axis] = n;
    }
    return outs;
  }
  void print_params(std::ostream& os) const override {
    os << "axis=" << axis << " sizes=" << shape_str(Shape(sizes.begin(), sizes.end()));
  }
  Arrays eval(std::span<const Array> in) const override {
    const Array& x = in[0];
    const Shape& xs = x.shape();
    const auto isz = static_cast<std::int64_t>(itemsize(x.dtype()));
    const std::int64_t outer = shape_size(Shape(xs.begin(), xs.begin() + axis));
    const std::int64_t inner = shape_size(Shape(xs.begin() + axis + 1, xs.end())) * isz;
    const auto* a = in_ptr<std::uint8_t>(x);
    Arrays outs;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      Shape os = xs;
      os[axis] = sizes[i];
      Array out = empty(os, x.dtype());
      auto* o = out_ptr<std::uint8_t>(out);
      const std::int64_t block = sizes[i] * inner;
      if (block > 0)
        for (std::int64_t r = 0; r < outer; ++r)
          std::memcpy(o + r * block, a + (r * xs[axis] + starts[i]) * inner,
                      static_cast<std::size_t>(block));
      outs.push_back(out);
    }
    return outs;
  }
  Arrays jvp(std::span<const Array>, std::span<const Array> t,
             std::span<const Array>) const override {
    if (!t[0].valid()) return Arrays(sizes.size());
    return split_pieces(t[0], axis, starts, sizes);
  }
  Arrays vjp(std::span<const Array> p, std::span<const Array> ct,
             std::span<const Array> outs) const override {
    const Shape& xs = p[0].shape();
    auto piece = [&](std::size_t i) { return ct[i].valid() ? ct[i] : zeros_like(outs[i]); };
    auto zeros_along = [&](std::int64_t n) {
      Shape s = xs;
      s[axis] = n;
      return zeros_for(p[0], s, p[0].dtype());
    };
    // Pieces that tile the axis in order transpose to one concatenate.
    std::int64_t at = 0;
    bool tiles = true;
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      if (sizes[i] == 0) continue;
      tiles &= starts[i] == at;
      at = starts[i] + sizes[i];
    }
    if (tiles && at == xs[axis]) {
      Arrays parts;
      for (std::size_t i = 0; i < sizes.size(); ++i)
        if (sizes[i] > 0) parts.push_back(piece(i));
      if (parts.empty()) return {zeros_like(p[0])};
      if (parts.size() == 1) return {parts[0]};
      return {bind(std::make_shared<const Concatenate>(axis), parts)[0]};
    }
    Array r;  // overlapping pieces: each one padded back to full size, then summed
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      if (!ct[i].valid() || sizes[i] == 0) continue;
      Arrays parts{zeros_along(starts[i]), ct[i], zeros_along(xs[axis] - starts[i] - sizes[i])};
      Array full = bind(std::make_shared<const Concatenate>(axis), parts)[0];
      r = r.valid() ? add(r, full) : full;
    }
    return {r};
  }
  Batched vmap(std::span<const Array> in, std::span<const int> bdims) const override {
    Array x = move_bdim(in[0], bdims[0], 0, 0);
    Arrays outs = split_pieces(x, axis + 1, starts, sizes);
    return {outs, std::vector<int>(outs.size(), 0)};
  }
};

Arrays split_pieces(const Array& x, int axis, const std::vector<std::int64_t>& starts,
                    const std::vector<std::int64_t>& sizes) {
  return bind(std::make_shared<const Split>(axis, starts, sizes), std::span<const Array>(&x, 1));
}

}  // namespace

std::optional<SplitPieces> split_pieces_of(const Primitive& p) {
  const auto* s = dynamic_cast<const Split*>(&p);
  if (!s) return std::nullopt;
  return SplitPieces{s->axis, s->starts, s->sizes};
}

}  // namespace detail

using namespace detail;

Array reshape(const Array& x, const Shape& shape) {
  check_valid(x, "reshape");
  Shape s = shape;
  std::int64_t known = 1;
  int infer = -1;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == -1) {
      if (infer >= 0)
        throw ValueError("reshape: can only specify one unknown dimension, got " +
                         shape_str(shape));
      infer = static_cast<int>(i);
    } else if (s[i] < 0) {
      throw ValueError("reshape: negative dimension in new shape " + shape_str(shape));
    } else {
      known = checked_mul("reshape", known, s[i]);
    }
  }
  if (infer >= 0 && known > 0 && x.size() % known == 0) s[infer] = x.size() / known;
  if ((infer >= 0 && (known == 0 || s[infer] < 0)) ||
      check_shape("reshape", s, x.dtype()) != x.size())
    throw ValueError("reshape: cannot reshape array of shape " + shape_str(x.shape()) + " (size " +
                     std::to_string(x.size()) + ") into shape " + shape_str(shape));
  if (s == x.shape()) return x;
  return bind1(std::make_shared<const Reshape>(s), {x});
}

Array ravel(const Array& x) { return reshape(x, {-1}); }

Array broadcast_to(const Array& x, const Shape& shape) {
  check_valid(x, "broadcast_to");
  if (x.shape() == shape) return x;
  check_shape("broadcast_to", shape, x.dtype());
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
  const int s = normalize_axis(source, nd, "moveaxis"),
            d = normalize_axis(destination, nd, "moveaxis");
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

Array squeeze(const Array& x, const Axes& axis) {
  check_valid(x, "squeeze");
  const Shape& xs = x.shape();
  std::vector<int> axes;
  if (axis.all) {
    for (int i = 0; i < x.ndim(); ++i)
      if (xs[i] == 1) axes.push_back(i);
  } else {
    axes = normalize_axes(axis, x.ndim(), "squeeze");
    for (int a : axes)
      if (xs[a] != 1)
        throw ValueError(
            "squeeze: cannot select an axis to squeeze out which has size not equal to "
            "one, got shape=" +
            shape_str(xs) +
            " and dimensions=" + shape_str(Shape(axis.axes.begin(), axis.axes.end())));
  }
  Shape s;
  for (int i = 0; i < x.ndim(); ++i)
    if (!std::binary_search(axes.begin(), axes.end(), i)) s.push_back(xs[i]);
  return reshape(x, s);
}

namespace {
std::string shapes_str(const Arrays& xs) {
  std::string r;
  for (const auto& x : xs) r += (r.empty() ? "" : ", ") + shape_str(x.shape());
  return r;
}
}  // namespace

Array concatenate(const Arrays& xs, int axis) {
  if (xs.empty()) throw ValueError("concatenate: need at least one array to concatenate");
  for (const auto& x : xs) check_valid(x, "concatenate");
  const int nd = xs[0].ndim();
  if (nd == 0) throw ValueError("concatenate: zero-dimensional arrays cannot be concatenated");
  for (const auto& x : xs)
    if (x.ndim() != nd)
      throw ValueError(
          "concatenate: all input arrays must have the same number of dimensions, got "
          "shapes " +
          shapes_str(xs));
  const int ax = normalize_axis(axis, nd, "concatenate");
  ResultType dt{xs[0].dtype(), xs[0].weak_type()};
  for (const auto& x : xs) {
    for (int d = 0; d < nd; ++d)
      if (d != ax && x.shape()[d] != xs[0].shape()[d])
        throw ValueError("concatenate: arrays must have the same shape except along axis " +
                         std::to_string(ax) + ", got shapes " + shapes_str(xs));
    dt = result_type(dt.dtype, dt.weak_type, x.dtype(), x.weak_type());
  }
  Shape out = xs[0].shape();
  for (std::size_t i = 1; i < xs.size(); ++i)
    out[ax] = checked_add("concatenate", out[ax], xs[i].shape()[ax]);
  check_shape("concatenate", out, dt.dtype);
  if (xs.size() == 1) return promote_to(xs[0], dt);
  Arrays in;
  for (const auto& x : xs) in.push_back(promote_to(x, dt));
  return bind(std::make_shared<const Concatenate>(ax), in)[0];
}

Array stack(const Arrays& xs, int axis) {
  if (xs.empty()) throw ValueError("stack: need at least one array to stack");
  for (const auto& x : xs) check_valid(x, "stack");
  for (const auto& x : xs)
    if (x.shape() != xs[0].shape())
      throw ValueError("stack: all input arrays must have the same shape, got shapes " +
                       shapes_str(xs));
  const int ax = normalize_axis(axis, xs[0].ndim() + 1, "stack");
  Arrays ex;
  for (const auto& x : xs) ex.push_back(expand_dims(x, ax));
  return concatenate(ex, ax);
}

Arrays split(const Array& x, std::int64_t sections, int axis) {
  check_valid(x, "split");
  const int ax = normalize_axis(axis, x.ndim(), "split");
  if (sections <= 0)
    throw ValueError("split: number sections must be larger than 0, got " +
                     std::to_string(sections));
  const std::int64_t n = x.shape()[ax];
  if (n % sections != 0)
    throw ValueError("split: array split does not result in an equal division: axis " +
                     std::to_string(ax) + " of size " + std::to_string(n) + " into " +
                     std::to_string(sections) + " sections");
  std::vector<std::int64_t> starts, sizes(static_cast<std::size_t>(sections), n / sections);
  for (std::int64_t i = 0; i < sections; ++i) starts.push_back(i * (n / sections));
  return split_pieces(x, ax, starts, sizes);
}

Arrays split(const Array& x, const std::vector<std::int64_t>& indices, int axis) {
  check_valid(x, "split");
  const int ax = normalize_axis(axis, x.ndim(), "split");
  const std::int64_t n = x.shape()[ax];
  // numpy.split: piece i is x[b_i:b_{i+1}] with Python's slice clamping, b = (0, *indices, n).
  auto clamp = [n](std::int64_t i) { return std::clamp<std::int64_t>(i < 0 ? i + n : i, 0, n); };
  std::vector<std::int64_t> bounds{0};
  for (auto i : indices) bounds.push_back(clamp(i));
  bounds.push_back(n);
  std::vector<std::int64_t> starts, sizes;
  for (std::size_t i = 0; i + 1 < bounds.size(); ++i) {
    starts.push_back(std::min(bounds[i], n));
    sizes.push_back(std::max<std::int64_t>(0, bounds[i + 1] - bounds[i]));
  }
  return split_pieces(x, ax, starts, sizes);
}

}  // namespace linum
