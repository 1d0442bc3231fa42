// Abstract evaluation (JAX's eval_shape level): tracers that carry a shape and a dtype and no
// data; every primitive reaching this level runs its abstract_eval rule instead of its kernel.
#include <linum/autodiff/eval_shape.hpp>

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
  auto t = make_small<AbstractTracer>(aval.shape, aval.dtype, level(), uid());
  t->weak_type = aval.weak_type && aval.dtype != bool_;
  return Array(std::move(t));
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

Array abstract_like(const Array& x, const ShapeDtype& aval) {
  const Array b = bottom_value(x);
  const auto* t = as_abstract(b);
  if (!t) throw Error("abstract_like: the value is not abstract");
  return static_cast<AbstractTrace*>(trace_at(t->level))->wrap(aval);
}

Array abstract_like(const Array& x) { return abstract_like(x, {x.shape(), x.dtype()}); }

Array zeros_for(const Array& like, const Shape& shape, DType dtype) {
  return is_abstract(like) ? abstract_like(like, {shape, dtype}) : zeros(shape, dtype);
}

const Array* first_abstract(const Arrays& a, const Arrays& b) {
  for (const Arrays* l : {&a, &b})
    for (const Array& x : *l)
      if (is_abstract(x)) return &x;
  return nullptr;
}

Arrays abstract_leaves(AbstractTrace& trace, const Arrays& leaves, bool drop_leading) {
  Arrays r;
  r.reserve(leaves.size());
  for (const Array& x : leaves) {
    ShapeDtype a{x.shape(), x.dtype()};
    if (drop_leading) a.shape.erase(a.shape.begin());
    r.push_back(trace.wrap(a));
  }
  return r;
}

Arrays rewrap_abstract(const Array& ref, const Arrays& leaves, std::int64_t lead) {
  Arrays r;
  r.reserve(leaves.size());
  for (const Array& x : leaves) {
    ShapeDtype a{x.shape(), x.dtype()};
    if (lead >= 0) a.shape.insert(a.shape.begin(), lead);
    r.push_back(abstract_like(ref, a));
  }
  return r;
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
