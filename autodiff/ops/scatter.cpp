// The scatter primitive: x with windows of updates combined into it (replace, add, multiply, min,
// max), XLA's scatter in linum's layout. Its rules follow JAX's: scatter-add transposes to a
// gather of the cotangent; scatter (replace) masks the overwritten operand positions and, with
// repeated indices, gives each position's cotangent to the update that won; scatter-mul
// differentiates in the updates only with unique indices; scatter-min/max split a tangent evenly
// among the values tied for the extreme. dynamic_update_slice and every gather's VJP use it too.
#include <linum/autodiff/ops/index_util.hpp>

namespace linum {
namespace detail {
namespace {

const char* scatter_name(ScatterOp op) {
  switch (op) {
    case ScatterOp::set: return "scatter";
    case ScatterOp::add: return "scatter-add";
    case ScatterOp::mul: return "scatter-mul";
    case ScatterOp::min: return "scatter-min";
    case ScatterOp::max: return "scatter-max";
  }
  return "scatter";
}

// The combiner of each op on element type T (bool is stored as uint8: add is or, mul is and).
template <class T>
auto combiner(ScatterOp op) {
  constexpr bool is_bool = std::is_same_v<T, std::uint8_t>;
  return [op](T& d, const T& s) {
    switch (op) {
      case ScatterOp::set: d = s; break;
      case ScatterOp::add:
        if constexpr (is_bool)
          d = static_cast<T>(d || s);
        else
          d = static_cast<T>(d + s);
        break;
      case ScatterOp::mul:
        if constexpr (is_bool)
          d = static_cast<T>(d && s);
        else
          d = static_cast<T>(d * s);
        break;
      case ScatterOp::min:
        if (s < d || s != s) d = s;  // NaN wins, as lax.min
        break;
      case ScatterOp::max:
        if (s > d || s != s) d = s;
        break;
    }
  };
}

Array zero_of(DType d) { return zeros({}, d); }

// The mask of fitting windows broadcastable against a gather's output (batch dims, then 1s).
Array fits_mask(const Array& idx, const Shape& xs, const GatherDims& d) {
  Shape s(idx.shape().begin(), idx.shape().end() - 1);
  s.resize(s.size() + d.window_shape().size(), 1);
  return reshape(window_fits(idx, xs, d), s);
}

// gather(ct) with zeros for the windows a drop-mode scatter skipped: the transpose of its
// updates' contribution.
Array gather_fitting(const Array& ct, const Array& idx, const GatherDims& d, WindowBounds b) {
  Array g = gather(ct, idx, d);
  if (b == WindowBounds::clamp) return g;
  return where(fits_mask(idx, ct.shape(), d), g, zero_of(g.dtype()));
}

struct Scatter final : Primitive {
  GatherDims dims;
  ScatterOp op;
  WindowBounds bounds;
  bool unique;
  Scatter(GatherDims d, ScatterOp o, WindowBounds b, bool u)
      : dims(std::move(d)), op(o), bounds(b), unique(u) {}
  const char* name() const override { return scatter_name(op); }
  Avals abstract_eval(std::span<const ShapeDtype> in) const override { return {in[0]}; }
  void print_params(std::ostream& os) const override {
    dims.print(os);
    os << (bounds == WindowBounds::drop ? " mode=drop" : " mode=clip")
       << " unique_indices=" << (unique ? "true" : "false");
  }
  // The tape keeps what the VJP reads: the indices, and the values only where the rule needs
  // them (set and add use the operand's and updates' shapes alone).
  bool vjp_reads_input(std::size_t i) const override {
    return i == 1 || !(op == ScatterOp::set || op == ScatterOp::add);
  }
  bool vjp_reads_output(std::size_t) const override {
    return op == ScatterOp::min || op == ScatterOp::max;
  }
  Arrays eval(std::span<const Array> in) const override {
    const Array &x = in[0], &idx = in[1], &upd = in[2];
    Array out = from_buffer(in_ptr<std::uint8_t>(x), x.shape(), x.dtype(), x.dtype());
    const std::int64_t w = shape_size(dims.slice_sizes);
    StridedWalk walk(dims.slice_sizes, strides_of(x.shape()), strides_of(dims.slice_sizes));
    dispatch(x.dtype(), [&]<class T>() {
      const T* u = in_ptr<T>(upd);
      T* o = out_ptr<T>(out);
      const auto f = combiner<T>(op);
      if (w == 1)
        for_each_window(
            x.shape(), idx, dims, [&](std::int64_t b, std::int64_t off) { f(o[off], u[b]); },
            bounds);
      else
        for_each_window(
            x.shape(), idx, dims,
            [&](std::int64_t b, std::int64_t off) { walk.run(o + off, u + b * w, f); }, bounds);
    });
    return {out};
  }

  Array again(const Array& x, const Array& idx, const Array& upd, ScatterOp o) const {
    return scatter(x, idx, upd, dims, o, bounds, unique);
  }

  // Scatter-min/max's tangent weights (JAX's rule): an update that reaches the output shares the
  // tangent evenly with the other updates and the operand value equal to it; the operand keeps
  // its share only when it equals the output.
  std::pair<Array, Array> extremal_coefs(const Array& x, const Array& idx, const Array& u,
                                         const Array& out) const {
    const Array target = gather(out, idx, dims);
    const Array successful = equal(u, target), retained = equal(gather(x, idx, dims), target);
    const Array zx = zeros_like(x), ones_u = ones_like(u);
    const Array num_updates = gather(
        scatter(zx, idx, where(successful, ones_u, zeros_like(u)), dims, ScatterOp::add, bounds),
        idx, dims);
    const Array num_refs =
        gather(scatter(zx, idx, ones_u, dims, ScatterOp::add, bounds), idx, dims);
    const Array share_with_operand = divide(ones_u, add(num_updates, ones_u));
    const Array updates_coef =
        where(successful, where(retained, share_with_operand, divide(ones_u, num_updates)),
              zero_of(u.dtype()));
    const Array operand_coef =
        divide(subtract(where(retained, share_with_operand, zero_of(u.dtype())), ones_u), num_refs);
    return {operand_coef, updates_coef};
  }

  void require_unique_for_mul() const {
    if (!unique)
      throw NotImplementedError(
          "scatter_mul: gradients with respect to the updates are only implemented when "
          "unique_indices=true (as in JAX); the indices were not promised unique");
  }

  Arrays jvp(std::span<const Array> p, std::span<const Array> t,
             std::span<const Array> o) const override {
    const Array &x = p[0], &idx = p[1], &u = p[2], &tx = t[0], &tu = t[2];
    if (!tx.valid() && !tu.valid()) return {Array()};
    const Array txz = tx.valid() ? tx : zeros_like(x), tuz = tu.valid() ? tu : zeros_like(u);
    switch (op) {
      case ScatterOp::set:  // the kernel's deterministic order picks the same winners
      case ScatterOp::add: return {again(txz, idx, tuz, op)};
      case ScatterOp::mul: {
        Array r;
        if (tx.valid()) r = again(tx, idx, u, ScatterOp::mul);
        if (tu.valid()) {
          require_unique_for_mul();
          Array ru = multiply(x, again(zeros_like(x), idx, tu, ScatterOp::add));
          r = r.valid() ? add(r, ru) : ru;
        }
        return {r};
      }
      case ScatterOp::min:
      case ScatterOp::max: {
        auto [operand_coef, updates_coef] = extremal_coefs(x, idx, u, o[0]);
        Array upd = multiply(tuz, updates_coef);
        if (tx.valid()) upd = add(multiply(gather(tx, idx, dims), operand_coef), upd);
        return {again(txz, idx, upd, ScatterOp::add)};
      }
    }
    return {Array()};
  }

  Arrays vjp(std::span<const Array> p, std::span<const Array> ct,
             std::span<const Array> o) const override {
    const bool all[3] = {true, false, true};
    return vjp_needed(p, ct, o, all);
  }
  Arrays vjp_needed(std::span<const Array> p, std::span<const Array> cts, std::span<const Array> o,
                    std::span<const bool> needed) const override {
    const Array &x = p[0], &idx = p[1], &u = p[2], &ct = cts[0];
    if (!ct.valid()) return {Array(), Array(), Array()};
    Array cx, cu;
    switch (op) {
      case ScatterOp::add:
        if (needed[0]) cx = ct;
        if (needed[2]) cu = gather_fitting(ct, idx, dims, bounds);
        break;
      case ScatterOp::set:
        // Overwritten operand positions get no cotangent; each position's goes to its winner.
        // u is not a residual here (only its shape is): build the zeros from shape and dtype.
        if (needed[0]) cx = again(ct, idx, zeros(u.shape(), ct.dtype()), ScatterOp::set);
        if (needed[2]) {
          cu = gather_fitting(ct, idx, dims, bounds);
          if (!unique) cu = where(won(x, idx, u), cu, zero_of(cu.dtype()));
        }
        break;
      case ScatterOp::mul:
        if (needed[0]) cx = again(ct, idx, u, ScatterOp::mul);
        if (needed[2]) {
          require_unique_for_mul();
          cu = gather_fitting(multiply(ct, x), idx, dims, bounds);
        }
        break;
      case ScatterOp::min:
      case ScatterOp::max: {
        auto [operand_coef, updates_coef] = extremal_coefs(x, idx, u, o[0]);
        // Skipped windows' weights may be inf (they saw no reference): mask after multiplying.
        const Array g = gather(ct, idx, dims);
        auto fitting = [&](const Array& v) {
          if (bounds == WindowBounds::clamp) return v;
          return where(fits_mask(idx, ct.shape(), dims), v, zero_of(v.dtype()));
        };
        if (needed[0])  // ct + the transpose of gather(tx) * operand_coef scattered back
          cx = add(ct, scatter(zeros_like(ct), idx, fitting(multiply(g, operand_coef)), dims,
                               ScatterOp::add, WindowBounds::clamp));
        if (needed[2]) cu = fitting(multiply(g, updates_coef));
        break;
      }
    }
    return {cx, Array(), cu};
  }

  // Whether each update element is the one a `set` left in the output: every window gets an id,
  // the ids are scattered like the updates, and each window reads back whose id survived.
  Array won(const Array& x, const Array& idx, const Array& u) const {
    Shape bshape(idx.shape().begin(), idx.shape().end() - 1), ids_shape = bshape;
    ids_shape.resize(u.ndim(), 1);
    const Array ids =
        reshape(arange(std::int64_t{0}, shape_size(bshape), std::int64_t{1}, int32), ids_shape);
    const Array scattered =
        again(full(x.shape(), -1, int32), idx, broadcast_to(ids, u.shape()), ScatterOp::set);
    return equal(gather(scattered, idx, dims), ids);
  }

  Batched vmap(std::span<const Array> in, std::span<const int> bdims) const override {
    std::int64_t n = 0;
    for (std::size_t i = 0; i < 3; ++i)
      if (bdims[i] >= 0) n = in[i].shape(bdims[i]);
    // Everything batched along axis 0: each example scatters into its own operand slice.
    Array x = move_bdim(in[0], bdims[0], 0, n), idx = move_bdim(in[1], bdims[1], 0, n),
          upd = move_bdim(in[2], bdims[2], 0, n);
    return {{scatter(x, idx, upd, dims.with_batch_axis(n, false), op, bounds, unique)}, {0}};
  }
};

}  // namespace

Array scatter(const Array& x, const Array& idx, const Array& upd, const GatherDims& d, ScatterOp op,
              WindowBounds bounds, bool unique_indices) {
  return bind1(std::make_shared<const Scatter>(d, op, bounds, unique_indices), {x, idx, upd});
}

Array window_fits(const Array& idx, const Shape& xs, const GatherDims& d) {
  const Shape bshape(idx.shape().begin(), idx.shape().end() - 1);
  std::vector<std::int32_t> hi;
  for (int a : d.start_index_map) {
    const std::int64_t h = xs[a] - d.slice_sizes[a];
    if (h < 0) return zeros(bshape, bool_);  // the window is larger than the axis
    hi.push_back(static_cast<std::int32_t>(h));
  }
  const Array fits = logical_and(greater_equal(idx, zeros({}, idx.dtype())),
                                 less_equal(idx, astype(array(hi), idx.dtype())));
  return all(fits, -1);
}

}  // namespace detail
}  // namespace linum
