// A jit Program (jit.cpp records and replays it), its fused elementwise chains (jit_fusion.cpp)
// and staged control flow bound as a primitive under grad/jvp/vmap (jit_control.cpp). Private to
// those three files.
#pragma once

#include <array>
#include <cstddef>
#include <functional>
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
  Avals out_avals;                // shape, dtype and weak type of each output
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

// cond/switch_/while_loop on a predicate that jit traces, reached under a grad, jvp or vmap inside
// the jitted function: one primitive (JAX's `cond`, `while`) over a Flow of closed programs, so
// that the tape records one node and each rule transforms the branches with linum's transforms.
// The jit trace below stages it as a Flow eqn. Inputs are laid out as a Flow eqn's.
class FlowPrimitive final : public Primitive {
 public:
  explicit FlowPrimitive(std::shared_ptr<const Flow> f) : flow(std::move(f)) {}
  std::shared_ptr<const Flow> flow;

  const char* name() const override;
  Arrays eval(std::span<const Array> in) const override;
  Arrays jvp(std::span<const Array> primals, std::span<const Array> tangents,
             std::span<const Array> outs) const override;
  Arrays vjp(std::span<const Array> primals, std::span<const Array> cts,
             std::span<const Array> outs) const override;
  Arrays vjp_needed(std::span<const Array> primals, std::span<const Array> cts,
                    std::span<const Array> outs, std::span<const bool> needed) const override;
  Batched vmap(std::span<const Array> in, std::span<const int> bdims) const override;
  Avals abstract_eval(std::span<const ShapeDtype> in) const override;
  // The outputs take the branches' weak types (stage() and the kernels set them), not bind's.
  bool weak_type_rule(bool) const override { return false; }
};

using FlatFn = std::function<Arrays(const Arrays&)>;

// A program that transforms can run again: traced unfused, with custom_vjp/checkpoint kept as
// eqns, and every tracer it closes over (of any transform) made an input after the arguments
// (JAX's closure conversion): `captured`, in the order of its capture_vars.
struct ClosedProgram {
  std::shared_ptr<const Program> program;
  Arrays captured;
};
ClosedProgram trace_closed(const FlatFn& fn, const Arrays& like);

// Runs a closed program (never fused) through bind (jax.core.eval_jaxpr), so that active
// transforms see each primitive; staged flow inside binds a FlowPrimitive.
Arrays interpret(const Program& p, std::span<const Array> inputs, std::span<const Array> captures);
// Runs a Flow eqn on concrete inputs (the replay's).
Arrays run_flow(const Flow& f, std::span<const Array> in);
// The captures of programs[k] among a Flow eqn's captures (the inputs after index and operands).
std::span<const Array> captures_of(const Flow& f, std::span<const Array> caps, std::size_t k);

// Binds a FlowPrimitive over branches (or cond and body) traced closed over `operands`' avals.
Arrays bind_switch(const Array& index, const std::vector<FlatFn>& branches, const Arrays& operands);
Arrays bind_while(const FlatFn& cond_fn, const FlatFn& body_fn, const Arrays& init);

// Replaces each run of two or more consecutive eqns of float elementwise primitives over one
// shape by one fused eqn whose outputs are the values read after the run. var_aval / var_weak:
// each var's shape, dtype and weak type.
void fuse_elementwise_chains(Program& p, const std::vector<ShapeDtype>& var_aval,
                             const std::vector<char>& var_weak);
// Runs a fused eqn on its inputs; returns its outputs.
Arrays run_fused(const Fused& f, std::span<const Array> in);

}  // namespace linum::detail
