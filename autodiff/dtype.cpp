// JAX-style type promotion restricted to linum's dtypes.
#include <linum/autodiff/dtype.hpp>

namespace linum {
namespace {
int rank(DType d) {
  switch (d) {
    case DType::bool_: return 0;
    case DType::uint32: return 1;
    case DType::int32: return 1;
    case DType::float32: return 2;
    case DType::float64: return 3;
  }
  return 0;
}
}  // namespace

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  if (is_integer(a) && is_integer(b)) return DType::int32;
  return rank(a) >= rank(b) ? a : b;
}

DType promote_weak(DType d, DType scalar_kind) {
  // A weak scalar never widens an array of its own kind or above.
  if (scalar_kind == DType::bool_) return d;
  if (scalar_kind == DType::int32) return d == DType::bool_ ? DType::int32 : d;
  return is_floating(d) ? d : DType::float32;
}

}  // namespace linum
