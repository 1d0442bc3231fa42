// Integer and bitwise primitives (lax.div on integers, and/or/xor/not, the three shifts, gcd)
// and jnp's division family built on them and on lax.rem: floor_divide, remainder, divmod, fmod
// with numpy's sign rules, exactly as jnp composes them.
#include <limits>
#include <utility>

#include <linum/autodiff/ops/elementwise_math.hpp>
#include <linum/autodiff/ops/elementwise_rules.hpp>
#include <linum/autodiff/ops/reduction.hpp>

namespace linum {
namespace detail {
namespace {

template <class T>
concept Int = std::is_integral_v<T>;

// An integer op: no derivative (lax's defjvp_zero), so no tape node and a zero tangent.
template <class D>
struct IntBinary : Binary<D> {
  bool differentiable() const override { return false; }
};

// lax.div on integers: truncation toward zero, with XLA's results where C++ has none:
// x / 0 = -1 (all bits set) and INT_MIN / -1 = INT_MIN.
struct IntDiv final : IntBinary<IntDiv> {
  static constexpr const char* kName = "div";
  template <Int T>
  static T f(T x, T y) {
    if (y == 0) return static_cast<T>(-1);
    if constexpr (std::is_signed_v<T>)
      if (y == T(-1)) return wrapping_negate(x);
    return static_cast<T>(x / y);
  }
};

struct BitAnd final : IntBinary<BitAnd> {
  static constexpr const char* kName = "and";
  template <Int T>
  static T f(T x, T y) {
    return static_cast<T>(x & y);
  }
};
struct BitOr final : IntBinary<BitOr> {
  static constexpr const char* kName = "or";
  template <Int T>
  static T f(T x, T y) {
    return static_cast<T>(x | y);
  }
};
struct BitXor final : IntBinary<BitXor> {
  static constexpr const char* kName = "xor";
  template <Int T>
  static T f(T x, T y) {
    return static_cast<T>(x ^ y);
  }
};
struct BitNot final : Unary<BitNot> {
  static constexpr const char* kName = "not";
  static constexpr bool kNoGrad = true;
  template <Int T>
  static T f(T x) {
    return static_cast<T>(~x);
  }
};

// Shift counts are read as unsigned: a negative count is out of range like one >= the width.
template <class T>
bool shift_in_range(T y) {
  return static_cast<std::make_unsigned_t<T>>(y) < sizeof(T) * 8;
}
struct ShiftLeft final : IntBinary<ShiftLeft> {
  static constexpr const char* kName = "shift_left";
  template <Int T>
  static T f(T x, T y) {
    using U = std::make_unsigned_t<T>;
    return shift_in_range(y) ? static_cast<T>(static_cast<U>(x) << y) : T(0);
  }
};
struct ShiftRightArithmetic final : IntBinary<ShiftRightArithmetic> {
  static constexpr const char* kName = "shift_right_arithmetic";
  template <Int T>
  static T f(T x, T y) {
    using S = std::make_signed_t<T>;
    const S s = static_cast<S>(x);
    return static_cast<T>(shift_in_range(y) ? static_cast<S>(s >> y)
                                            : static_cast<S>(s < 0 ? -1 : 0));
  }
};
struct ShiftRightLogical final : IntBinary<ShiftRightLogical> {
  static constexpr const char* kName = "shift_right_logical";
  template <Int T>
  static T f(T x, T y) {
    using U = std::make_unsigned_t<T>;
    return shift_in_range(y) ? static_cast<T>(static_cast<U>(x) >> y) : T(0);
  }
};

// gcd(|x1|, |x2|) by Euclid's algorithm on the unsigned magnitudes (jnp runs the same steps as
// a while_loop over the whole array), so that |INT_MIN| does not overflow; gcd(0, 0) = 0.
struct Gcd final : IntBinary<Gcd> {
  static constexpr const char* kName = "gcd";
  template <Int T>
  static T f(T x, T y) {
    using U = std::make_unsigned_t<T>;
    auto magnitude = [](T v) {
      return v < 0 ? static_cast<U>(U(0) - static_cast<U>(v)) : static_cast<U>(v);
    };
    U a = magnitude(x), b = magnitude(y);
    while (b != 0) a = std::exchange(b, static_cast<U>(a % b));
    return static_cast<T>(a);
  }
};

// ---- plumbing ---------------------------------------------------------------------------------

std::string dtype_str(const Array& x) { return std::string(dtype_name(x.dtype())); }

// jnp's promote_args_numeric: the common dtype, bool read as int32.
std::pair<Array, Array> promote_numeric(const Array& a, const Array& b, const char* op) {
  auto [x, y] = promote(a, b, op);
  return {to_numeric(x, op), to_numeric(y, op)};
}

void require_integer(const Array& x, const char* op, const char* what) {
  if (!is_integer(x.dtype()))
    throw TypeError(std::string(op) + ": " + what + ", got " + dtype_str(x));
}

template <class P>
Array bind_int(const Array& x, const Array& y) {
  return bind1(singleton<P>(), x, y);
}

// jnp's _float_divmod: the quotient rounded to an integral value and the remainder with the
// divisor's sign; x2 == 0 divides x1 itself (inf or NaN, as numpy).
std::pair<Array, Array> float_divmod(const Array& x1, const Array& x2) {
  Array m = rem(x1, x2);
  Array corrected = where(equal(x2, 0), x1, x1 - m);
  Array d = corrected / x2;
  Array ind = logical_and(not_equal(m, 0), not_equal(sign(x2), sign(m)));
  m = where(ind, m + x2, m);
  d = where(ind, d - 1.0, d);
  return {round(d), m};
}

// Signed floor division from truncation: one less where the signs differ and it is inexact.
Array int_floor_divide(const Array& x1, const Array& x2) {
  Array q = bind_int<IntDiv>(x1, x2);
  if (x1.dtype() == uint32) return q;
  Array fix = logical_and(not_equal(sign(x1), sign(x2)), not_equal(rem(x1, x2), 0));
  return where(fix, q - 1, q);
}

// Bitwise ops read bool operands as logic (lax.and/or/xor on bool) and refuse floats.
template <class P>
Array bitwise(const Array& a, const Array& b, const char* op,
              Array (*logical)(const Array&, const Array&)) {
  auto [x, y] = promote(a, b, op);
  if (x.dtype() == bool_) return logical(x, y);
  require_integer(x, op, "expected integer or bool operands");
  return bind_int<P>(x, y);
}

}  // namespace
}  // namespace detail

using namespace detail;

Array bitwise_and(const Array& x1, const Array& x2) {
  return bitwise<BitAnd>(x1, x2, "bitwise_and", &logical_and);
}
Array bitwise_or(const Array& x1, const Array& x2) {
  return bitwise<BitOr>(x1, x2, "bitwise_or", &logical_or);
}
Array bitwise_xor(const Array& x1, const Array& x2) {
  return bitwise<BitXor>(x1, x2, "bitwise_xor", &logical_xor);
}
Array bitwise_not(const Array& x) {
  check_valid(x, "bitwise_not");
  if (x.dtype() == bool_) return logical_not(x);
  require_integer(x, "bitwise_not", "expected an integer or bool operand");
  return bind1(singleton<BitNot>(), x);
}
Array bitwise_invert(const Array& x) { return bitwise_not(x); }
Array invert(const Array& x) { return bitwise_not(x); }

Array left_shift(const Array& x1, const Array& x2) {
  auto [x, y] = promote_numeric(x1, x2, "left_shift");
  require_integer(x, "left_shift", "expected integer operands");
  return bind_int<ShiftLeft>(x, y);
}
Array right_shift(const Array& x1, const Array& x2) {
  auto [x, y] = promote_numeric(x1, x2, "right_shift");
  require_integer(x, "right_shift", "expected integer operands");
  return x.dtype() == uint32 ? bind_int<ShiftRightLogical>(x, y)
                             : bind_int<ShiftRightArithmetic>(x, y);
}
Array bitwise_left_shift(const Array& x1, const Array& x2) { return left_shift(x1, x2); }
Array bitwise_right_shift(const Array& x1, const Array& x2) { return right_shift(x1, x2); }

Array gcd(const Array& x1, const Array& x2) {
  auto [x, y] = promote(x1, x2, "gcd");
  if (!is_integer(x.dtype()))
    throw ValueError("gcd: arguments must be integers, got " + dtype_str(x));
  return bind_int<Gcd>(x, y);
}

Array lcm(const Array& x1, const Array& x2) {
  auto [x, y] = promote(x1, x2, "lcm");
  if (!is_integer(x.dtype()))
    throw ValueError("lcm: arguments must be integers, got " + dtype_str(x));
  x = abs(x);
  y = abs(y);
  Array d = gcd(x, y);
  return where(equal(d, 0), 0, x * floor_divide(y, d));
}

Array floor_divide(const Array& x1, const Array& x2) {
  auto [x, y] = promote_numeric(x1, x2, "floor_divide");
  if (is_integer(x.dtype())) return int_floor_divide(x, y);
  return float_divmod(x, y).first;
}

// A zero integer divisor is read as 1 (numpy's warning case gives 0 here, as jnp.remainder).
Array remainder(const Array& x1, const Array& x2) {
  auto [x, y] = promote_numeric(x1, x2, "remainder");
  if (is_integer(y.dtype())) y = where(equal(y, 0), 1, y);
  Array trunc_mod = rem(x, y);
  Array do_plus = logical_and(not_equal(less(trunc_mod, 0), less(y, 0)), not_equal(trunc_mod, 0));
  return where(do_plus, trunc_mod + y, trunc_mod);
}
Array mod(const Array& x1, const Array& x2) { return remainder(x1, x2); }

std::pair<Array, Array> divmod(const Array& x1, const Array& x2) {
  auto [x, y] = promote_numeric(x1, x2, "divmod");
  if (is_integer(x.dtype())) return {floor_divide(x, y), remainder(x, y)};
  return float_divmod(x, y);
}

Array fmod(const Array& x1, const Array& x2) {
  auto [x, y] = promote_numeric(x1, x2, "fmod");
  if (is_integer(y.dtype())) y = where(equal(y, 0), 1, y);
  return rem(x, y);
}

}  // namespace linum
