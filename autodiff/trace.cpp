// The per-thread level stack and bind: the single dispatch point for every primitive.
#include <linum/autodiff/trace.hpp>

#include <algorithm>
#include <atomic>
#include <sstream>

namespace linum {
namespace detail {
namespace {

thread_local std::vector<Trace*> t_stack;
std::atomic<std::uint64_t> g_next_uid{1};

[[noreturn]] void throw_escaped(const Primitive& p, const ArrayImpl& impl) {
  std::ostringstream os;
  os << p.name() << ": got a tracer (shape " << shape_str(impl.shape) << ", dtype " << impl.dtype
     << ") from a transform that is no longer active on this thread; an Array created inside "
        "grad/jvp/vmap must not be used after that transform returned";
  throw UnexpectedTracerError(os.str());
}

}  // namespace

Trace::Trace() : uid_(g_next_uid.fetch_add(1, std::memory_order_relaxed)) {}
Trace::~Trace() = default;

TraceScope::TraceScope(Trace& t) : trace_(&t) {
  t.level_ = static_cast<int>(t_stack.size());
  t_stack.push_back(&t);
}

void TraceScope::close() {
  if (!trace_) return;
  // Scopes close in LIFO order (RAII); erase defensively so a misuse cannot corrupt the stack.
  auto it = std::find(t_stack.begin(), t_stack.end(), trace_);
  if (it != t_stack.end()) t_stack.erase(it);
  trace_->level_ = -1;
  trace_ = nullptr;
}

int trace_depth() { return static_cast<int>(t_stack.size()); }

Trace* trace_at(int level) {
  return level >= 0 && level < static_cast<int>(t_stack.size()) ? t_stack[level] : nullptr;
}

BatchTrace* find_batch_trace(const std::string& name) {
  for (auto it = t_stack.rbegin(); it != t_stack.rend(); ++it)
    if (auto* b = dynamic_cast<BatchTrace*>(*it); b && b->axis_name() == name) return b;
  return nullptr;
}

namespace {

// Calls visit(trace, batch trace or nullptr) for each tracer level of x from the top, moving to
// the primal (grad/jvp) or the batched value (vmap); returns the concrete bottom.
template <class Visit>
Array walk_chain(Array x, Visit&& visit) {
  while (x.is_tracer()) {
    const ArrayImpl* impl = x.impl().get();
    Trace* t = trace_at(impl->level);
    if (!t || t->uid() != impl->trace_uid)
      throw UnexpectedTracerError(
          "got a tracer from a transform that is no longer active on this thread (shape " +
          shape_str(impl->shape) + ")");
    auto* b = dynamic_cast<BatchTrace*>(t);
    if (visit(*t, b)) return Array();
    if (b) x = b->unwrap(x).first;
    else if (const Array* p = impl->primal_value()) x = *p;
    else return x;  // an abstract (eval_shape) tracer: the bottom of the chain, with no value
  }
  return x;
}

}  // namespace

bool batched_by(const Array& x, std::uint64_t uid) {
  bool found = false;
  walk_chain(x, [&](Trace& t, BatchTrace* b) { return found = (b && t.uid() == uid); });
  return found;
}

bool is_batched(const Array& x) {
  bool found = false;
  walk_chain(x, [&](Trace&, BatchTrace* b) { return found = (b != nullptr); });
  return found;
}

Array bottom_value(const Array& x) {
  return walk_chain(x, [](Trace&, BatchTrace*) { return false; });
}

}  // namespace detail

namespace {
// Marks fresh outputs weakly typed; bool has no weak form in JAX's lattice.
Arrays with_weak_type(Arrays outs) {
  for (Array& o : outs)
    if (o.valid() && o.dtype() != bool_) o.impl()->weak_type = true;
  return outs;
}
}  // namespace

Arrays bind(const PrimPtr& prim, std::span<const Array> in) {
  int top = -1;
  const detail::ArrayImpl* top_impl = nullptr;
  bool all_weak = !in.empty(), reduced = false;
  for (const Array& a : in) {
    const auto* impl = a.impl().get();
    if (!impl)
      throw ValueError(std::string(prim->name()) +
                       ": got an empty Array handle (default-constructed)");
    all_weak = all_weak && impl->weak_type;
    reduced = reduced || is_reduced_float(impl->dtype);
    if (impl->level > top) {
      top = impl->level;
      top_impl = impl;
    }
  }
  if (reduced && !prim->handles_reduced_floats()) return detail::bind_in_float32(prim, in);
  const bool weak = prim->weak_type_rule(all_weak);
  if (top < 0) {
    detail::OpScope scope(prim->name());  // allocation errors name the op
    return weak ? with_weak_type(prim->eval(in)) : prim->eval(in);
  }
  auto& stack = detail::t_stack;
  if (top >= static_cast<int>(stack.size()) || stack[top]->uid() != top_impl->trace_uid)
    detail::throw_escaped(*prim, *top_impl);
  return weak ? with_weak_type(stack[top]->process(prim, in)) : stack[top]->process(prim, in);
}

Array bind1(const PrimPtr& prim, std::span<const Array> in) {
  Arrays outs = bind(prim, in);
  return std::move(outs.front());
}

}  // namespace linum
