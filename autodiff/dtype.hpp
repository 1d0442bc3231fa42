// Element types of linum arrays, their C++ counterparts, and JAX-style type promotion.
#pragma once

#include <complex>
#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string_view>
#include <type_traits>

#include <linum/autodiff/float16.hpp>

namespace linum {

// complex64 / complex128 hold (real, imaginary) pairs of float32 / float64, as std::complex.
// bfloat16 / float16 are the 2-byte floats (BFloat16, Float16), computed in float32.
enum class DType : std::uint8_t {
  float32,
  float64,
  int32,
  uint32,
  bool_,
  complex64,
  complex128,
  bfloat16,
  float16
};

inline constexpr DType float32 = DType::float32;
inline constexpr DType float64 = DType::float64;
inline constexpr DType int32 = DType::int32;
inline constexpr DType uint32 = DType::uint32;
inline constexpr DType bool_ = DType::bool_;
inline constexpr DType complex64 = DType::complex64;
inline constexpr DType complex128 = DType::complex128;
inline constexpr DType bfloat16 = DType::bfloat16;
inline constexpr DType float16 = DType::float16;

constexpr std::size_t itemsize(DType d) {
  switch (d) {
    case DType::float64: return 8;
    case DType::complex64: return 8;
    case DType::complex128: return 16;
    case DType::bool_: return 1;
    case DType::bfloat16:
    case DType::float16: return 2;
    default: return 4;
  }
}

constexpr std::string_view dtype_name(DType d) {
  switch (d) {
    case DType::float32: return "float32";
    case DType::float64: return "float64";
    case DType::int32: return "int32";
    case DType::uint32: return "uint32";
    case DType::bool_: return "bool";
    case DType::complex64: return "complex64";
    case DType::complex128: return "complex128";
    case DType::bfloat16: return "bfloat16";
    case DType::float16: return "float16";
  }
  return "?";
}

inline std::ostream& operator<<(std::ostream& os, DType d) { return os << dtype_name(d); }

// bfloat16 and float16: stored in 2 bytes, computed in float32 and rounded once per op.
constexpr bool is_reduced_float(DType d) { return d == DType::bfloat16 || d == DType::float16; }
constexpr bool is_floating(DType d) {
  return d == DType::float32 || d == DType::float64 || is_reduced_float(d);
}
constexpr bool is_integer(DType d) { return d == DType::int32 || d == DType::uint32; }
constexpr bool is_complex(DType d) { return d == DType::complex64 || d == DType::complex128; }
// numpy's inexact kind: the dtypes with a tangent space (floating or complex).
constexpr bool is_inexact(DType d) { return is_floating(d) || is_complex(d); }
// complex64 <-> float32, complex128 <-> float64 (other dtypes map to themselves).
constexpr DType real_dtype(DType d) {
  return d == DType::complex64 ? DType::float32 : d == DType::complex128 ? DType::float64 : d;
}
constexpr DType complex_dtype(DType d) {
  return d == DType::float64 || d == DType::complex128 ? DType::complex128 : DType::complex64;
}

// The dtype of a C++ element type: float->float32, double->float64, int32->int32, ...
template <class T>
constexpr DType dtype_of() {
  if constexpr (std::is_same_v<T, float>) return DType::float32;
  else if constexpr (std::is_same_v<T, double>) return DType::float64;
  else if constexpr (std::is_same_v<T, std::complex<float>>) return DType::complex64;
  else if constexpr (std::is_same_v<T, std::complex<double>>) return DType::complex128;
  else if constexpr (std::is_same_v<T, bool>) return DType::bool_;
  else if constexpr (std::is_same_v<T, std::uint32_t>) return DType::uint32;
  else if constexpr (std::is_same_v<T, BFloat16>)
    return DType::bfloat16;
  else if constexpr (std::is_same_v<T, Float16>)
    return DType::float16;
  else {
    static_assert(std::is_same_v<T, std::int32_t>,
                  "linum arrays hold float, double, BFloat16, Float16, int32, uint32, bool or "
                  "std::complex");
    return DType::int32;
  }
}

// Promotion of two array dtypes (JAX's lattice restricted to linum's types, x64 enabled for
// floats): bool < int32/uint32 < float32 < float64; int32 with uint32 gives int32 (JAX without
// x64); float32 < complex64 < complex128 and float64 with complex64 gives complex128. bfloat16 and
// float16 sit between the integers and float32, side by side: an integer with either gives it,
// the two together give float32.
DType promote_types(DType a, DType b);

// The dtype of an op's result and whether it is weakly typed (JAX's lattice with weak types):
// a weak operand takes the other's dtype when that is of its kind or above (x_f32 * 2.0 stays
// float32, x_bf16 * 2.0 stays bfloat16, a uint32 array + 1 stays uint32); above it, the result
// is weak int32 / float32 (int32 array * 1.5 is weak float32), except that a weak complex with a
// floating array gives that array's complex dtype, strongly typed, as the lattice's join of the
// two is. Two weak or two strong operands promote as usual.
struct ResultType {
  DType dtype;
  bool weak_type;
};
ResultType result_type(DType a, bool a_weak, DType b, bool b_weak);

}  // namespace linum
