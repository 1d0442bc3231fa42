// The per-thread level stack and bind: the single dispatch point for every primitive.
#include <linum/autodiff/trace.hpp>

#include <algorithm>
#include <atomic>
#include <sstream>

namespace linum {
namespace detail {
namespace {

thread_local std::vector<Trace*> t_stack_storage;
// bind reads the stack once per op: its address is kept in initial-exec TLS, one %fs-relative
// load, where the vector itself (destroyed at thread exit, so guarded) costs a __tls_get_addr.
[[gnu::tls_model("initial-exec")]] thread_local std::vector<Trace*>* t_stack_ptr = nullptr;
std::vector<Trace*>& this_thread_stack() {
  std::vector<Trace*>* s = t_stack_ptr;
  if (!s) [[unlikely]]
    s = t_stack_ptr = &t_stack_storage;
  return *s;
}
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

Array Trace::process1(const PrimPtr& prim, std::span<const Array> in) {
  Arrays outs = process(prim, in);
  return std::move(outs.front());
}

Array Trace::process_binary(const PrimPtr& prim, const Array& a, const Array& b) {
  const Array in[] = {a, b};
  return process1(prim, in);
}

TraceScope::TraceScope(Trace& t) : trace_(&t) {
  auto& stack = this_thread_stack();
  t.level_ = static_cast<int>(stack.size());
  stack.push_back(&t);
}

void TraceScope::close() {
  if (!trace_) return;
  // Scopes close in LIFO order (RAII); erase defensively so a misuse cannot corrupt the stack.
  auto& stack = this_thread_stack();
  auto it = std::find(stack.begin(), stack.end(), trace_);
  if (it != stack.end()) stack.erase(it);
  trace_->level_ = -1;
  trace_ = nullptr;
}

int trace_depth() { return static_cast<int>(this_thread_stack().size()); }

Trace* trace_at(int level) {
  const auto& stack = this_thread_stack();
  return level >= 0 && level < static_cast<int>(stack.size()) ? stack[level] : nullptr;
}

BatchTrace* find_batch_trace(const std::string& name) {
  const auto& stack = this_thread_stack();
  for (auto it = stack.rbegin(); it != stack.rend(); ++it)
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
// Marks a fresh output weakly typed; bool has no weak form in JAX's lattice.
void mark_weak(Array& o) {
  if (o.valid() && o.dtype() != bool_) o.impl()->weak_type = true;
}
Arrays with_weak_type(Arrays outs) {
  for (Array& o : outs) mark_weak(o);
  return outs;
}

// The trace that interprets `prim` on its n inputs (`input(i)`, a `const Array&`): the one owning
// the highest-level tracer among them, nullptr when they are all concrete. `all_weak`: whether
// every input is weakly typed; `reduced`: whether any is bfloat16/float16.
template <class Input>
detail::Trace* interpreter(const Primitive& prim, std::size_t n, Input input, bool& all_weak,
                           bool& reduced) {
  int top = -1;
  const detail::ArrayImpl* top_impl = nullptr;
  all_weak = n > 0;
  reduced = false;
  for (std::size_t i = 0; i < n; ++i) {
    const auto* impl = input(i).impl().get();
    if (!impl)
      throw ValueError(std::string(prim.name()) +
                       ": got an empty Array handle (default-constructed)");
    all_weak = all_weak && impl->weak_type;
    reduced = reduced || is_reduced_float(impl->dtype);
    if (impl->level > top) {
      top = impl->level;
      top_impl = impl;
    }
  }
  if (top < 0) return nullptr;
  auto& stack = detail::this_thread_stack();
  if (top >= static_cast<int>(stack.size()) || stack[top]->uid() != top_impl->trace_uid)
    detail::throw_escaped(prim, *top_impl);
  return stack[top];
}
detail::Trace* interpreter(const Primitive& prim, std::span<const Array> in, bool& all_weak,
                           bool& reduced) {
  return interpreter(prim, in.size(), [&](std::size_t i) -> const Array& { return in[i]; },
                     all_weak, reduced);
}
}  // namespace

Arrays bind(const PrimPtr& prim, std::span<const Array> in) {
  bool all_weak, reduced;
  detail::Trace* trace = interpreter(*prim, in, all_weak, reduced);
  if (reduced && !prim->handles_reduced_floats()) return detail::bind_in_float32(prim, in);
  const bool weak = prim->weak_type_rule(all_weak);
  if (!trace) {
    detail::OpScope scope(prim->name());  // allocation errors name the op
    return weak ? with_weak_type(prim->eval(in)) : prim->eval(in);
  }
  return weak ? with_weak_type(trace->process(prim, in)) : trace->process(prim, in);
}

namespace {
// bind1's body over n inputs read as input(i). `process` and `eval` run the primitive through a
// trace or on its kernel; `packed` is bind1 on the inputs as a span (bfloat16's float32 path).
template <class Input, class Process, class Eval, class Packed>
Array bind_one(const PrimPtr& prim, std::size_t n, Input input, Process process, Eval eval,
               Packed packed) {
  bool all_weak, reduced;
  detail::Trace* trace = interpreter(*prim, n, input, all_weak, reduced);
  if (reduced && !prim->handles_reduced_floats()) return packed();
  Array out;
  if (trace) {
    out = process(*trace);
  } else {
    detail::OpScope scope(prim->name());
    out = eval();  // eager code's path: no output vector
  }
  if (prim->weak_type_rule(all_weak)) mark_weak(out);
  return out;
}
}  // namespace

Array bind1(const PrimPtr& prim, std::span<const Array> in) {
  return bind_one(
      prim, in.size(), [&](std::size_t i) -> const Array& { return in[i]; },
      [&](detail::Trace& t) { return t.process1(prim, in); }, [&] { return prim->eval1(in); },
      [&] { return std::move(detail::bind_in_float32(prim, in).front()); });
}

Array bind1(const PrimPtr& prim, const Array& a, const Array& b) {
  return bind_one(
      prim, 2, [&](std::size_t i) -> const Array& { return i ? b : a; },
      [&](detail::Trace& t) { return t.process_binary(prim, a, b); },
      [&] { return prim->eval_binary(a, b); }, [&] { return bind1(prim, {a, b}); });
}

}  // namespace linum
