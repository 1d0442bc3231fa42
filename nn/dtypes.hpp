// flax.linen.dtypes: the dtype a layer computes in. A layer's `dtype` field (nullopt: inferred)
// is that dtype; its parameters are created in `param_dtype` and cast to it at call time, so
// Dense(dtype=bfloat16, param_dtype=float32) keeps float32 weights and computes in bfloat16.
// Included only by nn's .cpp files.
#pragma once

#include <optional>
#include <vector>

#include <linum/autodiff/array.hpp>

namespace linum::nn::detail {

// flax.linen.dtypes.canonicalize_dtype: `dtype` when given, else the jnp.result_type of the
// operands (nullopt ones ignored), promoted to float32 at least when `inexact` asks for a float;
// with `inexact` the dtype must be inexact (a ValueError naming `op`).
DType canonicalize_dtype(const char* op, const std::optional<DType>& dtype,
                         const std::vector<std::optional<Array>>& operands, bool inexact = true);

// `a` as dtype d: the array itself when it already is (promote_dtype's cast of one operand).
Array cast(const Array& a, DType d);
std::optional<Array> cast(const std::optional<Array>& a, DType d);

}  // namespace linum::nn::detail
