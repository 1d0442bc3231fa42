// jnp's polynomials (coefficients highest degree first, as numpy's poly1d) and 1-D
// convolution: polyval, polyadd, polysub, polymul, polyder, polyint, vander, convolve, correlate.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <linum/autodiff/array.hpp>

namespace linum {

// p[0] x^(n-1) + ... + p[n-1] by Horner's rule (p's leading axis; x broadcasts).
Array polyval(const Array& p, const Array& x);
Array polyadd(const Array& a1, const Array& a2);
Array polysub(const Array& a1, const Array& a2);
Array polymul(const Array& a1, const Array& a2);  // the full convolution
Array polyder(const Array& p, int m = 1);         // the m-th derivative
// The m-th antiderivative, integration constants k (a scalar or m values; empty: zeros).
Array polyint(const Array& p, int m = 1, const Array& k = Array());
// Powers of x in columns: x^(N-1), ..., x^0 (increasing: x^0 first); N defaults to len(x).
Array vander(const Array& x, std::optional<std::int64_t> n = std::nullopt, bool increasing = false);
// 1-D discrete convolution and cross-correlation; mode "full", "same" or "valid".
Array convolve(const Array& a, const Array& v, const std::string& mode = "full");
Array correlate(const Array& a, const Array& v, const std::string& mode = "valid");

}  // namespace linum
