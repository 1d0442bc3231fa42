// jit's two halves: JitTrace, the level that records each primitive bound on its tracers into a
// Program (avals from the primitive's abstract_eval, so nothing is computed while tracing), and
// the replay, which runs the recorded kernels on concrete buffers in order and drops each value
// after its last reader. cond/switch/while_loop on a traced predicate are staged: each branch or
// loop function is traced into a sub-program (values it closes over become its extra inputs) and
// the replay picks or repeats them by the predicate's value.
#include <linum/autodiff/jit.hpp>

#include <linum/autodiff/control_flow.hpp>

#include <algorithm>
#include <array>
#include <sstream>
#include <unordered_map>

#include <xsimd/xsimd.hpp>

#include <linum/autodiff/ops/fusion.hpp>
#include <linum/autodiff/ops/kernel_util.hpp>
#include <linum/autodiff/primitive.hpp>
#include <linum/autodiff/trace.hpp>

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
// and writes a slot; the chain's values read after it are copied out of their slots.
struct FusedStep {
  const FusedOp* op;
  std::array<int, 2> in{};      // >= 0: a slot; < 0: external input -(k + 1)
  int out = 0;                  // slot
};
struct Fused {
  Shape shape;
  DType dtype = float32;
  std::vector<FusedStep> steps;
  int num_slots = 0;
  std::vector<int> out_slots;   // per output of the eqn
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

namespace {

struct JitTracer final : ArrayImpl {
  JitTracer(Shape s, DType d, int lvl, std::uint64_t uid, int v)
      : ArrayImpl(std::move(s), d, lvl, uid), var(v) {}
  int var;
};

class JitTrace final : public Trace {
 public:
  explicit JitTrace(const std::string& name, JitTrace* parent = nullptr)
      : name_(name), parent_(parent) {}
  const char* transform_name() const override { return "jit"; }
  const std::string& name() const { return name_; }

  Array input(const Array& x) {
    ++program_.num_inputs;
    Array t = fresh({x.shape(), x.dtype()}, x.impl()->weak_type);
    t.impl()->weak_type = x.impl()->weak_type;
    return t;
  }

  Arrays process(const PrimPtr& prim, std::span<const Array> in) override {
    // A primitive made of linum ops (custom_vjp, checkpoint): its ops are recorded one by one.
    if (prim->abstract_eval_by_tracing()) return prim->eval(in);
    Eqn e;
    e.prim = prim;
    Avals avals;
    avals.reserve(in.size());
    for (const Array& a : in) {
      e.in.push_back(ref(a, prim->name()));
      avals.push_back({a.shape(), a.dtype()});
    }
    // The weak type bind gives the outputs (recorded for fused chains, which set it themselves).
    bool all_weak = !in.empty();
    for (const Array& a : in) all_weak = all_weak && a.impl()->weak_type;
    const bool weak = prim->weak_type_rule(all_weak);
    Arrays outs;
    for (const ShapeDtype& o : prim->abstract_eval(avals)) {
      outs.push_back(fresh(o, weak && o.dtype != bool_));
      e.out.push_back(var_of(outs.back()));
    }
    program_.eqns.push_back(std::move(e));
    return outs;
  }

  Ref ref(const Array& a, const char* op) {
    if (owns(a)) return Ref{var_of(a), -1};
    if (parent_ && parent_->reaches(a)) {  // closed over by a branch or loop body: an input
      auto [it, fresh_capture] = capture_index_.try_emplace(a.impl().get(), program_.num_vars);
      if (fresh_capture) {
        program_.capture_vars.push_back(program_.num_vars++);
        var_aval_.push_back({a.shape(), a.dtype()});
        var_weak_.push_back(a.impl()->weak_type);
        captured_.push_back(a);
      }
      return Ref{it->second, -1};
    }
    if (a.is_tracer()) {
      std::ostringstream os;
      os << "jit(" << name_ << "): " << op << " got a value traced by an enclosing "
         << (trace_at(a.impl()->level) ? trace_at(a.impl()->level)->transform_name() : "transform")
         << " (shape " << shape_str(a.shape())
         << ") that the function closes over; pass it to the jitted function as an argument";
      throw UnexpectedTracerError(os.str());
    }
    auto [it, fresh_const] =
        const_index_.try_emplace(a.impl().get(), static_cast<int>(program_.consts.size()));
    if (fresh_const) program_.consts.push_back(a);
    return Ref{-1, it->second};
  }

  // Whether `a` is a value of this trace or of one it is staged in.
  bool reaches(const Array& a) const { return owns(a) || (parent_ && parent_->reaches(a)); }
  // The values a sub-program closed over, in the order of its capture_vars.
  const Arrays& captured() const { return captured_; }

  // Records a staged control-flow eqn over this trace's values; returns its outputs.
  // Its outputs take the avals and weak types of `like`.
  Arrays stage(std::shared_ptr<const Flow> flow, const Arrays& in,
               const std::vector<const JitTrace*>& subs, const Arrays& like) {
    Eqn e;
    e.flow = std::move(flow);
    for (const Array& a : in) e.in.push_back(ref(a, "control flow"));
    for (const JitTrace* sub : subs)
      for (const Array& a : sub->captured()) e.in.push_back(ref(a, "control flow"));
    Arrays outs;
    for (const Array& l : like) {
      outs.push_back(fresh({l.shape(), l.dtype()}, l.impl()->weak_type));
      outs.back().impl()->weak_type = l.impl()->weak_type;
      e.out.push_back(var_of(outs.back()));
    }
    program_.eqns.push_back(std::move(e));
    return outs;
  }

  std::shared_ptr<Program> finish(const Arrays& outs) {
    for (const Array& o : outs) program_.outputs.push_back(ref(o, "the output"));
    eliminate_dead_code();
    fuse_elementwise_chains();
    compact_vars();
    // Liveness: a var is released after its last reader, unless it is an output.
    std::vector<int> last(program_.num_vars, -1);
    for (std::size_t k = 0; k < program_.eqns.size(); ++k)
      for (const Ref& r : program_.eqns[k].in)
        if (r.var >= 0) last[r.var] = static_cast<int>(k);
    for (const Ref& r : program_.outputs)
      if (r.var >= 0) last[r.var] = -1;
    for (int v = 0; v < program_.num_vars; ++v)
      if (last[v] >= 0) program_.eqns[last[v]].release.push_back(v);
    return std::make_shared<Program>(std::move(program_));
  }

  // Renumbers the vars that still exist (fused chains keep most of theirs in block registers),
  // inputs first, so the replay's environment holds only those.
  void compact_vars() {
    std::vector<int> to(program_.num_vars, -1);
    int next = 0;
    auto keep = [&](int& v) {
      if (to[v] < 0) to[v] = next++;
      v = to[v];
    };
    for (int v = 0; v < program_.num_inputs; ++v) to[v] = next++;
    for (int& v : program_.capture_vars) keep(v);
    for (Eqn& e : program_.eqns) {
      for (Ref& r : e.in)
        if (r.var >= 0) keep(r.var);
      for (int& v : e.out) keep(v);
    }
    for (Ref& r : program_.outputs)
      if (r.var >= 0) keep(r.var);
    program_.num_vars = next;
  }

  ShapeDtype aval_of(const Ref& r) const {
    if (r.var >= 0) return var_aval_[r.var];
    const Array& c = program_.consts[r.constant];
    return {c.shape(), c.dtype()};
  }
  // The fused op of e when it can join a chain over (shape, dtype): a float elementwise primitive
  // whose inputs have that shape, or are rank-0 scalars of a binary op.
  const FusedOp* chainable(const Eqn& e, const ShapeDtype& like) const {
    if (!e.prim || e.out.size() != 1) return nullptr;
    const FusedOp* op = fused_op(*e.prim);
    if (!op) return nullptr;
    const ShapeDtype& o = var_aval_[e.out[0]];
    if (o.dtype != like.dtype || o.shape != like.shape) return nullptr;
    for (const Ref& r : e.in) {
      const ShapeDtype a = aval_of(r);
      if (a.dtype != o.dtype || (a.shape != o.shape && !(op->arity == 2 && a.shape.empty())))
        return nullptr;
    }
    return op;
  }

  // Replaces each run of two or more consecutive chainable eqns by one fused eqn whose outputs
  // are the values read after the run.
  void fuse_elementwise_chains() {
    const int never = static_cast<int>(program_.eqns.size());
    std::vector<int> last_read(program_.num_vars, -1);
    for (std::size_t k = 0; k < program_.eqns.size(); ++k)
      for (const Ref& r : program_.eqns[k].in)
        if (r.var >= 0) last_read[r.var] = static_cast<int>(k);
    for (const Ref& r : program_.outputs)
      if (r.var >= 0) last_read[r.var] = never;
    std::vector<Eqn> out;
    std::size_t k = 0;
    const std::size_t n = program_.eqns.size();
    while (k < n) {
      const Eqn& first = program_.eqns[k];
      const bool float_out = first.prim && first.out.size() == 1 &&
                             (var_aval_[first.out[0]].dtype == float32 ||
                              var_aval_[first.out[0]].dtype == float64);
      std::size_t end = k;
      if (float_out) {
        const ShapeDtype like = var_aval_[first.out[0]];
        while (end < n && chainable(program_.eqns[end], like)) ++end;
      }
      if (end - k < 2) {
        out.push_back(std::move(program_.eqns[k++]));
        continue;
      }
      out.push_back(fuse_run(k, end, last_read));
      k = end;
    }
    program_.eqns = std::move(out);
  }

  Eqn fuse_run(std::size_t begin, std::size_t end, const std::vector<int>& last_read) {
    auto f = std::make_shared<Fused>();
    const ShapeDtype like = var_aval_[program_.eqns[begin].out[0]];
    f->shape = like.shape;
    f->dtype = like.dtype;
    Eqn e;
    e.size = end - begin;
    std::unordered_map<int, int> slot_of;        // var -> slot
    std::unordered_map<long long, int> ext_of;   // ref key -> external index
    std::vector<int> free_slots;
    auto escapes = [&](int v) { return last_read[v] >= static_cast<int>(end); };
    auto last_in_run = [&](int v) { return last_read[v]; };
    for (std::size_t k = begin; k < end; ++k) {
      const Eqn& q = program_.eqns[k];
      FusedStep step{fused_op(*q.prim)};
      for (std::size_t j = 0; j < q.in.size(); ++j) {
        const Ref& r = q.in[j];
        auto s = r.var >= 0 ? slot_of.find(r.var) : slot_of.end();
        if (s != slot_of.end()) {
          step.in[j] = s->second;
          continue;
        }
        const long long key = r.var >= 0 ? r.var : -1LL - r.constant;
        auto [it, added] = ext_of.try_emplace(key, static_cast<int>(e.in.size()));
        if (added) e.in.push_back(r);
        step.in[j] = -(it->second + 1);
      }
      // Slots whose value is not read after this step are free again (a step may write in place).
      for (std::size_t j = 0; j < q.in.size(); ++j) {
        const Ref& r = q.in[j];
        if (r.var >= 0 && step.in[j] >= 0 && !escapes(r.var) &&
            last_in_run(r.var) == static_cast<int>(k) && slot_of.count(r.var)) {
          free_slots.push_back(slot_of[r.var]);
          slot_of.erase(r.var);
        }
      }
      const int v = q.out[0];
      if (!free_slots.empty()) {
        step.out = free_slots.back();
        free_slots.pop_back();
      } else {
        step.out = f->num_slots++;
      }
      slot_of[v] = step.out;
      if (escapes(v)) {
        e.out.push_back(v);
        f->out_slots.push_back(step.out);
        f->out_weak.push_back(var_weak_[v]);
      }
      f->steps.push_back(step);
    }
    e.fused = std::move(f);
    return e;
  }

  // Drops eqns none of whose outputs is read (primitives and staged flow are pure): e.g. a
  // while_loop's first predicate, computed outside before the loop was staged.
  void eliminate_dead_code() {
    std::vector<char> live(program_.num_vars, 0);
    for (const Ref& r : program_.outputs)
      if (r.var >= 0) live[r.var] = 1;
    std::vector<Eqn> kept;
    for (std::size_t k = program_.eqns.size(); k-- > 0;) {
      Eqn& e = program_.eqns[k];
      bool used = false;
      for (int v : e.out) used = used || live[v];
      if (!used) continue;
      for (const Ref& r : e.in)
        if (r.var >= 0) live[r.var] = 1;
      kept.push_back(std::move(e));
    }
    program_.eqns.assign(std::make_move_iterator(kept.rbegin()),
                         std::make_move_iterator(kept.rend()));
  }

 private:
  Array fresh(const ShapeDtype& aval, bool weak) {
    var_aval_.push_back(aval);
    var_weak_.push_back(weak);
    return Array(
        make_small<JitTracer>(aval.shape, aval.dtype, level(), uid(), program_.num_vars++));
  }
  static int var_of(const Array& a) { return static_cast<const JitTracer&>(*a.impl()).var; }

  std::string name_;
  JitTrace* parent_;
  Program program_;
  std::unordered_map<const ArrayImpl*, int> const_index_;
  std::unordered_map<const ArrayImpl*, int> capture_index_;
  Arrays captured_;
  std::vector<ShapeDtype> var_aval_;  // per var
  std::vector<char> var_weak_;
};

Arrays with_weak(const Primitive& prim, std::span<const Array> in, Arrays outs) {
  bool all_weak = !in.empty();
  for (const Array& a : in) all_weak = all_weak && a.impl()->weak_type;
  if (prim.weak_type_rule(all_weak))
    for (Array& o : outs)
      if (o.valid() && o.dtype() != bool_) o.impl()->weak_type = true;
  return outs;
}

}  // namespace

std::shared_ptr<const Program> jit_trace(const std::function<Arrays(const Arrays&)>& fn,
                                         const Arrays& leaves, const std::string& name) {
  JitTrace trace(name);
  TraceScope scope(trace);
  Arrays in;
  in.reserve(leaves.size());
  for (const Array& x : leaves) in.push_back(trace.input(x));
  const Arrays outs = fn(in);
  auto p = trace.finish(outs);
  scope.close();
  return p;
}

namespace {

Arrays replay(const Program& p, std::span<const Array> leaves, std::span<const Array> captures);

// The captures of programs[k] in a flow eqn's inputs (after the index and the operands).
std::span<const Array> captures_of(const Flow& f, std::span<const Array> caps, std::size_t k) {
  std::size_t from = 0;
  for (std::size_t i = 0; i < k; ++i) from += f.programs[i]->capture_vars.size();
  return caps.subspan(from, f.programs[k]->capture_vars.size());
}

// A fused chain over the whole array: blocks of kBlock elements below the last full SIMD batch
// (where the unary kernels use their vector form), then the remainder.
constexpr std::int64_t kBlock = 256;

// A rank-0 (one-element) chain: every value is one number, in one array after the inputs.
template <class T>
Arrays run_fused_scalar(const Fused& f, std::span<const Array> in, Arrays& outs,
                        const std::vector<T*>& out_ptrs) {
  const int ne = static_cast<int>(in.size());
  thread_local std::vector<T> vals;
  vals.resize(static_cast<std::size_t>(ne + f.num_slots));
  T* v = vals.data();
  for (int k = 0; k < ne; ++k) v[k] = *in_ptr<T>(in[k]);
  auto at = [&](int r) { return r >= 0 ? v[ne + r] : v[-r - 1]; };
  for (const FusedStep& st : f.steps) {
    const T a = at(st.in[0]), b = st.op->arity == 2 ? at(st.in[1]) : T(0);
    if constexpr (std::is_same_v<T, float>)
      v[ne + st.out] = st.op->s32(a, b);
    else
      v[ne + st.out] = st.op->s64(a, b);
  }
  for (std::size_t j = 0; j < out_ptrs.size(); ++j) *out_ptrs[j] = v[ne + f.out_slots[j]];
  return std::move(outs);
}

template <class T>
Arrays run_fused(const Fused& f, std::span<const Array> in) {
  const std::int64_t n = shape_size(f.shape);
  Arrays outs;
  std::vector<T*> out_ptrs;
  for (std::size_t j = 0; j < f.out_slots.size(); ++j) {
    outs.push_back(empty(f.shape, f.dtype));
    outs.back().impl()->weak_type = f.out_weak[j];
    out_ptrs.push_back(out_ptr<T>(outs.back()));
  }
  if (n == 1) return run_fused_scalar<T>(f, in, outs, out_ptrs);
  std::vector<const T*> ext(in.size());
  std::vector<std::int64_t> ext_stride(in.size());
  for (std::size_t k = 0; k < in.size(); ++k) {
    ext[k] = in_ptr<T>(in[k]);
    ext_stride[k] = in[k].size() == n ? 1 : 0;
  }
  // Slots are `stride` apart: a small array's chain keeps all of its values close together. The
  // slot of a value read after the chain (never reused) is its output buffer at the block.
  const std::int64_t stride = std::max<std::int64_t>(1, std::min(kBlock, n));
  thread_local std::vector<T> regs;
  regs.resize(static_cast<std::size_t>(f.num_slots * stride));
  std::vector<T*> base(static_cast<std::size_t>(f.num_slots));
  for (int k = 0; k < f.num_slots; ++k) base[k] = regs.data() + k * stride;
  auto block = [&](std::int64_t off, std::int64_t len, bool simd) {
    for (std::size_t j = 0; j < out_ptrs.size(); ++j) base[f.out_slots[j]] = out_ptrs[j] + off;
    for (const FusedStep& st : f.steps) {
      const T* a[2] = {nullptr, nullptr};
      std::int64_t sa[2] = {1, 1};
      for (int j = 0; j < st.op->arity; ++j) {
        const int r = st.in[j];
        if (r >= 0) {
          a[j] = base[r];
        } else {
          const std::size_t k = static_cast<std::size_t>(-r - 1);
          sa[j] = ext_stride[k];
          a[j] = ext[k] + off * sa[j];
        }
      }
      if constexpr (std::is_same_v<T, float>)
        st.op->f32(a[0], sa[0], a[1], sa[1], base[st.out], len, simd);
      else
        st.op->f64(a[0], sa[0], a[1], sa[1], base[st.out], len, simd);
    }
  };
  const std::int64_t w = static_cast<std::int64_t>(xsimd::batch<T>::size);
  const std::int64_t simd_end = n - n % w;
  for (std::int64_t off = 0; off < simd_end; off += kBlock)
    block(off, std::min(kBlock, simd_end - off), true);
  if (simd_end < n) block(simd_end, n - simd_end, false);
  return outs;
}

Arrays run_flow(const Flow& f, std::span<const Array> in) {
  if (f.kind == Flow::Kind::Switch) {
    const auto k = static_cast<std::size_t>(in[0].item<std::int32_t>());  // clamped when traced
    auto ops = in.subspan(1, f.n_operands);
    return replay(*f.programs[k], ops, captures_of(f, in.subspan(1 + f.n_operands), k));
  }
  auto caps = in.subspan(f.n_operands);
  Arrays carry(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(f.n_operands));
  while (replay(*f.programs[0], carry, captures_of(f, caps, 0)).front().item<bool>())
    carry = replay(*f.programs[1], carry, captures_of(f, caps, 1));
  return carry;
}

Arrays replay(const Program& p, std::span<const Array> leaves, std::span<const Array> captures) {
  std::vector<Array> env(static_cast<std::size_t>(p.num_vars));
  for (int i = 0; i < p.num_inputs; ++i) env[i] = leaves[i];
  for (std::size_t i = 0; i < captures.size(); ++i) env[p.capture_vars[i]] = captures[i];
  auto get = [&](const Ref& r) -> const Array& {
    return r.var >= 0 ? env[r.var] : p.consts[r.constant];
  };
  Arrays in;
  for (const Eqn& e : p.eqns) {
    in.clear();
    for (const Ref& r : e.in) in.push_back(get(r));
    Arrays outs;
    if (e.fused) {
      OpScope op("jit fused elementwise chain");
      outs = e.fused->dtype == float32 ? run_fused<float>(*e.fused, in)
                                       : run_fused<double>(*e.fused, in);
    } else if (e.flow) {
      outs = run_flow(*e.flow, in);
    } else {
      OpScope op(e.prim->name());
      outs = with_weak(*e.prim, in, e.prim->eval(in));
    }
    for (std::size_t j = 0; j < e.out.size(); ++j) env[e.out[j]] = std::move(outs[j]);
    for (int v : e.release) env[v] = Array();
  }
  Arrays out;
  out.reserve(p.outputs.size());
  for (const Ref& r : p.outputs) out.push_back(get(r));
  return out;
}

// The jit trace a staged cond/while would record into: the innermost active trace, when it is a
// jit trace and `x` is one of its values.
JitTrace* staging_trace(const Array& x) {
  if (!x.is_tracer()) return nullptr;
  const int top = trace_depth() - 1;
  auto* t = dynamic_cast<JitTrace*>(trace_at(top));
  return t && t->owns(x) ? t : nullptr;
}

// Traces fn over fresh inputs with the avals of `like` into a sub-program of `parent`.
struct SubTrace {
  std::unique_ptr<JitTrace> trace;
  std::shared_ptr<const Program> program;
  Arrays outs;  // the sub-trace's output tracers (avals and weak types)
};
SubTrace trace_sub(JitTrace& parent, const std::function<Arrays(const Arrays&)>& fn,
                   const Arrays& like) {
  SubTrace s{std::make_unique<JitTrace>(parent.name(), &parent), nullptr, {}};
  TraceScope scope(*s.trace);
  Arrays in;
  in.reserve(like.size());
  for (const Array& x : like) in.push_back(s.trace->input(x));
  s.outs = fn(in);
  s.program = s.trace->finish(s.outs);
  scope.close();
  return s;
}

}  // namespace

Arrays jit_replay(const Program& p, const Arrays& leaves) { return replay(p, leaves, {}); }

bool jit_stageable(const Array& x) { return staging_trace(x) != nullptr; }

Arrays jit_stage_switch(const Array& index, const std::vector<FlatFn>& branches,
                        const Arrays& operands) {
  JitTrace* parent = staging_trace(index);
  if (!parent) throw ValueError("jit_stage_switch: the index is not traced by jit");
  auto flow = std::make_shared<Flow>();
  flow->kind = Flow::Kind::Switch;
  flow->n_operands = operands.size();
  std::vector<SubTrace> subs;
  for (const FlatFn& b : branches) {
    subs.push_back(trace_sub(*parent, b, operands));
    flow->programs.push_back(subs.back().program);
  }
  std::vector<const JitTrace*> traces;
  for (const SubTrace& st : subs) traces.push_back(st.trace.get());
  Arrays in{index};
  in.insert(in.end(), operands.begin(), operands.end());
  return parent->stage(std::move(flow), in, traces, subs.front().outs);
}

Arrays jit_stage_while(const Array& first_pred, const FlatFn& cond_fn, const FlatFn& body_fn,
                       const Arrays& init) {
  JitTrace* parent = staging_trace(first_pred);
  if (!parent) throw ValueError("jit_stage_while: the predicate is not traced by jit");
  auto flow = std::make_shared<Flow>();
  flow->kind = Flow::Kind::While;
  flow->n_operands = init.size();
  SubTrace c = trace_sub(*parent, cond_fn, init);
  SubTrace b = trace_sub(*parent, body_fn, init);
  flow->programs = {c.program, b.program};
  return parent->stage(std::move(flow), init, {c.trace.get(), b.trace.get()}, init);
}

std::size_t program_size(const Program& p) {
  std::size_t n = 0;
  for (const Eqn& e : p.eqns) n += e.size;
  return n;
}

void append_avals(std::string& out, const Arrays& leaves) {
  std::ostringstream os;
  for (const Array& x : leaves)
    os << ';' << ShapeDtype{x.shape(), x.dtype()} << (x.impl()->weak_type ? "w" : "");
  out += os.str();
}

void check_not_jit_traced(const char* what, const Array& x) {
  const std::string* name = jit_function_of(x);
  if (!name) return;
  std::ostringstream os;
  os << what << ": Abstract tracer value encountered where concrete value is expected: an array "
     << ShapeDtype{x.shape(), x.dtype()} << " traced by jit(" << *name
     << ") has no value while the function is traced; keep the computation in linum ops "
        "(linum::where, linum::select), or make the value a static argument";
  throw ConcretizationTypeError(os.str());
}

const std::string* jit_function_of(const Array& x) {
  if (!x.is_tracer()) return nullptr;
  const Array b = bottom_value(x);
  if (!b.is_tracer()) return nullptr;
  auto* t = dynamic_cast<JitTrace*>(trace_at(b.impl()->level));
  return t && t->owns(b) ? &t->name() : nullptr;
}

}  // namespace linum::detail
