// Windowed reductions: reduce_window sum/max with their transposes (window spread,
// select-and-scatter) as primitives, and avg_pool / max_pool as flax.linen.pooling.
#include <algorithm>
#include <limits>
#include <memory>
#include <numeric>

#include <linum/autodiff/ops/window_util.hpp>

namespace linum {
namespace detail {
namespace {

using namespace window_util;

struct WindowParams {
  Vec window, strides;
  Pads pads;           // resolved, one per dim of the operand
  double divisor = 1;  // a sum's outputs divided by it in the same pass (avg_pool)
};

// The output shape of a window sweep: the abstract rule, without WindowGeom's tables.
Shape window_out_shape(const Shape& s, const WindowParams& p) {
  Shape out;
  for (std::size_t d = 0; d < s.size(); ++d)
    out.push_back(sweep_size(s[d], p.window[d], p.strides[d], p.pads[d], 1, 1));
  return out;
}

// A window sweep over every dim of an operand. Trailing dims that the window passes through
// untouched (window 1, stride 1, no padding) form a contiguous `inner` block handled by one loop.
struct WindowGeom {
  Shape in, out;
  Vec k;       // window per dim
  int nd = 0;  // leading dims with a real window
  i64 inner = 1, win = 1;
  std::vector<std::vector<i64>> tab;
  std::vector<Vec> wpos;

  bool tiles = true;  // the windows cover the operand exactly once (stride = window, no padding)

  WindowGeom(const Shape& s, const WindowParams& p) : in(s), k(p.window) {
    const int rank = static_cast<int>(s.size());
    for (int d = 0; d < rank; ++d)
      out.push_back(sweep_size(s[d], p.window[d], p.strides[d], p.pads[d], 1, 1));
    nd = rank;
    while (nd > 0 && p.window[nd - 1] == 1 && p.strides[nd - 1] == 1 &&
           p.pads[nd - 1] == std::pair<i64, i64>{0, 0})
      inner *= s[--nd];
    for (int d = 0; d < nd; ++d) {
      tab.push_back(axis_table(s[d], out[d], p.window[d], p.strides[d], p.pads[d].first, 1, 1));
      win *= p.window[d];
      tiles &= p.strides[d] == p.window[d] && p.pads[d] == std::pair<i64, i64>{0, 0} &&
               out[d] * p.window[d] == s[d];
    }
    for (i64 w = 0; w < win; ++w) {
      Vec j(nd);
      for (int d = nd - 1, r = static_cast<int>(w); d >= 0; --d)
        j[d] = r % p.window[d], r /= p.window[d];
      wpos.push_back(j);
    }
  }

  // f(output offset, offsets of the window's valid input elements, count): all in elements,
  // each the start of an `inner` block.
  template <class F>
  void visit(F f) const {
    i64 n_out = 1;
    for (int d = 0; d < nd; ++d) n_out *= out[d];
    if (n_out == 0 || inner == 0) return;
    Vec o(nd, 0), offs(static_cast<std::size_t>(win));
    for (i64 q = 0; q < n_out; ++q) {
      int cnt = 0;
      for (i64 w = 0; w < win; ++w) {
        i64 off = 0;
        for (int d = 0; d < nd; ++d) {
          const i64 idx = tab[d][o[d] * k[d] + wpos[w][d]];
          if (idx < 0) {
            off = -1;
            break;
          }
          off = off * in[d] + idx;
        }
        if (off >= 0) offs[cnt++] = off * inner;
      }
      f(q * inner, offs.data(), cnt);
      for (int d = nd - 1; d >= 0; --d) {
        if (++o[d] < out[d]) break;
        o[d] = 0;
      }
    }
  }
};

template <class T>
T lowest() {
  if constexpr (std::is_floating_point_v<T>)
    return -std::numeric_limits<T>::infinity();
  else
    return std::numeric_limits<T>::lowest();
}

// Offset (within the window's valid elements) of the first maximum at inner position c.
template <class T>
i64 argmax_at(const T* x, const i64* offs, int cnt, i64 c) {
  i64 best = offs[0];
  for (int i = 1; i < cnt; ++i)
    if (x[offs[i] + c] > x[best + c]) best = offs[i];
  return best;
}

Array reduce_window_sum_bind(const Array& x, const WindowParams& p);
Array window_spread_bind(const Array& ct, const WindowParams& p, const Shape& in);
Array reduce_window_max_bind(const Array& x, const WindowParams& p);
Array select_and_gather_bind(const Array& t, const Array& x, const WindowParams& p);
Array select_and_scatter_bind(const Array& ct, const Array& x, const WindowParams& p);

// A batching rule adds a pass-through window dim for the batch axis.
WindowParams with_batch_dim(const WindowParams& p, int b) {
  WindowParams q = p;
  q.window.insert(q.window.begin() + b, 1);
  q.strides.insert(q.strides.begin() + b, 1);
  q.pads.insert(q.pads.begin() + b, {0, 0});
  return q;
}

struct WindowBase : Primitive {
  WindowParams p;
  explicit WindowBase(WindowParams q) : p(std::move(q)) {}
  void print_params(std::ostream& os) const override {
    os << "window_dimensions=" << vec_str(p.window) << " window_strides=" << vec_str(p.strides)
       << " padding=" << pads_str(p.pads);
    if (p.divisor != 1) os << " divisor=" << p.divisor;
  }
};

// The monoids of reduce_window: an identity and an in-place combine.
struct SumMonoid {
  template <class T>
  static T identity() {
    return T(0);
  }
  template <class T>
  static void combine(T& acc, T v) {
    acc += v;
  }
};
struct MaxMonoid {
  template <class T>
  static T identity() {
    return lowest<T>();
  }
  template <class T>
  static void combine(T& acc, T v) {
    if (v > acc || v != v) acc = v;  // NaN propagates, as XLA's max
  }
};

// reduce_window with monoid M: each output is M's reduction of its window's valid elements.
template <class M>
struct ReduceWindow : WindowBase {
  using WindowBase::WindowBase;
  Avals abstract_eval(std::span<const ShapeDtype> in) const override {
    return {{window_out_shape(in[0].shape, p), in[0].dtype}};
  }
  Arrays eval(std::span<const Array> in) const override {
    WindowGeom g(in[0].shape(), p);
    Array out = empty(g.out, in[0].dtype());
    dispatch(in[0].dtype(), [&]<class T>() {
      const T* x = in_ptr<T>(in[0]);
      T* o = out_ptr<T>(out);
      const T d = static_cast<T>(p.divisor);
      g.visit([&](i64 oo, const i64* offs, int cnt) {
        std::fill(o + oo, o + oo + g.inner, M::template identity<T>());
        for (int i = 0; i < cnt; ++i)
          for (i64 c = 0; c < g.inner; ++c) M::combine(o[oo + c], x[offs[i] + c]);
        if (p.divisor != 1)
          for (i64 c = 0; c < g.inner; ++c) o[oo + c] /= d;
      });
    });
    return {out};
  }
};

struct ReduceWindowSum final : ReduceWindow<SumMonoid> {
  using ReduceWindow::ReduceWindow;
  const char* name() const override { return "reduce_window_sum"; }
  bool vjp_reads_input(std::size_t) const override { return false; }
  bool vjp_reads_output(std::size_t) const override { return false; }

  Arrays jvp(std::span<const Array>, std::span<const Array> t,
             std::span<const Array>) const override {
    return {reduce_window_sum_bind(t[0], p)};
  }
  Arrays vjp(std::span<const Array> pr, std::span<const Array> ct,
             std::span<const Array>) const override {
    return {ct[0].valid() ? window_spread_bind(ct[0], p, pr[0].shape()) : Array()};
  }
  Batched vmap(std::span<const Array> in, std::span<const int> bd) const override {
    return {{reduce_window_sum_bind(in[0], with_batch_dim(p, bd[0]))}, {bd[0]}};
  }
};

// The transpose of reduce_window_sum: each output's cotangent (over the divisor) is added to its
// whole window. Windows that tile the operand write each element once, with no zeroing pass.
struct WindowSpread final : WindowBase {
  Shape in_shape;
  WindowSpread(WindowParams q, Shape s) : WindowBase(std::move(q)), in_shape(std::move(s)) {}
  const char* name() const override { return "reduce_window_sum_transpose"; }
  Avals abstract_eval(std::span<const ShapeDtype> in) const override {
    return {{in_shape, in[0].dtype}};
  }
  Arrays eval(std::span<const Array> in) const override {
    WindowGeom g(in_shape, p);
    Array out = g.tiles ? empty(in_shape, in[0].dtype()) : zeros(in_shape, in[0].dtype());
    dispatch(in[0].dtype(), [&]<class T>() {
      const T* c = in_ptr<T>(in[0]);
      T* o = out_ptr<T>(out);
      const T d = static_cast<T>(p.divisor);
      g.visit([&](i64 oo, const i64* offs, int cnt) {
        for (int i = 0; i < cnt; ++i)
          for (i64 k = 0; k < g.inner; ++k) {
            const T v = p.divisor != 1 ? c[oo + k] / d : c[oo + k];
            o[offs[i] + k] = g.tiles ? v : o[offs[i] + k] + v;
          }
      });
    });
    return {out};
  }
  Arrays jvp(std::span<const Array>, std::span<const Array> t,
             std::span<const Array>) const override {
    return {window_spread_bind(t[0], p, in_shape)};
  }
  Arrays vjp(std::span<const Array>, std::span<const Array> ct,
             std::span<const Array>) const override {
    return {ct[0].valid() ? reduce_window_sum_bind(ct[0], p) : Array()};
  }
  Batched vmap(std::span<const Array> in, std::span<const int> bd) const override {
    Shape s = in_shape;
    s.insert(s.begin() + bd[0], in[0].shape(bd[0]));
    return {{window_spread_bind(in[0], with_batch_dim(p, bd[0]), s)}, {bd[0]}};
  }
};

struct ReduceWindowMax final : ReduceWindow<MaxMonoid> {
  using ReduceWindow::ReduceWindow;
  const char* name() const override { return "reduce_window_max"; }
  // The tangent (cotangent) at the first maximum of each window (XLA's select with >=).
  Arrays jvp(std::span<const Array> pr, std::span<const Array> t,
             std::span<const Array>) const override {
    return {select_and_gather_bind(t[0], pr[0], p)};
  }
  Arrays vjp(std::span<const Array> pr, std::span<const Array> ct,
             std::span<const Array>) const override {
    return {ct[0].valid() ? select_and_scatter_bind(ct[0], pr[0], p) : Array()};
  }
  Batched vmap(std::span<const Array> in, std::span<const int> bd) const override {
    return {{reduce_window_max_bind(in[0], with_batch_dim(p, bd[0]))}, {bd[0]}};
  }
};

// Both operands at batch axis 0 (the unbatched one broadcast), for the select primitives.
std::pair<Arrays, WindowParams> batch_both(std::span<const Array> in, std::span<const int> bd,
                                           const WindowParams& p) {
  const i64 B = in[bd[0] >= 0 ? 0 : 1].shape(bd[0] >= 0 ? bd[0] : bd[1]);
  return {{move_bdim(in[0], bd[0], 0, B), move_bdim(in[1], bd[1], 0, B)}, with_batch_dim(p, 0)};
}

// The select primitives (t, x): linear in t, each the other's transpose; x only routes, so it
// gets no derivative.
struct SelectBase : WindowBase {
  using BindFn = Array (*)(const Array&, const Array&, const WindowParams&);
  BindFn self, transposed;
  SelectBase(WindowParams q, BindFn s, BindFn t)
      : WindowBase(std::move(q)), self(s), transposed(t) {}
  Arrays jvp(std::span<const Array> pr, std::span<const Array> t,
             std::span<const Array>) const override {
    return {t[0].valid() ? self(t[0], pr[1], p) : Array()};
  }
  Arrays vjp(std::span<const Array> pr, std::span<const Array> ct,
             std::span<const Array>) const override {
    return {ct[0].valid() ? transposed(ct[0], pr[1], p) : Array(), Array()};
  }
  Batched vmap(std::span<const Array> in, std::span<const int> bd) const override {
    auto [a, q] = batch_both(in, bd, p);
    return {{self(a[0], a[1], q)}, {0}};
  }
};

// select_and_gather_add: out[window] = t at the window's first maximum of x.
struct SelectAndGather final : SelectBase {
  explicit SelectAndGather(WindowParams q)
      : SelectBase(std::move(q), select_and_gather_bind, select_and_scatter_bind) {}
  const char* name() const override { return "select_and_gather_add"; }
  Avals abstract_eval(std::span<const ShapeDtype> in) const override {
    return {{window_out_shape(in[1].shape, p), in[0].dtype}};
  }
  Arrays eval(std::span<const Array> in) const override {
    WindowGeom g(in[1].shape(), p);
    Array out = empty(g.out, in[0].dtype());
    dispatch_float(in[0].dtype(), "select_and_gather_add", [&]<class T>() {
      const T *t = in_ptr<T>(in[0]), *x = in_ptr<T>(in[1]);
      T* o = out_ptr<T>(out);
      g.visit([&](i64 oo, const i64* offs, int cnt) {
        for (i64 c = 0; c < g.inner; ++c)
          o[oo + c] = cnt ? t[argmax_at(x, offs, cnt, c) + c] : T(0);
      });
    });
    return {out};
  }
};

// select_and_scatter_add: each window's cotangent goes to the window's first maximum of x.
struct SelectAndScatter final : SelectBase {
  explicit SelectAndScatter(WindowParams q)
      : SelectBase(std::move(q), select_and_scatter_bind, select_and_gather_bind) {}
  const char* name() const override { return "select_and_scatter_add"; }
  Avals abstract_eval(std::span<const ShapeDtype> in) const override {
    return {{in[1].shape, in[0].dtype}};
  }
  Arrays eval(std::span<const Array> in) const override {
    WindowGeom g(in[1].shape(), p);
    Array out = zeros(in[1].shape(), in[0].dtype());
    dispatch_float(in[0].dtype(), "select_and_scatter_add", [&]<class T>() {
      const T *ct = in_ptr<T>(in[0]), *x = in_ptr<T>(in[1]);
      T* o = out_ptr<T>(out);
      g.visit([&](i64 oo, const i64* offs, int cnt) {
        if (cnt == 0) return;
        for (i64 c = 0; c < g.inner; ++c) o[argmax_at(x, offs, cnt, c) + c] += ct[oo + c];
      });
    });
    return {out};
  }
};

Array reduce_window_sum_bind(const Array& x, const WindowParams& p) {
  return bind1(std::make_shared<const ReduceWindowSum>(p), {x});
}
Array window_spread_bind(const Array& ct, const WindowParams& p, const Shape& in) {
  return bind1(std::make_shared<const WindowSpread>(p, in), {ct});
}
Array reduce_window_max_bind(const Array& x, const WindowParams& p) {
  return bind1(std::make_shared<const ReduceWindowMax>(p), {x});
}
Array select_and_gather_bind(const Array& t, const Array& x, const WindowParams& p) {
  return bind1(std::make_shared<const SelectAndGather>(p), {t, x});
}
Array select_and_scatter_bind(const Array& ct, const Array& x, const WindowParams& p) {
  return bind1(std::make_shared<const SelectAndScatter>(p), {ct, x});
}

}  // namespace
}  // namespace detail

using namespace detail;

namespace {

// reduce_window, a sum's outputs divided by `divisor` in the same pass.
Array reduce_window_divided(const Array& x, WindowReduce op,
                            const std::vector<std::int64_t>& window,
                            const std::vector<std::int64_t>& strides, const Padding& padding,
                            double divisor) {
  const char* name = "reduce_window";
  check_valid(x, name);
  const auto nd = static_cast<std::size_t>(x.ndim());
  if (window.size() != nd)
    throw ValueError(std::string(name) + ": window_dimensions " + vec_str(window) +
                     " must have one entry per dimension of the operand of shape " +
                     shape_str(x.shape()));
  WindowParams p;
  p.window = window;
  for (i64 w : window)
    if (w < 1)
      throw ValueError(std::string(name) + ": window_dimensions must be positive, got " +
                       vec_str(window));
  p.strides = per_dim(strides, nd, "window_strides", name);
  p.pads = resolve_padding(padding, x.shape(), window, p.strides, name);
  for (std::size_t d = 0; d < nd; ++d)
    if (p.pads[d].first < 0 || p.pads[d].second < 0 ||
        checked_padded(name, x.shape()[d], 1, p.pads[d]) < 0)
      throw ValueError(std::string(name) + ": padding must be non-negative, got " +
                       pads_str(p.pads));
  if (x.dtype() == bool_)
    throw TypeError(std::string(name) + ": bool operands are not supported (use astype(int32))");
  p.divisor = divisor;
  return op == WindowReduce::sum ? reduce_window_sum_bind(x, p) : reduce_window_max_bind(x, p);
}

// flax.linen.pooling.pool: the window covers the dims between the batch dims and the features.
Array window_pool(const char* name, const Array& x, WindowReduce op, const Vec& window, Vec strides,
                  const Padding& padding, double divisor = 1) {
  check_valid(x, name);
  const int k = static_cast<int>(window.size());
  if (x.ndim() < k + 1)
    throw ValueError(std::string(name) + ": window_shape " + vec_str(window) +
                     " needs an input of rank at least " + std::to_string(k + 1) +
                     " (batch..., window dims..., features), got shape " + shape_str(x.shape()));
  if (strides.empty()) strides = Vec(window.size(), 1);
  if (strides.size() != window.size())
    throw ValueError(std::string(name) + ": strides " + vec_str(strides) +
                     " must have as many entries as window_shape " + vec_str(window));
  const int nb = x.ndim() - k - 1;
  Vec dims(nb, 1), st(nb, 1);
  dims.insert(dims.end(), window.begin(), window.end());
  st.insert(st.end(), strides.begin(), strides.end());
  dims.push_back(1);
  st.push_back(1);
  Padding pad = padding;
  if (padding.mode.empty()) {
    if (padding.pads.size() != window.size())
      throw ValueError(std::string(name) + ": padding " + pads_str(padding.pads) +
                       " must have one (low, high) pair per window dimension (" +
                       std::to_string(k) + ")");
    pad.pads.assign(static_cast<std::size_t>(nb), {0, 0});
    pad.pads.insert(pad.pads.end(), padding.pads.begin(), padding.pads.end());
    pad.pads.emplace_back(0, 0);
  }
  return reduce_window_divided(x, op, dims, st, pad, divisor);
}

}  // namespace

Array reduce_window(const Array& x, WindowReduce op, const std::vector<std::int64_t>& window,
                    const std::vector<std::int64_t>& strides, const Padding& padding) {
  return reduce_window_divided(x, op, window, strides, padding, 1);
}

Array avg_pool(const Array& x, const std::vector<std::int64_t>& window,
               std::vector<std::int64_t> strides, const Padding& padding, bool count_include_pad) {
  if (count_include_pad) {  // every window divides by its full size
    const i64 n = std::accumulate(window.begin(), window.end(), i64{1}, std::multiplies<>());
    // Floats divide inside the sum's pass (and its VJP's), as s / n would; integers promote.
    if (is_floating(x.dtype()))
      return window_pool("avg_pool", x, WindowReduce::sum, window, std::move(strides), padding,
                         static_cast<double>(n));
    return window_pool("avg_pool", x, WindowReduce::sum, window, strides, padding) /
           static_cast<double>(n);
  }
  Array s = window_pool("avg_pool", x, WindowReduce::sum, window, strides, padding);
  // Flax sum-pools float32 ones shaped as the input's spatial dims (the batch dims 1 here: they
  // broadcast) to count each window's input elements; the padding adds none.
  Shape ones_shape = x.shape();
  const std::size_t nb = ones_shape.size() - window.size() - 1;
  for (std::size_t i = 0; i < nb; ++i) ones_shape[i] = 1;
  ones_shape.back() = 1;
  Array counts = window_pool("avg_pool", ones(ones_shape, float32), WindowReduce::sum, window,
                             std::move(strides), padding);
  return s / counts;
}

Array max_pool(const Array& x, const std::vector<std::int64_t>& window,
               std::vector<std::int64_t> strides, const Padding& padding) {
  return window_pool("max_pool", x, WindowReduce::max, window, std::move(strides), padding);
}

Array min_pool(const Array& x, const std::vector<std::int64_t>& window,
               std::vector<std::int64_t> strides, const Padding& padding) {
  if (!is_floating(x.dtype()))  // -x would wrap the integer minimum
    throw TypeError("min_pool: expected a float32 or float64 input, got " +
                    std::string(dtype_name(x.dtype())));
  return negative(
      window_pool("min_pool", negative(x), WindowReduce::max, window, std::move(strides), padding));
}

Array pool(const Array& x, double init, WindowReduce op, const std::vector<std::int64_t>& window,
           std::vector<std::int64_t> strides, const Padding& padding) {
  const double identity = op == WindowReduce::sum ? 0.0 : -std::numeric_limits<double>::infinity();
  if (init != identity)
    throw ValueError("pool: init must be the identity of the reduction (" +
                     std::string(op == WindowReduce::sum ? "0 for sum" : "-inf for max") +
                     "), got " + std::to_string(init));
  return window_pool("pool", x, op, window, std::move(strides), padding);
}

}  // namespace linum
