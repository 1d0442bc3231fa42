// Complex numbers. Five primitives carry the complex-specific kernels and rules (real, imag,
// conj, lax.complex, abs, angle); arithmetic and sums are composed from them and the real ops on
// the real and imaginary parts, so every transform's rules come from the real ones. Cotangents
// follow JAX's convention: the VJP of a linear map is its transpose, not its adjoint (the VJP
// of real(z) is complex(ct, 0), of imag(z) complex(0, -ct)).
#include <linum/autodiff/ops/complex.hpp>

#include <cmath>
#include <numbers>

#include <linum/autodiff/ops/complex_arith.hpp>
#include <linum/autodiff/ops/kernel_util.hpp>

namespace linum {
namespace detail {
namespace {

// out[i] = f(x[i]) for complex x; f's result type decides the output's (real or complex).
template <class F>
Array map_complex(const Array& x, DType out_dtype, F f) {
  Array out = empty(x.shape(), out_dtype);
  const std::int64_t n = x.size();
  auto run = [&]<class R>() {
    const auto* a = in_ptr<std::complex<R>>(x);
    using O = decltype(f(std::complex<R>{}));
    O* o = out_ptr<O>(out);
    for (std::int64_t i = 0; i < n; ++i) o[i] = f(a[i]);
  };
  if (x.dtype() == complex64)
    run.template operator()<float>();
  else
    run.template operator()<double>();
  return out;
}

// A one-input complex primitive applied elementwise: batching keeps the batch axis.
template <class D>
struct ComplexUnary : Primitive {
  const char* name() const override { return D::kName; }
  Batched vmap(std::span<const Array> in, std::span<const int> bdims) const override {
    return {{bind1(singleton<D>(), {in[0]})}, {bdims[0]}};
  }
};

Array zeros_of(const Array& like) { return zeros_like(like); }

struct RealPart final : ComplexUnary<RealPart> {
  static constexpr const char* kName = "real";
  bool vjp_reads_input(std::size_t) const override { return false; }
  bool vjp_reads_output(std::size_t) const override { return false; }
  Avals abstract_eval(std::span<const ShapeDtype> in) const override {
    return {{in[0].shape, real_dtype(in[0].dtype)}};
  }
  Arrays eval(std::span<const Array> in) const override {
    return {map_complex(in[0], real_dtype(in[0].dtype()), [](auto z) { return z.real(); })};
  }
  Arrays jvp(std::span<const Array>, std::span<const Array> t,
             std::span<const Array>) const override {
    return {t[0].valid() ? real(t[0]) : Array()};
  }
  Arrays vjp(std::span<const Array>, std::span<const Array> ct,
             std::span<const Array>) const override {
    return {ct[0].valid() ? complex(ct[0], zeros_of(ct[0])) : Array()};
  }
};

struct ImagPart final : ComplexUnary<ImagPart> {
  static constexpr const char* kName = "imag";
  bool vjp_reads_input(std::size_t) const override { return false; }
  bool vjp_reads_output(std::size_t) const override { return false; }
  Avals abstract_eval(std::span<const ShapeDtype> in) const override {
    return {{in[0].shape, real_dtype(in[0].dtype)}};
  }
  Arrays eval(std::span<const Array> in) const override {
    return {map_complex(in[0], real_dtype(in[0].dtype()), [](auto z) { return z.imag(); })};
  }
  Arrays jvp(std::span<const Array>, std::span<const Array> t,
             std::span<const Array>) const override {
    return {t[0].valid() ? imag(t[0]) : Array()};
  }
  Arrays vjp(std::span<const Array>, std::span<const Array> ct,
             std::span<const Array>) const override {
    return {ct[0].valid() ? complex(zeros_of(ct[0]), negative(ct[0])) : Array()};
  }
};

struct Conj final : ComplexUnary<Conj> {
  static constexpr const char* kName = "conj";
  bool vjp_reads_input(std::size_t) const override { return false; }
  bool vjp_reads_output(std::size_t) const override { return false; }
  Avals abstract_eval(std::span<const ShapeDtype> in) const override { return {in[0]}; }
  Arrays eval(std::span<const Array> in) const override {
    return {map_complex(in[0], in[0].dtype(), [](auto z) { return std::conj(z); })};
  }
  Arrays jvp(std::span<const Array>, std::span<const Array> t,
             std::span<const Array>) const override {
    return {t[0].valid() ? conj(t[0]) : Array()};
  }
  Arrays vjp(std::span<const Array>, std::span<const Array> ct,
             std::span<const Array>) const override {
    return {ct[0].valid() ? conj(ct[0]) : Array()};
  }
};

// |z| (std::abs, which avoids overflow as hypot does). lax.abs's rule: d|z| = re(conj(z) dz)/|z|
// with |z| read as 1 where it is 0, so the derivative at 0 is 0.
struct ComplexAbs final : ComplexUnary<ComplexAbs> {
  static constexpr const char* kName = "abs";
  Avals abstract_eval(std::span<const ShapeDtype> in) const override {
    return {{in[0].shape, real_dtype(in[0].dtype)}};
  }
  Arrays eval(std::span<const Array> in) const override {
    return {map_complex(in[0], real_dtype(in[0].dtype()), [](auto z) { return std::abs(z); })};
  }
  static Array safe(const Array& out) { return where(equal(out, 0), 1, out); }
  Arrays jvp(std::span<const Array> p, std::span<const Array> t,
             std::span<const Array> o) const override {
    if (!t[0].valid()) return {Array()};
    return {divide(real(multiply(conj(p[0]), t[0])), safe(o[0]))};
  }
  Arrays vjp(std::span<const Array> p, std::span<const Array> ct,
             std::span<const Array> o) const override {
    if (!ct[0].valid()) return {Array()};
    return {multiply(divide(ct[0], safe(o[0])), conj(p[0]))};
  }
};

// arg(z) = atan2(im, re); d arg = im(conj(z) dz) / |z|^2 (NaN at 0, as atan2's rule gives).
struct Angle final : ComplexUnary<Angle> {
  static constexpr const char* kName = "angle";
  bool vjp_reads_output(std::size_t) const override { return false; }
  Avals abstract_eval(std::span<const ShapeDtype> in) const override {
    return {{in[0].shape, real_dtype(in[0].dtype)}};
  }
  Arrays eval(std::span<const Array> in) const override {
    return {map_complex(in[0], real_dtype(in[0].dtype()), [](auto z) { return std::arg(z); })};
  }
  static Array abs2(const Array& z) { return add(square(real(z)), square(imag(z))); }
  Arrays jvp(std::span<const Array> p, std::span<const Array> t,
             std::span<const Array>) const override {
    if (!t[0].valid()) return {Array()};
    return {divide(imag(multiply(conj(p[0]), t[0])), abs2(p[0]))};
  }
  Arrays vjp(std::span<const Array> p, std::span<const Array> ct,
             std::span<const Array>) const override {
    if (!ct[0].valid()) return {Array()};
    const Array s = divide(ct[0], abs2(p[0]));
    return {multiply(complex(zeros_of(s), negative(s)), conj(p[0]))};
  }
};

// lax.complex on two floating operands of one shape and dtype (the public op broadcasts).
struct MakeComplex final : Primitive {
  const char* name() const override { return "complex"; }
  bool vjp_reads_input(std::size_t) const override { return false; }
  bool vjp_reads_output(std::size_t) const override { return false; }
  Avals abstract_eval(std::span<const ShapeDtype> in) const override {
    return {{in[0].shape, complex_dtype(in[0].dtype)}};
  }
  Arrays eval(std::span<const Array> in) const override {
    const Array &re = in[0], &im = in[1];
    Array out = empty(re.shape(), complex_dtype(re.dtype()));
    const std::int64_t n = re.size();
    dispatch_float(re.dtype(), "complex", [&]<class R>() {
      const R *a = in_ptr<R>(re), *b = in_ptr<R>(im);
      auto* o = out_ptr<std::complex<R>>(out);
      for (std::int64_t i = 0; i < n; ++i) o[i] = {a[i], b[i]};
    });
    return {out};
  }
  Arrays jvp(std::span<const Array> p, std::span<const Array> t,
             std::span<const Array>) const override {
    if (!t[0].valid() && !t[1].valid()) return {Array()};
    return {complex(t[0].valid() ? t[0] : zeros_of(p[0]), t[1].valid() ? t[1] : zeros_of(p[1]))};
  }
  Arrays vjp(std::span<const Array>, std::span<const Array> ct,
             std::span<const Array>) const override {
    if (!ct[0].valid()) return {Array(), Array()};
    return {real(ct[0]), negative(imag(ct[0]))};
  }
  Batched vmap(std::span<const Array> in, std::span<const int> bdims) const override {
    const std::int64_t n = in[bdims[0] >= 0 ? 0 : 1].shape(bdims[0] >= 0 ? bdims[0] : bdims[1]);
    return {{bind1(singleton<MakeComplex>(),
                   {move_bdim(in[0], bdims[0], 0, n), move_bdim(in[1], bdims[1], 0, n)})},
            {0}};
  }
};

const char* op_name(ComplexOp op) {
  switch (op) {
    case ComplexOp::add: return "add";
    case ComplexOp::subtract: return "subtract";
    case ComplexOp::multiply: return "multiply";
    case ComplexOp::divide: return "divide";
  }
  return "?";
}

// The real and imaginary parts of x in the real dtype of r (an empty imaginary part for real x).
std::pair<Array, Array> parts(const Array& x, ResultType r) {
  if (is_complex(x.dtype())) {
    const Array z = promote_to(x, r);
    return {real(z), imag(z)};
  }
  return {promote_to(x, ResultType{real_dtype(r.dtype), r.weak_type}), Array()};
}

}  // namespace

// Operands with no imaginary part skip its terms: multiplying by a real array is two real
// products, and dividing by one two real divisions (no |b|^2 to overflow).
Array complex_arithmetic(ComplexOp op, const Array& a, const Array& b) {
  const char* name = op_name(op);
  check_valid(a, name);
  check_valid(b, name);
  broadcast_shapes(a.shape(), b.shape(), name);
  const ResultType r = result_type(a, b);
  auto [ar, ai] = parts(a, r);
  auto [br, bi] = parts(b, r);
  Array re, im;
  switch (op) {
    case ComplexOp::add:
      re = add(ar, br);
      im = ai.valid() && bi.valid() ? add(ai, bi) : ai.valid() ? ai : bi;
      break;
    case ComplexOp::subtract:
      re = subtract(ar, br);
      im = ai.valid() && bi.valid() ? subtract(ai, bi) : ai.valid() ? ai : negative(bi);
      break;
    case ComplexOp::multiply:
      if (ai.valid() && bi.valid()) {
        re = subtract(multiply(ar, br), multiply(ai, bi));
        im = add(multiply(ar, bi), multiply(ai, br));
      } else {
        re = multiply(ar, br);
        im = ai.valid() ? multiply(ai, br) : multiply(ar, bi);
      }
      break;
    case ComplexOp::divide:
      if (!bi.valid()) {
        re = divide(ar, br);
        im = divide(ai, br);
      } else {
        const Array den = add(square(br), square(bi));
        const Array nr = ai.valid() ? add(multiply(ar, br), multiply(ai, bi)) : multiply(ar, br);
        const Array ni =
            ai.valid() ? subtract(multiply(ai, br), multiply(ar, bi)) : negative(multiply(ar, bi));
        re = divide(nr, den);
        im = divide(ni, den);
      }
      break;
  }
  return complex(re, im);
}

Array complex_negative(const Array& x) { return complex(negative(real(x)), negative(imag(x))); }

Array complex_abs(const Array& x) { return bind1(singleton<ComplexAbs>(), x); }

Array complex_sum(const Array& x, const Axes& axis, bool keepdims) {
  return complex(sum(real(x), axis, keepdims), sum(imag(x), axis, keepdims));
}

}  // namespace detail

using namespace detail;

Array real(const Array& x) {
  check_valid(x, "real");
  return is_complex(x.dtype()) ? bind1(singleton<RealPart>(), x) : x;
}

Array imag(const Array& x) {
  check_valid(x, "imag");
  return is_complex(x.dtype()) ? bind1(singleton<ImagPart>(), x) : zeros_like(x);
}

Array conj(const Array& x) {
  check_valid(x, "conj");
  return is_complex(x.dtype()) ? bind1(singleton<Conj>(), x) : x;
}
Array conjugate(const Array& x) { return conj(x); }

Array angle(const Array& x, bool deg) {
  check_valid(x, "angle");
  Array z = x;
  if (!is_complex(x.dtype())) {  // atan2(0, x): 0 for x >= +0, pi for x < 0 or -0
    const Array re = is_floating(x.dtype()) ? x : astype(x, float32);
    z = complex(re, zeros_like(re));
  }
  const Array a = bind1(singleton<Angle>(), z);
  return deg ? multiply(a, 180.0 / std::numbers::pi) : a;
}

Array isreal(const Array& x) { return equal(imag(x), 0); }
Array iscomplex(const Array& x) { return not_equal(imag(x), 0); }

Array complex(const Array& re, const Array& im) {
  check_valid(re, "complex");
  check_valid(im, "complex");
  if (is_complex(re.dtype()) || is_complex(im.dtype()))
    throw TypeError("complex: the real and imaginary parts must be real arrays, got " +
                    std::string(dtype_name(re.dtype())) + " and " +
                    std::string(dtype_name(im.dtype())));
  const Shape s = broadcast_shapes(re.shape(), im.shape(), "complex");
  ResultType r = result_type(re, im);
  if (!is_floating(r.dtype)) r.dtype = float32;
  Array a = promote_to(re, r), b = promote_to(im, r);
  if (a.shape() != s) a = broadcast_to(a, s);
  if (b.shape() != s) b = broadcast_to(b, s);
  return bind1(singleton<MakeComplex>(), a, b);
}

}  // namespace linum
