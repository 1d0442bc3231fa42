// The special functions behind jax.random's samplers, computed the way XLA:CPU computes them, so
// that samples agree with JAX to the last bit: XLA's Cephes-style log1p and logf, StableHLO's
// erf/erf_inv expansions, and fused multiply-adds wherever LLVM fuses a*b+c on CPU.
#pragma once

namespace linum::random::detail {

// log for float32 as XLA:CPU emits it (Cephes polynomial, FMA-contracted); denormal inputs are
// treated as the smallest normal, log(0) = -inf, negative inputs give NaN.
float xla_log(float x);
// log for float64: XLA leaves it to libm.
double xla_log(double x);

// XLA's log1p: x + x^3 P(x)/Q(x) - x^2/2 for |x| < sqrt(2) - 1 (Cephes), else log(1 + x).
float xla_log1p(float x);
double xla_log1p(double x);

// chlo.erf_inv: Giles' single-precision approximation for float32 (w < 5 / w >= 5 branches),
// the three-branch double-precision one for float64; erf_inv(+-1) = +-inf.
float erf_inv(float x);
double erf_inv(double x);

// chlo.erf: float32 is the clamped rational x * alpha(x^2) / beta(x^2) (Eigen's), float64 the
// Cephes erf (|x| < 1) / 1 - erfc (|x| >= 1) pair.
float erf(float x);
double erf(double x);

}  // namespace linum::random::detail
