// canonicalize_dtype and promote_dtype's cast, as flax/linen/dtypes.py.
#include <linum/nn/dtypes.hpp>

#include <string>

#include <linum/autodiff/ops.hpp>
#include <linum/error.hpp>

namespace linum::nn::detail {

DType canonicalize_dtype(const char* op, const std::optional<DType>& dtype,
                         const std::vector<std::optional<Array>>& operands, bool inexact) {
  DType d = float32;
  if (dtype) {
    d = *dtype;
  } else {
    std::optional<ResultType> r;
    for (const auto& a : operands) {
      if (!a) continue;
      r = r ? result_type(r->dtype, r->weak_type, a->dtype(), a->weak_type())
            : ResultType{a->dtype(), a->weak_type()};
    }
    if (!r) throw ValueError(std::string(op) + ": canonicalize_dtype needs at least one operand");
    d = r->dtype;
    if (inexact && !is_inexact(d)) d = promote_types(float32, d);
  }
  if (inexact && !is_inexact(d))
    throw ValueError(std::string(op) + ": dtype must be inexact (a float or complex dtype), got " +
                     std::string(dtype_name(d)));
  return d;
}

Array cast(const Array& a, DType d) { return a.dtype() == d ? a : astype(a, d); }
std::optional<Array> cast(const std::optional<Array>& a, DType d) {
  return a ? std::optional<Array>(cast(*a, d)) : std::nullopt;
}

}  // namespace linum::nn::detail
