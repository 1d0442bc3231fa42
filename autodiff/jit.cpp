// jit's two halves: JitTrace, the level that records each primitive bound on its tracers into a
// Program (avals from the primitive's abstract_eval, so nothing is computed while tracing), and
// the replay, which runs the recorded kernels on concrete buffers in order and drops each value
// after its last reader.
#include <linum/autodiff/jit.hpp>

#include <sstream>
#include <unordered_map>

#include <linum/autodiff/primitive.hpp>
#include <linum/autodiff/trace.hpp>

namespace linum::detail {

// A value of the program: an input or primitive output (var >= 0) or a constant (const index).
struct Ref {
  int var = -1;
  int constant = -1;
};

struct Eqn {
  PrimPtr prim;
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
};

namespace {

struct JitTracer final : ArrayImpl {
  JitTracer(Shape s, DType d, int lvl, std::uint64_t uid, int v)
      : ArrayImpl(std::move(s), d, lvl, uid), var(v) {}
  int var;
};

class JitTrace final : public Trace {
 public:
  explicit JitTrace(const std::string& name) : name_(name) {}
  const char* transform_name() const override { return "jit"; }
  const std::string& name() const { return name_; }

  Array input(const Array& x) {
    ++program_.num_inputs;
    Array t = fresh({x.shape(), x.dtype()});
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
    Arrays outs;
    for (const ShapeDtype& o : prim->abstract_eval(avals)) {
      outs.push_back(fresh(o));
      e.out.push_back(var_of(outs.back()));
    }
    program_.eqns.push_back(std::move(e));
    return outs;
  }

  Ref ref(const Array& a, const char* op) {
    if (owns(a)) return Ref{var_of(a), -1};
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

  std::shared_ptr<Program> finish(const Arrays& outs) {
    for (const Array& o : outs) program_.outputs.push_back(ref(o, "the output"));
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

 private:
  Array fresh(const ShapeDtype& aval) {
    return Array(
        make_small<JitTracer>(aval.shape, aval.dtype, level(), uid(), program_.num_vars++));
  }
  static int var_of(const Array& a) { return static_cast<const JitTracer&>(*a.impl()).var; }

  std::string name_;
  Program program_;
  std::unordered_map<const ArrayImpl*, int> const_index_;
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

Arrays jit_replay(const Program& p, const Arrays& leaves) {
  std::vector<Array> env(static_cast<std::size_t>(p.num_vars));
  for (int i = 0; i < p.num_inputs; ++i) env[i] = leaves[i];
  auto get = [&](const Ref& r) -> const Array& {
    return r.var >= 0 ? env[r.var] : p.consts[r.constant];
  };
  Arrays in;
  for (const Eqn& e : p.eqns) {
    in.clear();
    for (const Ref& r : e.in) in.push_back(get(r));
    Arrays outs;
    {
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

std::size_t program_size(const Program& p) { return p.eqns.size(); }

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
