// A fused elementwise chain of a jit Program: the FusedChain primitive of its eqn and the two forms
// of its code. jit_fusion.cpp builds them, jit_fused_kernels.cpp runs them. Private to those files.
#pragma once

#include <array>
#include <cstdint>
#include <variant>
#include <vector>

#include <linum/autodiff/jit_program.hpp>
#include <linum/autodiff/ops/fusion.hpp>

namespace linum::detail {

// A chain over many elements, run a block of elements at a time: each step reads external inputs
// (stride 0 for a scalar) or register slots of the block, and writes a slot; a value read after
// the chain has its output buffer as its slot.
struct FusedStep {
  const FusedOp* op;
  std::array<int, 2> in{};  // >= 0: a slot; < 0: external input -(k + 1)
  int out = 0;              // slot
};
struct Blocks {
  std::vector<FusedStep> steps;
  int num_slots = 0;
  std::vector<int> out_slots;  // per output of the eqn
};

// A one-element chain (a scalar program's, whose cost is latency and dispatch) as code for a
// register machine: every value is one register of a flat file, the arithmetic operators run
// inline and the other ops call their scalar code. Each result also stays in an accumulator, and
// an operand that the previous instruction wrote is read from there (the *_acc forms: `a` is the
// accumulator; *_racc: `b` is), so that a dependent chain does not wait for a store to reach the
// next load. The code ends with a `halt`.
enum class Opcode : std::uint8_t { add, sub, mul, div, neg, square, call };
struct Instr {
  enum class Op : std::uint8_t {
    add,
    add_acc,
    add_racc,
    sub,
    sub_acc,
    sub_racc,
    mul,
    mul_acc,
    mul_racc,
    div,
    div_acc,
    div_racc,
    neg,
    neg_acc,
    call,
    call_acc,
    call_racc,
    halt
  };
  std::uint32_t a, b;  // source registers (b = a for unary ops)
  std::uint32_t dst;
  Op op;
  std::uint8_t fn;  // the call's index in fns
};
template <class T>
struct ScalarCode {
  std::vector<Instr> code;
  std::vector<FusedScalar<T>> fns;
  // Registers: the eqn's inputs, then the constants the chain reads (values fixed at trace
  // time), then its values.
  std::uint32_t num_inputs = 0, num_regs = 0;
  std::vector<T> constants;
  std::vector<std::uint32_t> out_regs;
};

// A fused chain as the primitive of its eqn. It only ever runs on its kernel: programs that
// transforms run again are never fused.
class FusedChain final : public Primitive {
 public:
  FusedChain(Shape s, DType d, std::vector<char> weak)
      : shape(std::move(s)), dtype(d), out_weak(std::move(weak)) {}
  Shape shape;
  DType dtype;
  std::vector<char> out_weak;  // per output
  std::variant<Blocks, ScalarCode<float>, ScalarCode<double>> code;

  const char* name() const override { return "fused_elementwise"; }
  Arrays eval(std::span<const Array> in) const override;  // jit_fused_kernels.cpp
  Avals abstract_eval(std::span<const ShapeDtype>) const override {
    return Avals(out_weak.size(), {shape, dtype});
  }
  bool weak_type_rule(bool) const override { return false; }  // the kernel sets each output's
};

}  // namespace linum::detail
