// jax.numpy.fft over lax.fft: axes moved to the end, inputs cropped or zero-padded to the
// requested lengths, and the norm factor applied, as jax/_src/numpy/fft.py's _fft_core does.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

#include <linum/autodiff/ops/fft.hpp>
#include <linum/autodiff/ops/kernel_util.hpp>

namespace linum {
namespace detail {
namespace {

using lax::FftType;

// x cropped or zero-padded along `axis` to n entries.
Array fit_axis(const Array& x, int axis, std::int64_t n) {
  const std::int64_t have = x.shape(axis);
  if (have == n) return x;
  if (have > n) {
    std::vector<std::int64_t> start(static_cast<std::size_t>(x.ndim()), 0),
        limit(x.shape().begin(), x.shape().end());
    limit[axis] = n;
    return lax_slice(x, start, limit);
  }
  Shape pad = x.shape();
  pad[axis] = n - have;
  return concatenate({x, zeros(pad, x.dtype())}, axis);
}

// JAX's _fft_core.
Array fft_core(const char* func, FftType type, const Array& a,
               std::optional<std::vector<std::int64_t>> s, std::optional<std::vector<int>> axes,
               const std::string& norm) {
  check_valid(a, func);
  if (norm != "backward" && norm != "ortho" && norm != "forward")
    throw ValueError(std::string(func) + ": invalid norm value " + norm +
                     "; should be \"backward\", \"ortho\" or \"forward\".");
  if (s)
    for (auto n : *s)
      if (n <= 0)
        throw ValueError(std::string(func) + ": shape should be positive, got " +
                         shape_str(Shape(s->begin(), s->end())));
  if (s && axes && s->size() != axes->size())
    throw ValueError(std::string(func) + ": shape and axes have different lengths.");
  Array arr = a;
  const int nd = arr.ndim();
  std::vector<int> ax;
  if (!axes) {
    const int count = s ? static_cast<int>(s->size()) : nd;
    if (count > nd)
      throw ValueError(std::string(func) + ": " + std::to_string(count) +
                       " transform lengths for an array of rank " + std::to_string(nd));
    for (int i = nd - count; i < nd; ++i) ax.push_back(i);
  } else {
    for (int v : *axes) ax.push_back(normalize_axis(v, nd, func));
    if (std::set<int>(ax.begin(), ax.end()).size() != ax.size())
      throw ValueError(std::string(func) + " does not support repeated axes. Got axes " +
                       shape_str(Shape(axes->begin(), axes->end())) + ".");
  }
  const int k = static_cast<int>(ax.size());
  // The transformed axes go last, in the order given; the rest keep theirs.
  std::vector<int> perm, inverse(static_cast<std::size_t>(nd));
  if (axes) {
    for (int i = 0; i < nd; ++i)
      if (std::find(ax.begin(), ax.end(), i) == ax.end()) perm.push_back(i);
    perm.insert(perm.end(), ax.begin(), ax.end());
    for (int i = 0; i < nd; ++i) inverse[perm[i]] = i;
    if (!std::is_sorted(perm.begin(), perm.end())) arr = transpose(arr, perm);
  }
  std::vector<std::int64_t> lengths;
  if (s) {
    lengths = *s;
    for (int j = 0; j < k; ++j) {
      std::int64_t want = lengths[j];
      if (type == FftType::IRFFT && j == k - 1) want = want / 2 + 1;
      arr = fit_axis(arr, nd - k + j, want);
    }
  } else {
    for (int j = 0; j < k; ++j) lengths.push_back(arr.shape(nd - k + j));
    if (type == FftType::IRFFT && k > 0)
      lengths.back() = std::max<std::int64_t>(0, 2 * (lengths.back() - 1));
  }
  Array out = lax::fft(arr, type, lengths);
  if (norm != "backward" && k > 0) {
    const double total =
        std::accumulate(lengths.begin(), lengths.end(), 1.0,
                        [](double acc, std::int64_t n) { return acc * static_cast<double>(n); });
    const bool inverse_fn = func[0] == 'i';
    const double f = norm == "ortho" ? (inverse_fn ? std::sqrt(total) : 1 / std::sqrt(total))
                                     : (inverse_fn ? total : 1 / total);
    out = multiply(out, f);
  }
  return axes && !std::is_sorted(perm.begin(), perm.end()) ? transpose(out, inverse) : out;
}

Array fft_1d(const char* func, FftType type, const Array& a, std::optional<std::int64_t> n,
             int axis, const std::string& norm) {
  std::optional<std::vector<std::int64_t>> s;
  if (n) s = std::vector<std::int64_t>{*n};
  return fft_core(func, type, a, s, std::vector<int>{axis}, norm);
}

Array fft_2d(const char* func, FftType type, const Array& a,
             const std::optional<std::vector<std::int64_t>>& s, const std::vector<int>& axes,
             const std::string& norm) {
  if (axes.size() != 2)
    throw ValueError(std::string(func) + " only supports 2 axes. Got axes = " +
                     shape_str(Shape(axes.begin(), axes.end())) + ".");
  return fft_core(func, type, a, s, axes, norm);
}

// numpy.roll of one axis by `shift` (concatenated slices, so any dtype moves, complex included).
Array roll_axis(const Array& x, int axis, std::int64_t shift) {
  const std::int64_t n = x.shape(axis);
  if (n == 0) return x;
  shift = ((shift % n) + n) % n;
  if (shift == 0) return x;
  std::vector<std::int64_t> start(static_cast<std::size_t>(x.ndim()), 0),
      limit(x.shape().begin(), x.shape().end());
  start[axis] = n - shift;
  const Array tail = lax_slice(x, start, limit);
  start[axis] = 0;
  limit[axis] = n - shift;
  return concatenate({tail, lax_slice(x, start, limit)}, axis);
}

Array shift_zero(const Array& x, const std::optional<std::vector<int>>& axes, bool inverse,
                 const char* func) {
  check_valid(x, func);
  std::vector<int> ax;
  if (axes)
    for (int a : *axes) ax.push_back(normalize_axis(a, x.ndim(), func));
  else
    for (int i = 0; i < x.ndim(); ++i) ax.push_back(i);
  Array r = x;
  for (int a : ax) {
    const std::int64_t half = x.shape(a) / 2;
    r = roll_axis(r, a, inverse ? -half : half);
  }
  return r;
}

}  // namespace
}  // namespace detail

namespace fft {

using detail::fft_1d;
using detail::fft_2d;
using detail::fft_core;
using lax::FftType;

Array fft(const Array& a, std::optional<std::int64_t> n, int axis, const std::string& norm) {
  return fft_1d("fft", FftType::FFT, a, n, axis, norm);
}
Array ifft(const Array& a, std::optional<std::int64_t> n, int axis, const std::string& norm) {
  return fft_1d("ifft", FftType::IFFT, a, n, axis, norm);
}
Array rfft(const Array& a, std::optional<std::int64_t> n, int axis, const std::string& norm) {
  return fft_1d("rfft", FftType::RFFT, a, n, axis, norm);
}
Array irfft(const Array& a, std::optional<std::int64_t> n, int axis, const std::string& norm) {
  return fft_1d("irfft", FftType::IRFFT, a, n, axis, norm);
}
// JAX's hfft: irfft of the conjugate, times the output length.
Array hfft(const Array& a, std::optional<std::int64_t> n, int axis, const std::string& norm) {
  linum::detail::check_valid(a, "hfft");
  const std::int64_t nn = n ? *n : (a.shape(axis) - 1) * 2;
  return multiply(fft_1d("hfft", FftType::IRFFT, conj(a), n, axis, norm), static_cast<double>(nn));
}
// JAX's ihfft: the conjugate of rfft, divided by the input length.
Array ihfft(const Array& a, std::optional<std::int64_t> n, int axis, const std::string& norm) {
  linum::detail::check_valid(a, "ihfft");
  const std::int64_t nn = n ? *n : a.shape(axis);
  return multiply(conj(fft_1d("ihfft", FftType::RFFT, a, n, axis, norm)),
                  1.0 / static_cast<double>(nn));
}

Array fftn(const Array& a, const OptShape& s, const OptAxes& axes, const std::string& norm) {
  return fft_core("fftn", FftType::FFT, a, s, axes, norm);
}
Array ifftn(const Array& a, const OptShape& s, const OptAxes& axes, const std::string& norm) {
  return fft_core("ifftn", FftType::IFFT, a, s, axes, norm);
}
Array rfftn(const Array& a, const OptShape& s, const OptAxes& axes, const std::string& norm) {
  return fft_core("rfftn", FftType::RFFT, a, s, axes, norm);
}
Array irfftn(const Array& a, const OptShape& s, const OptAxes& axes, const std::string& norm) {
  return fft_core("irfftn", FftType::IRFFT, a, s, axes, norm);
}
Array fft2(const Array& a, const OptShape& s, const std::vector<int>& axes,
           const std::string& norm) {
  return fft_2d("fft2", FftType::FFT, a, s, axes, norm);
}
Array ifft2(const Array& a, const OptShape& s, const std::vector<int>& axes,
            const std::string& norm) {
  return fft_2d("ifft2", FftType::IFFT, a, s, axes, norm);
}
Array rfft2(const Array& a, const OptShape& s, const std::vector<int>& axes,
            const std::string& norm) {
  return fft_2d("rfft2", FftType::RFFT, a, s, axes, norm);
}
Array irfft2(const Array& a, const OptShape& s, const std::vector<int>& axes,
             const std::string& norm) {
  return fft_2d("irfft2", FftType::IRFFT, a, s, axes, norm);
}

// JAX's fftfreq: k = (i + n/2) mod n - n/2, divided by d n in dtype.
Array fftfreq(std::int64_t n, double d, DType dtype) {
  if (n <= 0) throw ValueError("fftfreq: n must be positive, got " + std::to_string(n));
  std::vector<double> k(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) k[i] = static_cast<double>((i + n / 2) % n - n / 2);
  return divide(astype(array(k, {n}), dtype), full({}, d * static_cast<double>(n), dtype));
}

Array rfftfreq(std::int64_t n, double d, DType dtype) {
  if (n <= 0) throw ValueError("rfftfreq: n must be positive, got " + std::to_string(n));
  const std::int64_t h = n / 2 + 1;
  std::vector<double> k(static_cast<std::size_t>(h));
  std::iota(k.begin(), k.end(), 0.0);
  return divide(astype(array(k, {h}), dtype), full({}, d * static_cast<double>(n), dtype));
}

Array fftshift(const Array& x, const OptAxes& axes) {
  return detail::shift_zero(x, axes, false, "fftshift");
}
Array ifftshift(const Array& x, const OptAxes& axes) {
  return detail::shift_zero(x, axes, true, "ifftshift");
}

}  // namespace fft

}  // namespace linum
