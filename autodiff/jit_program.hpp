// A jit Program (jit.cpp records and replays it) and its fused elementwise chains
// (jit_fusion.cpp). Private to those two files.
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include <linum/autodiff/ops/fusion.hpp>
#include <linum/autodiff/primitive.hpp>

namespace linum::detail {

// A value of the program: an input or primitive output (var >= 0) or a constant (const index).
struct Ref {
  int var = -1;
  int constant = -1;
};

struct Flow;
struct Fused;

struct Eqn {
  PrimPtr prim;                        // or, for staged control flow:
  std::shared_ptr<const Flow> flow;    // inputs (index or nothing, operands, captures...)
  std::shared_ptr<const Fused> fused;  // or a chain of elementwise primitives
  std::size_t size = 1;                // primitives it stands for
  std::vector<Ref> in;
  std::vector<int> out;
  std::vector<int> release;  // vars whose last reader is this eqn
};

class Program {
 public:
  int num_inputs = 0;
  int num_vars = 0;
  std::vector<Eqn> eqns;
  Arrays consts;
  std::vector<Ref> outputs;
  std::vector<int> capture_vars;  // a sub-program's inputs after num_inputs: closed-over values
};

// A chain of elementwise primitives over one shape and float dtype, run a block of elements at a
// time: each step reads external inputs (stride 0 for a scalar) or register slots of the block,
// and writes a slot; a value read after the chain has its output buffer as its slot.
struct FusedStep {
  const FusedOp* op;
  std::array<int, 2> in{};  // >= 0: a slot; < 0: external input -(k + 1)
  int out = 0;              // slot
};
struct Fused {
  Shape shape;
  DType dtype = float32;
  std::vector<FusedStep> steps;
  int num_slots = 0;
  std::vector<int> out_slots;  // per output of the eqn
  std::vector<char> out_weak;
};

// Staged control flow: switch picks programs[index] (cond is a switch over {false, true}); while
// runs programs[1] (body) while programs[0] (cond) gives true. Each program's captures follow the
// operands in the eqn's inputs, program by program.
struct Flow {
  enum class Kind { Switch, While } kind;
  std::vector<std::shared_ptr<const Program>> programs;
  std::size_t n_operands = 0;
};

// Replaces each run of two or more consecutive eqns of float elementwise primitives over one
// shape by one fused eqn whose outputs are the values read after the run. var_aval / var_weak:
// each var's shape, dtype and weak type.
void fuse_elementwise_chains(Program& p, const std::vector<ShapeDtype>& var_aval,
                             const std::vector<char>& var_weak);
// Runs a fused eqn on its inputs; returns its outputs.
Arrays run_fused(const Fused& f, std::span<const Array> in);

}  // namespace linum::detail
