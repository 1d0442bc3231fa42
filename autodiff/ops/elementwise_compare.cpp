// Comparisons, logical connectives and the float predicates (bool results, no derivative), and
// select, the primitive behind where: its kernel broadcasts the condition and both branches.
#include <cmath>
#include <vector>

#include <linum/autodiff/ops/elementwise_rules.hpp>

namespace linum {
namespace detail {
namespace {

// Strides of an operand of shape s read as the broadcast shape os (0 on broadcast axes).
std::vector<std::int64_t> broadcast_strides(const Shape& s, const Shape& os) {
  const int nd = static_cast<int>(os.size()), lead = nd - static_cast<int>(s.size());
  std::vector<std::int64_t> st(nd, 0);
  const auto t = strides_of(s);
  for (int d = lead; d < nd; ++d)
    if (s[d - lead] != 1) st[d] = t[d - lead];
  return st;
}

// o = c ? x : y over the broadcast of the three operands into os.
template <class T>
void select_loop(const std::uint8_t* c, const Shape& cs, const T* x, const Shape& xs, const T* y,
                 const Shape& ys, T* o, const Shape& os) {
  const std::int64_t n = shape_size(os);
  if (n == 0) return;
  if (shape_size(cs) == n && shape_size(xs) == n && shape_size(ys) == n) {
    for (std::int64_t i = 0; i < n; ++i) o[i] = c[i] ? x[i] : y[i];
    return;
  }
  const int nd = static_cast<int>(os.size());
  const auto sc = broadcast_strides(cs, os), sx = broadcast_strides(xs, os), sy = broadcast_strides(ys, os);
  const std::int64_t inner = os[nd - 1], ic = sc[nd - 1], ix = sx[nd - 1], iy = sy[nd - 1];
  std::vector<std::int64_t> idx(nd, 0);
  std::int64_t oc = 0, ox = 0, oy = 0;
  for (std::int64_t base = 0; base < n; base += inner) {
    for (std::int64_t i = 0; i < inner; ++i) o[base + i] = c[oc + i * ic] ? x[ox + i * ix] : y[oy + i * iy];
    for (int d = nd - 2; d >= 0; --d) {  // odometer over the outer axes
      oc += sc[d];
      ox += sx[d];
      oy += sy[d];
      if (++idx[d] < os[d]) break;
      oc -= sc[d] * os[d];
      ox -= sx[d] * os[d];
      oy -= sy[d] * os[d];
      idx[d] = 0;
    }
  }
}

struct IsFinite final : Unary<IsFinite> {
  static constexpr const char* kName = "is_finite";
  static constexpr bool kNoGrad = true, kBoolOut = true;
  template <class T> static std::uint8_t f(T x) {
    if constexpr (std::is_floating_point_v<T>) return std::isfinite(x);
    else return (void)x, 1;
  }
};

struct IsNan final : Unary<IsNan> {
  static constexpr const char* kName = "is_nan";
  static constexpr bool kNoGrad = true, kBoolOut = true;
  template <class T> static std::uint8_t f(T x) {
    if constexpr (std::is_floating_point_v<T>) return std::isnan(x);
    else return (void)x, 0;
  }
};

struct Not final : Unary<Not> {
  static constexpr const char* kName = "not";
  static constexpr bool kNoGrad = true, kBoolOut = true;
  template <class T> static std::uint8_t f(T x) { return !x; }
};

// A comparison or logical connective: bool output, no derivative.
template <class D>
struct Compare : Binary<D> {
  static constexpr bool kBoolOut = true;
  bool differentiable() const override { return false; }
};

struct Eq final : Compare<Eq> {
  static constexpr const char* kName = "eq";
  template <class T> static std::uint8_t f(T x, T y) { return x == y; }
};
struct Ne final : Compare<Ne> {
  static constexpr const char* kName = "ne";
  template <class T> static std::uint8_t f(T x, T y) { return x != y; }
};
struct Lt final : Compare<Lt> {
  static constexpr const char* kName = "lt";
  template <class T> static std::uint8_t f(T x, T y) { return x < y; }
};
struct Le final : Compare<Le> {
  static constexpr const char* kName = "le";
  template <class T> static std::uint8_t f(T x, T y) { return x <= y; }
};
struct Gt final : Compare<Gt> {
  static constexpr const char* kName = "gt";
  template <class T> static std::uint8_t f(T x, T y) { return x > y; }
};
struct Ge final : Compare<Ge> {
  static constexpr const char* kName = "ge";
  template <class T> static std::uint8_t f(T x, T y) { return x >= y; }
};
struct And final : Compare<And> {
  static constexpr const char* kName = "and";
  template <class T> static std::uint8_t f(T x, T y) { return x && y; }
};
struct Or final : Compare<Or> {
  static constexpr const char* kName = "or";
  template <class T> static std::uint8_t f(T x, T y) { return x || y; }
};

// lax.select_n(cond, y, x) with numpy broadcasting of the three operands folded into the kernel;
// cotangents are routed to x where cond holds and to y elsewhere.
struct Select final : Primitive {
  const char* name() const override { return "select"; }
  bool handles_reduced_floats() const override { return true; }  // moves bits only
  Avals abstract_eval(std::span<const ShapeDtype> in) const override {
    return {{broadcast_shapes(broadcast_shapes(in[0].shape, in[1].shape, "select"), in[2].shape, "select"),
             in[1].dtype}};
  }
  Arrays eval(std::span<const Array> in) const override {
    const Array &c = in[0], &x = in[1], &y = in[2];
    const Shape os = broadcast_shapes(broadcast_shapes(c.shape(), x.shape(), "select"), y.shape(), "select");
    Array out = empty(os, x.dtype());
    dispatch_with_complex(x.dtype(), [&]<class T>() {
      select_loop(in_ptr<std::uint8_t>(c), c.shape(), in_ptr<T>(x), x.shape(), in_ptr<T>(y), y.shape(),
                  out_ptr<T>(out), os);
    });
    return {out};
  }
  Arrays jvp(std::span<const Array> p, std::span<const Array> t, std::span<const Array> o) const override {
    if (!t[1].valid() && !t[2].valid()) return {Array()};
    Array r = !t[2].valid() ? where(p[0], t[1], 0) : !t[1].valid() ? where(p[0], 0, t[2]) : where(p[0], t[1], t[2]);
    return {r.shape() == o[0].shape() ? r : broadcast_to(r, o[0].shape())};
  }
  Arrays vjp(std::span<const Array> p, std::span<const Array> ct, std::span<const Array>) const override {
    if (!ct[0].valid()) return {Array(), Array(), Array()};
    return {Array(), sum_to_shape(where(p[0], ct[0], 0), p[1].shape()),
            sum_to_shape(where(p[0], 0, ct[0]), p[2].shape())};
  }
  Batched vmap(std::span<const Array> in, std::span<const int> bdims) const override {
    Arrays a = align_batched(in, bdims);
    return {{bind1(singleton<Select>(), {a[0], a[1], a[2]})}, {0}};
  }
};

}  // namespace
}  // namespace detail

using namespace detail;

Array equal(const Array& a, const Array& b) { return binary<Eq>(a, b, "equal"); }
Array not_equal(const Array& a, const Array& b) { return binary<Ne>(a, b, "not_equal"); }
Array less(const Array& a, const Array& b) { return binary<Lt>(a, b, "less"); }
Array less_equal(const Array& a, const Array& b) { return binary<Le>(a, b, "less_equal"); }
Array greater(const Array& a, const Array& b) { return binary<Gt>(a, b, "greater"); }
Array greater_equal(const Array& a, const Array& b) { return binary<Ge>(a, b, "greater_equal"); }

Array logical_and(const Array& a, const Array& b) {
  check_valid(a, "logical_and");
  check_valid(b, "logical_and");
  broadcast_shapes(a.shape(), b.shape(), "logical_and");
  return bind1(singleton<And>(), {to_bool(a, "logical_and"), to_bool(b, "logical_and")});
}
Array logical_or(const Array& a, const Array& b) {
  check_valid(a, "logical_or");
  check_valid(b, "logical_or");
  broadcast_shapes(a.shape(), b.shape(), "logical_or");
  return bind1(singleton<Or>(), {to_bool(a, "logical_or"), to_bool(b, "logical_or")});
}
Array logical_not(const Array& x) { return bind1(singleton<Not>(), {to_bool(x, "logical_not")}); }
Array isfinite(const Array& x) {
  check_valid(x, "isfinite");
  return bind1(singleton<IsFinite>(), x);
}
Array isnan(const Array& x) {
  check_valid(x, "isnan");
  return bind1(singleton<IsNan>(), x);
}

Array where(const Array& cond, const Array& x, const Array& y) {
  check_valid(cond, "where");
  check_valid(x, "where");
  check_valid(y, "where");
  try {
    broadcast_shapes(broadcast_shapes(cond.shape(), x.shape(), "where"), y.shape(), "where");
  } catch (const ValueError&) {
    throw ValueError("where: shapes " + shape_str(cond.shape()) + " (condition), " + shape_str(x.shape()) +
                     " (x) and " + shape_str(y.shape()) + " (y) are incompatible for broadcasting");
  }
  const ResultType r = result_type(x, y);
  return bind1(singleton<Select>(), {to_bool(cond, "where"), promote_to(x, r), promote_to(y, r)});
}

}  // namespace linum
