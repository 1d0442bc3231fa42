// Convolution: conv_general_dilated (NHWC x HWIO -> NHWC, any number of spatial dims) runs as
// im2col + GEMM, or on oneDNN's convolution kernels (float32, the conv backend of backends.hpp);
// its two transposes are primitives of their own (col2im of a GEMM, and a GEMM against the
// patches), each the other's VJP partner, so grad of grad closes.
#include <algorithm>
#include <array>
#include <memory>
#include <optional>

#include <linum/autodiff/ops/backends.hpp>
#include <linum/autodiff/ops/dnnl_backend.hpp>
#include <linum/autodiff/ops/window_util.hpp>
#include <linum/autodiff/parallel.hpp>

namespace linum {
namespace detail {
namespace {

using namespace window_util;

struct ConvParams {
  Vec strides, lhs_dil, rhs_dil;
  Pads pads;  // resolved: explicit (low, high) per spatial dim
  i64 groups = 1;
};

// (N, out spatial..., O) of a convolution: the abstract rule, without ConvGeom's index tables.
Shape conv_out_shape(const Shape& lhs, const Shape& rhs, const ConvParams& p) {
  Shape s{lhs[0]};
  for (std::size_t d = 0; d + 2 < lhs.size(); ++d)
    s.push_back(
        sweep_size(lhs[d + 1], rhs[d], p.strides[d], p.pads[d], p.lhs_dil[d], p.rhs_dil[d]));
  s.push_back(rhs.back());
  return s;
}

// The shapes of one convolution and the index tables of its im2col. The patch matrix P has one
// row per output pixel (N * prod(out)) and columns (group, window position, channel in group),
// so that group g's block is a (rows, win * Cg) matrix with leading dimension G * win * Cg.
struct ConvGeom {
  int ns = 0;
  i64 N = 0, C = 0, O = 0, G = 1, Cg = 0, Og = 0;
  Vec in, k, out;
  i64 win = 1, in_sp = 1, out_sp = 1, rows = 0;
  std::vector<std::vector<i64>> tab;
  std::vector<Vec> wpos;  // window position -> offset per spatial dim
  bool identity = false;  // 1x1 window, unit strides, no padding or dilation: P is the input
  i64 last_stride = 1, last_pad = 0;
  bool last_dense = false;  // no dilation along the last spatial dim: windows are contiguous

  ConvGeom(const Shape& lhs, const Shape& rhs, const ConvParams& p) {
    ns = static_cast<int>(lhs.size()) - 2;
    N = lhs[0];
    C = lhs.back();
    O = rhs.back();
    G = p.groups;
    Cg = C / G;
    Og = O / G;
    identity = true;
    for (int d = 0; d < ns; ++d) {
      in.push_back(lhs[d + 1]);
      k.push_back(rhs[d]);
      out.push_back(sweep_size(in[d], k[d], p.strides[d], p.pads[d], p.lhs_dil[d], p.rhs_dil[d]));
      tab.push_back(axis_table(in[d], out[d], k[d], p.strides[d], p.pads[d].first, p.lhs_dil[d],
                               p.rhs_dil[d]));
      win *= k[d];
      in_sp *= in[d];
      out_sp *= out[d];
      identity &= k[d] == 1 && p.strides[d] == 1 && p.pads[d] == std::pair<i64, i64>{0, 0} &&
                  p.lhs_dil[d] == 1;
    }
    rows = N * out_sp;
    last_stride = p.strides[ns - 1];
    last_pad = p.pads[ns - 1].first;
    last_dense = p.rhs_dil[ns - 1] == 1 && p.lhs_dil[ns - 1] == 1;
    for (i64 w = 0; w < win; ++w) {
      Vec j(ns);
      for (int d = ns - 1, r = static_cast<int>(w); d >= 0; --d) j[d] = r % k[d], r /= k[d];
      wpos.push_back(j);
    }
  }
  // Columns of P per group, and P's leading dimension (all groups).
  i64 kg() const { return win * Cg; }
  i64 ldp() const { return G * win * Cg; }
  Shape out_shape() const {
    Shape s{N};
    s.insert(s.end(), out.begin(), out.end());
    s.push_back(O);
    return s;
  }
  // Rows of P per chunk: bounds the patch buffer to about 16 MB of floats.
  i64 chunk() const { return std::max<i64>(1, (i64{1} << 22) / std::max<i64>(1, ldp())); }

  // Visits the patch rows [r0, r1) as runs: f(row - r0, first window position, count, offset
  // of the first input pixel's channel 0, or -1 for `count` positions of padding). Along the
  // last spatial dim, a window inside the input is one run of count * C contiguous values.
  // Rows go line by line (fixed n and leading output coordinates), so that the leading dims'
  // input offsets are looked up once per line.
  template <class F>
  void visit(i64 r0, i64 r1, F f) const {
    const int L = ns - 1;
    const i64 kl = k[L], nlead = win / kl, ol = out[L],
              lines_per_image = out_sp / std::max<i64>(ol, 1);
    Vec o(ns), lead(static_cast<std::size_t>(nlead));
    for (i64 r = r0; r < r1;) {
      const i64 line = r / ol, o_first = r % ol, o_end = std::min(ol, o_first + (r1 - r));
      const i64 n = line / lines_per_image;
      for (i64 d = L - 1, rem = line % lines_per_image; d >= 0; --d)
        o[d] = rem % out[d], rem /= out[d];
      for (i64 wl = 0; wl < nlead; ++wl) {
        i64 off = 0;
        for (int d = 0; d < L && off >= 0; ++d) {
          const i64 idx = tab[d][o[d] * k[d] + wpos[wl * kl][d]];
          off = idx < 0 ? -1 : off * in[d] + idx;
        }
        lead[wl] = off < 0 ? -1 : n * in_sp + off * in[L];  // pixel (n, leading indices..., 0)
      }
      for (i64 oL = o_first; oL < o_end; ++oL) {
        const i64 rr = r - r0 + (oL - o_first);
        const i64 i0 = oL * last_stride - last_pad;
        const bool inside = last_dense && i0 >= 0 && i0 + kl <= in[L];
        const i64* tl = tab[L].data() + oL * kl;
        for (i64 wl = 0; wl < nlead; ++wl) {
          const i64 pix = lead[wl];
          if (pix < 0)
            f(rr, wl * kl, kl, i64{-1});
          else if (inside)
            f(rr, wl * kl, kl, (pix + i0) * C);
          else
            for (i64 j = 0; j < kl; ++j)
              f(rr, wl * kl + j, i64{1}, tl[j] < 0 ? -1 : (pix + tl[j]) * C);
        }
      }
      r += o_end - o_first;
    }
  }
};

// Runs are often a few values (3 pixels of 1 channel): a short loop beats a memmove call.
template <class T>
inline void copy_run(const T* src, i64 n, T* dst) {
  if (n > 16) {
    std::copy_n(src, n, dst);
    return;
  }
  i64 i = 0;
  for (; i + 2 <= n; i += 2) {
    const T a = src[i], b = src[i + 1];
    dst[i] = a;
    dst[i + 1] = b;
  }
  if (i < n) dst[i] = src[i];
}

template <class T>
void im2col(const ConvGeom& g, const T* x, T* P, i64 r0, i64 r1) {
  const i64 C = g.C, Cg = g.Cg, G = g.G, win = g.win;
  g.visit(r0, r1, [&](i64 r, i64 w, i64 cnt, i64 off) {
    T* row = P + r * g.ldp();
    if (G == 1) {
      if (off < 0)
        std::fill_n(row + w * C, cnt * C, T(0));
      else
        copy_run(x + off, cnt * C, row + w * C);
      return;
    }
    for (i64 gi = 0; gi < G; ++gi) {
      T* dst = row + (gi * win + w) * Cg;
      for (i64 j = 0; j < cnt; ++j, dst += Cg) {
        if (off < 0)
          std::fill_n(dst, Cg, T(0));
        else
          copy_run(x + off + j * C + gi * Cg, Cg, dst);
      }
    }
  });
}

// im2col of rows [r0, r1) into P's first rows, split over the threads when the block is large
// (each part writes its own rows). col2im stays on one thread: its rows add into shared pixels.
template <class T>
void im2col_rows(const ConvGeom& g, const T* x, T* P, i64 r0, i64 r1) {
  const i64 ld = g.ldp();
  parallel_for(
      r1 - r0, [&](i64 lo, i64 hi) { im2col(g, x, P + lo * ld, r0 + lo, r0 + hi); },
      std::max<i64>(1, kParallelGrain / std::max<i64>(ld, 1)), 1);
}

// The transpose of im2col: patch values are added back into the pixels they were read from.
template <class T>
void col2im(const ConvGeom& g, const T* P, T* x, i64 r0, i64 r1) {
  const i64 C = g.C, Cg = g.Cg, G = g.G, win = g.win;
  g.visit(r0, r1, [&](i64 r, i64 w, i64 cnt, i64 off) {
    if (off < 0) return;
    const T* row = P + r * g.ldp();
    if (G == 1) {
      const T* src = row + w * C;
      T* dst = x + off;
      for (i64 i = 0; i < cnt * C; ++i) dst[i] += src[i];
      return;
    }
    for (i64 gi = 0; gi < G; ++gi)
      for (i64 j = 0; j < cnt; ++j) {
        const T* src = row + (gi * win + w + j) * Cg;
        T* dst = x + off + j * C + gi * Cg;
        for (i64 c = 0; c < Cg; ++c) dst[c] += src[c];
      }
  });
}

// Scratch space for the patches, left uninitialised (im2col writes every element).
template <class T>
std::unique_ptr<T[]> patch_buffer(const ConvGeom& g) {
  return std::unique_ptr<T[]>(
      new T[static_cast<std::size_t>(std::min(g.chunk(), g.rows) * g.ldp())]);
}

// Runs body(r0, r1, P) over chunks [r0, r1) of the patch matrix's rows, P a buffer for them.
template <class T, class F>
void for_each_patch_chunk(const ConvGeom& g, F&& body) {
  const i64 ch = g.chunk();
  auto P = patch_buffer<T>(g);
  for (i64 r0 = 0; r0 < g.rows; r0 += ch) body(r0, std::min(g.rows, r0 + ch), P.get());
}

// One GEMM per feature group: a and c advance by their group steps, b (w or ct, leading
// dimension O) by Og.
template <class T>
void group_gemms(const ConvGeom& g, bool ta, bool tb, i64 m, i64 n, i64 k, const T* a, i64 lda,
                 i64 a_step, const T* b, T* c, i64 ldc, i64 c_step, bool acc) {
  for (i64 gi = 0; gi < g.G; ++gi)
    gemm<T>(ta, tb, m, n, k, a + gi * a_step, lda, b + gi * g.Og, g.O, c + gi * c_step, ldc, acc);
}

// out = conv(x, w): per group, P_g (rows, win*Cg) times w_g (win*Cg, Og) into out's columns.
template <class T>
void conv_forward(const ConvGeom& g, const T* x, const T* w, T* out) {
  if (g.identity) {
    group_gemms<T>(g, false, false, g.rows, g.Og, g.Cg, x, g.C, g.Cg, w, out, g.O, g.Og, false);
    return;
  }
  for_each_patch_chunk<T>(g, [&](i64 r0, i64 r1, T* P) {
    im2col_rows(g, x, P, r0, r1);
    group_gemms<T>(g, false, false, r1 - r0, g.Og, g.kg(), P, g.ldp(), g.kg(), w, out + r0 * g.O,
                   g.O, g.Og, false);
  });
}

// x_bar = conv_transpose_lhs(ct, w): patches' cotangent ct_g · w_g^T, then col2im.
template <class T>
void conv_grad_lhs(const ConvGeom& g, const T* ct, const T* w, T* xbar) {
  if (g.identity) {
    group_gemms<T>(g, false, true, g.rows, g.Cg, g.Og, ct, g.O, g.Og, w, xbar, g.C, g.Cg, false);
    return;
  }
  std::fill(xbar, xbar + g.N * g.in_sp * g.C, T(0));
  for_each_patch_chunk<T>(g, [&](i64 r0, i64 r1, T* P) {
    group_gemms<T>(g, false, true, r1 - r0, g.kg(), g.Og, ct + r0 * g.O, g.O, g.Og, w, P, g.ldp(),
                   g.kg(), false);
    col2im(g, P, xbar, r0, r1);
  });
}

// w_bar = conv_transpose_rhs(x, ct): P_g^T · ct_g, accumulated over row chunks, lands in HWIO.
template <class T>
void conv_grad_rhs(const ConvGeom& g, const T* x, const T* ct, T* wbar) {
  if (g.rows == 0) {
    std::fill(wbar, wbar + g.win * g.Cg * g.O, T(0));
    return;
  }
  if (g.identity) {
    group_gemms<T>(g, true, false, g.Cg, g.Og, g.rows, x, g.C, g.Cg, ct, wbar, g.O, g.Og, false);
    return;
  }
  for_each_patch_chunk<T>(g, [&](i64 r0, i64 r1, T* P) {
    im2col_rows(g, x, P, r0, r1);
    group_gemms<T>(g, true, false, g.kg(), g.Og, r1 - r0, P, g.ldp(), g.kg(), ct + r0 * g.O, wbar,
                   g.O, g.Og, r0 > 0);
  });
}

template <class F>
void dispatch_conv(DType d, F&& f) {
  dispatch(d, [&]<class T>() {
    if constexpr (std::is_same_v<T, std::uint8_t>)
      throw TypeError("conv_general_dilated: bool operands are not supported");
    else
      f.template operator()<T>();
  });
}

Array conv_bind(const Array& x, const Array& w, const ConvParams& p);
Array conv_transpose_lhs_bind(const Array& ct, const Array& w, const ConvParams& p,
                              const Shape& lhs);
Array conv_transpose_rhs_bind(const Array& x, const Array& ct, const ConvParams& p,
                              const Shape& rhs);

// JAX's _reshape_axis_into: moves axis src next to (before) axis dst of the array without src,
// and merges the two, src major.
Array merge_axis_into(const Array& x, int src, int dst) {
  std::vector<int> perm;
  for (int i = 0; i < x.ndim(); ++i)
    if (i != src) perm.push_back(i);
  perm.insert(perm.begin() + dst, src);
  Array t = transpose(x, perm);
  Shape s = t.shape();
  s[dst] *= s[dst + 1];
  s.erase(s.begin() + dst + 1);
  return reshape(t, s);
}

// JAX's _reshape_axis_out_of: splits axis src into (size1, rest).
Array split_axis(const Array& x, int src, i64 size1) {
  Shape s = x.shape();
  const i64 rest = s[src] / size1;
  s[src] = size1;
  s.insert(s.begin() + src + 1, rest);
  return reshape(x, s);
}

// Batching by feature groups: both operands (the unbatched one broadcast) get the batch folded
// into their feature dim `fdim[i]`, each example becoming its own block of groups.
struct BatchInGroups {
  Arrays ops;
  ConvParams p;
};
BatchInGroups fold_into_groups(std::span<const Array> in, std::span<const int> bdims,
                               const ConvParams& p, std::array<int, 2> fdim) {
  i64 B = 0;
  for (std::size_t i = 0; i < 2; ++i)
    if (bdims[i] >= 0) B = in[i].shape(bdims[i]);
  BatchInGroups r{{}, p};
  for (std::size_t i = 0; i < 2; ++i) {
    Array a = bdims[i] >= 0 ? in[i] : move_bdim(in[i], -1, 0, B);
    r.ops.push_back(merge_axis_into(a, std::max(bdims[i], 0), fdim[i]));
  }
  r.p.groups *= B;
  return r;
}

Shape with_feature(Shape s, i64 f) {
  s.back() = f;
  return s;
}

// The convolution as the oneDNN backend takes it, or nullopt where oneDNN is not selected or has
// no kernel: float32, or a 2-byte float oneDNN multiplies natively; no lhs dilation (a transposed
// convolution), no negative padding, one to three spatial dims, nothing empty. The lhs cotangent of
// an image with fewer than 4 channels per group stays on im2col: oneDNN's backward-data kernel
// took 2.2 ms against im2col's 0.8 ms on W2's first layer (one channel, batch 32).
std::optional<ConvShape> onednn_shape(ConvKernel kernel, const ConvGeom& g, const ConvParams& p,
                                      DType dt) {
  if (!(dt == float32 ? conv_backend() == ConvBackend::onednn : native_reduced_conv(dt)) ||
      g.ns > 3 || g.rows == 0 || g.C == 0 || g.O == 0 ||
      (kernel == ConvKernel::grad_lhs && g.Cg < 4))
    return std::nullopt;
  ConvShape s{g.N, g.C, g.O, g.G, g.in, g.k, g.out, p.strides, p.rhs_dil, {}, {}, dt};
  for (int d = 0; d < g.ns; ++d) {
    if (p.lhs_dil[d] != 1 || p.pads[d].first < 0 || p.pads[d].second < 0) return std::nullopt;
    s.pad_lo.push_back(p.pads[d].first);
    s.pad_hi.push_back(p.pads[d].second);
  }
  return s;
}

struct ConvBase : Primitive {
  ConvParams p;
  ConvKernel kernel;
  ConvBase(ConvParams q, ConvKernel k) : p(std::move(q)), kernel(k) {}
  bool vjp_reads_output(std::size_t) const override { return false; }
  // 2-byte floats run natively where oneDNN can, else eval widens them itself.
  bool handles_reduced_floats() const override { return true; }
  // This primitive on other operands with params q; a transpose's carried output shape gets its
  // feature dim times `feature_mult` (batching by feature groups).
  virtual Array rebind(const Array& a, const Array& b, const ConvParams& q,
                       i64 feature_mult = 1) const = 0;
  // The output shape; the transposes' outputs are the operand shapes they carry.
  virtual Shape out_shape(const Shape& a, const Shape& b) const = 0;

  Avals abstract_eval(std::span<const ShapeDtype> in) const override {
    return {{out_shape(in[0].shape, in[1].shape), in[0].dtype}};
  }
  Arrays eval(std::span<const Array> in) const override {
    const Shape out_s = out_shape(in[0].shape(), in[1].shape());
    // The geometry is always (lhs, rhs): a transpose's output stands in for the operand it is.
    ConvGeom g(kernel == ConvKernel::grad_lhs ? out_s : in[0].shape(),
               kernel == ConvKernel::grad_rhs ? out_s : in[1].shape(), p);
    const DType dt = in[0].dtype();
    Array out = empty(out_s, dt);
    if (const auto s = onednn_shape(kernel, g, p, dt))
      if (onednn_conv(kernel, *s, in_ptr<std::uint8_t>(in[0]), in_ptr<std::uint8_t>(in[1]),
                      out_ptr<std::uint8_t>(out)))
        return {out};
    if (is_reduced_float(dt)) {  // the float32 convolution of the widened operands, rounded once
      auto widened = [](const Array& v) {
        return from_buffer(in_ptr<std::uint8_t>(v), v.shape(), v.dtype(), float32);
      };
      const Array wide = eval(Arrays{widened(in[0]), widened(in[1])})[0];
      return {from_buffer(in_ptr<std::uint8_t>(wide), out_s, float32, dt)};
    }
    dispatch_conv(in[0].dtype(), [&]<class T>() {
      const T *a = in_ptr<T>(in[0]), *b = in_ptr<T>(in[1]);
      T* o = out_ptr<T>(out);
      if (kernel == ConvKernel::forward)
        conv_forward<T>(g, a, b, o);
      else if (kernel == ConvKernel::grad_lhs)
        conv_grad_lhs<T>(g, a, b, o);
      else
        conv_grad_rhs<T>(g, a, b, o);
    });
    return {out};
  }
  // Bilinear: d f(a, b) = f(da, b) + f(a, db).
  Arrays jvp(std::span<const Array> pr, std::span<const Array> t,
             std::span<const Array>) const override {
    Array r;
    if (t[0].valid()) r = rebind(t[0], pr[1], p);
    if (t[1].valid()) {
      Array s = rebind(pr[0], t[1], p);
      r = r.valid() ? add(r, s) : s;
    }
    return {r};
  }
  // Both operands batched (or the transposes' general case): the batch folds into the feature
  // groups, one block of groups per example (JAX's rule).
  Batched vmap_by_groups(std::span<const Array> in, std::span<const int> bd) const {
    const int ns = static_cast<int>(p.strides.size());
    BatchInGroups f = fold_into_groups(in, bd, p, {ns + 1, ns + 1});
    const i64 B = f.p.groups / p.groups;
    return {{split_axis(rebind(f.ops[0], f.ops[1], f.p, B), ns + 1, B)}, {ns + 1}};
  }
  // The cotangent of operand i (0 or 1) given the output's cotangent ct: one convolution.
  virtual Array operand_cotangent(int i, std::span<const Array> pr, const Array& ct) const = 0;
  // Two bilinear operands: each cotangent is one convolution, run only when that input needs it.
  Arrays vjp(std::span<const Array> pr, std::span<const Array> ct,
             std::span<const Array> o) const override {
    const bool both[2] = {true, true};
    return vjp_needed(pr, ct, o, both);
  }
  Arrays vjp_needed(std::span<const Array> pr, std::span<const Array> ct, std::span<const Array>,
                    std::span<const bool> need) const override {
    if (!ct[0].valid()) return {Array(), Array()};
    return {need[0] ? operand_cotangent(0, pr, ct[0]) : Array(),
            need[1] ? operand_cotangent(1, pr, ct[0]) : Array()};
  }
  void print_params(std::ostream& os) const override {
    os << "window_strides=" << vec_str(p.strides) << " padding=" << pads_str(p.pads)
       << " lhs_dilation=" << vec_str(p.lhs_dil) << " rhs_dilation=" << vec_str(p.rhs_dil)
       << " feature_group_count=" << p.groups;
  }
};

// (lhs NHWC, rhs HWIO) -> out NHWC.
struct Conv final : ConvBase {
  explicit Conv(ConvParams q) : ConvBase(std::move(q), ConvKernel::forward) {}
  const char* name() const override { return "conv_general_dilated"; }
  Array rebind(const Array& a, const Array& b, const ConvParams& q, i64) const override {
    return conv_bind(a, b, q);
  }
  Shape out_shape(const Shape& a, const Shape& b) const override { return conv_out_shape(a, b, p); }
  Array operand_cotangent(int i, std::span<const Array> pr, const Array& ct) const override {
    return i == 0 ? conv_transpose_lhs_bind(ct, pr[1], p, pr[0].shape())
                  : conv_transpose_rhs_bind(pr[0], ct, p, pr[1].shape());
  }
  // lhs only: the batch joins N (one conv). rhs only, one group: the batch joins the output
  // features. Otherwise: feature groups, one block per example (JAX's rule).
  Batched vmap(std::span<const Array> in, std::span<const int> bd) const override {
    const int ns = static_cast<int>(p.strides.size());
    if (bd[1] < 0) {
      const i64 B = in[0].shape(bd[0]);
      return {{split_axis(conv_bind(merge_axis_into(in[0], bd[0], 0), in[1], p), 0, B)}, {0}};
    }
    const i64 B = in[1].shape(bd[1]);
    if (bd[0] < 0 && p.groups == 1) {
      Array w = merge_axis_into(in[1], bd[1], ns + 1);
      return {{split_axis(conv_bind(in[0], w, p), ns + 1, B)}, {ns + 1}};
    }
    return vmap_by_groups(in, bd);
  }
};

// A transpose of conv in one operand: its output has the shape of that operand, carried here.
struct ConvTransposeBase : ConvBase {
  using BindFn = Array (*)(const Array&, const Array&, const ConvParams&, const Shape&);
  Shape carried;
  const char* name_;
  BindFn bind_fn;
  ConvTransposeBase(ConvParams q, ConvKernel k, Shape c, const char* n, BindFn f)
      : ConvBase(std::move(q), k), carried(std::move(c)), name_(n), bind_fn(f) {}
  const char* name() const override { return name_; }
  Array rebind(const Array& a, const Array& b, const ConvParams& q,
               i64 feature_mult) const override {
    return bind_fn(a, b, q, with_feature(carried, carried.back() * feature_mult));
  }
  Shape out_shape(const Shape&, const Shape&) const override { return carried; }
};

// (ct NHWO, rhs HWIO) -> lhs cotangent NHWC: the transpose of conv in its lhs.
struct ConvTransposeLhs final : ConvTransposeBase {
  ConvTransposeLhs(ConvParams q, Shape l)
      : ConvTransposeBase(std::move(q), ConvKernel::grad_lhs, std::move(l),
                          "conv_general_dilated_transpose_lhs", conv_transpose_lhs_bind) {}
  // <c, T_w^T g> = <T_w c, g>: the cotangent of g is conv(c, w), and of w the rhs transpose.
  Array operand_cotangent(int i, std::span<const Array> pr, const Array& ct) const override {
    return i == 0 ? conv_bind(ct, pr[1], p) : conv_transpose_rhs_bind(ct, pr[0], p, pr[1].shape());
  }
  Batched vmap(std::span<const Array> in, std::span<const int> bd) const override {
    if (bd[1] < 0) {
      const i64 B = in[0].shape(bd[0]);
      Shape l = carried;
      l[0] *= B;
      return {{split_axis(conv_transpose_lhs_bind(merge_axis_into(in[0], bd[0], 0), in[1], p, l), 0,
                          B)},
              {0}};
    }
    return vmap_by_groups(in, bd);
  }
};

// (lhs NHWC, ct NHWO) -> rhs cotangent HWIO: the transpose of conv in its rhs.
struct ConvTransposeRhs final : ConvTransposeBase {
  ConvTransposeRhs(ConvParams q, Shape r)
      : ConvTransposeBase(std::move(q), ConvKernel::grad_rhs, std::move(r),
                          "conv_general_dilated_transpose_rhs", conv_transpose_rhs_bind) {}
  // <c, S_x^T g> = <conv(x, c), g> = <x, T_c^T g>.
  Array operand_cotangent(int i, std::span<const Array> pr, const Array& ct) const override {
    return i == 0 ? conv_transpose_lhs_bind(pr[1], ct, p, pr[0].shape()) : conv_bind(pr[0], ct, p);
  }
  Batched vmap(std::span<const Array> in, std::span<const int> bd) const override {
    return vmap_by_groups(in, bd);
  }
};

Array conv_bind(const Array& x, const Array& w, const ConvParams& p) {
  return bind1(std::make_shared<const Conv>(p), {x, w});
}
Array conv_transpose_lhs_bind(const Array& ct, const Array& w, const ConvParams& p,
                              const Shape& lhs) {
  return bind1(std::make_shared<const ConvTransposeLhs>(p, lhs), {ct, w});
}
Array conv_transpose_rhs_bind(const Array& x, const Array& ct, const ConvParams& p,
                              const Shape& rhs) {
  return bind1(std::make_shared<const ConvTransposeRhs>(p, rhs), {x, ct});
}

}  // namespace
}  // namespace detail

using namespace detail;

Array conv_general_dilated(const Array& lhs, const Array& rhs, const ConvOptions& opts) {
  constexpr const char* op = "conv_general_dilated";
  check_valid(lhs, op);
  check_valid(rhs, op);
  const std::string shapes =
      "lhs shape " + shape_str(lhs.shape()) + ", rhs shape " + shape_str(rhs.shape());
  if (lhs.ndim() < 3)
    throw ValueError(std::string(op) + ": lhs must have rank at least 3 (N, spatial..., C), got " +
                     shapes);
  if (rhs.ndim() != lhs.ndim())
    throw ValueError(std::string(op) + ": lhs and rhs must have the same rank, got " + shapes);
  const DType dt = promote_types(lhs.dtype(), rhs.dtype());
  if (dt == bool_) throw TypeError(std::string(op) + ": bool operands are not supported");
  const auto ns = static_cast<std::size_t>(lhs.ndim() - 2);
  const i64 G = opts.feature_group_count, C = lhs.shape(-1), I = rhs.shape(-2), O = rhs.shape(-1);
  if (G < 1)
    throw ValueError(std::string(op) + ": feature_group_count must be positive, got " +
                     std::to_string(G));
  if (C % G != 0)
    throw ValueError(std::string(op) + ": feature_group_count " + std::to_string(G) +
                     " must divide the lhs feature dimension " + std::to_string(C) + "; " + shapes);
  if (C / G != I)
    throw ValueError(std::string(op) + ": lhs feature dimension " + std::to_string(C) +
                     " must equal the rhs input feature dimension " + std::to_string(I) +
                     " times feature_group_count " + std::to_string(G) + "; " + shapes);
  if (O % G != 0)
    throw ValueError(std::string(op) + ": feature_group_count " + std::to_string(G) +
                     " must divide the rhs output feature dimension " + std::to_string(O) + "; " +
                     shapes);
  for (std::size_t d = 0; d < ns; ++d)
    if (rhs.shape()[d] < 1)
      throw ValueError(std::string(op) + ": rhs spatial dimensions must be positive; " + shapes);
  ConvParams p;
  p.strides = per_dim(opts.window_strides, ns, "window_strides", op);
  p.lhs_dil = per_dim(opts.lhs_dilation, ns, "lhs_dilation", op);
  p.rhs_dil = per_dim(opts.rhs_dilation, ns, "rhs_dilation", op);
  p.groups = G;
  Vec in, win;
  for (std::size_t d = 0; d < ns; ++d) {
    in.push_back(lhs.shape()[d + 1]);
    win.push_back(checked_dilate(op, rhs.shape()[d], p.rhs_dil[d]));
  }
  // As lax: SAME pads for the undilated input and the dilated window.
  p.pads = resolve_padding(opts.padding, in, win, p.strides, op);
  for (std::size_t d = 0; d < ns; ++d)
    if (checked_padded(op, in[d], p.lhs_dil[d], p.pads[d]) < 0)
      throw ValueError(std::string(op) + ": negative padding " + pads_str(p.pads) +
                       " removes more than the whole input; " + shapes);
  return conv_bind(astype(lhs, dt), astype(rhs, dt), p);
}

}  // namespace linum
