// A jit Program (JAX's jaxpr) and the primitives only programs hold: staged control flow
// (FlowPrimitive, whose parameters are sub-programs) and fused elementwise chains (FusedChain).
// jit.cpp records and runs programs, jit_fusion.cpp fuses them, jit_control.cpp holds the flow
// rules. Private to the jit*.cpp files.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include <linum/autodiff/primitive.hpp>

namespace linum::detail {

// A value of the program: an input or primitive output (var >= 0) or a constant (const index).
struct Ref {
  int var = -1;
  int constant = -1;
  bool operator==(const Ref&) const = default;
};

// One equation, as a jaxpr's: a primitive applied to values, writing fresh vars. The primitive
// object holds its parameters, sub-programs included (a FlowPrimitive's branches), so every eqn
// runs the same way: its kernel in a replay, bind when transforms must see it.
struct Eqn {
  PrimPtr prim;
  std::vector<Ref> in;
  std::vector<int> out;
  std::vector<int> release;  // vars whose last reader is this eqn
  std::size_t size = 1;      // recorded primitives it stands for (a fused chain: several)
  // A fused chain's outputs that a later concatenation reads: the kernel writes each in place in
  // that concatenation's buffer (Program::buffers), at `offset` elements, so that the
  // concatenation copies nothing. A concatenation so written: `fills` is its buffer.
  struct Placed {
    int output;
    int buffer;
    std::int64_t offset;
  };
  std::vector<Placed> placed;
  int fills = -1;
};

class Program {
 public:
  int num_inputs = 0;
  int num_vars = 0;
  std::vector<Eqn> eqns;
  Arrays consts;
  std::vector<Ref> outputs;
  std::vector<int> capture_vars;    // a sub-program's inputs after num_inputs: closed-over values
  Avals out_avals;                  // shape, dtype and weak type of each output
  std::vector<ShapeDtype> buffers;  // concatenations that their pieces' chains write in place
};

// How eval_program runs each eqn: on its kernel (a replay on concrete values that no transform
// watches) or through bind, so that the active transforms see it (jax.core.eval_jaxpr).
enum class Run { kernels, bind };
// The one interpreter of programs; each value is dropped after its last reader.
Arrays eval_program(const Program& p, std::span<const Array> inputs,
                    std::span<const Array> captures, Run how);

// The axis of a concatenation: the one dim where `piece` differs from `result`; -1 if none or
// several do.
int concatenated_axis(const Shape& result, const Shape& piece);

// Lets fused chains write the pieces of a concatenation along its leading axis (where each piece
// is one contiguous block of the result) straight into its buffer (jit_in_place.cpp), as the
// weight gradients of a scan under jit read every step's values. var_aval: each var's aval.
void place_concatenated_pieces(Program& p, const std::vector<ShapeDtype>& var_aval);
// Runs an eqn with placed outputs or a filled buffer; `buffers`: this run's, per Program::buffers.
Arrays eval_in_place(const Program& p, const Eqn& e, std::span<const Array> in,
                     std::vector<Array>& buffers);

// Staged control flow: switch picks programs[index] (cond is a switch over {false, true}); while
// runs programs[1] (body) while programs[0] (cond) gives true. The inputs are the index (switch),
// the operands, then each program's captures, program by program.
struct Flow {
  enum class Kind { Switch, While } kind;
  std::vector<std::shared_ptr<const Program>> programs;
  std::size_t n_operands = 0;
};

// cond/switch_/while_loop on a predicate that jit traces, as one primitive (JAX's `cond`, `while`)
// over closed programs. Reached under a grad, jvp or vmap inside the jitted function, the tape
// records one node and each rule transforms the branches with linum's transforms; the jit trace
// records it as an eqn like any other, and its kernel runs the programs.
class FlowPrimitive final : public Primitive {
 public:
  explicit FlowPrimitive(std::shared_ptr<const Flow> f) : flow(std::move(f)) {}
  std::shared_ptr<const Flow> flow;

  const char* name() const override;
  // The programs were traced on the operands' own dtypes; their ops widen on their own.
  bool handles_reduced_floats() const override { return true; }
  Arrays eval(std::span<const Array> in) const override;
  Arrays jvp(std::span<const Array> primals, std::span<const Array> tangents,
             std::span<const Array> outs) const override;
  Arrays vjp(std::span<const Array> primals, std::span<const Array> cts,
             std::span<const Array> outs) const override;
  Arrays vjp_needed(std::span<const Array> primals, std::span<const Array> cts,
                    std::span<const Array> outs, std::span<const bool> needed) const override;
  Batched vmap(std::span<const Array> in, std::span<const int> bdims) const override;
  Avals abstract_eval(std::span<const ShapeDtype> in) const override;
  // The outputs take the branches' weak types (the staging and the kernels set them), not bind's.
  bool weak_type_rule(bool) const override { return false; }
};

// The captures of programs[k] among a flow's captures (the inputs after index and operands).
std::span<const Array> captures_of(const Flow& f, std::span<const Array> caps, std::size_t k);

using FlatFn = std::function<Arrays(const Arrays&)>;

// A program that transforms can run again: traced unfused, with custom_vjp/checkpoint kept as
// eqns, and every tracer it closes over (of any transform) made an input after the arguments
// (JAX's closure conversion): `captured`, in the order of its capture_vars.
struct ClosedProgram {
  std::shared_ptr<const Program> program;
  Arrays captured;
};
ClosedProgram trace_closed(const FlatFn& fn, const Arrays& like);

// Binds a FlowPrimitive over branches (or cond and body) traced closed over `operands`' avals.
Arrays bind_switch(const Array& index, const std::vector<FlatFn>& branches, const Arrays& operands);
Arrays bind_while(const FlatFn& cond_fn, const FlatFn& body_fn, const Arrays& init);

// A program that its trace is finishing, for rewrites: linum ops applied to value()s record eqns at
// the end of the program's eqns (the rewrite then moves them where they belong).
class ProgramEditor {
 public:
  virtual Program& program() = 0;
  virtual Array value(const Ref& r) = 0;  // a tracer standing for r, or the constant itself
  // The value of an op's result: its var, or a constant where the op read constants alone
  // (the op then ran at once: a rewrite's transpose of a weight the function closes over).
  virtual Ref recorded(const Array& a) = 0;
  virtual ShapeDtype aval(const Ref& r) const = 0;

 protected:
  ~ProgramEditor() = default;
};

// Batches the contractions of loops unrolled into the program (scan under jit): the products of
// every slice of an unstacked array by one operand become one product of the whole array, and a
// sum of products become one product over concatenated operands (jit_rewrite.cpp). Results equal
// the unbatched ones up to float rounding (the GEMMs sum in another order).
void batch_contractions(ProgramEditor& ed);

// Replaces each run of two or more consecutive eqns of float elementwise primitives over one
// shape by one FusedChain eqn whose outputs are the values read after the run. var_aval /
// var_weak: each var's shape, dtype and weak type. Only for programs that are replayed: a
// FusedChain has no transformation rules.
void fuse_elementwise_chains(Program& p, const std::vector<ShapeDtype>& var_aval,
                             const std::vector<char>& var_weak);

}  // namespace linum::detail
