// Elementwise primitives: arithmetic, the basic transcendental functions and their kin. Each
// primitive's kernel, JVP, VJP and batching rule sit together; the public op functions below
// them promote dtypes, check broadcasting, and bind. Comparisons, logical ops and where are in
// elementwise_compare.cpp, astype and dtype promotion in elementwise_convert.cpp.
#include <cmath>
#include <functional>
#include <limits>
#include <utility>

#include <linum/autodiff/ops/complex_arith.hpp>
#include <linum/autodiff/ops/elementwise_rules.hpp>

namespace linum {
namespace detail {
namespace {

// x^e by repeated squaring, as lax.integer_pow; integers wrap on overflow (unsigned arithmetic).
template <class T>
T int_power(T x, std::int64_t e) {
  using W = typename std::conditional_t<std::is_floating_point_v<T>, std::type_identity<T>,
                                        std::make_unsigned<T>>::type;
  const bool recip = e < 0;
  std::uint64_t k = recip ? static_cast<std::uint64_t>(-e) : static_cast<std::uint64_t>(e);
  W acc = 1, b = static_cast<W>(x);
  while (k) {
    if (k & 1) acc = static_cast<W>(acc * b);
    k >>= 1;
    if (k) b = static_cast<W>(b * b);
  }
  if constexpr (std::is_floating_point_v<T>) return recip ? T(1) / acc : acc;
  else return static_cast<T>(acc);
}


// ---- unary primitives -------------------------------------------------------------------------

struct Neg final : Unary<Neg> {
  static constexpr const char* kName = "neg";
  bool vjp_reads_input(std::size_t) const override { return false; }
  bool vjp_reads_output(std::size_t) const override { return false; }

  template <class T> static T f(T x) {
    if constexpr (std::is_integral_v<T>) return wrapping_negate(x);
    else return static_cast<T>(-x);  // not 0 - x: -(+0.0) is -0.0
  }
  template <class B> static B simd(B x) { return -x; }
  Arrays jvp(std::span<const Array>, std::span<const Array> t, std::span<const Array>) const override {
    return {t[0].valid() ? negative(t[0]) : Array()};
  }
  Arrays vjp(std::span<const Array>, std::span<const Array> ct, std::span<const Array>) const override {
    return arrays_of(ct[0].valid() ? negative(ct[0]) : Array());
  }
};

struct Sin final : Unary<Sin> {
  static constexpr const char* kName = "sin";
  template <class T> static T f(T x) requires std::is_floating_point_v<T> { return std::sin(x); }
  template <class B> static B simd(B x) { return xsimd::sin(x); }
  static Array deriv(const Array& x, const Array&) { return cos(x); }
};

struct Cos final : Unary<Cos> {
  static constexpr const char* kName = "cos";
  template <class T> static T f(T x) requires std::is_floating_point_v<T> { return std::cos(x); }
  template <class B> static B simd(B x) { return xsimd::cos(x); }
  static Array deriv(const Array& x, const Array&) { return negative(sin(x)); }
};

struct Exp final : Unary<Exp> {
  static constexpr const char* kName = "exp";
  static constexpr bool kDerivFromOut = true;
  template <class T> static T f(T x) requires std::is_floating_point_v<T> { return std::exp(x); }
  template <class B> static B simd(B x) { return xsimd::exp(x); }
  static Array deriv(const Array&, const Array& out) { return out; }
};

struct Expm1 final : Unary<Expm1> {
  static constexpr const char* kName = "expm1";
  template <class T> static T f(T x) requires std::is_floating_point_v<T> { return std::expm1(x); }
  template <class B> static B simd(B x) { return xsimd::expm1(x); }
  static Array deriv(const Array&, const Array& out) { return out + 1.0; }
};

struct Log final : Unary<Log> {
  static constexpr const char* kName = "log";
  template <class T> static T f(T x) requires std::is_floating_point_v<T> { return std::log(x); }
  template <class B> static B simd(B x) { return xsimd::log(x); }
  Arrays jvp(std::span<const Array> p, std::span<const Array> t, std::span<const Array>) const override {
    return {t[0].valid() ? divide(t[0], p[0]) : Array()};
  }
  Arrays vjp(std::span<const Array> p, std::span<const Array> ct, std::span<const Array>) const override {
    return {ct[0].valid() ? divide(ct[0], p[0]) : Array()};
  }
};

struct Log1p final : Unary<Log1p> {
  static constexpr const char* kName = "log1p";
  template <class T> static T f(T x) requires std::is_floating_point_v<T> { return std::log1p(x); }
  template <class B> static B simd(B x) { return xsimd::log1p(x); }
  Arrays jvp(std::span<const Array> p, std::span<const Array> t, std::span<const Array>) const override {
    return {t[0].valid() ? divide(t[0], p[0] + 1.0) : Array()};
  }
  Arrays vjp(std::span<const Array> p, std::span<const Array> ct, std::span<const Array>) const override {
    return {ct[0].valid() ? divide(ct[0], p[0] + 1.0) : Array()};
  }
};

struct Tanh final : Unary<Tanh> {
  static constexpr const char* kName = "tanh";
  static constexpr bool kDerivFromOut = true;
  template <class T> static T f(T x) requires std::is_floating_point_v<T> { return std::tanh(x); }
  template <class B> static B simd(B x) { return xsimd::tanh(x); }
  static Array deriv(const Array&, const Array& out) { return 1.0 - square(out); }
};

// jax.nn.sigmoid is lax.logistic: 1 / (1 + exp(-x)), which saturates cleanly at both ends.
struct Logistic final : Unary<Logistic> {
  static constexpr const char* kName = "logistic";
  static constexpr bool kDerivFromOut = true;
  template <class T> static T f(T x) requires std::is_floating_point_v<T> { return T(1) / (T(1) + std::exp(-x)); }
  template <class B> static B simd(B x) { return B(1) / (B(1) + xsimd::exp(-x)); }
  static Array deriv(const Array&, const Array& out) { return out * (1.0 - out); }
};

struct Erf final : Unary<Erf> {
  static constexpr const char* kName = "erf";
  template <class T> static T f(T x) requires std::is_floating_point_v<T> { return std::erf(x); }
  template <class B> static B simd(B x) { return xsimd::erf(x); }
  static Array deriv(const Array& x, const Array&) { return 1.1283791670955126 * exp(negative(square(x))); }
};

struct Sqrt final : Unary<Sqrt> {
  static constexpr const char* kName = "sqrt";
  template <class T> static T f(T x) requires std::is_floating_point_v<T> { return std::sqrt(x); }
  template <class B> static B simd(B x) { return xsimd::sqrt(x); }
  static Array deriv(const Array&, const Array& out) { return 0.5 / out; }
};

// xsimd's rsqrt is an approximation; 1 / sqrt keeps full precision as XLA's rsqrt does.
struct Rsqrt final : Unary<Rsqrt> {
  static constexpr const char* kName = "rsqrt";
  template <class T> static T f(T x) requires std::is_floating_point_v<T> { return T(1) / std::sqrt(x); }
  template <class B> static B simd(B x) { return B(1) / xsimd::sqrt(x); }
  static Array deriv(const Array& x, const Array& out) { return -0.5 * divide(out, x); }
};

struct Abs final : Unary<Abs> {
  static constexpr const char* kName = "abs";
  // Integers wrap as lax.abs does (abs(INT32_MIN) is INT32_MIN; negating it in int is UB);
  // floats clear the sign bit, so abs(-0.0) is +0.0 as on the SIMD path.
  template <class T> static T f(T x) requires std::is_signed_v<T> {
    if constexpr (std::is_integral_v<T>) return x < 0 ? wrapping_negate(x) : x;
    else return std::fabs(x);
  }
  template <class B> static B simd(B x) { return xsimd::abs(x); }
  // lax.abs's rule: the derivative at 0 is +1 (select(x >= 0, g, -g)).
  static Array pick(const Array& g, const Array& x) {
    return g.valid() ? where(greater_equal(x, 0), g, negative(g)) : Array();
  }
  Arrays jvp(std::span<const Array> p, std::span<const Array> t, std::span<const Array>) const override {
    return {pick(t[0], p[0])};
  }
  Arrays vjp(std::span<const Array> p, std::span<const Array> ct, std::span<const Array>) const override {
    return {pick(ct[0], p[0])};
  }
};

// sign keeps NaN and signed zeros, as lax.sign.
struct Sign final : Unary<Sign> {
  static constexpr const char* kName = "sign";
  static constexpr bool kNoGrad = true;
  template <class T> static T f(T x) {
    if constexpr (std::is_signed_v<T>) return x > 0 ? T(1) : x < 0 ? T(-1) : x;
    else return x > 0 ? T(1) : T(0);
  }
};

struct Floor final : Unary<Floor> {
  static constexpr const char* kName = "floor";
  static constexpr bool kNoGrad = true;
  template <class T> static T f(T x) requires std::is_floating_point_v<T> { return std::floor(x); }
  template <class B> static B simd(B x) { return xsimd::floor(x); }
};

struct Ceil final : Unary<Ceil> {
  static constexpr const char* kName = "ceil";
  static constexpr bool kNoGrad = true;
  template <class T> static T f(T x) requires std::is_floating_point_v<T> { return std::ceil(x); }
  template <class B> static B simd(B x) { return xsimd::ceil(x); }
};

// Half to even: nearbyint under the default rounding mode (jnp.round, lax.round(ROUND_TO_NEAREST_EVEN)).
struct Round final : Unary<Round> {
  static constexpr const char* kName = "round";
  static constexpr bool kNoGrad = true;
  template <class T> static T f(T x) requires std::is_floating_point_v<T> { return std::nearbyint(x); }
  template <class B> static B simd(B x) { return xsimd::nearbyint(x); }
};

// jax.nn.relu: max(x, 0) with JAX's custom JVP, so that relu'(0) = 0 (not maximum's 1/2).
struct Relu final : Unary<Relu> {
  static constexpr const char* kName = "relu";
  template <class T> static T f(T x) {
    if constexpr (std::is_floating_point_v<T>) return x <= T(0) ? T(0) : x;  // NaN stays NaN
    else if constexpr (std::is_signed_v<T>) return x < 0 ? T(0) : x;
    else return x;
  }
  template <class B> static B simd(B x) { return xsimd::select(x <= B(0), B(0), x); }
  static Array pick(const Array& g, const Array& x);
  Arrays jvp(std::span<const Array> p, std::span<const Array> t, std::span<const Array>) const override {
    return {pick(t[0], p[0])};
  }
  // relu(x) > 0 exactly where x > 0 (NaN and -0 included), so backward masks by the output and
  // the tape need not keep the input.
  bool vjp_reads_input(std::size_t) const override { return false; }
  Arrays vjp(std::span<const Array>, std::span<const Array> ct, std::span<const Array> o) const override {
    return {pick(ct[0], o[0])};
  }
};

// Identity on values; no derivative. Batching still applies it to the batched value, so that
// the gradient is stopped at every level (vmap(grad(...)) and grad(vmap(...)) alike).
struct StopGradient final : Primitive {
  const char* name() const override { return "stop_gradient"; }
  Avals abstract_eval(std::span<const ShapeDtype> in) const override { return {in[0]}; }
  bool differentiable() const override { return false; }
  Arrays eval(std::span<const Array> in) const override { return {in[0]}; }
  Batched vmap(std::span<const Array> in, std::span<const int> bdims) const override {
    return {{bind1(singleton<StopGradient>(), {in[0]})}, {bdims[0]}};
  }
};

// lax.integer_pow: x^y for a static integer y by repeated multiplication.
struct IntegerPow final : Primitive {
  std::int64_t y;
  explicit IntegerPow(std::int64_t e) : y(e) {}
  const char* name() const override { return "integer_pow"; }
  Avals abstract_eval(std::span<const ShapeDtype> in) const override { return {in[0]}; }
  void print_params(std::ostream& os) const override { os << "y=" << y; }
  Arrays eval(std::span<const Array> in) const override {
    const Array& x = in[0];
    Array out = empty(x.shape(), x.dtype());
    const std::int64_t n = x.size();
    dispatch(x.dtype(), [&]<class T>() {
      const T* a = in_ptr<T>(x);
      T* o = out_ptr<T>(out);
      if constexpr (std::is_floating_point_v<T>)
        if (y == 2) {  // the common square, vectorized by the compiler
          for (std::int64_t i = 0; i < n; ++i) o[i] = a[i] * a[i];
          return;
        }
      for (std::int64_t i = 0; i < n; ++i) o[i] = int_power(a[i], y);
    });
    return {out};
  }
  Array times_deriv(const Array& g, const Array& x) const {
    if (!g.valid() || y == 0) return Array();
    if (y == 1) return g;
    Array d = y == 2 ? x : bind1(std::make_shared<const IntegerPow>(y - 1), {x});
    return multiply(g, d * static_cast<double>(y));  // a weak scalar keeps d's dtype
  }
  Arrays jvp(std::span<const Array> p, std::span<const Array> t, std::span<const Array>) const override {
    return {times_deriv(t[0], p[0])};
  }
  Arrays vjp(std::span<const Array> p, std::span<const Array> ct, std::span<const Array>) const override {
    return {times_deriv(ct[0], p[0])};
  }
  Batched vmap(std::span<const Array> in, std::span<const int> bdims) const override {
    return {{bind1(std::make_shared<const IntegerPow>(y), {in[0]})}, {bdims[0]}};
  }
};

// ---- binary primitives ------------------------------------------------------------------------

struct Add final : Binary<Add> {
  static constexpr const char* kName = "add";
  bool vjp_reads_input(std::size_t) const override { return false; }
  bool vjp_reads_output(std::size_t) const override { return false; }

  template <class T> static T f(T x, T y) { return wrapping(x, y, std::plus<>()); }
  Arrays jvp(std::span<const Array> p, std::span<const Array> t, std::span<const Array> o) const override {
    if (!t[0].valid()) return {broadcast_to(t[1], o[0].shape())};
    if (!t[1].valid()) return {broadcast_to(t[0], o[0].shape())};
    (void)p;
    return {add(t[0], t[1])};
  }
  Arrays vjp(std::span<const Array> p, std::span<const Array> ct, std::span<const Array>) const override {
    return arrays_of(sum_to_shape(ct[0], p[0].shape()), sum_to_shape(ct[0], p[1].shape()));
  }
};

struct Sub final : Binary<Sub> {
  static constexpr const char* kName = "sub";
  bool vjp_reads_input(std::size_t) const override { return false; }
  bool vjp_reads_output(std::size_t) const override { return false; }

  template <class T> static T f(T x, T y) { return wrapping(x, y, std::minus<>()); }
  Arrays jvp(std::span<const Array>, std::span<const Array> t, std::span<const Array> o) const override {
    if (!t[0].valid()) return {broadcast_to(negative(t[1]), o[0].shape())};
    if (!t[1].valid()) return {broadcast_to(t[0], o[0].shape())};
    return {subtract(t[0], t[1])};
  }
  Arrays vjp(std::span<const Array> p, std::span<const Array> ct, std::span<const Array>) const override {
    return arrays_of(sum_to_shape(ct[0], p[0].shape()),
                     sum_to_shape(negative(ct[0]), p[1].shape()));
  }
};

struct Mul final : Binary<Mul> {
  static constexpr const char* kName = "mul";
  bool vjp_reads_output(std::size_t) const override { return false; }

  template <class T> static T f(T x, T y) { return wrapping(x, y, std::multiplies<>()); }
  Arrays jvp(std::span<const Array> p, std::span<const Array> t, std::span<const Array>) const override {
    if (!t[0].valid()) return {multiply(p[0], t[1])};
    if (!t[1].valid()) return {multiply(t[0], p[1])};
    return {add(multiply(t[0], p[1]), multiply(p[0], t[1]))};
  }
  Arrays vjp(std::span<const Array> p, std::span<const Array> ct, std::span<const Array> o) const override {
    const bool both[2] = {true, true};
    return vjp_needed(p, ct, o, both);
  }
  // A constant factor (x * 2.0) gets no cotangent: one multiply per backward step, not two.
  Arrays vjp_needed(std::span<const Array> p, std::span<const Array> ct, std::span<const Array>,
                    std::span<const bool> needed) const override {
    return arrays_of(needed[0] ? sum_to_shape(multiply(ct[0], p[1]), p[0].shape()) : Array(),
                     needed[1] ? sum_to_shape(multiply(p[0], ct[0]), p[1].shape()) : Array());
  }
};

struct Div final : Binary<Div> {
  static constexpr const char* kName = "div";
  template <class T> static T f(T x, T y) { return static_cast<T>(x / y); }
  Arrays jvp(std::span<const Array> p, std::span<const Array> t, std::span<const Array> o) const override {
    Array r;
    if (t[0].valid()) r = divide(t[0], p[1]);
    if (t[1].valid()) {
      Array d = negative(multiply(t[1], divide(o[0], p[1])));
      r = r.valid() ? add(r, d) : d;
    }
    return {r.shape() == o[0].shape() ? r : broadcast_to(r, o[0].shape())};
  }
  Arrays vjp(std::span<const Array> p, std::span<const Array> ct, std::span<const Array> o) const override {
    Array g = divide(ct[0], p[1]);
    return {sum_to_shape(g, p[0].shape()), sum_to_shape(negative(multiply(g, o[0])), p[1].shape())};
  }
};

// lax.pow with JAX's rules: d/dx = y x^(y-1), d/dy = log(x) x^y with log(0) read as 0.
struct Pow final : Binary<Pow> {
  static constexpr const char* kName = "pow";
  template <class T> static T f(T x, T y) {
    if constexpr (std::is_floating_point_v<T>) {
      return std::pow(x, y);
    } else if constexpr (std::is_signed_v<T>) {
      // Negative integer exponents follow XLA: 1 and -1 keep their magnitude, the rest give 0.
      if (y < 0) return x == 1 ? T(1) : x == -1 ? T(y % 2 ? -1 : 1) : T(0);
      return int_power(x, y);
    } else {
      return int_power(x, static_cast<std::int64_t>(y));
    }
  }
  static Array dx(const Array& x, const Array& y) { return multiply(y, power(x, y - 1.0)); }
  static Array dy(const Array& x, const Array& out) { return multiply(log(where(equal(x, 0), 1, x)), out); }
  Arrays jvp(std::span<const Array> p, std::span<const Array> t, std::span<const Array> o) const override {
    Array r;
    if (t[0].valid()) r = multiply(t[0], dx(p[0], p[1]));
    if (t[1].valid()) {
      Array d = multiply(t[1], dy(p[0], o[0]));
      r = r.valid() ? add(r, d) : d;
    }
    return {r.shape() == o[0].shape() ? r : broadcast_to(r, o[0].shape())};
  }
  Arrays vjp(std::span<const Array> p, std::span<const Array> ct, std::span<const Array> o) const override {
    return {sum_to_shape(multiply(ct[0], dx(p[0], p[1])), p[0].shape()),
            sum_to_shape(multiply(ct[0], dy(p[0], o[0])), p[1].shape())};
  }
};

struct Max final : Binary<Max> {
  static constexpr const char* kName = "max";
  template <class T> static T f(T x, T y) { return (x != x) ? x : (y != y) ? y : (x > y ? x : y); }
  // JAX's balanced rule: ties split the gradient evenly between the two inputs.
  static Array share(const Array& x, const Array& y, const Array& out) {
    Array xe = astype(equal(x, out), out.dtype()), ye = astype(equal(y, out), out.dtype());
    return divide(xe, add(xe, ye));
  }
  Arrays jvp(std::span<const Array> p, std::span<const Array> t, std::span<const Array> o) const override {
    Array wx = share(p[0], p[1], o[0]), r;
    if (t[0].valid()) r = multiply(t[0], wx);
    if (t[1].valid()) {
      Array d = multiply(t[1], 1.0 - wx);
      r = r.valid() ? add(r, d) : d;
    }
    return {r.shape() == o[0].shape() ? r : broadcast_to(r, o[0].shape())};
  }
  Arrays vjp(std::span<const Array> p, std::span<const Array> ct, std::span<const Array> o) const override {
    Array wx = share(p[0], p[1], o[0]);
    return {sum_to_shape(multiply(ct[0], wx), p[0].shape()),
            sum_to_shape(multiply(ct[0], 1.0 - wx), p[1].shape())};
  }
};

struct Min final : Binary<Min> {
  static constexpr const char* kName = "min";
  template <class T> static T f(T x, T y) { return (x != x) ? x : (y != y) ? y : (x < y ? x : y); }
  Arrays jvp(std::span<const Array> p, std::span<const Array> t, std::span<const Array> o) const override {
    return singleton<Max>()->jvp(p, t, o);  // the balanced tie rule is the same
  }
  Arrays vjp(std::span<const Array> p, std::span<const Array> ct, std::span<const Array> o) const override {
    return singleton<Max>()->vjp(p, ct, o);
  }
};

// relu's derivative applied to g (g where x > 0, else 0) in one pass, without the bool mask and
// the select that where(greater(x, 0), g, 0) costs. Linear in g, so it is its own JVP and VJP in
// g; x only selects and gets no cotangent.
struct ReluMask final : Binary<ReluMask> {
  static constexpr const char* kName = "relu_mask";
  template <class T> static T f(T g, T x) { return x > T(0) ? g : T(0); }
  Arrays jvp(std::span<const Array> p, std::span<const Array> t, std::span<const Array>) const override {
    return {Relu::pick(t[0], p[1])};
  }
  Arrays vjp(std::span<const Array> p, std::span<const Array> ct, std::span<const Array>) const override {
    return {Relu::pick(ct[0], p[1]), Array()};
  }
};

// The fused path needs g of x's shape and floating dtype (always so for relu's own tangents and
// cotangents); anything else takes the general where.
Array Relu::pick(const Array& g, const Array& x) {
  if (!g.valid()) return Array();
  if (g.shape() == x.shape() && g.dtype() == x.dtype() && is_floating(x.dtype()))
    return bind1(singleton<ReluMask>(), g, x);
  return where(greater(x, 0), g, 0);
}

Array integer_pow(const Array& x, std::int64_t y) {
  if (y < 0 && !is_inexact(x.dtype()))
    throw TypeError("power: integers cannot be raised to negative powers, got integer_pow(" +
                    std::string(dtype_name(x.dtype())) + shape_str(x.shape()) + ", " + std::to_string(y) + ")");
  if (y == 1) return x;
  return bind1(std::make_shared<const IntegerPow>(y), {x});
}


}  // namespace

namespace {

// integer_pow with y = 2 on floats, as IntegerPow's kernel computes it.
struct Square {
  template <class T> static T f(T x) { return x * x; }
};

}  // namespace

const FusedOp* integer_pow_fused_op(const Primitive& p) {
  static const FusedOp square{1, &unary_block<Square, float>, &unary_block<Square, double>,
                              &unary_scalar<Square, float>, &unary_scalar<Square, double>};
  const auto* ip = dynamic_cast<const IntegerPow*>(&p);
  return ip && ip->y == 2 ? &square : nullptr;
}

std::span<const FusedEntry> elementwise_fused_entries() {
  static const FusedEntry entries[] = {
      unary_entry<Neg>(),      unary_entry<Sin>(),       unary_entry<Cos>(),
      unary_entry<Exp>(),      unary_entry<Expm1>(),     unary_entry<Log>(),
      unary_entry<Log1p>(),    unary_entry<Tanh>(),      unary_entry<Logistic>(),
      unary_entry<Erf>(),      unary_entry<Sqrt>(),      unary_entry<Rsqrt>(),
      binary_entry<Add>(),     binary_entry<Sub>(),      binary_entry<Mul>(),
      binary_entry<Div>(),     binary_entry<Max>(),      binary_entry<Min>(),
  };
  return entries;
}

}  // namespace detail

using namespace detail;

Array add(const Array& a, const Array& b) {
  if (any_complex(a, b)) return complex_arithmetic(ComplexOp::add, a, b);
  return binary<Add>(a, b, "add");
}
Array subtract(const Array& a, const Array& b) {
  if (any_complex(a, b)) return complex_arithmetic(ComplexOp::subtract, a, b);
  auto [x, y] = promote(a, b, "subtract");
  // lax.sub accepts numbers only: bool - bool is a TypeError in JAX (NumPy too; use logical_xor).
  if (x.dtype() == bool_)
    throw TypeError(
        "subtract: sub does not accept dtype bool at position 0. Accepted dtypes at position 0 "
        "are subtypes of integer, floating, complexfloating.");
  return bind1(singleton<Sub>(), x, y);
}
Array multiply(const Array& a, const Array& b) {
  if (any_complex(a, b)) return complex_arithmetic(ComplexOp::multiply, a, b);
  return binary<Mul>(a, b, "multiply");
}
Array divide(const Array& a, const Array& b) {
  check_valid(a, "divide");
  check_valid(b, "divide");
  if (any_complex(a, b)) return complex_arithmetic(ComplexOp::divide, a, b);
  ResultType r = result_type(a, b);
  if (!is_floating(r.dtype)) r.dtype = float32;
  return binary<Div>(promote_to(a, r), promote_to(b, r), "divide");
}
Array maximum(const Array& a, const Array& b) { return binary<Max>(a, b, "maximum"); }
Array minimum(const Array& a, const Array& b) { return binary<Min>(a, b, "minimum"); }

// A concrete integral rank-0 exponent takes lax.integer_pow (exact products, no log in the
// derivative), as jnp.power does for a Python int exponent.
Array power(const Array& a, const Array& b) {
  auto [x, y] = promote(to_numeric(a, "power"), to_numeric(b, "power"), "power");
  // A C++ scalar exponent (weakly typed, as a Python scalar) takes integer_pow as x ** 2 does in
  // JAX; an array exponent is lax.pow whatever its value, so eager and jit agree bit for bit.
  if (!y.is_tracer() && y.ndim() == 0 && y.weak_type()) {
    const double e = y.item<double>();
    if (e == std::floor(e) && std::abs(e) <= std::numeric_limits<std::int32_t>::max())
      return integer_pow(x, static_cast<std::int64_t>(e));
  }
  return bind1(singleton<Pow>(), x, y);
}

Array negative(const Array& x) {
  check_valid(x, "negative");
  if (is_complex(x.dtype())) return complex_negative(x);
  // lax.neg accepts numbers only, as jnp.negative: -bool is a TypeError (use logical_not).
  if (x.dtype() == bool_)
    throw TypeError(
        "negative: neg does not accept dtype bool. Accepted dtypes are subtypes of integer, "
        "floating, complexfloating.");
  return bind1(singleton<Neg>(), x);
}
Array sin(const Array& x) { return unary_float<Sin>(x, "sin"); }
Array cos(const Array& x) { return unary_float<Cos>(x, "cos"); }
Array exp(const Array& x) { return unary_float<Exp>(x, "exp"); }
Array expm1(const Array& x) { return unary_float<Expm1>(x, "expm1"); }
Array log(const Array& x) { return unary_float<Log>(x, "log"); }
Array log1p(const Array& x) { return unary_float<Log1p>(x, "log1p"); }
Array tanh(const Array& x) { return unary_float<Tanh>(x, "tanh"); }
Array sigmoid(const Array& x) { return unary_float<Logistic>(x, "sigmoid"); }
Array erf(const Array& x) { return unary_float<Erf>(x, "erf"); }
Array sqrt(const Array& x) { return unary_float<Sqrt>(x, "sqrt"); }
Array rsqrt(const Array& x) { return unary_float<Rsqrt>(x, "rsqrt"); }
Array square(const Array& x) {
  if (x.valid() && is_complex(x.dtype())) return multiply(x, x);
  return integer_pow(to_numeric(x, "square"), 2);
}
Array abs(const Array& x) {
  check_valid(x, "abs");
  if (x.dtype() == bool_ || x.dtype() == uint32) return x;  // already non-negative, as jnp.abs
  if (is_complex(x.dtype())) return complex_abs(x);
  return bind1(singleton<Abs>(), x);
}
Array sign(const Array& x) { return bind1(singleton<Sign>(), {to_numeric(x, "sign")}); }
Array floor(const Array& x) { return rounding<Floor>(x, "floor"); }
Array ceil(const Array& x) { return rounding<Ceil>(x, "ceil"); }
Array round(const Array& x) { return rounding<Round>(x, "round"); }

// jnp.clip(x, lo, hi) = minimum(hi, maximum(lo, x)); an empty handle means no bound (None).
Array clip(const Array& x, const Array& lo, const Array& hi) {
  check_valid(x, "clip");
  if (lo.valid()) broadcast_shapes(x.shape(), lo.shape(), "clip");
  if (hi.valid()) broadcast_shapes(x.shape(), hi.shape(), "clip");
  Array r = lo.valid() ? maximum(lo, x) : x;
  return hi.valid() ? minimum(hi, r) : r;
}

Array stop_gradient(const Array& x) {
  check_valid(x, "stop_gradient");
  return bind1(singleton<StopGradient>(), x);
}

Array relu(const Array& x) { return bind1(singleton<Relu>(), {to_numeric(x, "relu")}); }

}  // namespace linum
