// Elementwise fusion of a recorded Program: the table of fusable primitives, the pass that
// replaces runs of them by FusedChain eqns, and the FusedChain kernel, which runs a chain one
// block of elements at a time so that its intermediates stay in cache-resident slots.
#include <algorithm>
#include <array>
#include <unordered_map>

#include <linum/autodiff/ops/simd.hpp>

#include <linum/autodiff/jit_program.hpp>
#include <linum/autodiff/ops/fusion.hpp>
#include <linum/autodiff/ops/kernel_util.hpp>

namespace linum::detail {

namespace {

// The code of p when jit may fuse it into an elementwise chain, else nullptr: the one table of
// fusable primitives, gathered from the files that define them.
const FusedOp* fused_op(const Primitive& p) {
  static const std::unordered_map<const Primitive*, FusedOp> table = [] {
    std::unordered_map<const Primitive*, FusedOp> t;
    for (auto entries :
         {elementwise_fused_entries(), math_fused_entries(), special_fused_entries()})
      for (const FusedEntry& e : entries) t.emplace(e.prim, e.op);
    return t;
  }();
  auto it = table.find(&p);
  return it == table.end() ? nullptr : &it->second;
}

// A chain of elementwise primitives over one shape and float dtype: each step reads external
// inputs (stride 0 for a scalar) or register slots of the block, and writes a slot; a value read
// after the chain has its output buffer as its slot.
struct FusedStep {
  const FusedOp* op;
  std::array<int, 2> in{};  // >= 0: a slot; < 0: external input -(k + 1)
  int out = 0;              // slot
};
struct Fused {
  Shape shape;
  DType dtype = float32;
  std::vector<FusedStep> steps;
  int num_slots = 0;
  std::vector<int> out_slots;  // per output of the eqn
  std::vector<char> out_weak;
};

Arrays run_fused(const Fused& f, std::span<const Array> in);

// A fused chain as the primitive of its eqn. It only ever runs on its kernel: programs that
// transforms run again are never fused.
class FusedChain final : public Primitive {
 public:
  explicit FusedChain(Fused f) : fused(std::move(f)) {}
  Fused fused;
  const char* name() const override { return "fused_elementwise"; }
  Arrays eval(std::span<const Array> in) const override { return run_fused(fused, in); }
  Avals abstract_eval(std::span<const ShapeDtype>) const override {
    return Avals(fused.out_slots.size(), {fused.shape, fused.dtype});
  }
  bool weak_type_rule(bool) const override { return false; }  // the kernel sets each output's
};

struct Fuser {
  Program& program;
  const std::vector<ShapeDtype>& var_aval;
  const std::vector<char>& var_weak;

  ShapeDtype aval_of(const Ref& r) const {
    if (r.var >= 0) return var_aval[r.var];
    const Array& c = program.consts[r.constant];
    return {c.shape(), c.dtype()};
  }
  // The fused op of e when it can join a chain over (shape, dtype): a float elementwise primitive
  // whose inputs have that shape, or are rank-0 scalars of a binary op.
  const FusedOp* chainable(const Eqn& e, const ShapeDtype& like) const {
    if (e.out.size() != 1) return nullptr;
    const FusedOp* op = fused_op(*e.prim);
    if (!op) return nullptr;
    const ShapeDtype& o = var_aval[e.out[0]];
    if (o.dtype != like.dtype || o.shape != like.shape) return nullptr;
    for (const Ref& r : e.in) {
      const ShapeDtype a = aval_of(r);
      if (a.dtype != o.dtype || (a.shape != o.shape && !(op->arity == 2 && a.shape.empty())))
        return nullptr;
    }
    return op;
  }

  void fuse() {
    const int never = static_cast<int>(program.eqns.size());
    std::vector<int> last_read(program.num_vars, -1);
    for (std::size_t k = 0; k < program.eqns.size(); ++k)
      for (const Ref& r : program.eqns[k].in)
        if (r.var >= 0) last_read[r.var] = static_cast<int>(k);
    for (const Ref& r : program.outputs)
      if (r.var >= 0) last_read[r.var] = never;
    std::vector<Eqn> out;
    std::size_t k = 0;
    const std::size_t n = program.eqns.size();
    while (k < n) {
      const Eqn& first = program.eqns[k];
      const bool float_out = first.out.size() == 1 && (var_aval[first.out[0]].dtype == float32 ||
                                                       var_aval[first.out[0]].dtype == float64);
      std::size_t end = k;
      if (float_out) {
        const ShapeDtype like = var_aval[first.out[0]];
        while (end < n && chainable(program.eqns[end], like)) ++end;
      }
      if (end - k < 2) {
        out.push_back(std::move(program.eqns[k++]));
        continue;
      }
      out.push_back(fuse_run(k, end, last_read));
      k = end;
    }
    program.eqns = std::move(out);
  }

  Eqn fuse_run(std::size_t begin, std::size_t end, const std::vector<int>& last_read) {
    Fused fused;
    Fused* f = &fused;
    const ShapeDtype like = var_aval[program.eqns[begin].out[0]];
    f->shape = like.shape;
    f->dtype = like.dtype;
    Eqn e;
    e.size = end - begin;
    std::unordered_map<int, int> slot_of;       // var -> slot
    std::unordered_map<long long, int> ext_of;  // ref key -> external index
    std::vector<int> free_slots;
    auto escapes = [&](int v) { return last_read[v] >= static_cast<int>(end); };
    auto last_in_run = [&](int v) { return last_read[v]; };
    for (std::size_t k = begin; k < end; ++k) {
      const Eqn& q = program.eqns[k];
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
        f->out_weak.push_back(var_weak[v]);
      }
      f->steps.push_back(step);
    }
    e.prim = std::make_shared<const FusedChain>(std::move(fused));
    return e;
  }
};

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

Arrays run_fused(const Fused& f, std::span<const Array> in) {
  return f.dtype == float32 ? run_fused<float>(f, in) : run_fused<double>(f, in);
}

}  // namespace

void fuse_elementwise_chains(Program& p, const std::vector<ShapeDtype>& var_aval,
                             const std::vector<char>& var_weak) {
  Fuser{p, var_aval, var_weak}.fuse();
}

}  // namespace linum::detail
