// Internal: complex arithmetic behind add/subtract/multiply/divide/negative/abs/sum when an
// operand is complex (autodiff/ops/complex.cpp). The public ops route here, so that each real
// kernel stays real-only.
#pragma once

#include <linum/autodiff/array.hpp>
#include <linum/autodiff/ops/axes.hpp>

namespace linum::detail {

enum class ComplexOp { add, subtract, multiply, divide };

inline bool any_complex(const Array& a, const Array& b) {
  return a.valid() && b.valid() && (is_complex(a.dtype()) || is_complex(b.dtype()));
}
// a op b with numpy broadcasting and JAX promotion (float32 with complex64 gives complex64).
Array complex_arithmetic(ComplexOp op, const Array& a, const Array& b);
Array complex_negative(const Array& x);
Array complex_abs(const Array& x);  // |x| in the real dtype, as lax.abs
Array complex_sum(const Array& x, const Axes& axis, bool keepdims);

}  // namespace linum::detail
