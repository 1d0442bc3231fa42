// Forward mode: a tracer carries (primal, tangent); each primitive's JVP rule pushes tangents.
#include <linum/autodiff/ops.hpp>
#include <linum/autodiff/trace.hpp>

namespace linum::detail {
namespace {

struct JvpTracer final : ArrayImpl {
  Array primal, tangent;  // an empty tangent is a symbolic zero
  JvpTracer(const Array& p, const Array& t, int lvl, std::uint64_t uid)
      : ArrayImpl(p.shape(), p.dtype(), lvl, uid), primal(p), tangent(t) {}
  const Array* primal_value() const override { return &primal; }
};

}  // namespace

Array JvpTrace::watch(const Array& primal, const Array& tangent) {
  return Array(std::make_shared<JvpTracer>(primal, tangent, level(), uid()));
}

std::pair<Array, Array> JvpTrace::unwrap(const Array& y) const {
  if (!owns(y)) return {y, zeros_like(y)};
  const auto* t = static_cast<const JvpTracer*>(y.impl().get());
  return {t->primal, t->tangent.valid() ? t->tangent : zeros_like(t->primal)};
}

Arrays JvpTrace::process(const PrimPtr& prim, std::span<const Array> in) {
  Arrays primals, tangents;
  primals.reserve(in.size());
  tangents.reserve(in.size());
  bool any = false;
  for (const Array& a : in) {
    if (owns(a)) {
      const auto* t = static_cast<const JvpTracer*>(a.impl().get());
      primals.push_back(t->primal);
      tangents.push_back(t->tangent);
      any |= t->tangent.valid();
    } else {
      primals.push_back(a);
      tangents.emplace_back();
    }
  }
  Arrays outs = bind(prim, primals);
  if (!any || !prim->differentiable()) return outs;
  Arrays touts = prim->jvp(primals, tangents, outs);
  for (std::size_t i = 0; i < outs.size(); ++i)
    if (touts[i].valid() && is_inexact(outs[i].dtype()))
      outs[i] = Array(std::make_shared<JvpTracer>(outs[i], touts[i], level(), uid()));
  return outs;
}

}  // namespace linum::detail
