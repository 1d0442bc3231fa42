// Discrete Fourier transforms: jax.lax.fft (linum::lax::fft) and jax.numpy.fft (linum::fft),
// on Eigen's FFT module. Transforms return complex64 for float32 (and integer) input, complex128
// for float64; irfft returns the real dtype. Differentiable (the VJPs are JAX's transposes) and
// batched.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <linum/autodiff/array.hpp>

namespace linum {

namespace lax {
// lax.FftType.
enum class FftType { FFT, IFFT, RFFT, IRFFT };
// lax.fft: the transform over the trailing len(fft_lengths) axes. FFT/IFFT: complex input of
// those lengths (IFFT divides by their product); RFFT: real input of those lengths, the last axis
// giving n/2 + 1 outputs; IRFFT: complex input whose last axis has n/2 + 1 entries, real output.
Array fft(const Array& x, FftType fft_type, const std::vector<std::int64_t>& fft_lengths);
}  // namespace lax

namespace fft {

// norm: "backward" (no scaling forward, 1/n inverse: the default), "ortho" (1/sqrt(n) both
// ways) or "forward" (1/n forward, none inverse). n crops or zero-pads the input along axis.
Array fft(const Array& a, std::optional<std::int64_t> n = std::nullopt, int axis = -1,
          const std::string& norm = "backward");
Array ifft(const Array& a, std::optional<std::int64_t> n = std::nullopt, int axis = -1,
           const std::string& norm = "backward");
Array rfft(const Array& a, std::optional<std::int64_t> n = std::nullopt, int axis = -1,
           const std::string& norm = "backward");
// n: the length of the real output (default 2 (m - 1) for m input entries along axis).
Array irfft(const Array& a, std::optional<std::int64_t> n = std::nullopt, int axis = -1,
            const std::string& norm = "backward");
// jnp.fft.hfft / ihfft: the transforms of a Hermitian-symmetric signal.
Array hfft(const Array& a, std::optional<std::int64_t> n = std::nullopt, int axis = -1,
           const std::string& norm = "backward");
Array ihfft(const Array& a, std::optional<std::int64_t> n = std::nullopt, int axis = -1,
            const std::string& norm = "backward");

// s: the transform lengths (crop or zero-pad); axes: default all axes (the last len(s) when s
// is given).
using OptShape = std::optional<std::vector<std::int64_t>>;
using OptAxes = std::optional<std::vector<int>>;
Array fftn(const Array& a, const OptShape& s = std::nullopt, const OptAxes& axes = std::nullopt,
           const std::string& norm = "backward");
Array ifftn(const Array& a, const OptShape& s = std::nullopt, const OptAxes& axes = std::nullopt,
            const std::string& norm = "backward");
Array rfftn(const Array& a, const OptShape& s = std::nullopt, const OptAxes& axes = std::nullopt,
            const std::string& norm = "backward");
Array irfftn(const Array& a, const OptShape& s = std::nullopt, const OptAxes& axes = std::nullopt,
             const std::string& norm = "backward");
// The 2-D forms: exactly two axes, default the last two.
Array fft2(const Array& a, const OptShape& s = std::nullopt,
           const std::vector<int>& axes = {-2, -1}, const std::string& norm = "backward");
Array ifft2(const Array& a, const OptShape& s = std::nullopt,
            const std::vector<int>& axes = {-2, -1}, const std::string& norm = "backward");
Array rfft2(const Array& a, const OptShape& s = std::nullopt,
            const std::vector<int>& axes = {-2, -1}, const std::string& norm = "backward");
Array irfft2(const Array& a, const OptShape& s = std::nullopt,
             const std::vector<int>& axes = {-2, -1}, const std::string& norm = "backward");

// Sample frequencies of an n-point transform with sample spacing d.
Array fftfreq(std::int64_t n, double d = 1.0, DType dtype = float32);
Array rfftfreq(std::int64_t n, double d = 1.0, DType dtype = float32);
// The zero frequency moved to the centre (and back): a roll by n/2 (-(n/2)) along each axis.
Array fftshift(const Array& x, const OptAxes& axes = std::nullopt);
Array ifftshift(const Array& x, const OptAxes& axes = std::nullopt);

}  // namespace fft

}  // namespace linum
