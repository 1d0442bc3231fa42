// jnp's polynomials from their roots (poly), by long division (polydiv) and by least squares
// (polyfit); coefficients highest degree first, as linum's other polynomial functions.
#pragma once

#include <optional>
#include <utility>

#include <linum/autodiff/array.hpp>

namespace linum {

// jnp.poly: the monic polynomial with the given 1-D roots (no roots: the scalar 1). JAX also
// takes a square matrix (its eigenvalues' polynomial); that needs general eigenvalues, which
// linum lacks: NotImplementedError.
Array poly(const Array& seq_of_zeros);
// jnp.polydiv: (quotient, remainder) of u / v by long division, in floating point; the remainder
// keeps u's length unless trim_leading_zeros drops its leading near-zeros (|r| < sqrt(eps);
// needs concrete values).
std::pair<Array, Array> polydiv(const Array& u, const Array& v, bool trim_leading_zeros = false);
// jnp.polyfit: the coefficients of the degree-`deg` polynomial that fits y (1-D, or 2-D with one
// column per fit) at x in least squares, weighted by w (applied to the residuals). rcond: the
// relative cutoff of small singular values (default len(x) * eps). JAX's full and cov outputs
// are not ported.
Array polyfit(const Array& x, const Array& y, int deg, std::optional<double> rcond = std::nullopt,
              const std::optional<Array>& w = std::nullopt);

}  // namespace linum
