// The primitives of jax.scipy.special (lax.lgamma, digamma, polygamma, zeta, igamma, igammac,
// erfc, erf_inv, bessel_i0e, bessel_i1e, and the custom-JVP functions xlogy, xlog1py, logit,
// ndtri, log_ndtr) with their derivative rules as JAX's, and the public functions that bind one.
// Kernels call the scalar algorithms of special_math.hpp.
#include <cmath>
#include <numbers>

#include <linum/autodiff/ops/elementwise_math.hpp>
#include <linum/autodiff/ops/elementwise_rules.hpp>
#include <linum/autodiff/ops/special.hpp>
#include <linum/autodiff/ops/special_math.hpp>
#include <linum/autodiff/random/xla_math.hpp>

namespace linum {
namespace detail {
namespace {

template <class T>
concept Float = std::is_floating_point_v<T>;

Array bind_polygamma(const Array& n, const Array& x);
Array bind_bessel_i0e(const Array& x);
Array bind_bessel_i1e(const Array& x);

// ---- unary primitives -------------------------------------------------------------------------

struct Lgamma final : Unary<Lgamma> {
  static constexpr const char* kName = "lgamma";
  template <Float T>
  static T f(T x) {
    return special::lgamma(x);
  }
  static Array deriv(const Array& x, const Array&) { return digamma(x); }
};

struct Digamma final : Unary<Digamma> {
  static constexpr const char* kName = "digamma";
  template <Float T>
  static T f(T x) {
    return special::digamma(x);
  }
  static Array deriv(const Array& x, const Array&) {
    return bind_polygamma(make_scalar(1.0, x.dtype()), x);
  }
};

struct Erfc final : Unary<Erfc> {
  static constexpr const char* kName = "erfc";
  template <Float T>
  static T f(T x) {
    return special::erfc(x);
  }
  static Array deriv(const Array& x, const Array&) {
    return exp(negative(square(x))) * (-2 / std::sqrt(std::numbers::pi));
  }
};

// erf_inv' = sqrt(pi) / 2 exp(erf_inv(x)²).
struct ErfInv final : Unary<ErfInv> {
  static constexpr const char* kName = "erf_inv";
  static constexpr bool kDerivFromOut = true;
  template <Float T>
  static T f(T x) {
    return random::detail::erf_inv(x);
  }
  static Array deriv(const Array&, const Array& out) {
    return exp(square(out)) * (std::sqrt(std::numbers::pi) / 2);
  }
};

// i0e' = i1e(x) - sign(x) i0e(x).
struct BesselI0e final : Unary<BesselI0e> {
  static constexpr const char* kName = "bessel_i0e";
  template <Float T>
  static T f(T x) {
    return special::bessel_i0e(x);
  }
  static Array deriv(const Array& x, const Array& out) {
    return bind_bessel_i1e(x) - sign(x) * out;
  }
};

// i1e' = i0e(x) - i1e(x) (sign(x) + 1 / x), and 1/2 within eps of 0 (lax's rule).
struct BesselI1e final : Unary<BesselI1e> {
  static constexpr const char* kName = "bessel_i1e";
  template <Float T>
  static T f(T x) {
    return special::bessel_i1e(x);
  }
  static Array deriv(const Array& x, const Array& out) {
    const double eps = x.dtype() == float32 ? std::numeric_limits<float>::epsilon()
                                            : std::numeric_limits<double>::epsilon();
    Array not_tiny = greater(abs(x), eps);
    Array safe = where(not_tiny, x, eps);
    Array d = bind_bessel_i0e(safe) - out * (sign(safe) + 1.0 / safe);
    return where(not_tiny, d, 0.5);
  }
};

// scipy.special.logit with jax's rule logit' = 1 / (x (1 - x)).
struct Logit final : Unary<Logit> {
  static constexpr const char* kName = "logit";
  template <Float T>
  static T f(T x) {
    return std::log(x / (T(1) - x));
  }
  static Array deriv(const Array& x, const Array&) { return 1.0 / (x * (1.0 - x)); }
};

// x log x with jax's rule (log x + 1): entr's core, 0 at 0.
struct XLogX final : Unary<XLogX> {
  static constexpr const char* kName = "xlogx";
  template <Float T>
  static T f(T x) {
    return x != T(0) || std::isnan(x) ? x * std::log(x) : T(0);
  }
  static Array deriv(const Array& x, const Array&) { return log(x) + 1.0; }
};

// ndtri' = sqrt(2 pi) exp(ndtri(p)² / 2): the inverse function's derivative (jax reaches it by
// differentiating its rational approximations).
struct Ndtri final : Unary<Ndtri> {
  static constexpr const char* kName = "ndtri";
  static constexpr bool kDerivFromOut = true;
  template <Float T>
  static T f(T p) {
    return special::ndtri(p);
  }
  static Array deriv(const Array&, const Array& out) {
    return exp(square(out) * 0.5) * std::sqrt(2 * std::numbers::pi);
  }
};

// jax.scipy.special.log_ndtr with its custom JVP t exp(log φ(x) - log_ndtr(x)).
struct LogNdtr final : Primitive {
  int series_order;
  explicit LogNdtr(int order) : series_order(order) {}
  const char* name() const override { return "log_ndtr"; }
  void print_params(std::ostream& os) const override { os << "series_order=" << series_order; }
  Avals abstract_eval(std::span<const ShapeDtype> in) const override { return {in[0]}; }
  Arrays eval(std::span<const Array> in) const override {
    const Array& x = in[0];
    Array out = empty(x.shape(), x.dtype());
    dispatch_float(x.dtype(), "log_ndtr", [&]<class T>() {
      const T* a = in_ptr<T>(x);
      T* o = out_ptr<T>(out);
      for (std::int64_t i = 0; i < x.size(); ++i) o[i] = special::log_ndtr(a[i], series_order);
    });
    return {out};
  }
  static Array times_deriv(const Array& g, const Array& x, const Array& out) {
    if (!g.valid()) return Array();
    Array log_pdf = square(x) * -0.5 - std::log(std::sqrt(2 * std::numbers::pi));
    return g * exp(log_pdf - out);
  }
  Arrays jvp(std::span<const Array> p, std::span<const Array> t,
             std::span<const Array> o) const override {
    return {times_deriv(t[0], p[0], o[0])};
  }
  Arrays vjp(std::span<const Array> p, std::span<const Array> ct,
             std::span<const Array> o) const override {
    return {times_deriv(ct[0], p[0], o[0])};
  }
  Batched vmap(std::span<const Array> in, std::span<const int> bdims) const override {
    return {{bind1(std::make_shared<const LogNdtr>(series_order), {in[0]})}, {bdims[0]}};
  }
};

// ---- binary primitives ------------------------------------------------------------------------

// A broadcasting binary float primitive whose derivative in operand i is D::partial(i, x, y,
// out); D::partial throws for an operand JAX cannot differentiate in.
template <class D>
struct BinaryPartials : Binary<D> {
  Arrays jvp(std::span<const Array> p, std::span<const Array> t,
             std::span<const Array> o) const override {
    Array r;
    for (int i = 0; i < 2; ++i) {
      if (!t[i].valid()) continue;
      Array d = multiply(t[i], D::partial(i, p[0], p[1], o[0]));
      r = r.valid() ? add(r, d) : d;
    }
    return {r.valid() && r.shape() != o[0].shape() ? broadcast_to(r, o[0].shape()) : r};
  }
  Arrays vjp_needed(std::span<const Array> p, std::span<const Array> ct, std::span<const Array> o,
                    std::span<const bool> needed) const override {
    Arrays r(2);
    if (!ct[0].valid()) return r;
    for (int i = 0; i < 2; ++i)
      if (needed[i])
        r[i] = sum_to_shape(multiply(ct[0], D::partial(i, p[0], p[1], o[0])), p[i].shape());
    return r;
  }
  Arrays vjp(std::span<const Array> p, std::span<const Array> ct,
             std::span<const Array> o) const override {
    const bool both[2] = {true, true};
    return vjp_needed(p, ct, o, both);
  }
};

struct Polygamma final : BinaryPartials<Polygamma> {
  static constexpr const char* kName = "polygamma";
  template <Float T>
  static T f(T n, T x) {
    return special::polygamma(n, x);
  }
  static Array partial(int i, const Array& n, const Array& x, const Array&) {
    if (i == 0) throw ValueError("polygamma: the gradient with respect to n is not supported");
    return bind_polygamma(n + 1.0, x);
  }
};

// The partials of jax's zeta series (ops/special_math.hpp), which jax's zeta JVP
// differentiates; they are not differentiable themselves.
struct ZetaSeriesPartial final : Primitive {
  int wrt;
  explicit ZetaSeriesPartial(int i) : wrt(i) {}
  const char* name() const override { return "zeta_series_partial"; }
  void print_params(std::ostream& os) const override { os << "wrt=" << wrt; }
  Avals abstract_eval(std::span<const ShapeDtype> in) const override {
    return {{broadcast_shapes(in[0].shape, in[1].shape, "zeta"), in[0].dtype}};
  }
  Arrays eval(std::span<const Array> in) const override {
    const Shape os = broadcast_shapes(in[0].shape(), in[1].shape(), "zeta");
    Array out = empty(os, in[0].dtype());
    dispatch_float(in[0].dtype(), "zeta", [&]<class T>() {
      broadcast_loop(in_ptr<T>(in[0]), in[0].shape(), in_ptr<T>(in[1]), in[1].shape(),
                     out_ptr<T>(out), os,
                     [this](T x, T q) { return special::zeta_series_partial(wrt, x, q); });
    });
    return {out};
  }
  Batched vmap(std::span<const Array> in, std::span<const int> bdims) const override {
    Arrays a = align_batched(in, bdims);
    return {{bind1(std::make_shared<const ZetaSeriesPartial>(wrt), {a[0], a[1]})}, {0}};
  }
};

struct Zeta final : BinaryPartials<Zeta> {
  static constexpr const char* kName = "zeta";
  template <Float T>
  static T f(T x, T q) {
    return special::zeta(x, q);
  }
  static Array partial(int i, const Array& x, const Array& q, const Array&) {
    return bind1(std::make_shared<const ZetaSeriesPartial>(i), {x, q});
  }
};

struct IgammaGradA final : Binary<IgammaGradA> {
  static constexpr const char* kName = "igamma_grad_a";
  template <Float T>
  static T f(T a, T x) {
    return special::igamma_grad_a(a, x);
  }
};

// d/dx P(a, x) = exp(-x + (a - 1) log x - lgamma(a)); d/da through igamma_grad_a.
Array igamma_dx(const Array& a, const Array& x) {
  return exp(negative(x) + (a - 1.0) * log(x) - gammaln(a));
}
struct Igamma final : BinaryPartials<Igamma> {
  static constexpr const char* kName = "igamma";
  template <Float T>
  static T f(T a, T x) {
    return special::igamma(a, x);
  }
  static Array partial(int i, const Array& a, const Array& x, const Array&) {
    return i == 0 ? bind1(singleton<IgammaGradA>(), a, x) : igamma_dx(a, x);
  }
};
struct Igammac final : BinaryPartials<Igammac> {
  static constexpr const char* kName = "igammac";
  template <Float T>
  static T f(T a, T x) {
    return special::igammac(a, x);
  }
  static Array partial(int i, const Array& a, const Array& x, const Array& out) {
    return negative(Igamma::partial(i, a, x, out));
  }
};

// scipy's xlogy / xlog1py: 0 where x = 0 unless y is NaN, with jax's rules
// d/dx = log(y) (log1p(y)), d/dy = x / y (x / (1 + y)).
struct Xlogy final : BinaryPartials<Xlogy> {
  static constexpr const char* kName = "xlogy";
  template <Float T>
  static T f(T x, T y) {
    return x != T(0) || std::isnan(y) ? x * std::log(y) : T(0);
  }
  static Array partial(int i, const Array& x, const Array& y, const Array&) {
    return i == 0 ? log(y) : x / y;
  }
};
struct Xlog1py final : BinaryPartials<Xlog1py> {
  static constexpr const char* kName = "xlog1py";
  template <Float T>
  static T f(T x, T y) {
    return x != T(0) || std::isnan(y) ? x * std::log1p(y) : T(0);
  }
  static Array partial(int i, const Array& x, const Array& y, const Array&) {
    return i == 0 ? log1p(y) : x / (1.0 + y);
  }
};

Array bind_polygamma(const Array& n, const Array& x) {
  return bind1(singleton<Polygamma>(), n, x);
}
Array bind_bessel_i0e(const Array& x) { return bind1(singleton<BesselI0e>(), x); }
Array bind_bessel_i1e(const Array& x) { return bind1(singleton<BesselI1e>(), x); }

template <class P>
Array binary_float(const Array& a, const Array& b, const char* op) {
  auto [x, y] = promote_inexact(a, b, op);
  return bind1(singleton<P>(), x, y);
}

// ndtr, ndtri, log_ndtr accept float32 and float64 only, as jax.scipy.special's.
void require_float(const Array& x, const char* op) {
  check_valid(x, op);
  if (!is_floating(x.dtype()))
    throw TypeError(std::string(op) + ": expected a float32 or float64 array, got " +
                    std::string(dtype_name(x.dtype())));
}

}  // namespace

std::span<const FusedEntry> special_fused_entries() {
  static const FusedEntry entries[] = {
      unary_entry<Lgamma>(),     unary_entry<Digamma>(),   unary_entry<Erfc>(),
      unary_entry<ErfInv>(),     unary_entry<BesselI0e>(), unary_entry<BesselI1e>(),
      unary_entry<Logit>(),      unary_entry<XLogX>(),     unary_entry<Ndtri>(),
      binary_entry<Polygamma>(), binary_entry<Zeta>(),     binary_entry<Igamma>(),
      binary_entry<Igammac>(),   binary_entry<Xlogy>(),    binary_entry<Xlog1py>(),
  };
  return entries;
}

Array xlogx(const Array& x) { return bind1(singleton<XLogX>(), x); }

}  // namespace detail

using namespace detail;

Array gammaln(const Array& x) { return unary_float<Lgamma>(x, "gammaln"); }
Array digamma(const Array& x) { return unary_float<Digamma>(x, "digamma"); }
Array erfc(const Array& x) { return unary_float<Erfc>(x, "erfc"); }
Array erfinv(const Array& x) { return unary_float<ErfInv>(x, "erfinv"); }
Array i0e(const Array& x) { return unary_float<BesselI0e>(x, "i0e"); }
Array i1e(const Array& x) { return unary_float<BesselI1e>(x, "i1e"); }
Array logit(const Array& x) { return unary_float<Logit>(x, "logit"); }

Array polygamma(const Array& n, const Array& x) {
  check_valid(n, "polygamma");
  if (!is_integer(n.dtype()))
    throw ValueError("polygamma: argument n must be of integer type, got " +
                     std::string(dtype_name(n.dtype())));
  return binary_float<Polygamma>(n, x, "polygamma");
}
Array zeta(const Array& x, const Array& q) { return binary_float<Zeta>(x, q, "zeta"); }
Array gammainc(const Array& a, const Array& x) { return binary_float<Igamma>(a, x, "gammainc"); }
Array gammaincc(const Array& a, const Array& x) { return binary_float<Igammac>(a, x, "gammaincc"); }
Array xlogy(const Array& x, const Array& y) { return binary_float<Xlogy>(x, y, "xlogy"); }
Array xlog1py(const Array& x, const Array& y) { return binary_float<Xlog1py>(x, y, "xlog1py"); }

Array ndtri(const Array& p) {
  require_float(p, "ndtri");
  return bind1(singleton<Ndtri>(), p);
}

Array log_ndtr(const Array& x, int series_order) {
  require_float(x, "log_ndtr");
  if (series_order < 0 || series_order > 30)
    throw ValueError("log_ndtr: series_order must be in [0, 30], got " +
                     std::to_string(series_order));
  return bind1(std::make_shared<const LogNdtr>(series_order), {x});
}

// lax.special.ndtr: (1 + erf(x / sqrt 2)) / 2 near 0, erfc in the tails.
Array ndtr(const Array& x) {
  require_float(x, "ndtr");
  const double half_sqrt_2 = 0.5 * std::numbers::sqrt2;
  Array w = x * half_sqrt_2, z = abs(w);
  Array y = where(z < half_sqrt_2, 1.0 + erf(w), where(w > 0, 2.0 - erfc(z), erfc(z)));
  return y * 0.5;
}

}  // namespace linum
