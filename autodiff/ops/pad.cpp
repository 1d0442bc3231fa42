// Padding: the lax.pad primitive (low, high and interior padding with a padding value, negative
// padding cropping) and jnp.pad's modes, composed from slices, flips and concatenations as
// jax.numpy composes them.
#include <linum/autodiff/ops/manipulation.hpp>

#include <linum/autodiff/ops/index_util.hpp>
#include <linum/autodiff/ops/sort.hpp>

namespace linum {
namespace detail {
namespace {

std::int64_t padded_size(std::int64_t n, const PadDim& p) {
  return p.low + p.high + n + std::max<std::int64_t>(n - 1, 0) * p.interior;
}

// Where the entries of x land along one axis: the first entry that lands inside the output,
// how many do, and the output position of the first.
struct Placement {
  std::int64_t first = 0, count = 0, at = 0;
  Placement(std::int64_t n, std::int64_t out, const PadDim& p) {
    const std::int64_t step = p.interior + 1;
    first = p.low >= 0 ? 0 : (-p.low + step - 1) / step;
    const std::int64_t last_pos = out - 1 - p.low;  // the last entry i with low + i * step < out
    const std::int64_t last = last_pos < 0 ? -1 : std::min(n - 1, last_pos / step);
    count = std::max<std::int64_t>(0, last - first + 1);
    at = p.low + first * step;
  }
};

Array pad_bind(const Array& x, const Array& v, const std::vector<PadDim>& config);

struct Pad final : Primitive {
  std::vector<PadDim> config;
  explicit Pad(std::vector<PadDim> c) : config(std::move(c)) {}
  const char* name() const override { return "pad"; }
  bool handles_reduced_floats() const override { return true; }  // moves bits only
  Shape out_shape(const Shape& xs) const {
    Shape s(xs.size());
    for (std::size_t a = 0; a < xs.size(); ++a) s[a] = padded_size(xs[a], config[a]);
    return s;
  }
  Avals abstract_eval(std::span<const ShapeDtype> in) const override {
    return {{out_shape(in[0].shape), in[0].dtype}};
  }
  void print_params(std::ostream& os) const override {
    os << "padding_config=(";
    for (const PadDim& p : config)
      os << "(" << p.low << ", " << p.high << ", " << p.interior << ")";
    os << ")";
  }
  bool vjp_reads_input(std::size_t) const override { return false; }
  bool vjp_reads_output(std::size_t) const override { return false; }
  // The entries of x that land in the output: strided slice parameters of x and of the output.
  struct Landing {
    std::vector<std::int64_t> x_start, out_start, out_step;
    Shape shape;
    bool all = true;  // every entry of x lands
  };
  Landing landing(const Shape& xs) const {
    Landing l;
    const Shape os = out_shape(xs);
    for (std::size_t a = 0; a < xs.size(); ++a) {
      const Placement p(xs[a], os[a], config[a]);
      l.x_start.push_back(p.first);
      l.out_start.push_back(p.count > 0 ? p.at : 0);
      l.out_step.push_back(config[a].interior + 1);
      l.shape.push_back(p.count);
      l.all &= p.count == xs[a];
    }
    return l;
  }
  Arrays eval(std::span<const Array> in) const override {
    const Array &x = in[0], &v = in[1];
    const Shape os = out_shape(x.shape());
    Array out = empty(os, x.dtype());
    const Landing l = landing(x.shape());
    const auto ost = strides_of(os), xst = strides_of(x.shape());
    std::vector<std::int64_t> ds(os.size());
    std::int64_t dbase = 0, sbase = 0;
    for (std::size_t a = 0; a < os.size(); ++a) {
      ds[a] = l.out_step[a] * ost[a];
      dbase += l.out_start[a] * ost[a];
      sbase += l.x_start[a] * xst[a];
    }
    StridedWalk walk(l.shape, ds, xst);
    dispatch_with_complex(x.dtype(), [&]<class T>() {
      T* o = out_ptr<T>(out);
      std::fill(o, o + out.size(), in_ptr<T>(v)[0]);
      walk.run(o + dbase, in_ptr<T>(x) + sbase, assign);
    });
    return {out};
  }
  Arrays jvp(std::span<const Array> p, std::span<const Array> t,
             std::span<const Array>) const override {
    if (!t[0].valid() && !t[1].valid()) return {Array()};
    return {pad_bind(t[0].valid() ? t[0] : zeros_like(p[0]), t[1].valid() ? t[1] : zeros_like(p[1]),
                     config)};
  }
  Arrays vjp(std::span<const Array> p, std::span<const Array> ct,
             std::span<const Array>) const override {
    if (!ct[0].valid()) return {Array(), Array()};
    const Landing l = landing(p[0].shape());
    Array cx = strided_slice(ct[0], l.out_start, l.out_step, l.shape);
    if (!l.all)  // the cropped entries of x get zeros
      cx = slice_transpose(cx, p[0].shape(), l.x_start,
                           std::vector<std::int64_t>(l.x_start.size(), 1));
    // The padding value's cotangent: everything that did not come from x (JAX's rule).
    const Array cv = subtract(sum(ct[0]), sum(cx));
    return {cx, cv};
  }
  Batched vmap(std::span<const Array> in, std::span<const int> bdims) const override {
    std::vector<PadDim> c = config;
    c.insert(c.begin(), PadDim{});
    if (bdims[1] < 0) return {{pad_bind(move_bdim(in[0], bdims[0], 0, 0), in[1], c)}, {0}};
    // A padding value per example: pad with zeros and select the value where x did not land.
    const std::int64_t n = in[1].shape(bdims[1]);
    const Array x = move_bdim(in[0], bdims[0], 0, n);
    const Array padded = pad_bind(x, zeros({}, x.dtype()), c);
    const Array mask = pad_bind(ones(x.shape(), bool_), zeros({}, bool_), c);
    Shape vs(static_cast<std::size_t>(x.ndim()), 1);
    vs[0] = n;
    return {{where(mask, padded, reshape(move_bdim(in[1], bdims[1], 0, n), vs))}, {0}};
  }
};

Array pad_bind(const Array& x, const Array& v, const std::vector<PadDim>& config) {
  return bind1(std::make_shared<const Pad>(config), {x, v});
}

void check_no_padding(const std::pair<std::int64_t, std::int64_t>& p, const char* mode) {
  if (p.first > 0 || p.second > 0)
    throw ValueError(std::string("pad: cannot apply '") + mode + "' padding to empty axis");
}

Array pad_wrap(Array x, const PadWidth& pw) {
  for (int i = 0; i < x.ndim(); ++i) {
    const std::int64_t n = x.shape()[i];
    if (n == 0) {
      check_no_padding(pw[i], "wrap");
      continue;
    }
    const std::int64_t lr = pw[i].first / n, lm = pw[i].first % n, rr = pw[i].second / n,
                       rm = pw[i].second % n;
    Arrays parts;
    if (lm > 0) parts.push_back(slice_in_dim(x, n - lm, n, i));
    for (std::int64_t k = 0; k < lr + rr + 1; ++k) parts.push_back(x);
    if (rm > 0) parts.push_back(slice_in_dim(x, 0, rm, i));
    x = parts.size() == 1 ? x : concatenate(parts, i);
  }
  return x;
}

Array pad_symmetric_or_reflect(Array x, const PadWidth& pw, bool reflect, ReflectType type) {
  const char* mode = reflect ? "reflect" : "symmetric";
  for (int i = 0; i < x.ndim(); ++i) {
    const std::int64_t n = x.shape()[i];
    if (n == 0) {
      check_no_padding(pw[i], mode);
      continue;
    }
    const std::int64_t offset = reflect && n > 1 ? 1 : 0;
    // JAX's loop: mirror at most n - offset entries at a time, the padded array growing.
    auto build = [&](Array arr, std::int64_t padding, bool before) {
      Array edge = before ? slice_in_dim(arr, 0, 1, i) : slice_in_dim(arr, -1, std::nullopt, i);
      while (padding > 0) {
        const std::int64_t cur = std::min(padding, n - offset);
        padding -= cur;
        Array part =
            before ? slice_in_dim(arr, offset, offset + cur, i)
                   : slice_in_dim(
                         arr, -(cur + offset),
                         (!reflect || n == 1) ? std::nullopt : std::optional<std::int64_t>(-1), i);
        part = flip(part, i);
        if (type == ReflectType::odd) {
          part = subtract(multiply(edge, 2), part);
          if (n > 1)
            edge = before ? slice_in_dim(part, 0, 1, i) : slice_in_dim(part, -1, std::nullopt, i);
        }
        arr = before ? concatenate({part, arr}, i) : concatenate({arr, part}, i);
      }
      return arr;
    };
    x = build(x, pw[i].first, true);
    x = build(x, pw[i].second, false);
  }
  return x;
}

// n copies of a size-1 slice along axis (broadcast_to, as repeat of one entry).
Array repeat_edge(const Array& edge, std::int64_t n, int axis) {
  Shape s = edge.shape();
  s[axis] = n;
  return broadcast_to(edge, s);
}

Array pad_edge(Array x, const PadWidth& pw) {
  for (int i = 0; i < x.ndim(); ++i) {
    const std::int64_t n = x.shape()[i];
    if (n == 0) {
      check_no_padding(pw[i], "edge");
      continue;
    }
    x = concatenate({repeat_edge(slice_in_dim(x, 0, 1, i), pw[i].first, i), x,
                     repeat_edge(slice_in_dim(x, n - 1, n, i), pw[i].second, i)},
                    i);
  }
  return x;
}

// jnp.linspace(start, stop, num, endpoint=False) along axis with stop an array of edge values,
// computed as JAX does: start * (1 - step) + stop * step with step = iota / num in the inexact
// dtype, floored for integer arrays; in stop's dtype.
Array ramp(double start, const Array& stop, std::int64_t num, int axis) {
  const DType d = stop.dtype(), cd = is_floating(d) ? d : float32;
  Shape s = stop.shape();
  s[axis] = num;
  if (num == 0) return zeros(s, d);
  const Array a = full({}, start, cd);
  if (num == 1) return astype(broadcast_to(a, s), d);
  Shape is(static_cast<std::size_t>(stop.ndim()), 1);
  is[axis] = num;
  const Array step = divide(reshape(arange(std::int64_t{0}, num, std::int64_t{1}, cd), is),
                            full({}, static_cast<double>(num), cd));
  Array out = add(multiply(a, subtract(full({}, 1.0, cd), step)), multiply(astype(stop, cd), step));
  if (!is_floating(d)) out = floor(out);
  return astype(out, d);
}

Array pad_linear_ramp(Array x, const PadWidth& pw,
                      const std::vector<std::pair<double, double>>& ev) {
  for (int i = 0; i < x.ndim(); ++i) {
    const Array before = ramp(ev[i].first, slice_in_dim(x, 0, 1, i), pw[i].first, i);
    const Array after =
        flip(ramp(ev[i].second, slice_in_dim(x, -1, std::nullopt, i), pw[i].second, i), i);
    x = concatenate({before, x, after}, i);
  }
  return x;
}

// The median along axis, keepdims (the mean of the two middle entries of an even count).
Array median_keepdims(const Array& x, int axis) {
  const Array s = sort(x, axis);
  const std::int64_t n = x.shape()[axis];
  const Array lo = slice_in_dim(s, (n - 1) / 2, (n - 1) / 2 + 1, axis),
              hi = slice_in_dim(s, n / 2, n / 2 + 1, axis);
  return divide(add(lo, hi), 2);
}

Array pad_stats(Array x, const PadWidth& pw, const PadWidth& stat_length, PadMode mode) {
  auto stat = [&](const Array& a, int axis) {
    switch (mode) {
      case PadMode::maximum: return max(a, axis, true);
      case PadMode::minimum: return min(a, axis, true);
      case PadMode::mean: return mean(a, axis, true);
      default: return median_keepdims(is_floating(a.dtype()) ? a : astype(a, float32), axis);
    }
  };
  for (int i = 0; i < x.ndim(); ++i) {
    Array sb, sa;
    if (stat_length.empty()) {
      sb = sa = stat(x, i);
    } else {
      const std::int64_t n = x.shape()[i];
      auto [lb, la] = stat_length[i];
      if (lb == 0 || la == 0) throw ValueError("pad: stat_length of 0 yields no value for padding");
      lb = std::min(lb, n);
      la = std::min(la, n);
      sb = stat(slice_in_dim(x, 0, lb, i), i);
      sa = stat(slice_in_dim(x, -la, std::nullopt, i), i);
    }
    if (!is_floating(x.dtype())) {  // integer statistics round half to even, as JAX
      sb = round(sb);
      sa = round(sa);
    }
    x = concatenate({repeat_edge(astype(sb, x.dtype()), pw[i].first, i), x,
                     repeat_edge(astype(sa, x.dtype()), pw[i].second, i)},
                    i);
  }
  return x;
}

// numpy's broadcasting of per-axis pairs: one pair for every axis, or one per axis.
template <class T>
std::vector<std::pair<T, T>> per_axis(const std::vector<std::pair<T, T>>& v, int nd,
                                      const char* what, T dflt) {
  if (v.empty()) return std::vector<std::pair<T, T>>(static_cast<std::size_t>(nd), {dflt, dflt});
  if (v.size() == 1) return std::vector<std::pair<T, T>>(static_cast<std::size_t>(nd), v[0]);
  if (static_cast<int>(v.size()) != nd)
    throw ValueError(std::string("pad: ") + what + " has " + std::to_string(v.size()) +
                     " (before, after) pairs for an array of rank " + std::to_string(nd) +
                     "; give one pair, or one per axis");
  return v;
}

}  // namespace
}  // namespace detail

using namespace detail;

Array lax_pad(const Array& operand, const Array& padding_value, const std::vector<PadDim>& config) {
  check_valid(operand, "lax_pad");
  check_valid(padding_value, "lax_pad");
  if (padding_value.ndim() != 0)
    throw TypeError("lax_pad: padding_value must be a scalar, got shape " +
                    shape_str(padding_value.shape()));
  Array v = padding_value;
  if (v.dtype() != operand.dtype()) {
    if (!v.weak_type())
      throw TypeError("lax_pad: padding_value dtype " + std::string(dtype_name(v.dtype())) +
                      " must match the operand dtype " + std::string(dtype_name(operand.dtype())));
    v = convert_element_type(v, operand.dtype(), false);
  }
  if (static_cast<int>(config.size()) != operand.ndim())
    throw ValueError("lax_pad: padding_config has " + std::to_string(config.size()) +
                     " entries for an operand of rank " + std::to_string(operand.ndim()));
  for (std::size_t a = 0; a < config.size(); ++a) {
    if (config[a].interior < 0)
      throw ValueError("lax_pad: interior padding in padding_config must be nonnegative, got " +
                       std::to_string(config[a].interior) + " on axis " + std::to_string(a));
    const std::int64_t n = operand.shape()[a];
    const std::int64_t out = checked_add(
        "lax_pad", checked_add("lax_pad", config[a].low, config[a].high),
        checked_add("lax_pad", n,
                    checked_mul("lax_pad", std::max<std::int64_t>(n - 1, 0), config[a].interior)));
    if (out < 0)
      throw ValueError("lax_pad: dimension size after padding is negative (" + std::to_string(out) +
                       ") on axis " + std::to_string(a) + " of shape " +
                       shape_str(operand.shape()));
  }
  return pad_bind(operand, v, config);
}

Array pad(const Array& array, const PadWidth& pad_width, const PadOptions& opts) {
  check_valid(array, "pad");
  const int nd = array.ndim();
  if (nd == 0) return array;
  const PadWidth pw = per_axis<std::int64_t>(pad_width, nd, "pad_width", 0);
  for (const auto& p : pw)
    if (p.first < 0 || p.second < 0)
      throw ValueError(
          "pad: index can't contain negative values (pad_width entries must be "
          "non-negative)");
  switch (opts.mode) {
    case PadMode::constant: {
      const auto cv = per_axis<double>(opts.constant_values, nd, "constant_values", 0.0);
      bool same = true;
      for (const auto& c : cv) same &= c.first == cv[0].first && c.second == cv[0].first;
      std::vector<PadDim> cfg;
      for (const auto& p : pw) cfg.push_back({p.first, p.second, 0});
      if (same) return lax_pad(array, full({}, cv[0].first, array.dtype()), cfg);
      Array x = array;  // one side of one axis at a time, each with its own value
      for (int i = 0; i < nd; ++i)
        for (int side = 0; side < 2; ++side) {
          const std::int64_t w = side == 0 ? pw[i].first : pw[i].second;
          if (w == 0) continue;
          std::vector<PadDim> c(static_cast<std::size_t>(nd));
          (side == 0 ? c[i].low : c[i].high) = w;
          x = lax_pad(x, full({}, side == 0 ? cv[i].first : cv[i].second, x.dtype()), c);
        }
      return x;
    }
    case PadMode::wrap: return pad_wrap(array, pw);
    case PadMode::reflect:
    case PadMode::symmetric:
      return pad_symmetric_or_reflect(array, pw, opts.mode == PadMode::reflect, opts.reflect_type);
    case PadMode::edge: return pad_edge(array, pw);
    case PadMode::linear_ramp:
      return pad_linear_ramp(array, pw, per_axis<double>(opts.end_values, nd, "end_values", 0.0));
    case PadMode::maximum:
    case PadMode::minimum:
    case PadMode::mean:
    case PadMode::median: {
      const PadWidth sl = opts.stat_length.empty()
                              ? PadWidth{}
                              : per_axis<std::int64_t>(opts.stat_length, nd, "stat_length", 0);
      for (int i = 0; i < nd; ++i)
        if (array.shape()[i] == 0 && (pw[i].first > 0 || pw[i].second > 0))
          throw ValueError("pad: cannot compute a statistic of an empty axis for padding");
      return pad_stats(array, pw, sl, opts.mode);
    }
    case PadMode::empty: {
      std::vector<PadDim> cfg;
      for (const auto& p : pw) cfg.push_back({p.first, p.second, 0});
      return lax_pad(array, zeros({}, array.dtype()), cfg);
    }
  }
  return array;
}

Array pad(const Array& array, std::int64_t pad_width, const PadOptions& opts) {
  return pad(array, PadWidth{{pad_width, pad_width}}, opts);
}

}  // namespace linum
