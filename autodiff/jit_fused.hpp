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

// Where element i of a chain (over its shape, row-major) lies in a buffer: at offset + i, or, for
// a layout with rows, at offset + (i / row) * row_stride + i % row. A bias broadcast along the
// leading dims repeats one row (row_stride 0); a piece that a split takes from its input, or that
// a concatenation puts into its output, is a block of columns of that buffer. `step` 0: a scalar,
// every element at offset.
struct Layout {
  std::int64_t offset = 0, row = 0, row_stride = 0, step = 1;
  std::int64_t at(std::int64_t i) const {
    return row ? offset + (i / row) * row_stride + i % row : offset + i * step;
  }
};

// A chain over many elements, run a block of elements at a time: each step reads external inputs
// or register slots of the block, and writes a slot; a value read after the chain has its place
// in an output buffer as its slot. Blocks end where a layout's row does.
struct FusedStep {
  const FusedOp* op;
  std::array<int, 2> in{};  // >= 0: a slot; < 0: external input -(k + 1)
  int out = 0;              // slot
};
struct Blocks {
  std::vector<FusedStep> steps;
  int num_slots = 0;
  std::vector<Layout> in_layout;  // per external input (an input of the eqn)
  struct Out {
    int slot;
    int output;  // the eqn output holding it
    Layout at;
  };
  std::vector<Out> outs;  // the values read after the chain
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
  FusedChain(Shape s, DType d) : shape(std::move(s)), dtype(d) {}
  Shape shape;  // the chain's
  DType dtype;
  Avals outs;  // per output of the eqn: its shape (the chain's, or a concatenation's) and weak type
  std::variant<Blocks, ScalarCode<float>, ScalarCode<double>> code;

  const char* name() const override { return "fused_elementwise"; }
  Arrays eval(std::span<const Array> in) const override;  // jit_fused_kernels.cpp
  // As eval, writing into the given outputs where `outs` holds one (a piece of a concatenation).
  Arrays eval_into(std::span<const Array> in, Arrays outs) const;
  Avals abstract_eval(std::span<const ShapeDtype>) const override { return outs; }
  bool weak_type_rule(bool) const override { return false; }  // the kernel sets each output's
};

}  // namespace linum::detail
