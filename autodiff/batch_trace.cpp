// Batching (vmap): a tracer carries a value and its batch axis; each primitive's batching rule
// turns the per-example op into one vectorized op.
#include <linum/autodiff/trace.hpp>

#include <sstream>

namespace linum::detail {
namespace {

struct BatchTracer final : ArrayImpl {
  Array value;
  int bdim;
  BatchTracer(const Array& v, int b, Shape s, int lvl, std::uint64_t uid)
      : ArrayImpl(std::move(s), v.dtype(), lvl, uid), value(v), bdim(b) {}
};

thread_local BatchTrace* t_current = nullptr;

// Marks the trace whose rule runs, restoring the outer one (rules nest through bind).
struct CurrentRule {
  BatchTrace* saved;
  explicit CurrentRule(BatchTrace* t) : saved(t_current) { t_current = t; }
  ~CurrentRule() { t_current = saved; }
};

}  // namespace

BatchTrace* current_batch_trace() { return t_current; }

Array BatchTrace::wrap(const Array& value, int bdim) {
  if (bdim < 0 || bdim >= value.ndim() || value.shape(bdim) != axis_size_) {
    std::ostringstream os;
    os << "vmap: internal batch axis " << bdim << " of a value of shape "
       << shape_str(value.shape()) << " does not have the axis size " << axis_size_;
    throw Error(os.str());
  }
  Shape s = value.shape();
  s.erase(s.begin() + bdim);
  return Array(std::make_shared<BatchTracer>(value, bdim, std::move(s), level(), uid()));
}

std::pair<Array, int> BatchTrace::unwrap(const Array& y) const {
  if (!owns(y)) return {y, -1};
  const auto* t = static_cast<const BatchTracer*>(y.impl().get());
  return {t->value, t->bdim};
}

Arrays BatchTrace::process(const PrimPtr& prim, std::span<const Array> in) {
  Arrays values;
  std::vector<int> bdims;
  values.reserve(in.size());
  bdims.reserve(in.size());
  for (const Array& a : in) {
    auto [v, b] = unwrap(a);
    values.push_back(std::move(v));
    bdims.push_back(b);
  }
  Batched r = [&] {
    CurrentRule cur(this);
    return prim->vmap(values, bdims);
  }();
  // A rule's outputs must agree with its batch dims: a mismatch is a bug in the rule, named here.
  if (r.bdims.size() != r.outs.size())
    throw Error(std::string("vmap: the batching rule of ") + prim->name() + " returned " +
                std::to_string(r.outs.size()) + " outputs but " + std::to_string(r.bdims.size()) +
                " batch dims");
  for (std::size_t i = 0; i < r.outs.size(); ++i) {
    if (!r.outs[i].valid())
      throw Error(std::string("vmap: the batching rule of ") + prim->name() +
                  " returned an empty output " + std::to_string(i));
    const int b = r.bdims[i];
    if (b < -1 || (b >= 0 && (b >= r.outs[i].ndim() || r.outs[i].shape(b) != axis_size_)))
      throw Error(std::string("vmap: the batching rule of ") + prim->name() + " gave output " +
                  std::to_string(i) + " of shape " + shape_str(r.outs[i].shape()) +
                  " the batch dim " + std::to_string(b) + ", which does not have the axis size " +
                  std::to_string(axis_size_));
    if (b >= 0) r.outs[i] = wrap(r.outs[i], b);
  }
  return std::move(r.outs);
}

}  // namespace linum::detail
