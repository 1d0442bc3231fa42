// The interpreters behind the transforms: a per-thread stack of levels (JAX's main traces).
// Each level owns tracers of its kind; bind hands a primitive to the highest level among its
// inputs. Four kinds exist: TapeTrace (reverse mode), JvpTrace (forward mode), BatchTrace
// (vmap) and AbstractTrace (eval_shape).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <linum/autodiff/primitive.hpp>

namespace linum::detail {

class Trace {
 public:
  virtual ~Trace();
  // Interprets `prim` on inputs, some of which are this level's tracers.
  virtual Arrays process(const PrimPtr& prim, std::span<const Array> in) = 0;
  // process for a one-output primitive (bind1's path). Default: process()'s one output.
  virtual Array process1(const PrimPtr& prim, std::span<const Array> in);
  // process1 on two operands the caller holds apart (bind1(prim, a, b)). Default: process1.
  virtual Array process_binary(const PrimPtr& prim, const Array& a, const Array& b);
  virtual const char* transform_name() const = 0;

  int level() const { return level_; }
  std::uint64_t uid() const { return uid_; }
  bool active() const { return level_ >= 0; }
  // True when `a` is a tracer of this level (not of an outer or inner one).
  bool owns(const Array& a) const {
    return a.impl() && a.impl()->level == level_ && a.impl()->trace_uid == uid_ && level_ >= 0;
  }

 protected:
  Trace();

 private:
  friend class TraceScope;
  int level_ = -1;
  std::uint64_t uid_;
};

// Pushes a trace on this thread's level stack; pops it (in LIFO order) when closed or destroyed.
class TraceScope {
 public:
  explicit TraceScope(Trace& t);
  ~TraceScope() { close(); }
  TraceScope(const TraceScope&) = delete;
  TraceScope& operator=(const TraceScope&) = delete;
  void close();

 private:
  Trace* trace_;
};

// Depth of this thread's level stack (the level a new trace would get).
int trace_depth();
// The trace at `level` of this thread's stack (nullptr when out of range); lets higher-order
// primitives look through a tracer chain (e.g. while_loop's batched predicate).
Trace* trace_at(int level);

// ---- reverse mode ------------------------------------------------------------------------

// Records one node per primitive in creation order; backward is a single reverse sweep.
class TapeTrace final : public Trace {
 public:
  TapeTrace();
  ~TapeTrace() override;
  Arrays process(const PrimPtr& prim, std::span<const Array> in) override;
  Array process1(const PrimPtr& prim, std::span<const Array> in) override;
  Array process_binary(const PrimPtr& prim, const Array& a, const Array& b) override;
  const char* transform_name() const override { return "grad"; }

  // A new input variable of the tape (inputs get ids 0, 1, ... in the order watched).
  Array watch(const Array& x);
  // Primal value and variable id of y (-1 when y does not depend on this tape's inputs).
  std::pair<Array, int> unwrap(const Array& y) const;
  // Cotangents of the first n_inputs variables given cotangents of `out_vars` (vars < 0 skipped).
  // The sweep runs ops through bind, so an outer transform records or batches it. With
  // `release`, each node's kept values are freed once the sweep has passed it (grad's single
  // sweep: the residuals do not outlive their use); the tape then cannot be swept again.
  Arrays backward(std::span<const int> out_vars, std::span<const Array> cts, int n_inputs,
                  bool release = false);
  std::size_t num_nodes() const;
  // Frees every node (and the values they keep) without recursion.
  void clear();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// ---- forward mode ------------------------------------------------------------------------

class JvpTrace final : public Trace {
 public:
  Arrays process(const PrimPtr& prim, std::span<const Array> in) override;
  const char* transform_name() const override { return "jvp"; }
  Array watch(const Array& primal, const Array& tangent);
  // Primal and tangent of y; the tangent is zeros when y does not depend on the inputs.
  std::pair<Array, Array> unwrap(const Array& y) const;
};

// ---- batching (vmap) ---------------------------------------------------------------------

class BatchTrace final : public Trace {
 public:
  BatchTrace(std::int64_t axis_size, std::string axis_name)
      : axis_size_(axis_size), axis_name_(std::move(axis_name)) {}
  Arrays process(const PrimPtr& prim, std::span<const Array> in) override;
  const char* transform_name() const override { return "vmap"; }
  // A tracer standing for `value` batched along `bdim` (must be of size axis_size).
  Array wrap(const Array& value, int bdim);
  // Underlying value and batch axis of y (-1 when y is not batched by this level).
  std::pair<Array, int> unwrap(const Array& y) const;
  std::int64_t axis_size() const { return axis_size_; }
  const std::string& axis_name() const { return axis_name_; }

 private:
  std::int64_t axis_size_;
  std::string axis_name_;
};

// ---- abstract evaluation (eval_shape) ------------------------------------------------------

// Runs primitives on shapes and dtypes only: each output is a tracer carrying an aval and no
// data, made by the primitive's abstract_eval rule. No array buffer is ever allocated.
class AbstractTrace final : public Trace {
 public:
  Arrays process(const PrimPtr& prim, std::span<const Array> in) override;
  const char* transform_name() const override { return "eval_shape"; }
  // A tracer of this level standing for any array of this shape and dtype.
  Array wrap(const ShapeDtype& aval);
};

// Whether x, or a value below it in its tracer chain, is abstract (has no concrete value).
bool is_abstract(const Array& x);
// A fresh abstract tracer of x's aval (or `aval`) at the abstract level below x (x must be
// abstract).
Array abstract_like(const Array& x);
Array abstract_like(const Array& x, const ShapeDtype& aval);
// zeros(shape, dtype), abstract when `like` is (transform rules building zeros of a new shape).
Array zeros_for(const Array& like, const Shape& shape, DType dtype);
// JAX's ConcretizationTypeError for `what` (e.g. "Array::item") reading an abstract value.
[[noreturn]] void throw_concretization(const char* what, const Array& x);

// The innermost active BatchTrace whose axis name is `name` (nullptr when none).
BatchTrace* find_batch_trace(const std::string& name);
// The BatchTrace whose batching rule is running on this thread (nullptr outside a rule). Rules
// that depend on the axis itself (named collectives, vmap of custom_vjp/checkpoint) read it.
BatchTrace* current_batch_trace();

// Looking through a tracer chain (grad/jvp tracers to their primal, vmap tracers to their value):
// whether some vmap batches x (the one with trace uid `uid`, or any), and the concrete array at
// the bottom, which keeps the batch axes of every vmap on the way (one entry per example).
bool batched_by(const Array& x, std::uint64_t uid);
bool is_batched(const Array& x);
Array bottom_value(const Array& x);

// bind of a primitive without bfloat16/float16 kernels on operands that include such arrays:
// converts them to float32, binds `prim` on that and rounds the float32 outputs back to the
// operands' 2-byte dtype (XLA:CPU's way: compute in float32, round once).
Arrays bind_in_float32(const PrimPtr& prim, std::span<const Array> in);

}  // namespace linum::detail
