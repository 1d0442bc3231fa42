// Elementwise primitives. Each primitive's kernel, JVP, VJP and batching rule sit together;
// the public op functions below them promote dtypes, check broadcasting, and bind.
#include <cmath>

#include <xsimd/xsimd.hpp>

#include <linum/autodiff/ops/kernel_util.hpp>

namespace linum {
namespace detail {
namespace {

// ---- kernels --------------------------------------------------------------------------------

// out = D::f(x) elementwise; float types use D's SIMD form when it has one.
template <class D>
Array unary_kernel(const Array& x, DType out_dtype) {
  Array out = empty(x.shape(), out_dtype);
  const std::int64_t n = x.size();
  dispatch(x.dtype(), [&]<class T>() {
    const T* a = in_ptr<T>(x);
    if constexpr (requires { D::template f<T>(T{}); }) {
      using O = decltype(D::template f<T>(T{}));
      O* o = out_ptr<O>(out);
      std::int64_t i = 0;
      if constexpr (std::is_floating_point_v<T> && std::is_same_v<O, T> &&
                    requires { D::simd(xsimd::batch<T>(T{})); }) {
        constexpr std::int64_t w = xsimd::batch<T>::size;
        for (; i + w <= n; i += w) D::simd(xsimd::batch<T>::load_unaligned(a + i)).store_unaligned(o + i);
      }
      for (; i < n; ++i) o[i] = D::template f<T>(a[i]);
    } else {
      throw TypeError(std::string(D::kName) + ": not defined for dtype " + std::string(dtype_name(x.dtype())));
    }
  });
  return out;
}

template <class D>
Array binary_kernel(const Array& a, const Array& b, DType out_dtype) {
  const Shape os = broadcast_shapes(a.shape(), b.shape(), D::kName);
  Array out = empty(os, out_dtype);
  dispatch(a.dtype(), [&]<class T>() {
    using O = decltype(D::template f<T>(T{}, T{}));
    broadcast_loop(in_ptr<T>(a), a.shape(), in_ptr<T>(b), b.shape(), out_ptr<O>(out), os,
                   [](T x, T y) { return D::template f<T>(x, y); });
  });
  return out;
}

// ---- rule skeletons ---------------------------------------------------------------------------

// A unary primitive whose JVP and VJP multiply by D::deriv(x, out).
template <class D>
struct Unary : Primitive {
  const char* name() const override { return D::kName; }
  Arrays eval(std::span<const Array> in) const override { return {unary_kernel<D>(in[0], in[0].dtype())}; }
  // Primitives without D::deriv override jvp/vjp themselves.
  static Array times_deriv(const Array& g, const Array& x, const Array& out) {
    if constexpr (requires { D::deriv(x, out); }) return g.valid() ? multiply(g, D::deriv(x, out)) : Array();
    else throw NotImplementedError(std::string("derivative of ") + D::kName + " is not implemented");
  }
  Arrays jvp(std::span<const Array> p, std::span<const Array> t, std::span<const Array> o) const override {
    return {times_deriv(t[0], p[0], o[0])};
  }
  Arrays vjp(std::span<const Array> p, std::span<const Array> ct, std::span<const Array> o) const override {
    return {times_deriv(ct[0], p[0], o[0])};
  }
  Batched vmap(std::span<const Array> in, std::span<const int> bdims) const override {
    return {{bind1(singleton<D>(), {in[0]})}, {bdims[0]}};
  }
};

// A broadcasting binary primitive; D supplies the kernel and its JVP/VJP.
template <class D>
struct Binary : Primitive {
  const char* name() const override { return D::kName; }
  Arrays eval(std::span<const Array> in) const override {
    return {binary_kernel<D>(in[0], in[1], in[0].dtype())};
  }
  Batched vmap(std::span<const Array> in, std::span<const int> bdims) const override {
    Arrays a = align_batched(in, bdims);
    return {{bind1(singleton<D>(), {a[0], a[1]})}, {0}};
  }
};

// ---- unary primitives -------------------------------------------------------------------------

struct Neg final : Unary<Neg> {
  static constexpr const char* kName = "neg";
  template <class T> static T f(T x) { return static_cast<T>(-x); }
  template <class B> static B simd(B x) { return -x; }
  Arrays jvp(std::span<const Array>, std::span<const Array> t, std::span<const Array>) const override {
    return {t[0].valid() ? negative(t[0]) : Array()};
  }
  Arrays vjp(std::span<const Array>, std::span<const Array> ct, std::span<const Array>) const override {
    return {ct[0].valid() ? negative(ct[0]) : Array()};
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
  template <class T> static T f(T x) requires std::is_floating_point_v<T> { return std::exp(x); }
  template <class B> static B simd(B x) { return xsimd::exp(x); }
  static Array deriv(const Array&, const Array& out) { return out; }
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

struct Tanh final : Unary<Tanh> {
  static constexpr const char* kName = "tanh";
  template <class T> static T f(T x) requires std::is_floating_point_v<T> { return std::tanh(x); }
  template <class B> static B simd(B x) { return xsimd::tanh(x); }
  static Array deriv(const Array&, const Array& out) { return 1.0 - square(out); }
};

struct Sqrt final : Unary<Sqrt> {
  static constexpr const char* kName = "sqrt";
  template <class T> static T f(T x) requires std::is_floating_point_v<T> { return std::sqrt(x); }
  template <class B> static B simd(B x) { return xsimd::sqrt(x); }
  static Array deriv(const Array&, const Array& out) { return 0.5 / out; }
};

// ---- binary primitives ------------------------------------------------------------------------

struct Add final : Binary<Add> {
  static constexpr const char* kName = "add";
  template <class T> static T f(T x, T y) { return static_cast<T>(x + y); }
  Arrays jvp(std::span<const Array> p, std::span<const Array> t, std::span<const Array> o) const override {
    if (!t[0].valid()) return {broadcast_to(t[1], o[0].shape())};
    if (!t[1].valid()) return {broadcast_to(t[0], o[0].shape())};
    (void)p;
    return {add(t[0], t[1])};
  }
  Arrays vjp(std::span<const Array> p, std::span<const Array> ct, std::span<const Array>) const override {
    return {sum_to_shape(ct[0], p[0].shape()), sum_to_shape(ct[0], p[1].shape())};
  }
};

struct Sub final : Binary<Sub> {
  static constexpr const char* kName = "sub";
  template <class T> static T f(T x, T y) { return static_cast<T>(x - y); }
  Arrays jvp(std::span<const Array>, std::span<const Array> t, std::span<const Array> o) const override {
    if (!t[0].valid()) return {broadcast_to(negative(t[1]), o[0].shape())};
    if (!t[1].valid()) return {broadcast_to(t[0], o[0].shape())};
    return {subtract(t[0], t[1])};
  }
  Arrays vjp(std::span<const Array> p, std::span<const Array> ct, std::span<const Array>) const override {
    return {sum_to_shape(ct[0], p[0].shape()), sum_to_shape(negative(ct[0]), p[1].shape())};
  }
};

struct Mul final : Binary<Mul> {
  static constexpr const char* kName = "mul";
  template <class T> static T f(T x, T y) { return static_cast<T>(x * y); }
  Arrays jvp(std::span<const Array> p, std::span<const Array> t, std::span<const Array>) const override {
    if (!t[0].valid()) return {multiply(p[0], t[1])};
    if (!t[1].valid()) return {multiply(t[0], p[1])};
    return {add(multiply(t[0], p[1]), multiply(p[0], t[1]))};
  }
  Arrays vjp(std::span<const Array> p, std::span<const Array> ct, std::span<const Array>) const override {
    return {sum_to_shape(multiply(ct[0], p[1]), p[0].shape()),
            sum_to_shape(multiply(p[0], ct[0]), p[1].shape())};
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

// A comparison: bool output, no derivative.
template <class D>
struct Compare : Binary<D> {
  bool differentiable() const override { return false; }
  Arrays eval(std::span<const Array> in) const override { return {binary_kernel<D>(in[0], in[1], bool_)}; }
};

struct Eq final : Compare<Eq> {
  static constexpr const char* kName = "eq";
  template <class T> static std::uint8_t f(T x, T y) { return x == y; }
};

// ---- op plumbing ------------------------------------------------------------------------------

// Promotes both operands to their common dtype and checks broadcasting with the user's shapes.
std::pair<Array, Array> promote(const Array& a, const Array& b, const char* op) {
  check_valid(a, op);
  check_valid(b, op);
  broadcast_shapes(a.shape(), b.shape(), op);
  const DType d = promote_types(a.dtype(), b.dtype());
  return {astype(a, d), astype(b, d)};
}

// Transcendental functions compute in floating point: integer inputs become float32, as in jnp.
Array to_inexact(const Array& x, const char* op) {
  check_valid(x, op);
  return is_floating(x.dtype()) ? x : astype(x, float32);
}

template <class P>
Array unary_float(const Array& x, const char* op) {
  return bind1(singleton<P>(), {to_inexact(x, op)});
}

template <class P>
Array binary(const Array& a, const Array& b, const char* op) {
  auto [x, y] = promote(a, b, op);
  return bind1(singleton<P>(), {x, y});
}

// astype: the VJP casts the cotangent back; integer inputs get no gradient.
struct Convert final : Primitive {
  DType to;
  explicit Convert(DType d) : to(d) {}
  const char* name() const override { return "convert_element_type"; }
  void print_params(std::ostream& os) const override { os << "new_dtype=" << to; }
  Arrays eval(std::span<const Array> in) const override {
    const Array& x = in[0];
    return {from_buffer(in_ptr<std::uint8_t>(x), x.shape(), x.dtype(), to)};
  }
  Arrays jvp(std::span<const Array>, std::span<const Array> t, std::span<const Array>) const override {
    return {is_floating(to) && t[0].valid() ? astype(t[0], to) : Array()};
  }
  Arrays vjp(std::span<const Array> p, std::span<const Array> ct, std::span<const Array>) const override {
    return {is_floating(p[0].dtype()) && ct[0].valid() ? astype(ct[0], p[0].dtype()) : Array()};
  }
  Batched vmap(std::span<const Array> in, std::span<const int> bdims) const override {
    return {{astype(in[0], to)}, {bdims[0]}};
  }
};

}  // namespace

Array weak_scalar(double value, DType scalar_kind, const Array& like) {
  check_valid(like, "weak_scalar");
  return make_scalar(value, promote_weak(like.dtype(), scalar_kind));
}

}  // namespace detail

using namespace detail;

Array add(const Array& a, const Array& b) { return binary<Add>(a, b, "add"); }
Array subtract(const Array& a, const Array& b) { return binary<Sub>(a, b, "subtract"); }
Array multiply(const Array& a, const Array& b) { return binary<Mul>(a, b, "multiply"); }
Array divide(const Array& a, const Array& b) {
  check_valid(a, "divide");
  check_valid(b, "divide");
  const DType d = promote_types(a.dtype(), b.dtype());
  const DType f = is_floating(d) ? d : float32;
  return binary<Div>(astype(a, f), astype(b, f), "divide");
}
Array maximum(const Array& a, const Array& b) { return binary<Max>(a, b, "maximum"); }
Array minimum(const Array& a, const Array& b) { return binary<Min>(a, b, "minimum"); }
Array equal(const Array& a, const Array& b) { return binary<Eq>(a, b, "equal"); }

Array negative(const Array& x) {
  check_valid(x, "negative");
  return bind1(singleton<Neg>(), {x});
}
Array sin(const Array& x) { return unary_float<Sin>(x, "sin"); }
Array cos(const Array& x) { return unary_float<Cos>(x, "cos"); }
Array exp(const Array& x) { return unary_float<Exp>(x, "exp"); }
Array log(const Array& x) { return unary_float<Log>(x, "log"); }
Array tanh(const Array& x) { return unary_float<Tanh>(x, "tanh"); }
Array sqrt(const Array& x) { return unary_float<Sqrt>(x, "sqrt"); }
Array square(const Array& x) { return multiply(x, x); }
Array relu(const Array& x) { return maximum(x, 0); }

Array astype(const Array& x, DType dtype) {
  check_valid(x, "astype");
  if (x.dtype() == dtype) return x;
  return bind1(std::make_shared<const Convert>(dtype), {x});
}

}  // namespace linum
