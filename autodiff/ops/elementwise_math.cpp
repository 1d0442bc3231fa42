// The elementwise primitives of jnp's trigonometric, hyperbolic and floating-point functions
// (lax.tan ... lax.atanh, atan2, exp2, cbrt, rem, nextafter) with their JVP rules as lax's, and
// the public functions that are one such primitive after jnp's dtype promotion.
#include <cmath>
#include <limits>
#include <numbers>

#include <linum/autodiff/ops/elementwise_math.hpp>
#include <linum/autodiff/ops/elementwise_rules.hpp>

namespace linum {
namespace detail {
namespace {

template <class T>
concept Float = std::is_floating_point_v<T>;

// ---- unary primitives -------------------------------------------------------------------------

struct Tan final : Unary<Tan> {
  static constexpr const char* kName = "tan";
  static constexpr bool kDerivFromOut = true;
  template <Float T>
  static T f(T x) {
    return std::tan(x);
  }
  static Array deriv(const Array&, const Array& out) { return 1.0 + square(out); }
};

// asin' = rsqrt(1 - x²), acos' = -rsqrt(1 - x²), atan' = 1 / (1 + x²) (lax's rules).
struct Asin final : Unary<Asin> {
  static constexpr const char* kName = "asin";
  template <Float T>
  static T f(T x) {
    return std::asin(x);
  }
  static Array deriv(const Array& x, const Array&) { return rsqrt(1.0 - square(x)); }
};

struct Acos final : Unary<Acos> {
  static constexpr const char* kName = "acos";
  template <Float T>
  static T f(T x) {
    return std::acos(x);
  }
  static Array deriv(const Array& x, const Array&) { return negative(rsqrt(1.0 - square(x))); }
};

struct Atan final : Unary<Atan> {
  static constexpr const char* kName = "atan";
  template <Float T>
  static T f(T x) {
    return std::atan(x);
  }
  static Array deriv(const Array& x, const Array&) { return 1.0 / (1.0 + square(x)); }
};

// sinh and cosh as XLA decomposes them: e^(x + log ½) ± e^(log ½ - x), which overflows only where
// the result does, and sinh from expm1 below |x| = 1, where e^x - e^-x would cancel.
struct Sinh final : Unary<Sinh> {
  static constexpr const char* kName = "sinh";
  template <Float T>
  static T f(T x) {
    if (std::abs(x) < T(1)) {
      const T e = std::expm1(x);
      return T(0.5) * (e + e / (e + T(1)));
    }
    const T log_half = std::log(T(0.5));
    return std::exp(x + log_half) - std::exp(log_half - x);
  }
  static Array deriv(const Array& x, const Array&) { return cosh(x); }
};

struct Cosh final : Unary<Cosh> {
  static constexpr const char* kName = "cosh";
  template <Float T>
  static T f(T x) {
    const T log_half = std::log(T(0.5));
    return std::exp(x + log_half) + std::exp(log_half - x);
  }
  static Array deriv(const Array& x, const Array&) { return sinh(x); }
};

struct Asinh final : Unary<Asinh> {
  static constexpr const char* kName = "asinh";
  template <Float T>
  static T f(T x) {
    return std::asinh(x);
  }
  static Array deriv(const Array& x, const Array&) { return rsqrt(square(x) + 1.0); }
};

// lax's rule uses x² - 1 rather than (x + 1)(x - 1): the domain is x >= 1.
struct Acosh final : Unary<Acosh> {
  static constexpr const char* kName = "acosh";
  template <Float T>
  static T f(T x) {
    return std::acosh(x);
  }
  static Array deriv(const Array& x, const Array&) { return rsqrt(square(x) - 1.0); }
};

struct Atanh final : Unary<Atanh> {
  static constexpr const char* kName = "atanh";
  template <Float T>
  static T f(T x) {
    return std::atanh(x);
  }
  static Array deriv(const Array& x, const Array&) { return 1.0 / ((1.0 + x) * (1.0 - x)); }
};

// XLA lowers exp2 to exp(log(2) x), with log(2) rounded to the dtype.
struct Exp2 final : Unary<Exp2> {
  static constexpr const char* kName = "exp2";
  static constexpr bool kDerivFromOut = true;
  template <Float T>
  static T f(T x) {
    return std::exp(static_cast<T>(std::numbers::ln2) * x);
  }
  static Array deriv(const Array&, const Array& out) { return out * std::numbers::ln2; }
};

struct Cbrt final : Unary<Cbrt> {
  static constexpr const char* kName = "cbrt";
  static constexpr bool kDerivFromOut = true;
  template <Float T>
  static T f(T x) {
    return std::cbrt(x);
  }
  static Array deriv(const Array&, const Array& out) { return power(out, -2) * (1.0 / 3.0); }
};

// jnp.signbit reads the sign bit of floats (so -0.0 and -nan count), x < 0 for signed integers.
struct SignBit final : Unary<SignBit> {
  static constexpr const char* kName = "signbit";
  static constexpr bool kNoGrad = true, kBoolOut = true;
  template <class T>
  static std::uint8_t f(T x) {
    if constexpr (std::is_floating_point_v<T>)
      return std::signbit(x);
    else if constexpr (std::is_signed_v<T>)
      return x < 0;
    else
      return (void)x, 0;
  }
};

// The k-th Maclaurin coefficient of sinc (0 for odd k, (-1)^(k/2) / (k + 1) for even k) as
// x * 0 + c: jnp.sinc's value at 0, whose JVP is the next coefficient, so that every derivative
// of sinc at 0 is exact.
struct SincMaclaurin final : Primitive {
  int k;
  explicit SincMaclaurin(int order) : k(order) {}
  const char* name() const override { return "sinc_maclaurin"; }
  void print_params(std::ostream& os) const override { os << "k=" << k; }
  Avals abstract_eval(std::span<const ShapeDtype> in) const override { return {in[0]}; }
  double coefficient() const { return k % 2 ? 0.0 : ((k / 2) % 2 ? -1.0 : 1.0) / (k + 1); }
  Arrays eval(std::span<const Array> in) const override {
    const Array& x = in[0];
    Array out = empty(x.shape(), x.dtype());
    dispatch_float(x.dtype(), "sinc", [&]<class T>() {
      const T* a = in_ptr<T>(x);
      T* o = out_ptr<T>(out);
      const T c = static_cast<T>(coefficient());
      for (std::int64_t i = 0; i < x.size(); ++i) o[i] = a[i] * T(0) + c;
    });
    return {out};
  }
  Array times_next(const Array& g, const Array& x) const {
    return g.valid() ? multiply(g, bind1(std::make_shared<const SincMaclaurin>(k + 1), {x}))
                     : Array();
  }
  Arrays jvp(std::span<const Array> p, std::span<const Array> t,
             std::span<const Array>) const override {
    return {times_next(t[0], p[0])};
  }
  Arrays vjp(std::span<const Array> p, std::span<const Array> ct,
             std::span<const Array>) const override {
    return {times_next(ct[0], p[0])};
  }
  Batched vmap(std::span<const Array> in, std::span<const int> bdims) const override {
    return {{bind1(std::make_shared<const SincMaclaurin>(k), {in[0]})}, {bdims[0]}};
  }
};

// jnp.frexp: (mantissa in [0.5, 1) with x's sign, int32 exponent); 0, inf and NaN give (x, 0).
// The mantissa's tangent is t * 2^-e, as jnp's custom JVP.
struct Frexp final : Primitive {
  const char* name() const override { return "frexp"; }
  Avals abstract_eval(std::span<const ShapeDtype> in) const override {
    return {{in[0].shape, in[0].dtype}, {in[0].shape, int32}};
  }
  bool weak_type_rule(bool) const override { return false; }
  Arrays eval(std::span<const Array> in) const override {
    const Array& x = in[0];
    Array m = empty(x.shape(), x.dtype()), e = empty(x.shape(), int32);
    dispatch_float(x.dtype(), "frexp", [&]<class T>() {
      const T* a = in_ptr<T>(x);
      T* om = out_ptr<T>(m);
      std::int32_t* oe = out_ptr<std::int32_t>(e);
      for (std::int64_t i = 0; i < x.size(); ++i) {
        int ex = 0;
        const bool plain = !std::isfinite(a[i]) || a[i] == T(0);
        om[i] = plain ? a[i] : std::frexp(a[i], &ex);
        oe[i] = plain ? 0 : ex;
      }
    });
    return {m, e};
  }
  static Array times_scale(const Array& g, const Array& e) {
    return g.valid() ? multiply(g, exp2(negative(astype(e, g.dtype())))) : Array();
  }
  Arrays jvp(std::span<const Array>, std::span<const Array> t,
             std::span<const Array> o) const override {
    return {times_scale(t[0], o[1]), Array()};
  }
  bool vjp_reads_input(std::size_t) const override { return false; }
  Arrays vjp(std::span<const Array>, std::span<const Array> ct,
             std::span<const Array> o) const override {
    return {times_scale(ct[0], o[1])};
  }
  Batched vmap(std::span<const Array> in, std::span<const int> bdims) const override {
    return {bind(singleton<Frexp>(), in), {bdims[0], bdims[0]}};
  }
};

// ---- binary primitives ------------------------------------------------------------------------

// lax.atan2(y, x): d/dy = x / (x² + y²), d/dx = -y / (x² + y²).
struct Atan2 final : Binary<Atan2> {
  static constexpr const char* kName = "atan2";
  template <Float T>
  static T f(T y, T x) {
    return std::atan2(y, x);
  }
  static std::pair<Array, Array> partials(const Array& y, const Array& x) {
    Array r2 = square(y) + square(x);
    return {x / r2, negative(y) / r2};
  }
  Arrays jvp(std::span<const Array> p, std::span<const Array> t,
             std::span<const Array> o) const override {
    auto [dy, dx] = partials(p[0], p[1]);
    Array r;
    if (t[0].valid()) r = multiply(t[0], dy);
    if (t[1].valid()) r = r.valid() ? add(r, multiply(t[1], dx)) : multiply(t[1], dx);
    return {r.valid() && r.shape() != o[0].shape() ? broadcast_to(r, o[0].shape()) : r};
  }
  Arrays vjp(std::span<const Array> p, std::span<const Array> ct,
             std::span<const Array>) const override {
    if (!ct[0].valid()) return {Array(), Array()};
    auto [dy, dx] = partials(p[0], p[1]);
    return {sum_to_shape(multiply(ct[0], dy), p[0].shape()),
            sum_to_shape(multiply(ct[0], dx), p[1].shape())};
  }
};

// lax.rem: the C remainder, with x's sign. Integer division by zero follows XLA (x % 0 = x,
// INT_MIN % -1 = 0). d/dx = 1, d/dy = -trunc(x / y), as lax's rule.
struct Rem final : Binary<Rem> {
  static constexpr const char* kName = "rem";
  template <class T>
  static T f(T x, T y) {
    if constexpr (std::is_floating_point_v<T>) {
      return std::fmod(x, y);
    } else {
      if (y == 0) return x;
      if constexpr (std::is_signed_v<T>)
        if (y == T(-1)) return T(0);
      return static_cast<T>(x % y);
    }
  }
  static Array dy(const Array& x, const Array& y) {
    Array q = x / y;
    return negative(sign(q) * floor(abs(q)));
  }
  Arrays jvp(std::span<const Array> p, std::span<const Array> t,
             std::span<const Array> o) const override {
    Array r;
    if (t[0].valid()) r = t[0];
    if (t[1].valid())
      r = r.valid() ? add(r, multiply(t[1], dy(p[0], p[1]))) : multiply(t[1], dy(p[0], p[1]));
    return {r.valid() && r.shape() != o[0].shape() ? broadcast_to(r, o[0].shape()) : r};
  }
  Arrays vjp(std::span<const Array> p, std::span<const Array> ct,
             std::span<const Array>) const override {
    if (!ct[0].valid()) return {Array(), Array()};
    return {sum_to_shape(ct[0], p[0].shape()),
            sum_to_shape(multiply(ct[0], dy(p[0], p[1])), p[1].shape())};
  }
};

// lax.nextafter has no derivative rule in JAX: differentiating it is an error here too.
struct NextAfter final : Binary<NextAfter> {
  static constexpr const char* kName = "nextafter";
  template <Float T>
  static T f(T x, T y) {
    return std::nextafter(x, y);
  }
};

// nextafter of a 2-byte float H, on float32 operands holding H values exactly (bind computes
// the 2-byte types in float32): the neighbouring H pattern, which float32's nextafter would not
// reach. Patterns are sign-magnitude, so one step away from zero is bits + 1 in either sign.
template <class H>
struct NextAfterTwoByte final : Binary<NextAfterTwoByte<H>> {
  static constexpr const char* kName = "nextafter";
  template <Float T>
  static T f(T x, T y) {
    if (x != x || y != y) return x + y;  // NaN
    if (x == y) return y;
    if (x == 0) return std::copysign(static_cast<T>(H::from_bits(1)), y);
    const H h(x);
    const bool away = (x < y) == (x > 0);
    return static_cast<T>(H::from_bits(static_cast<std::uint16_t>(away ? h.bits + 1 : h.bits - 1)));
  }
};

// ---- op plumbing ------------------------------------------------------------------------------

template <class P>
Array binary_float(const Array& a, const Array& b, const char* op) {
  auto [x, y] = promote_inexact(a, b, op);
  return bind1(singleton<P>(), x, y);
}

}  // namespace

Array rem(const Array& x, const Array& y) { return bind1(singleton<Rem>(), x, y); }
Array sinc_maclaurin(int k, const Array& x) {
  return bind1(std::make_shared<const SincMaclaurin>(k), {x});
}

std::span<const FusedEntry> math_fused_entries() {
  static const FusedEntry entries[] = {
      unary_entry<Tan>(),   unary_entry<Asin>(),       unary_entry<Acos>(),  unary_entry<Atan>(),
      unary_entry<Sinh>(),  unary_entry<Cosh>(),       unary_entry<Asinh>(), unary_entry<Acosh>(),
      unary_entry<Atanh>(), unary_entry<Exp2>(),       unary_entry<Cbrt>(),  binary_entry<Atan2>(),
      binary_entry<Rem>(),  binary_entry<NextAfter>(),
  };
  return entries;
}

}  // namespace detail

using namespace detail;

Array tan(const Array& x) { return unary_float<Tan>(x, "tan"); }
Array arcsin(const Array& x) { return unary_float<Asin>(x, "arcsin"); }
Array arccos(const Array& x) { return unary_float<Acos>(x, "arccos"); }
Array arctan(const Array& x) { return unary_float<Atan>(x, "arctan"); }
Array arctan2(const Array& y, const Array& x) { return binary_float<Atan2>(y, x, "arctan2"); }
Array sinh(const Array& x) { return unary_float<Sinh>(x, "sinh"); }
Array cosh(const Array& x) { return unary_float<Cosh>(x, "cosh"); }
Array arcsinh(const Array& x) { return unary_float<Asinh>(x, "arcsinh"); }
Array arccosh(const Array& x) { return unary_float<Acosh>(x, "arccosh"); }
Array arctanh(const Array& x) { return unary_float<Atanh>(x, "arctanh"); }
Array asin(const Array& x) { return arcsin(x); }
Array acos(const Array& x) { return arccos(x); }
Array atan(const Array& x) { return arctan(x); }
Array atan2(const Array& y, const Array& x) { return arctan2(y, x); }
Array asinh(const Array& x) { return arcsinh(x); }
Array acosh(const Array& x) { return arccosh(x); }
Array atanh(const Array& x) { return arctanh(x); }
Array exp2(const Array& x) { return unary_float<Exp2>(x, "exp2"); }
Array cbrt(const Array& x) { return unary_float<Cbrt>(x, "cbrt"); }
Array nextafter(const Array& x1, const Array& x2) {
  auto [x, y] = promote_inexact(x1, x2, "nextafter");
  if (x.dtype() == bfloat16) return bind1(singleton<NextAfterTwoByte<BFloat16>>(), {x, y});
  if (x.dtype() == float16) return bind1(singleton<NextAfterTwoByte<Float16>>(), {x, y});
  return bind1(singleton<NextAfter>(), x, y);
}
Array signbit(const Array& x) {
  check_valid(x, "signbit");
  return bind1(singleton<SignBit>(), x);
}
std::pair<Array, Array> frexp(const Array& x) {
  Arrays r = bind(singleton<Frexp>(), Arrays{to_inexact(x, "frexp")});
  return {r[0], r[1]};
}

}  // namespace linum
