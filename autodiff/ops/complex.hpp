// Complex numbers: jnp.real / imag / conj / angle and lax.complex. Arithmetic (+ - * /), abs,
// sum and mean, where, shape ops and astype also take complex64 / complex128 arrays; other ops
// reject them with a TypeError naming the op.
#pragma once

#include <linum/autodiff/array.hpp>

namespace linum {

Array real(const Array& x);       // jnp.real: the real part (real arrays pass through)
Array imag(const Array& x);       // jnp.imag: the imaginary part (zeros for real arrays)
Array conj(const Array& x);       // jnp.conj: the complex conjugate (real arrays pass through)
Array conjugate(const Array& x);  // jnp.conjugate = conj
// jnp.angle: the argument atan2(imag, real), in radians (degrees when deg); float result.
Array angle(const Array& x, bool deg = false);
Array isreal(const Array& x);     // jnp.isreal: imag(x) == 0, elementwise
Array iscomplex(const Array& x);  // jnp.iscomplex: imag(x) != 0, elementwise
// lax.complex: re + i im, the two floating operands broadcast together (complex64 from float32,
// complex128 from float64).
Array complex(const Array& re, const Array& im);

}  // namespace linum
