// The kernel of a FusedChain eqn: a chain over many elements runs a block at a time, so that its
// intermediates stay in cache-resident slots; a one-element chain runs its register code.
#include <algorithm>

#include <linum/autodiff/ops/simd.hpp>

#include <linum/autodiff/jit_fused.hpp>
#include <linum/autodiff/ops/kernel_util.hpp>

namespace linum::detail {

namespace {

// Blocks of kBlock elements below the last full SIMD batch (where the unary kernels use their
// vector form), then the remainder.
constexpr std::int64_t kBlock = 256;

// An external input of n elements reads element i at i (a full array), 0 (a scalar) or i mod its
// size (broadcast along the leading dims); blocks end where such an input wraps around.
template <class T>
void run_blocks(const Blocks& f, std::int64_t n, std::span<const Array> in,
                const std::vector<T*>& out_ptrs) {
  std::vector<const T*> ext(in.size());
  std::vector<std::int64_t> ext_stride(in.size()), period(in.size());
  std::int64_t wrap = n;  // the smallest period of a broadcast input
  for (std::size_t k = 0; k < in.size(); ++k) {
    ext[k] = in_ptr<T>(in[k]);
    period[k] = in[k].size();
    ext_stride[k] = period[k] == 1 ? 0 : 1;
    if (period[k] > 1) wrap = std::min(wrap, period[k]);
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
          a[j] = ext[k] + (off % period[k]) * sa[j];
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
  for (std::int64_t off = 0, len = 0; off < simd_end; off += len) {
    len = std::min({kBlock, simd_end - off, wrap - off % wrap});
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
  return dispatch_float(dtype, name(), [&]<class T>() {
    Arrays outs;
    std::vector<T*> out_ptrs;
    for (char weak : out_weak) {
      outs.push_back(empty(shape, dtype));
      outs.back().impl()->weak_type = weak;
      out_ptrs.push_back(out_ptr<T>(outs.back()));
    }
    if (const auto* sc = std::get_if<ScalarCode<T>>(&code))
      run_scalar(*sc, in, out_ptrs);
    else
      run_blocks(std::get<Blocks>(code), shape_size(shape), in, out_ptrs);
    return outs;
  });
}

}  // namespace linum::detail
