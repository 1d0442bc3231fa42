// The kernel of a FusedChain eqn: a chain over many elements runs a block at a time, so that its
// intermediates stay in cache-resident slots; a one-element chain runs its register code.
#include <algorithm>
#include <cstring>

#include <linum/autodiff/ops/simd.hpp>

#include <linum/autodiff/jit_fused.hpp>
#include <linum/autodiff/ops/kernel_util.hpp>

namespace linum::detail {

namespace {

constexpr std::int64_t kBlock = 256;
// Rows shorter than this are copied through staging slots rather than cut blocks short.
constexpr std::int64_t kShortRow = 64;

// Calls f(position in the buffer, position in the block, count) for each run of a block
// [off, off + len) of a layout's elements that is contiguous in its buffer (one run unless the
// block crosses the end of a row).
template <class F>
void for_runs(const Layout& l, std::int64_t off, std::int64_t len, F&& f) {
  if (!l.row) return f(l.offset + off * l.step, std::int64_t(0), len);
  std::int64_t q = off / l.row, c = off % l.row;
  for (std::int64_t done = 0; done < len; c = 0, ++q) {
    const std::int64_t m = std::min(len - done, l.row - c);
    f(l.offset + q * l.row_stride + c, done, m);
    done += m;
  }
}

// Whether a block [off, off + len) of a layout lies in one run of its buffer.
bool one_run(const Layout& l, std::int64_t off, std::int64_t len) {
  return !l.row || off % l.row + len <= l.row;
}

template <class T>
void run_blocks(const Blocks& f, std::int64_t n, std::span<const Array> in,
                const std::vector<T*>& out_ptrs) {
  // Operands are indices into one pointer table: the slots, then the external inputs. The table
  // is refreshed once per block, so a step costs one indirect call and its loop. A block that
  // crosses the end of a row of a layout (a split's piece, a concatenation's, a bias; only where
  // rows are short) reads that input from a copy in a staging slot and writes that output
  // through its slot.
  const auto slots = static_cast<std::size_t>(f.num_slots);
  struct Step {
    FusedKernel<T> fn;
    std::size_t a, b, out;
    std::int64_t sa, sb;
  };
  // Per-thread tables, reused from call to call: a replay allocates nothing here.
  thread_local std::vector<Step> steps;
  thread_local std::vector<T*> slot;       // where each slot is written
  thread_local std::vector<const T*> src;  // where each operand is read
  thread_local std::vector<const T*> ext;  // the external inputs' buffers
  steps.clear();
  for (const FusedStep& st : f.steps) {
    Step s{nullptr, 0, 0, static_cast<std::size_t>(st.out), 1, 1};
    if constexpr (std::is_same_v<T, float>)
      s.fn = st.op->f32;
    else
      s.fn = st.op->f64;
    for (int j = 0; j < st.op->arity; ++j) {
      const int r = st.in[j];
      const std::size_t at = r >= 0 ? static_cast<std::size_t>(r) : slots + (-r - 1);
      const std::int64_t stride = r >= 0 ? 1 : f.in_layout[static_cast<std::size_t>(-r - 1)].step;
      (j == 0 ? s.a : s.b) = at;
      (j == 0 ? s.sa : s.sb) = stride;
    }
    steps.push_back(s);
  }
  // Slots are `stride` apart: a small array's chain keeps all of its values close together. The
  // staging slots of the inputs follow the chain's own.
  const std::int64_t stride = std::max<std::int64_t>(1, std::min(kBlock, n));
  thread_local std::vector<T> regs;
  regs.resize((slots + in.size()) * static_cast<std::size_t>(stride));
  auto reg = [&](std::size_t k) { return regs.data() + k * static_cast<std::size_t>(stride); };
  slot.resize(slots);
  src.resize(slots + in.size());
  for (std::size_t k = 0; k < slots; ++k) src[k] = slot[k] = reg(k);
  ext.resize(in.size());
  for (std::size_t k = 0; k < in.size(); ++k) ext[k] = in_ptr<T>(in[k]);
  auto block = [&](std::int64_t off, std::int64_t len, bool simd) {
    for (std::size_t k = 0; k < in.size(); ++k) {
      const Layout& l = f.in_layout[k];
      if (one_run(l, off, len)) {
        for_runs(l, off, len, [&](std::int64_t at, std::int64_t, std::int64_t) {
          src[slots + k] = ext[k] + at;
        });
      } else {
        T* stage = reg(slots + k);
        for_runs(l, off, len, [&](std::int64_t at, std::int64_t to, std::int64_t m) {
          std::copy_n(ext[k] + at, m, stage + to);
        });
        src[slots + k] = stage;
      }
    }
    for (const Blocks::Out& o : f.outs) {
      const auto k = static_cast<std::size_t>(o.slot);
      T* dst = out_ptrs[static_cast<std::size_t>(o.output)];
      if (one_run(o.at, off, len))
        for_runs(o.at, off, len,
                 [&](std::int64_t at, std::int64_t, std::int64_t) { slot[k] = dst + at; });
      else
        slot[k] = reg(k);
      src[k] = slot[k];
    }
    for (const Step& s : steps) s.fn(src[s.a], s.sa, src[s.b], s.sb, slot[s.out], len, simd);
    for (const Blocks::Out& o : f.outs) {
      const auto k = static_cast<std::size_t>(o.slot);
      if (slot[k] != reg(k)) continue;
      T* dst = out_ptrs[static_cast<std::size_t>(o.output)];
      for_runs(o.at, off, len, [&](std::int64_t at, std::int64_t from, std::int64_t m) {
        std::copy_n(slot[k] + from, m, dst + at);
      });
    }
  };
  // Blocks of kBlock elements below the last full SIMD batch (where the unary kernels use their
  // vector form), then the remainder. Blocks end where a row of a layout does, unless some rows
  // are short: then copies through staging slots cost less than short blocks.
  std::vector<std::int64_t> rows;
  for (const Layout& l : f.in_layout)
    if (l.row) rows.push_back(l.row);
  for (const Blocks::Out& o : f.outs)
    if (o.at.row) rows.push_back(o.at.row);
  if (!rows.empty() && *std::min_element(rows.begin(), rows.end()) < kShortRow) rows.clear();
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

namespace {
// The elements of `buffer` from `offset` on, as an array of shape `s` sharing its storage.
Array view_of(const Array& buffer, std::int64_t offset, const Shape& s) {
  const auto& b = static_cast<const ConcreteImpl&>(*buffer.impl());
  auto* data =
      static_cast<std::byte*>(b.data) + offset * static_cast<std::int64_t>(itemsize(b.dtype));
  return Array(make_small<ConcreteImpl>(s, b.dtype, b.owner, data));
}
}  // namespace

Arrays FusedChain::eval(std::span<const Array> in) const {
  return dispatch_float(dtype, name(), [&]<class T>() {
    Arrays outs;
    std::vector<T*> out_ptrs;
    for (std::size_t j = 0; j < this->outs.size(); ++j) {
      const ShapeDtype& o = this->outs[j];
      auto at = std::find_if(placed.begin(), placed.end(),
                             [&](const Placement& p) { return p.output == static_cast<int>(j); });
      outs.push_back(at == placed.end()
                         ? empty(o.shape, dtype)
                         : view_of(in[static_cast<std::size_t>(at->input)], at->offset, o.shape));
      outs.back().impl()->weak_type = o.weak_type;
      out_ptrs.push_back(out_ptr<T>(outs.back()));
    }
    const auto own = in.first(in.size() - placed.size());
    if (const auto* sc = std::get_if<ScalarCode<T>>(&code))
      run_scalar(*sc, own, out_ptrs);
    else
      run_blocks(std::get<Blocks>(code), shape_size(shape), own, out_ptrs);
    return outs;
  });
}

Arrays ConcatBuffer::eval(std::span<const Array>) const {
  Array b = empty(aval.shape, aval.dtype);
  b.impl()->weak_type = aval.weak_type;
  return {b};
}

Arrays ConcatRest::eval(std::span<const Array> in) const {
  const Array& b = in[0];
  auto* data = static_cast<std::byte*>(static_cast<const ConcreteImpl&>(*b.impl()).data);
  const auto size = static_cast<std::int64_t>(itemsize(b.dtype()));
  for (std::size_t k = 1; k < in.size(); ++k)
    std::memcpy(data + offsets[k - 1] * size, in_ptr<std::byte>(in[k]),
                static_cast<std::size_t>(in[k].size() * size));
  return {b};
}

}  // namespace linum::detail
