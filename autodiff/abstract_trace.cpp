// Abstract evaluation (JAX's eval_shape level): tracers that carry a shape and a dtype and no
// data; every primitive reaching this level runs its abstract_eval rule instead of its kernel.
#include <linum/autodiff/trace.hpp>

#include <sstream>

namespace linum::detail {
namespace {

struct AbstractTracer final : ArrayImpl {
  using ArrayImpl::ArrayImpl;
};

const AbstractTracer* as_abstract(const Array& x) {
  return x.is_tracer() ? dynamic_cast<const AbstractTracer*>(x.impl().get()) : nullptr;
}

}  // namespace

Array AbstractTrace::wrap(const ShapeDtype& aval) {
  for (auto d : aval.shape)
    if (d < 0) throw ValueError("eval_shape: negative dimension in shape " + shape_str(aval.shape));
  return Array(make_small<AbstractTracer>(aval.shape, aval.dtype, level(), uid()));
}

Arrays AbstractTrace::process(const PrimPtr& prim, std::span<const Array> in) {
  if (prim->abstract_eval_by_tracing()) return prim->eval(in);
  Avals avals;
  avals.reserve(in.size());
  for (const Array& a : in) avals.push_back({a.shape(), a.dtype()});
  Avals outs = prim->abstract_eval(avals);
  Arrays r;
  r.reserve(outs.size());
  for (const auto& o : outs) r.push_back(wrap(o));
  return r;
}

bool is_abstract(const Array& x) { return as_abstract(bottom_value(x)) != nullptr; }

Array abstract_like(const Array& x) {
  const Array b = bottom_value(x);
  const auto* t = as_abstract(b);
  if (!t) throw Error("abstract_like: the value is not abstract");
  auto* trace = dynamic_cast<AbstractTrace*>(trace_at(t->level));
  return trace->wrap({x.shape(), x.dtype()});
}

void throw_concretization(const char* what, const Array& x) {
  std::ostringstream os;
  os << what << ": Abstract tracer value encountered where concrete value is expected: an array "
     << ShapeDtype{x.shape(), x.dtype()}
     << " inside eval_shape (or an abstractly evaluated branch) has a shape and dtype but no "
        "value; keep the computation in linum ops (linum::cond, linum::where) instead of "
        "reading it on the host";
  throw ConcretizationTypeError(os.str());
}

}  // namespace linum::detail
