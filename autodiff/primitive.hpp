// Primitive: one operation with its four rules (kernel, JVP, VJP, batching) and `bind`, the one
// dispatch point through which every op passes so that active transforms can intercept it.
#pragma once

#include <memory>
#include <ostream>
#include <span>
#include <utility>
#include <vector>

#include <linum/autodiff/array.hpp>

namespace linum {

class Primitive;

// An abstract value (JAX's ShapeDtypeStruct): what eval_shape sees of an array, with no data.
struct ShapeDtype {
  Shape shape;
  DType dtype = DType::float32;
  bool weak_type = false;  // as jax.ShapeDtypeStruct's: the value came only from C++ scalars
  bool operator==(const ShapeDtype&) const = default;
};
using Avals = std::vector<ShapeDtype>;
std::ostream& operator<<(std::ostream& os, const ShapeDtype& a);  // "float32[3,4]"

using PrimPtr = std::shared_ptr<const Primitive>;

// Result of a batching rule: the outputs and, for each, its batch axis (-1: not batched).
struct Batched {
  Arrays outs;
  std::vector<int> bdims;
};

class Primitive {
 public:
  virtual ~Primitive() = default;
  virtual const char* name() const = 0;

  // Kernel: concrete inputs in, concrete outputs out. Shapes/dtypes were validated by the op.
  virtual Arrays eval(std::span<const Array> in) const = 0;
  // The kernel of a one-output primitive without the vector: bind1 calls it when no transform
  // intercepts the op, which eager code does once per op. Default: eval()'s one output.
  virtual Array eval1(std::span<const Array> in) const;
  // eval1 on two operands the caller holds apart: bind1(prim, a, b)'s kernel, which spares the
  // two handle copies (atomic increments) that packing them into a span costs. Default: eval1.
  virtual Array eval_binary(const Array& a, const Array& b) const;

  // Forward mode: output tangents from input tangents (empty Array = symbolic zero).
  // `outs` are the primal outputs, for rules such as exp's that reuse them.
  virtual Arrays jvp(std::span<const Array> primals, std::span<const Array> tangents,
                     std::span<const Array> outs) const;

  // Reverse mode: input cotangents from output cotangents (empty Array = zero, both ways).
  virtual Arrays vjp(std::span<const Array> primals, std::span<const Array> cotangents,
                     std::span<const Array> outs) const;

  // Reverse mode when only inputs with needed[i] want a cotangent (the others are constants of
  // this differentiation; their entries may be left empty). The tape calls this, so that rules
  // with costly cotangents (contractions, convolutions) skip the unneeded ones. Default: vjp().
  virtual Arrays vjp_needed(std::span<const Array> primals, std::span<const Array> cotangents,
                            std::span<const Array> outs, std::span<const bool> needed) const;

  // Whether the VJP rule reads the value of input i / output j, beyond its shape and dtype. The
  // tape keeps only the values that are read (JAX's residuals) and a shape-only stand-in for the
  // rest, so reverse mode does not hold every intermediate alive. Default: all are read.
  virtual bool vjp_reads_input(std::size_t) const { return true; }
  virtual bool vjp_reads_output(std::size_t) const { return true; }

  // Batching: `bdims[i]` is the batch axis of in[i] (-1: unbatched; at least one is batched).
  // The rule must emit vectorized ops, never a loop over the batch.
  virtual Batched vmap(std::span<const Array> in, std::span<const int> bdims) const;

  // Whether eval runs on bfloat16/float16 operands as they are (data movement, selection,
  // conversion). Otherwise bind computes the primitive in float32: it converts those operands
  // up, binds the float32 primitive and rounds its float32 outputs back, so every transform
  // sees ordinary converts and a cotangent keeps its primal's dtype.
  virtual bool handles_reduced_floats() const { return false; }

  // Non-differentiable primitives (comparisons, argmax, stop_gradient) produce plain values
  // under grad and jvp: no tape node, zero tangent.
  virtual bool differentiable() const { return true; }

  // Whether the outputs are weakly typed (JAX's weak_type_rule): by default when every input
  // is; index-valued primitives (argmax) strip it, convert_element_type sets it explicitly.
  virtual bool weak_type_rule(bool all_inputs_weak) const { return all_inputs_weak; }

  // Abstract evaluation (eval_shape, cond's untaken branch): output shapes and dtypes from the
  // inputs' alone; the one shape rule of this primitive, shared by every transform.
  virtual Avals abstract_eval(std::span<const ShapeDtype> in) const;
  // Higher-order primitives whose kernel is made of linum ops (custom_vjp, checkpoint,
  // collectives) are evaluated abstractly by running that kernel on the abstract tracers.
  virtual bool abstract_eval_by_tracing() const { return false; }

  // Parameters for printing in error messages and tape dumps, e.g. "axes=(0,) keepdims=false".
  virtual void print_params(std::ostream&) const {}
};

// Runs `prim` on `in` through the innermost active transform that owns one of the inputs, or
// straight on the kernel when none does (the fast path).
Arrays bind(const PrimPtr& prim, std::span<const Array> in);
Array bind1(const PrimPtr& prim, std::span<const Array> in);
inline Array bind1(const PrimPtr& prim, std::initializer_list<Array> in) {
  return bind1(prim, std::span<const Array>(in.begin(), in.size()));
}
// bind1 on one or two operands as the caller holds them, without the handle copies (an atomic
// increment and decrement each) of an initializer list: the elementwise ops' path.
inline Array bind1(const PrimPtr& prim, const Array& x) {
  return bind1(prim, std::span<const Array>(&x, 1));
}
Array bind1(const PrimPtr& prim, const Array& a, const Array& b);

// A primitive without parameters is a process-wide singleton.
template <class P>
const PrimPtr& singleton() {
  static const PrimPtr p = std::make_shared<const P>();
  return p;
}

}  // namespace linum
