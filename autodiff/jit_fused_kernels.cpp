// The kernel of a FusedChain eqn: a chain over many elements runs a block at a time, so that its
// intermediates stay in cache-resident slots; a one-element chain runs its register code.
#include <algorithm>

#include <linum/autodiff/ops/simd.hpp>

#include <linum/autodiff/jit_fused.hpp>
#include <linum/autodiff/ops/kernel_util.hpp>

namespace linum::detail {

namespace {

constexpr std::int64_t kBlock = 256;

template <class T>
void run_blocks(const Blocks& f, std::int64_t n, std::span<const Array> in,
                const std::vector<T*>& out_ptrs) {
  std::vector<const T*> ext(in.size());
  for (std::size_t k = 0; k < in.size(); ++k) ext[k] = in_ptr<T>(in[k]);
  std::vector<std::int64_t> rows;  // blocks end where a row of some layout does
  for (const Layout& l : f.in_layout)
    if (l.row) rows.push_back(l.row);
  for (const Blocks::Out& o : f.outs)
    if (o.at.row) rows.push_back(o.at.row);
  // Slots are `stride` apart: a small array's chain keeps all of its values close together.
  const std::int64_t stride = std::max<std::int64_t>(1, std::min(kBlock, n));
  thread_local std::vector<T> regs;
  regs.resize(static_cast<std::size_t>(f.num_slots * stride));
  std::vector<T*> base(static_cast<std::size_t>(f.num_slots));
  for (int k = 0; k < f.num_slots; ++k) base[k] = regs.data() + k * stride;
  auto block = [&](std::int64_t off, std::int64_t len, bool simd) {
    for (const Blocks::Out& o : f.outs) base[o.slot] = out_ptrs[o.output] + o.at.at(off);
    for (const FusedStep& st : f.steps) {
      const T* a[2] = {nullptr, nullptr};
      std::int64_t sa[2] = {1, 1};
      for (int j = 0; j < st.op->arity; ++j) {
        const int r = st.in[j];
        if (r >= 0) {
          a[j] = base[r];
        } else {
          const Layout& l = f.in_layout[static_cast<std::size_t>(-r - 1)];
          sa[j] = l.step;
          a[j] = ext[static_cast<std::size_t>(-r - 1)] + l.at(off);
        }
      }
      if constexpr (std::is_same_v<T, float>)
        st.op->f32(a[0], sa[0], a[1], sa[1], base[st.out], len, simd);
      else
        st.op->f64(a[0], sa[0], a[1], sa[1], base[st.out], len, simd);
    }
  };
  // Blocks of kBlock elements below the last full SIMD batch (where the unary kernels use their
  // vector form), then the remainder; rows are whole SIMD batches, so blocks stay aligned.
  const std::int64_t w = static_cast<std::int64_t>(xsimd::batch<T>::size);
  const std::int64_t simd_end = n - n % w;
  for (std::int64_t off = 0, len = 0; off < simd_end; off += len) {
    len = std::min(kBlock, simd_end - off);
    for (std::int64_t row : rows) len = std::min(len, row - off % row);
    block(off, len, true);
  }
  if (simd_end < n) block(simd_end, n - simd_end, false);
}

// Threaded code: each instruction's handler ends in its own jump to the next one's, so that the
// branch predictor learns each op's successors; the code ends with a `halt`. The arithmetic is the
// primitives' own (`a + b` in T), so results equal eager ones bit for bit.
template <class T>
void run_scalar(const ScalarCode<T>& sc, std::span<const Array> in,
                const std::vector<T*>& out_ptrs) {
  thread_local std::vector<T> file;
  file.resize(sc.num_regs);
  T* r = file.data();
  for (std::uint32_t k = 0; k < sc.num_inputs; ++k) r[k] = *in_ptr<T>(in[k]);
  std::copy(sc.constants.begin(), sc.constants.end(), r + sc.num_inputs);
  const FusedScalar<T>* fns = sc.fns.data();
  static void* const handlers[] = {&&add,      &&add_acc,   &&add_racc, &&sub,      &&sub_acc,
                                   &&sub_racc, &&mul,       &&mul_acc,  &&mul_racc, &&div,
                                   &&div_acc,  &&div_racc,  &&neg,      &&neg_acc,  &&call,
                                   &&call_acc, &&call_racc, &&halt};
  static_assert(std::size(handlers) == static_cast<std::size_t>(Instr::Op::halt) + 1);
  const Instr* x = sc.code.data();
  T acc = T(0);
#define LINUM_NEXT(value)    \
  r[x->dst] = acc = (value); \
  ++x;                       \
  goto* handlers[static_cast<std::size_t>(x->op)]
  goto* handlers[static_cast<std::size_t>(x->op)];
add:
  LINUM_NEXT(r[x->a] + r[x->b]);
add_acc:
  LINUM_NEXT(acc + r[x->b]);
add_racc:
  LINUM_NEXT(r[x->a] + acc);
sub:
  LINUM_NEXT(r[x->a] - r[x->b]);
sub_acc:
  LINUM_NEXT(acc - r[x->b]);
sub_racc:
  LINUM_NEXT(r[x->a] - acc);
mul:
  LINUM_NEXT(r[x->a] * r[x->b]);
mul_acc:
  LINUM_NEXT(acc * r[x->b]);
mul_racc:
  LINUM_NEXT(r[x->a] * acc);
div:
  LINUM_NEXT(r[x->a] / r[x->b]);
div_acc:
  LINUM_NEXT(acc / r[x->b]);
div_racc:
  LINUM_NEXT(r[x->a] / acc);
neg:
  LINUM_NEXT(-r[x->a]);
neg_acc:
  LINUM_NEXT(-acc);
call:
  LINUM_NEXT(fns[x->fn](r[x->a], r[x->b]));
call_acc:
  LINUM_NEXT(fns[x->fn](acc, r[x->b]));
call_racc:
  LINUM_NEXT(fns[x->fn](r[x->a], acc));
#undef LINUM_NEXT
halt:
  for (std::size_t j = 0; j < out_ptrs.size(); ++j) *out_ptrs[j] = r[sc.out_regs[j]];
}

}  // namespace

Arrays FusedChain::eval(std::span<const Array> in) const {
  return eval_into(in, Arrays(outs.size()));
}

Arrays FusedChain::eval_into(std::span<const Array> in, Arrays outs) const {
  return dispatch_float(dtype, name(), [&]<class T>() {
    std::vector<T*> out_ptrs;
    for (std::size_t j = 0; j < outs.size(); ++j) {
      if (!outs[j].valid()) outs[j] = empty(this->outs[j].shape, dtype);
      outs[j].impl()->weak_type = this->outs[j].weak_type;
      out_ptrs.push_back(out_ptr<T>(outs[j]));
    }
    if (const auto* sc = std::get_if<ScalarCode<T>>(&code))
      run_scalar(*sc, in, out_ptrs);
    else
      run_blocks(std::get<Blocks>(code), shape_size(shape), in, out_ptrs);
    return outs;
  });
}

}  // namespace linum::detail
