// finfo, iinfo, can_cast, isdtype and issubdtype for linum's dtypes.
#include <linum/autodiff/ops/dtype_info.hpp>

#include <cmath>
#include <limits>

#include <linum/error.hpp>

namespace linum {
namespace {

// The limits of a binary floating format with `nmant` stored mantissa bits and `nexp` exponent
// bits (IEEE layout, subnormals, inf and NaN), as numpy's and ml_dtypes' finfo compute them.
FInfo finfo_of(DType d, int nmant, int nexp) {
  FInfo f{};
  f.dtype = d;
  f.bits = 1 + nexp + nmant;
  f.nmant = nmant;
  f.nexp = nexp;
  f.machep = -nmant;
  f.negep = -nmant - 1;
  f.maxexp = 1 << (nexp - 1);
  f.minexp = 2 - f.maxexp;
  f.iexp = nexp;
  f.eps = std::ldexp(1.0, f.machep);
  f.epsneg = std::ldexp(1.0, f.negep);
  f.max = std::ldexp(2.0 - f.eps, f.maxexp - 1);
  f.min = -f.max;
  f.tiny = f.smallest_normal = std::ldexp(1.0, f.minexp);
  f.smallest_subnormal = std::ldexp(1.0, f.minexp - nmant);
  f.precision = static_cast<int>(std::floor(nmant * std::log10(2.0)));
  f.resolution = std::pow(10.0, -f.precision);
  return f;
}

// numpy's kind order for same_kind casts: b < u < i < f < c.
int kind_rank(DType d) {
  switch (d) {
    case DType::bool_: return 0;
    case DType::uint32: return 1;
    case DType::int32: return 2;
    case DType::complex64:
    case DType::complex128: return 4;
    default: return 3;  // the floats
  }
}

// Safe casts between different dtypes: every value of `from` is exactly a value of `to`.
bool safe_cast(DType from, DType to) {
  if (from == to || from == DType::bool_) return true;
  switch (from) {
    case DType::int32:
    case DType::uint32: return to == DType::float64 || to == DType::complex128;
    case DType::float32: return to == DType::float64 || is_complex(to);
    case DType::float64: return to == DType::complex128;
    case DType::complex64: return to == DType::complex128;
    case DType::bfloat16:
    case DType::float16: return to == DType::float32 || to == DType::float64 || is_complex(to);
    default: return false;
  }
}

}  // namespace

FInfo finfo(DType dtype) {
  switch (real_dtype(dtype)) {
    case DType::float32: return finfo_of(DType::float32, 23, 8);
    case DType::float64: return finfo_of(DType::float64, 52, 11);
    case DType::bfloat16: return finfo_of(DType::bfloat16, 7, 8);
    case DType::float16: return finfo_of(DType::float16, 10, 5);
    default:
      throw ValueError("finfo: data type " + std::string(dtype_name(dtype)) +
                       " is not inexact (use iinfo for integer dtypes)");
  }
}

IInfo iinfo(DType dtype) {
  switch (dtype) {
    case DType::int32:
      return {dtype, 32, std::numeric_limits<std::int32_t>::min(),
              std::numeric_limits<std::int32_t>::max()};
    case DType::uint32: return {dtype, 32, 0, std::numeric_limits<std::uint32_t>::max()};
    default: throw ValueError("iinfo: invalid integer data type " + std::string(dtype_name(dtype)));
  }
}

bool can_cast(DType from_, DType to, Casting casting) {
  switch (casting) {
    case Casting::no:
    case Casting::equiv: return from_ == to;
    case Casting::safe: return safe_cast(from_, to);
    case Casting::same_kind: return safe_cast(from_, to) || kind_rank(from_) <= kind_rank(to);
    case Casting::unsafe: return true;
  }
  return false;
}

bool DTypeKind::contains(DType d) const {
  if (is_dtype_) return d == dtype_;
  if (name_ == "bool") return d == DType::bool_;
  if (name_ == "signed integer") return d == DType::int32;
  if (name_ == "unsigned integer") return d == DType::uint32;
  if (name_ == "integral") return is_integer(d);
  if (name_ == "real floating") return is_floating(d);
  if (name_ == "complex floating") return is_complex(d);
  if (name_ == "numeric") return d != DType::bool_;
  throw ValueError("isdtype: unrecognized kind='" + name_ +
                   "', expected one of 'bool', 'signed integer', 'unsigned integer', "
                   "'integral', 'real floating', 'complex floating', 'numeric', or a dtype");
}

bool isdtype(DType dtype, const DTypeKind& kind) { return kind.contains(dtype); }

bool isdtype(DType dtype, std::initializer_list<DTypeKind> kinds) {
  bool found = false;
  for (const DTypeKind& k : kinds) found = k.contains(dtype) || found;  // every name validated
  return found;
}

bool issubdtype(DType dtype, DType of) { return dtype == of; }

bool issubdtype(DType dtype, DTypeCategory of) {
  switch (of) {
    case DTypeCategory::generic: return true;
    case DTypeCategory::number: return dtype != DType::bool_;
    case DTypeCategory::integer: return is_integer(dtype);
    case DTypeCategory::signedinteger: return dtype == DType::int32;
    case DTypeCategory::unsignedinteger: return dtype == DType::uint32;
    case DTypeCategory::inexact: return is_inexact(dtype);
    case DTypeCategory::floating: return is_floating(dtype);
    case DTypeCategory::complexfloating: return is_complex(dtype);
  }
  return false;
}

}  // namespace linum
