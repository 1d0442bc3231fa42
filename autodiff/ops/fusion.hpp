// The per-element code of the elementwise primitives that jit fuses into chains
// (autodiff/jit_fusion.cpp, which holds the one table over them). A chain is evaluated one block
// of elements at a time with the same per-element arithmetic as each primitive's own kernel, so
// fused results equal eager ones bit for bit.
#pragma once

#include <cstdint>
#include <span>

namespace linum {
class Primitive;
}

namespace linum::detail {

// o[i] = f(a[i * sa], b[i * sb]) for i < n (b unused by unary ops); `simd` picks the vector form
// a unary kernel uses on the elements below the last full batch of the whole array.
template <class T>
using FusedKernel = void (*)(const T* a, std::int64_t sa, const T* b, std::int64_t sb, T* o,
                             std::int64_t n, bool simd);
// One element (b unused by unary ops): the kernels' scalar expression.
template <class T>
using FusedScalar = T (*)(T a, T b);
struct FusedOp {
  int arity = 0;
  FusedKernel<float> f32 = nullptr;
  FusedKernel<double> f64 = nullptr;
  FusedScalar<float> s32 = nullptr;
  FusedScalar<double> s64 = nullptr;
};
struct FusedEntry {
  const Primitive* prim;  // the primitive's singleton (parameterless float primitives only)
  FusedOp op;
};

// The fusable primitives each file defines, with their code instantiated from the primitives'
// per-element structs, which stay private to those files.
std::span<const FusedEntry> elementwise_fused_entries();  // ops/elementwise.cpp
std::span<const FusedEntry> math_fused_entries();         // ops/elementwise_math.cpp
std::span<const FusedEntry> special_fused_entries();      // ops/special.cpp
// The code of a fusable primitive with parameters, by instance: integer_pow with y = 2 (a
// square; tanh's derivative, squared errors), else nullptr. Defined in ops/elementwise.cpp.
const FusedOp* integer_pow_fused_op(const Primitive& p);

}  // namespace linum::detail
