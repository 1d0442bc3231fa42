// Reverse mode: the tape records one node per primitive in creation order (a topological order),
// so backward is one reverse sweep with no recursion and no sort.
#include <linum/autodiff/ops.hpp>
#include <linum/autodiff/ops/kernel_util.hpp>
#include <linum/autodiff/trace.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <memory>
#include <sstream>
#include <type_traits>

namespace linum::detail {
namespace {

struct TapeTracer final : ArrayImpl {
  Array primal;
  int var;
  TapeTracer(Array p, int lvl, std::uint64_t uid, int v)
      : ArrayImpl(p.shape(), p.dtype(), lvl, uid), primal(std::move(p)), var(v) {}
  const Array* primal_value() const override { return &primal; }
};

// A value no VJP rule reads: its shape, dtype and weak type only. It is a tracer of no trace, so
// an op on it fails as an escaped tracer instead of reading a freed buffer.
struct DroppedValue final : ArrayImpl {
  explicit DroppedValue(const ArrayImpl& a)
      : ArrayImpl(a.shape, a.dtype, std::numeric_limits<int>::max(), 0) {
    weak_type = a.weak_type;
  }
};

// What the tape keeps of a primal: the value when the rule reads it or when it fits the array's
// inline storage (dropping it frees nothing), else a DroppedValue. In place: an Array returned
// through the stack and reloaded whole stalled every recorded primitive (store forwarding).
void keep_residual(Array& a, bool read) {
  if (read ||
      static_cast<std::size_t>(a.size()) * itemsize(a.dtype()) <= sizeof(ConcreteImpl::small))
    return;
  a = Array(make_small<DroppedValue>(*a.impl()));
}

// Nodes index into flat vectors so that recording a node allocates nothing (amortised).
struct TapeNode {
  const Primitive* prim;      // owned by TapeBuffers::prims
  std::uint32_t in_begin;     // inputs' primals at values[in_begin, in_begin + n_in)
  std::uint32_t out_begin;    // outputs at values[out_begin, out_begin + n_out)
  std::uint32_t n_in, n_out;  // 32 bits: a concatenate of 70,000 pieces is one node
  int out_var0;               // outputs have consecutive variable ids (non-float outputs get none)
};
struct TapeBuffers {
  std::vector<TapeNode> nodes;
  std::vector<Array> values;
  std::vector<int> vars;  // variable id of each entry of `values` (-1: constant for this tape)
  // The nodes' primitives, each held once: a long tape repeats a few of them, and a handle per
  // node cost an atomic increment when recorded and a decrement when freed. `recent` remembers
  // the last few held (a cache: a primitive that fell out of it is held again, harmlessly).
  std::vector<PrimPtr> prims;
  std::array<const Primitive*, 8> recent{};
  std::size_t next_recent = 0;
  const Primitive* hold(const PrimPtr& p) {
    for (const Primitive* q : recent)
      if (q == p.get()) return q;
    prims.push_back(p);
    recent[next_recent++ % recent.size()] = p.get();
    return p.get();
  }
  void clear() {
    nodes.clear();
    values.clear();
    vars.clear();
    prims.clear();
    recent.fill(nullptr);
  }
  std::size_t capacity_bytes() const {
    return nodes.capacity() * sizeof(TapeNode) + values.capacity() * sizeof(Array) +
           vars.capacity() * sizeof(int) + prims.capacity() * sizeof(PrimPtr);
  }
};

// Finished tapes' emptied vectors, kept per thread so that the next grad records into memory
// that is already mapped: without them every call re-faults and re-grows its node arrays.
constexpr std::size_t kSpareTapes = 4, kSpareTapeBytes = std::size_t{64} << 20;
thread_local std::vector<TapeBuffers> spare_tapes;

}  // namespace

struct TapeTrace::Impl : TapeBuffers {
  int nvars = 0;

  // One primitive on the tape: its n inputs' (`input(i)`) primals and variable ids, then `run`
  // on the primals (the kernel, or the outer transform when some primal is a tracer), then the
  // outputs that `run` returned become this tape's tracers and the node records both.
  template <class Input, class Run>
  auto record(const TapeTrace& t, const PrimPtr& prim, std::size_t n, Input input, Run run) {
    const auto in_begin = static_cast<std::uint32_t>(values.size());
    bool concrete = true;  // no outer transform below: run the kernel without a second dispatch
    for (std::size_t i = 0; i < n; ++i) {
      auto [p, v] = t.unwrap(input(i));
      concrete = concrete && p.valid() && !p.is_tracer();
      values.push_back(std::move(p));
      vars.push_back(v);
    }
    const std::span<const Array> primals(values.data() + in_begin, n);
    decltype(run(primals, true)) result;
    try {
      result = run(primals, concrete);
    } catch (...) {
      values.resize(in_begin);
      vars.resize(in_begin);
      throw;
    }
    std::span<Array> outs;
    if constexpr (std::is_same_v<decltype(result), Array>) outs = {&result, 1};
    else outs = result;
    if (!prim->differentiable()) {
      values.resize(in_begin);
      vars.resize(in_begin);
      return result;
    }
    for (std::size_t i = 0; i < n; ++i)
      keep_residual(values[in_begin + i], prim->vjp_reads_input(i));
    const auto out_begin = static_cast<std::uint32_t>(values.size());
    const int out_var0 = nvars;
    for (std::size_t j = 0; j < outs.size(); ++j) {
      Array& o = outs[j];
      const bool diff = is_inexact(o.dtype());
      values.push_back(o);
      keep_residual(values.back(), prim->vjp_reads_output(j));
      vars.push_back(diff ? nvars : -1);
      if (diff) o = Array(make_small<TapeTracer>(std::move(o), t.level(), t.uid(), nvars++));
    }
    nodes.push_back(TapeNode{hold(prim), in_begin, out_begin,
                             static_cast<std::uint32_t>(n),
                             static_cast<std::uint32_t>(outs.size()), out_var0});
    return result;
  }
};

TapeTrace::TapeTrace() : impl_(std::make_unique<Impl>()) {
  if (!spare_tapes.empty()) {
    static_cast<TapeBuffers&>(*impl_) = std::move(spare_tapes.back());
    spare_tapes.pop_back();
  }
}

TapeTrace::~TapeTrace() {
  clear();
  if (spare_tapes.size() < kSpareTapes && impl_->capacity_bytes() <= kSpareTapeBytes)
    spare_tapes.push_back(std::move(static_cast<TapeBuffers&>(*impl_)));
}

// Releases the values (and so the arrays) but keeps the vectors' capacity (see spare_tapes).
void TapeTrace::clear() { impl_->clear(); }

std::size_t TapeTrace::num_nodes() const { return impl_->nodes.size(); }

Array TapeTrace::watch(const Array& x) {
  return Array(make_small<TapeTracer>(x, level(), uid(), impl_->nvars++));
}

std::pair<Array, int> TapeTrace::unwrap(const Array& y) const {
  if (!owns(y)) return {y, -1};
  const auto* t = static_cast<const TapeTracer*>(y.impl().get());
  return {t->primal, t->var};
}

Arrays TapeTrace::process(const PrimPtr& prim, std::span<const Array> in) {
  return impl_->record(
      *this, prim, in.size(), [&](std::size_t i) -> const Array& { return in[i]; },
      [&](std::span<const Array> primals, bool concrete) {
        if (!concrete) return bind(prim, primals);
        detail::OpScope scope(prim->name());
        return prim->eval(primals);
      });
}

// The one-output forms: their primals, copied onto the tape, are already a span for eval1.
namespace {
Array run1(const PrimPtr& prim, std::span<const Array> primals, bool concrete) {
  if (!concrete) return bind1(prim, primals);
  detail::OpScope scope(prim->name());
  return prim->eval1(primals);
}
}  // namespace

Array TapeTrace::process1(const PrimPtr& prim, std::span<const Array> in) {
  return impl_->record(
      *this, prim, in.size(), [&](std::size_t i) -> const Array& { return in[i]; },
      [&](std::span<const Array> primals, bool concrete) { return run1(prim, primals, concrete); });
}

Array TapeTrace::process_binary(const PrimPtr& prim, const Array& a, const Array& b) {
  return impl_->record(
      *this, prim, 2, [&](std::size_t i) -> const Array& { return i ? b : a; },
      [&](std::span<const Array> primals, bool concrete) { return run1(prim, primals, concrete); });
}

Arrays TapeTrace::backward(std::span<const int> out_vars, std::span<const Array> cts, int n_inputs,
                           bool release) {
  Impl& m = *impl_;
  Arrays ct(m.nvars);
  auto accumulate = [&](int v, Array c) {
    if (v < 0 || !c.valid()) return;
    ct[v] = ct[v].valid() ? add(ct[v], c) : std::move(c);
  };
  for (std::size_t i = 0; i < out_vars.size(); ++i) accumulate(out_vars[i], cts[i]);

  Arrays out_cts;
  std::size_t max_in = 0;
  for (const auto& node : m.nodes) max_in = std::max<std::size_t>(max_in, node.n_in);
  auto needed = std::make_unique<bool[]>(max_in);  // inputs that are variables of this tape
  // Node n's values are read by node n's rule only (each node copies its inputs' handles).
  auto done = [&](const TapeNode& node) {
    out_cts.clear();  // the output cotangents are used up too
    if (!release) return;
    for (std::uint32_t j = 0; j < node.n_in; ++j) m.values[node.in_begin + j] = Array();
    for (std::uint32_t j = 0; j < node.n_out; ++j) m.values[node.out_begin + j] = Array();
  };
  // The sweep reads each node's values long after the forward pass wrote them, so on a long tape
  // they have left the cache; their addresses are known from the flat `values`, so fetch a few
  // nodes ahead (an array and its control block share the lines prefetched).
  constexpr std::size_t kAhead = 6;
  auto prefetch = [&](const TapeNode& node) {
    const std::uint32_t end = node.out_begin + node.n_out;
    for (std::uint32_t k = node.in_begin; k < end; ++k)
      if (const auto p = reinterpret_cast<std::uintptr_t>(m.values[k].impl().get())) {
        __builtin_prefetch(reinterpret_cast<const void*>(p - 16));  // the control block's line
        __builtin_prefetch(reinterpret_cast<const void*>(p + 48));
      }
  };
  for (std::size_t n = m.nodes.size(); n-- > 0;) {
    const auto& node = m.nodes[n];
    if (n >= kAhead) prefetch(m.nodes[n - kAhead]);
    out_cts.assign(node.n_out, Array());
    bool any = false;
    for (std::uint32_t j = 0; j < node.n_out; ++j) {
      const int v = m.vars[node.out_begin + j];
      if (v >= 0 && ct[v].valid()) {
        out_cts[j] = std::move(ct[v]);  // each variable is read once: free it as we go
        any = true;
      }
    }
    if (!any) {
      done(node);
      continue;
    }
    std::span<const Array> primals(m.values.data() + node.in_begin, node.n_in);
    std::span<const Array> outs(m.values.data() + node.out_begin, node.n_out);
    for (std::uint32_t j = 0; j < node.n_in; ++j) needed[j] = m.vars[node.in_begin + j] >= 0;
    Arrays in_cts = node.prim->vjp_needed(primals, out_cts, outs, {needed.get(), node.n_in});
    for (std::uint32_t j = 0; j < node.n_in; ++j) {
      const int v = m.vars[node.in_begin + j];
      if (v < 0 || !in_cts[j].valid()) continue;
      const Array& c = in_cts[j];
      if (c.shape() != primals[j].shape() || c.dtype() != primals[j].dtype()) {
        std::ostringstream os;
        os << "internal error: vjp rule of " << node.prim->name()
           << " returned a cotangent of shape " << shape_str(c.shape()) << " dtype " << c.dtype()
           << " for input " << j << " of shape " << shape_str(primals[j].shape()) << " dtype "
           << primals[j].dtype();
        throw Error(os.str());
      }
      accumulate(v, std::move(in_cts[j]));
    }
    give_back_arrays(std::move(in_cts));
    done(node);
  }
  ct.resize(n_inputs);
  return ct;
}

}  // namespace linum::detail
