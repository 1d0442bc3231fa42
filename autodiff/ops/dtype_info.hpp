// Dtype queries of jax.numpy: finfo / iinfo (the limits of a floating or integer dtype),
// can_cast (numpy's casting rules), isdtype (the Array API's kinds) and issubdtype (numpy's
// abstract hierarchy), over linum's dtypes.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>

#include <linum/autodiff/dtype.hpp>

namespace linum {

// jnp.finfo: the machine limits of a floating dtype (a complex dtype gives those of its real
// part), with numpy's field names.
struct FInfo {
  DType dtype;             // float32, float64, bfloat16 or float16
  int bits;                // storage bits
  double eps;              // 2^machep: the gap between 1 and the next float
  double epsneg;           // 2^negep: the gap between 1 and the float before it
  double max, min;         // the largest finite value and its negative
  double tiny;             // = smallest_normal
  double smallest_normal;  // the smallest positive normal float
  double smallest_subnormal;
  double resolution;  // 10^-precision
  int precision;      // decimal digits: floor(nmant * log10(2))
  int nmant, nexp;    // mantissa and exponent bits
  int machep, negep, minexp, maxexp, iexp;
};
FInfo finfo(DType dtype);

// jnp.iinfo: the range of an integer dtype (int32 or uint32).
struct IInfo {
  DType dtype;
  int bits;
  std::int64_t min, max;
};
IInfo iinfo(DType dtype);

// numpy's casting kinds: no / equiv (only the same dtype), safe (values always preserved),
// same_kind (safe, or within a kind or to a higher kind: bool < unsigned < signed < floating
// < complex), unsafe (anything).
enum class Casting { no, equiv, safe, same_kind, unsafe };
// jnp.can_cast (numpy's): whether from_ converts to `to` under the casting rule.
bool can_cast(DType from_, DType to, Casting casting = Casting::safe);

// One kind of isdtype: a dtype, or one of the Array API's names "bool", "signed integer",
// "unsigned integer", "integral", "real floating", "complex floating", "numeric".
class DTypeKind {
 public:
  DTypeKind(DType d) : dtype_(d), is_dtype_(true) {}       // NOLINT(google-explicit-constructor)
  DTypeKind(const char* name) : name_(name) {}             // NOLINT(google-explicit-constructor)
  DTypeKind(std::string name) : name_(std::move(name)) {}  // NOLINT(google-explicit-constructor)
  bool contains(DType d) const;                            // ValueError for an unknown name

 private:
  DType dtype_ = DType::float32;
  bool is_dtype_ = false;
  std::string name_;
};
// jnp.isdtype: whether dtype is of the kind (or of any of the kinds).
bool isdtype(DType dtype, const DTypeKind& kind);
bool isdtype(DType dtype, std::initializer_list<DTypeKind> kinds);

// numpy's abstract scalar types (the categories of jnp.issubdtype's second argument).
enum class DTypeCategory {
  generic,
  number,
  integer,
  signedinteger,
  unsignedinteger,
  inexact,
  floating,
  complexfloating
};
// jnp.issubdtype: whether dtype is `of` itself (a concrete dtype), or lies under the category
// in numpy's hierarchy (bool is only under generic).
bool issubdtype(DType dtype, DType of);
bool issubdtype(DType dtype, DTypeCategory of);

}  // namespace linum
