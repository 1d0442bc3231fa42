// JAX-style type promotion restricted to linum's dtypes.
#include <linum/autodiff/dtype.hpp>

namespace linum {
namespace {
int rank(DType d) {
  switch (d) {
    case DType::bool_: return 0;
    case DType::uint32: return 1;
    case DType::int32: return 1;
    case DType::bfloat16:
    case DType::float16: return 2;
    case DType::float32: return 3;
    case DType::float64: return 4;
    case DType::complex64: return 5;
    case DType::complex128: return 6;
  }
  return 0;
}
}  // namespace

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  if (is_integer(a) && is_integer(b)) return DType::int32;
  // bfloat16 and float16 have no common 2-byte type: their join in JAX's lattice is float32.
  if (is_reduced_float(a) && is_reduced_float(b)) return DType::float32;
  // A complex result keeps the wider precision of the two (float64 + complex64 = complex128).
  if (is_complex(a) || is_complex(b))
    return a == DType::float64 || b == DType::float64 || a == DType::complex128 ||
                   b == DType::complex128
               ? DType::complex128
               : DType::complex64;
  return rank(a) >= rank(b) ? a : b;
}

ResultType result_type(DType a, bool a_weak, DType b, bool b_weak) {
  a_weak = a_weak && a != DType::bool_;  // bool has no weak form
  b_weak = b_weak && b != DType::bool_;
  if (a_weak == b_weak) {
    const DType d = promote_types(a, b);
    return {d, a_weak && d != DType::bool_};
  }
  const DType weak = a_weak ? a : b, strong = a_weak ? b : a;
  const auto kind = [](DType d) {
    return is_complex(d) ? 3 : is_floating(d) ? 2 : is_integer(d) ? 1 : 0;
  };
  if (kind(weak) <= kind(strong)) return {strong, false};
  // A weak complex lies below complex64 but not below any real float, so with a floating array
  // the lattice's join is that array's complex dtype, a strong one (float64 * 1j is complex128).
  if (is_complex(weak) && is_floating(strong))
    return {promote_types(strong, DType::complex64), false};
  return {is_complex(weak) ? DType::complex64 : is_floating(weak) ? DType::float32 : weak, true};
}

}  // namespace linum
