// Elementwise primitives a jit program runs fused (jit.cpp): a chain of them is evaluated one
// block of elements at a time, each op on buffers that stay in cache, with the same per-element
// arithmetic as the primitive's own kernel (so fused results equal eager ones bit for bit).
#pragma once

#include <cstdint>

namespace linum {
class Primitive;
}

namespace linum::detail {

// o[i] = f(a[i * sa], b[i * sb]) for i < n (b unused by unary ops); `simd` picks the vector form
// a unary kernel uses on the elements below the last full batch of the whole array.
template <class T>
using FusedKernel = void (*)(const T* a, std::int64_t sa, const T* b, std::int64_t sb, T* o,
                             std::int64_t n, bool simd);
// One element, for rank-0 chains (b unused by unary ops): the kernels' scalar expression.
template <class T>
using FusedScalar = T (*)(T a, T b);
struct FusedOp {
  int arity = 0;
  FusedKernel<float> f32 = nullptr;
  FusedKernel<double> f64 = nullptr;
  FusedScalar<float> s32 = nullptr;
  FusedScalar<double> s64 = nullptr;
};

// The block kernels of a parameterless elementwise float primitive of one op family, else
// nullptr. Each table sits beside its primitives, whose per-element code (anonymous-namespace
// structs) its entries instantiate; jit_fusion.cpp decides which families a chain may use.
const FusedOp* fused_elementwise_op(const Primitive& p);  // ops/elementwise.cpp
const FusedOp* fused_math_op(const Primitive& p);         // ops/elementwise_math.cpp
const FusedOp* fused_special_op(const Primitive& p);      // ops/special.cpp

}  // namespace linum::detail
