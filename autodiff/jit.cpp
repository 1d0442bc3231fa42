// jit's two halves: JitTrace, the level that records each primitive bound on its tracers into a
// Program (avals from the primitive's abstract_eval, so nothing is computed while tracing), and
// eval_program, the interpreter that replays it: the recorded kernels on concrete buffers in
// order, each value dropped after its last reader. cond/switch/while_loop on a traced predicate
// are staged: each branch or loop function is traced into a sub-program (values it closes over
// become its extra inputs) and recorded as one FlowPrimitive eqn, whose kernel picks or repeats
// them by the predicate's value (jit_control.cpp). Chains of elementwise primitives are fused
// after recording (jit_fusion.cpp).
#include <linum/autodiff/jit.hpp>

#include <sstream>
#include <unordered_map>

#include <linum/autodiff/control_flow.hpp>
#include <linum/autodiff/jit_program.hpp>
#include <linum/autodiff/primitive.hpp>
#include <linum/autodiff/trace.hpp>

namespace linum::detail {

namespace {

struct JitTracer final : ArrayImpl {
  JitTracer(Shape s, DType d, int lvl, std::uint64_t uid, int v)
      : ArrayImpl(std::move(s), d, lvl, uid), var(v) {}
  int var;
};

class JitTrace final : public Trace, private ProgramEditor {
 public:
  // A `closed` trace (trace_closed) makes a program for transforms to run again: foreign tracers
  // become captures, higher-order primitives stay eqns, nothing is fused. Sub-traces inherit it.
  explicit JitTrace(const std::string& name, JitTrace* parent = nullptr, bool closed = false)
      : name_(name), parent_(parent), closed_(closed || (parent && parent->closed_)) {}
  const char* transform_name() const override { return "jit"; }
  const std::string& name() const { return name_; }

  Array input(const Array& x) {
    ++program_.num_inputs;
    Array t = fresh({x.shape(), x.dtype()}, x.impl()->weak_type);
    t.impl()->weak_type = x.impl()->weak_type;
    return t;
  }

  Arrays process(const PrimPtr& prim, std::span<const Array> in) override {
    if (const auto* fp = dynamic_cast<const FlowPrimitive*>(prim.get()))
      return stage_bound(*fp->flow, in);
    // A primitive made of linum ops (custom_vjp, checkpoint): its ops are recorded one by one,
    // unless a transform will run the program again and needs the primitive's own rules.
    if (prim->abstract_eval_by_tracing() && !closed_) return prim->eval(in);
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
    const Avals out_avals = prim->abstract_eval_by_tracing() ? avals_by_tracing(*prim, avals)
                                                             : prim->abstract_eval(avals);
    for (const ShapeDtype& o : out_avals) {
      outs.push_back(fresh(o, weak && o.dtype != bool_));
      e.out.push_back(var_of(outs.back()));
    }
    program_.eqns.push_back(std::move(e));
    return outs;
  }

  Ref ref(const Array& a, const char* op) {
    if (owns(a)) return Ref{var_of(a), -1};
    if (reaches(a)) {  // closed over by a branch or loop body: an input
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

  // Whether `a` is a value of this trace or of one it is staged in; for a closed trace, any tracer.
  bool reaches(const Array& a) const {
    return owns(a) || (parent_ ? parent_->reaches(a) : closed_ && a.is_tracer());
  }
  // The values a sub-program closed over, in the order of its capture_vars.
  const Arrays& captured() const { return captured_; }

  // Records a staged control-flow eqn over this trace's values; returns its outputs.
  // Its outputs take the avals and weak types of `like`.
  Arrays stage(std::shared_ptr<const Flow> flow, const Arrays& in,
               const std::vector<const JitTrace*>& subs, const Arrays& like) {
    Eqn e;
    e.prim = std::make_shared<const FlowPrimitive>(std::move(flow));
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

  // Runs fn under this trace on fresh inputs with the avals of `like` (once per trace) and
  // returns the finished program; `outs` receives fn's output tracers.
  std::shared_ptr<Program> record(const FlatFn& fn, const Arrays& like, Arrays* outs = nullptr) {
    TraceScope scope(*this);
    Arrays in;
    in.reserve(like.size());
    for (const Array& x : like) in.push_back(input(x));
    const Arrays ys = fn(in);
    auto p = finish(ys);
    scope.close();
    if (outs) *outs = ys;
    return p;
  }

  std::shared_ptr<Program> finish(const Arrays& outs) {
    for (const Array& o : outs) {
      program_.outputs.push_back(ref(o, "the output"));
      program_.out_avals.push_back({o.shape(), o.dtype(), o.impl()->weak_type});
    }
    if (!closed_) batch_contractions(*this);
    eliminate_dead_code();
    if (!closed_) {
      fuse_elementwise_chains(program_, var_aval_, var_weak_);
      place_concatenated_pieces(program_, var_aval_);
    }
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

  Program& program() override { return program_; }
  Array value(const Ref& r) override {
    if (r.var < 0) return program_.consts[r.constant];
    const ShapeDtype& a = var_aval_[r.var];
    Array t(make_small<JitTracer>(a.shape, a.dtype, level(), uid(), r.var));
    t.impl()->weak_type = var_weak_[r.var];
    return t;
  }
  Ref recorded(const Array& a) override { return ref(a, "a rewrite"); }
  ShapeDtype aval(const Ref& r) const override {
    if (r.var >= 0) return var_aval_[r.var];
    return {program_.consts[r.constant].shape(), program_.consts[r.constant].dtype()};
  }

  // Output avals of a custom_vjp/checkpoint eqn: its kernel run on abstract values.
  static Avals avals_by_tracing(const Primitive& prim, const Avals& in) {
    AbstractTrace at;
    TraceScope scope(at);
    Arrays a;
    for (const ShapeDtype& s : in) a.push_back(at.wrap(s));
    Avals out;
    for (const Array& o : prim.eval(a)) out.push_back({o.shape(), o.dtype()});
    return out;
  }

  Arrays stage_bound(const Flow& f, std::span<const Array> in);

  std::string name_;
  JitTrace* parent_;
  bool closed_;
  Program program_;
  std::unordered_map<const ArrayImpl*, int> const_index_;
  std::unordered_map<const ArrayImpl*, int> capture_index_;
  Arrays captured_;
  std::vector<ShapeDtype> var_aval_;  // per var
  std::vector<char> var_weak_;
};

// A kernel leaves its outputs strongly typed; bind would make them weak by the primitive's rule.
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
  std::shared_ptr<const Program> p = trace.record(fn, leaves);
  return p;
}

Arrays eval_program(const Program& p, std::span<const Array> inputs,
                    std::span<const Array> captures, Run how) {
  std::vector<Array> env(static_cast<std::size_t>(p.num_vars));
  for (int i = 0; i < p.num_inputs; ++i) env[i] = inputs[i];
  for (std::size_t i = 0; i < captures.size(); ++i) env[p.capture_vars[i]] = captures[i];
  auto get = [&](const Ref& r) -> const Array& {
    return r.var >= 0 ? env[r.var] : p.consts[r.constant];
  };
  std::vector<Array> buffers(p.buffers.size());
  Arrays in;
  for (const Eqn& e : p.eqns) {
    in.clear();
    for (const Ref& r : e.in) in.push_back(get(r));
    Arrays outs;
    if (how == Run::bind) {
      outs = linum::bind(e.prim, in);
    } else {
      OpScope op(e.prim->name());
      const bool in_place = !e.placed.empty() || e.fills >= 0;
      outs = with_weak(*e.prim, in, in_place ? eval_in_place(p, e, in, buffers) : e.prim->eval(in));
    }
    for (std::size_t j = 0; j < e.out.size(); ++j) env[e.out[j]] = std::move(outs[j]);
    for (int v : e.release) env[v] = Array();
  }
  Arrays out;
  out.reserve(p.outputs.size());
  for (const Ref& r : p.outputs) out.push_back(get(r));
  return out;
}

namespace {

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
SubTrace trace_sub(JitTrace& parent, const FlatFn& fn, const Arrays& like) {
  SubTrace s{std::make_unique<JitTrace>(parent.name(), &parent), nullptr, {}};
  s.program = s.trace->record(fn, like, &s.outs);
  return s;
}

Arrays stage_switch(JitTrace& parent, const Array& index, const std::vector<FlatFn>& branches,
                    const Arrays& operands) {
  auto flow = std::make_shared<Flow>();
  flow->kind = Flow::Kind::Switch;
  flow->n_operands = operands.size();
  std::vector<SubTrace> subs;
  for (const FlatFn& b : branches) {
    subs.push_back(trace_sub(parent, b, operands));
    flow->programs.push_back(subs.back().program);
  }
  std::vector<const JitTrace*> traces;
  for (const SubTrace& st : subs) traces.push_back(st.trace.get());
  Arrays in{index};
  in.insert(in.end(), operands.begin(), operands.end());
  return parent.stage(std::move(flow), in, traces, subs.front().outs);
}

Arrays stage_while(JitTrace& parent, const FlatFn& cond_fn, const FlatFn& body_fn,
                   const Arrays& init) {
  auto flow = std::make_shared<Flow>();
  flow->kind = Flow::Kind::While;
  flow->n_operands = init.size();
  SubTrace c = trace_sub(parent, cond_fn, init);
  SubTrace b = trace_sub(parent, body_fn, init);
  flow->programs = {c.program, b.program};
  return parent.stage(std::move(flow), init, {c.trace.get(), b.trace.get()}, init);
}

// A FlowPrimitive reaching this trace: its closed programs run (through bind) as the functions
// staged into fresh sub-programs, so they are fused and capture this trace's values as usual.
Arrays JitTrace::stage_bound(const Flow& f, std::span<const Array> in) {
  const bool sw = f.kind == Flow::Kind::Switch;
  const std::size_t first = sw ? 1 : 0;
  const Arrays ops(in.begin() + static_cast<std::ptrdiff_t>(first),
                   in.begin() + static_cast<std::ptrdiff_t>(first + f.n_operands));
  const auto caps = in.subspan(first + f.n_operands);
  std::vector<FlatFn> fns;
  for (std::size_t k = 0; k < f.programs.size(); ++k) {
    const auto mine = captures_of(f, caps, k);
    fns.push_back([&f, k, c = Arrays(mine.begin(), mine.end())](const Arrays& x) {
      return eval_program(*f.programs[k], x, c, Run::bind);
    });
  }
  return sw ? stage_switch(*this, in[0], fns, ops) : stage_while(*this, fns[0], fns[1], ops);
}

}  // namespace

Arrays jit_replay(const Program& p, const Arrays& leaves) {
  return eval_program(p, leaves, {}, Run::kernels);
}

bool jit_stageable(const Array& x) { return staging_trace(x) != nullptr; }

bool jit_switchable(const Array& x) {
  return staging_trace(x) || (!is_batched(x) && jit_function_of(x));
}

bool jit_traced(const Array& x) { return jit_function_of(x) != nullptr; }

Arrays jit_stage_switch(const Array& index, const std::vector<FlatFn>& branches,
                        const Arrays& operands) {
  if (JitTrace* parent = staging_trace(index))
    return stage_switch(*parent, index, branches, operands);
  return bind_switch(index, branches, operands);
}

Arrays jit_stage_while(const Array& first_pred, const FlatFn& cond_fn, const FlatFn& body_fn,
                       const Arrays& init) {
  if (JitTrace* parent = staging_trace(first_pred))
    return stage_while(*parent, cond_fn, body_fn, init);
  return bind_while(cond_fn, body_fn, init);
}

ClosedProgram trace_closed(const FlatFn& fn, const Arrays& like) {
  // Named after the outermost jit, whose function errors inside the branches are about.
  const JitTrace* outer = nullptr;
  for (int l = trace_depth(); l-- > 0;)
    if (auto* t = dynamic_cast<const JitTrace*>(trace_at(l))) outer = t;
  JitTrace trace(outer ? outer->name() : "fn", nullptr, true);
  auto p = trace.record(fn, like);
  return {std::move(p), trace.captured()};
}

std::size_t program_size(const Program& p) {
  std::size_t n = 0;
  for (const Eqn& e : p.eqns) n += e.size;
  return n;
}

std::string program_text(const Program& p) {
  std::ostringstream os;
  auto value = [&](const Ref& r) {
    os << ' ' << (r.var >= 0 ? 'v' : 'c') << (r.var >= 0 ? r.var : r.constant);
  };
  os << "inputs:";
  for (int v = 0; v < p.num_inputs; ++v) value(Ref{v, -1});
  for (int v : p.capture_vars) value(Ref{v, -1});
  os << '\n';
  for (const Eqn& e : p.eqns) {
    for (std::size_t j = 0; j < e.out.size(); ++j) os << (j ? " v" : "v") << e.out[j];
    os << " = " << e.prim->name();
    std::ostringstream params;
    e.prim->print_params(params);
    if (!params.str().empty()) os << '[' << params.str() << ']';
    for (const Ref& r : e.in) value(r);
    os << '\n';
  }
  os << "outputs:";
  for (const Ref& r : p.outputs) value(r);
  os << '\n';
  return os.str();
}

void append_avals(std::string& out, const Arrays& leaves) {
  std::ostringstream os;
  for (const Array& x : leaves)
    os << ';' << ShapeDtype{x.shape(), x.dtype()} << (x.impl()->weak_type ? "w" : "");
  out += os.str();
}

std::vector<bool> static_mask(const std::vector<int>& static_argnums, std::size_t nargs,
                              const std::string& name) {
  const auto n = static_cast<int>(nargs);
  std::vector<bool> mask(nargs, false);
  for (int s : static_argnums) {
    if (s >= n || s < -n) {
      // Python's repr of the tuple: (5,) for one entry, (0, 5) for several.
      std::string nums = "(";
      for (std::size_t i = 0; i < static_argnums.size(); ++i)
        nums += (i ? ", " : "") + std::to_string(static_argnums[i]);
      nums += static_argnums.size() == 1 ? ",)" : ")";
      throw ValueError("jit(" + name + "): Jitted function has static_argnums=" + nums +
                       ", but only accepts " + std::to_string(n) + " positional arguments.");
    }
    mask[static_cast<std::size_t>(s < 0 ? s + n : s)] = true;
  }
  return mask;
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
