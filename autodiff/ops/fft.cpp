// lax.fft: the FFT primitive over Eigen's FFT module (kissfft, any length), its JVP (itself:
// the transform is linear) and JAX's transpose rules as the VJP (jax/_src/lax/fft.py). A
// multi-dimensional transform is a 1-D transform along each trailing axis in turn, as pocketfft
// does: real-to-complex on the last axis first (RFFT), complex-to-real on it last (IRFFT).
// Eigen's templates stay in this file.
#include <linum/autodiff/ops/fft.hpp>

#include <unsupported/Eigen/FFT>

#include <complex>
#include <numeric>
#include <sstream>

#include <linum/autodiff/ops/kernel_util.hpp>

namespace linum {
namespace detail {
namespace {

using lax::FftType;

const char* type_name(FftType t) {
  switch (t) {
    case FftType::FFT: return "FFT";
    case FftType::IFFT: return "IFFT";
    case FftType::RFFT: return "RFFT";
    case FftType::IRFFT: return "IRFFT";
  }
  return "?";
}

// The complex transform of every line along `axis` of a contiguous complex buffer of shape s.
template <class R>
void transform_axis(std::complex<R>* data, const Shape& s, int axis, bool inverse,
                    Eigen::FFT<R>& engine) {
  const std::int64_t n = s[axis];
  if (n <= 1) return;  // a length-1 transform is the identity
  const std::int64_t inner = shape_size(Shape(s.begin() + axis + 1, s.end()));
  const std::int64_t outer = shape_size(Shape(s.begin(), s.begin() + axis));
  std::vector<std::complex<R>> in(static_cast<std::size_t>(n)), out(static_cast<std::size_t>(n));
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t i = 0; i < inner; ++i) {
      std::complex<R>* base = data + o * n * inner + i;
      for (std::int64_t k = 0; k < n; ++k) in[k] = base[k * inner];
      if (inverse)
        engine.inv(out.data(), in.data(), static_cast<Eigen::Index>(n));
      else
        engine.fwd(out.data(), in.data(), static_cast<Eigen::Index>(n));
      for (std::int64_t k = 0; k < n; ++k) base[k * inner] = out[k];
    }
}

struct Fft final : Primitive {
  FftType type;
  std::vector<std::int64_t> lengths;
  Fft(FftType t, std::vector<std::int64_t> l) : type(t), lengths(std::move(l)) {}
  const char* name() const override { return "fft"; }
  void print_params(std::ostream& os) const override {
    os << "fft_type=" << type_name(type)
       << " fft_lengths=" << shape_str(Shape(lengths.begin(), lengths.end()));
  }
  bool vjp_reads_input(std::size_t) const override { return false; }
  bool vjp_reads_output(std::size_t) const override { return false; }
  Avals abstract_eval(std::span<const ShapeDtype> in) const override {
    Shape s = in[0].shape;
    if (type == FftType::RFFT) {
      s.back() = lengths.back() / 2 + 1;
      return {{s, complex_dtype(in[0].dtype)}};
    }
    if (type == FftType::IRFFT) {
      s.back() = lengths.back();
      return {{s, real_dtype(in[0].dtype)}};
    }
    return {in[0]};
  }
  Arrays eval(std::span<const Array> in) const override {
    const Array& x = in[0];
    const Avals av = abstract_eval(std::array{ShapeDtype{x.shape(), x.dtype()}});
    Array out = empty(av[0].shape, av[0].dtype);
    const int nd = x.ndim(), first = nd - static_cast<int>(lengths.size());
    auto run = [&]<class R>() {
      using C = std::complex<R>;
      Eigen::FFT<R> engine;  // one per call: its plan caches are not thread-safe
      if (type == FftType::FFT || type == FftType::IFFT) {
        std::copy(in_ptr<C>(x), in_ptr<C>(x) + x.size(), out_ptr<C>(out));
        for (int d = first; d < nd; ++d)
          transform_axis(out_ptr<C>(out), x.shape(), d, type == FftType::IFFT, engine);
      } else if (type == FftType::RFFT) {
        engine.SetFlag(Eigen::FFT<R>::HalfSpectrum);
        const std::int64_t n = x.shape(-1), h = n / 2 + 1,
                           rows = x.size() / std::max<std::int64_t>(n, 1);
        for (std::int64_t r = 0; r < rows && n > 0; ++r) {
          if (n == 1)
            out_ptr<C>(out)[r] = in_ptr<R>(x)[r];  // kissfft needs n >= 2 here too
          else
            engine.fwd(out_ptr<C>(out) + r * h, in_ptr<R>(x) + r * n, static_cast<Eigen::Index>(n));
        }
        for (int d = first; d < nd - 1; ++d)
          transform_axis(out_ptr<C>(out), av[0].shape, d, false, engine);
      } else {
        // Inverse transforms of the leading axes on a copy, then complex-to-real on the last.
        std::vector<C> tmp(in_ptr<C>(x), in_ptr<C>(x) + x.size());
        for (int d = first; d < nd - 1; ++d) transform_axis(tmp.data(), x.shape(), d, true, engine);
        engine.SetFlag(Eigen::FFT<R>::HalfSpectrum);
        const std::int64_t n = lengths.back(), h = x.shape(-1),
                           rows = x.size() / std::max<std::int64_t>(h, 1);
        for (std::int64_t r = 0; r < rows && n > 0; ++r) {
          R* o = out_ptr<R>(out) + r * n;
          if (n == 1)
            o[0] = tmp[r * h].real();  // kissfft needs n >= 2 for the real inverse
          else
            engine.inv(o, tmp.data() + r * h, static_cast<Eigen::Index>(n));
        }
      }
    };
    if (real_dtype(x.dtype()) == float32)
      run.template operator()<float>();
    else
      run.template operator()<double>();
    return {out};
  }
  Array again(const Array& t, FftType ty) const {
    return bind1(std::make_shared<const Fft>(ty, lengths), {t});
  }
  Arrays jvp(std::span<const Array>, std::span<const Array> t,
             std::span<const Array>) const override {
    return {t[0].valid() ? again(t[0], type) : Array()};
  }
  // 1 for the DC entry and (even n) the Nyquist entry, 2 for the others: the entries an RFFT
  // stores once for two conjugate frequencies.
  Array hermitian_mask(std::int64_t h, DType dt) const {
    std::vector<double> m(static_cast<std::size_t>(h), 2.0);
    m.front() = 1.0;
    if (lengths.back() % 2 == 0) m.back() = 1.0;
    return astype(array(m, {h}), dt);
  }
  double total() const {
    return static_cast<double>(
        std::accumulate(lengths.begin(), lengths.end(), std::int64_t(1), std::multiplies<>()));
  }
  // JAX's _fft_transpose_rule: FFT and IFFT are symmetric; RFFT's transpose is
  // N irfft(conj(ct) / mask); IRFFT's is conj(mask rfft(ct) / N).
  Arrays vjp(std::span<const Array>, std::span<const Array> ct,
             std::span<const Array>) const override {
    if (!ct[0].valid()) return {Array()};
    const Array& t = ct[0];
    if (type == FftType::RFFT)
      return {multiply(again(divide(conj(t), hermitian_mask(t.shape(-1), real_dtype(t.dtype()))),
                             FftType::IRFFT),
                       total())};
    if (type == FftType::IRFFT) {
      const Array x = again(t, FftType::RFFT);
      return {conj(multiply(x, divide(hermitian_mask(x.shape(-1), t.dtype()), total())))};
    }
    return {again(t, type)};
  }
  Batched vmap(std::span<const Array> in, std::span<const int> bdims) const override {
    return {{again(move_bdim(in[0], bdims[0], 0, 0), type)}, {0}};
  }
};

}  // namespace
}  // namespace detail

namespace lax {

Array fft(const Array& x, FftType fft_type, const std::vector<std::int64_t>& fft_lengths) {
  using namespace detail;
  check_valid(x, "fft");
  Array v = x;
  if (fft_type == FftType::RFFT) {
    if (is_complex(x.dtype()))
      throw ValueError("rfft: only real valued inputs supported for rfft, got " +
                       std::string(dtype_name(x.dtype())));
    if (!is_floating(x.dtype())) v = astype(x, float32);
  } else if (!is_complex(x.dtype())) {
    v = astype(x, complex_dtype(is_floating(x.dtype()) ? x.dtype() : float32));
  }
  if (fft_lengths.empty()) return v;
  const auto k = static_cast<int>(fft_lengths.size());
  if (k > v.ndim())
    throw ValueError("fft: input shape " + shape_str(x.shape()) +
                     " must have at least as many dimensions as fft_lengths " +
                     shape_str(Shape(fft_lengths.begin(), fft_lengths.end())));
  const Shape minor(v.shape().end() - k, v.shape().end());
  Shape expect(fft_lengths.begin(), fft_lengths.end());
  if (fft_type == FftType::IRFFT) expect.back() = fft_lengths.back() / 2 + 1;
  for (auto n : fft_lengths)
    if (n < 0)
      throw ValueError("fft: fft_lengths must be non-negative, got " +
                       shape_str(Shape(fft_lengths.begin(), fft_lengths.end())));
  if (minor != expect)
    throw ValueError("fft: input shape " + shape_str(x.shape()) + " minor dimensions must be " +
                     shape_str(expect) + " for fft_lengths " +
                     shape_str(Shape(fft_lengths.begin(), fft_lengths.end())));
  return bind1(std::make_shared<const Fft>(fft_type, fft_lengths), {v});
}

}  // namespace lax

}  // namespace linum
