// oneDNN's float32 GEMM (dnnl_sgemm), its bfloat16 / float16 matmul (float32 accumulation), and
// convolutions (forward, backward data, backward weights) on linum's layouts: activations
// channels-last (NHWC), kernels HWIO, both described to oneDNN by their strides, so nothing is
// transposed around the call. The kernels themselves take weights in a blocked layout of oneDNN's
// choosing (format_tag::any): those are reordered per call, a copy of the small kernel tensor. Each
// matmul and convolution primitive is built once per geometry and kept (creating one costs tens of
// microseconds); the scratchpad is the caller's, so that one primitive can run on several threads
// at once.
#include <linum/autodiff/ops/dnnl_backend.hpp>

#ifdef LINUM_HAVE_ONEDNN

#include <oneapi/dnnl/dnnl.hpp>

#ifdef _OPENMP
#include <omp.h>
#endif

#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>

#include <linum/autodiff/array.hpp>
#include <linum/autodiff/ops/kernel_util.hpp>
#include <linum/error.hpp>

namespace linum::detail {

bool onednn_built() { return true; }

bool onednn_sgemm(bool trans_a, bool trans_b, std::int64_t m, std::int64_t n, std::int64_t k,
                  const float* a, std::int64_t lda, const float* b, std::int64_t ldb, float* c,
                  std::int64_t ldc, bool accumulate) {
  return dnnl_sgemm(trans_a ? 'T' : 'N', trans_b ? 'T' : 'N', m, n, k, 1.0f, a, lda, b, ldb,
                    accumulate ? 1.0f : 0.0f, c, ldc) == dnnl_success;
}

namespace {

using dnnl::memory;
using Dims = memory::dims;

dnnl::engine& cpu_engine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

memory::data_type dnnl_type(DType d) {
  return d == bfloat16  ? memory::data_type::bf16
         : d == float16 ? memory::data_type::f16
                        : memory::data_type::f32;
}

// A channels-last activation (N, spatial..., C) as oneDNN's logical (N, C, spatial...).
memory::desc activation_desc(std::int64_t n, std::int64_t c, const std::vector<std::int64_t>& sp,
                             DType dtype) {
  Dims dims{n, c}, strides(2 + sp.size());
  dims.insert(dims.end(), sp.begin(), sp.end());
  std::int64_t s = c;
  for (std::size_t d = sp.size(); d-- > 0;) strides[2 + d] = s, s *= sp[d];
  strides[0] = s;
  strides[1] = 1;
  return memory::desc(dims, dnnl_type(dtype), strides);
}

// An HWIO kernel (spatial..., C/G, O) as oneDNN's (O, I, spatial...), or (G, O/G, I, spatial...)
// with groups: output feature g * O/G + o of group g.
memory::desc weights_desc(const ConvShape& s) {
  const std::int64_t cg = s.C / s.G, og = s.O / s.G;
  Dims dims, strides;
  if (s.G > 1) dims.push_back(s.G), strides.push_back(og);
  dims.insert(dims.end(), {og, cg});
  strides.insert(strides.end(), {1, s.O});
  std::vector<std::int64_t> ks(s.k.size());
  std::int64_t st = cg * s.O;
  for (std::size_t d = s.k.size(); d-- > 0;) ks[d] = st, st *= s.k[d];
  dims.insert(dims.end(), s.k.begin(), s.k.end());
  strides.insert(strides.end(), ks.begin(), ks.end());
  return memory::desc(dims, dnnl_type(s.dtype), strides);
}

memory::desc any_like(const memory::desc& d) {
  return memory::desc(d.dims(), d.data_type(), memory::format_tag::any);
}

// oneDNN's reference loops: for 2-byte floats, far slower than converting them to float32.
bool is_reference(const dnnl::primitive_desc_base& pd) {
  return std::string(pd.impl_info_str()).starts_with("ref");
}

// A convolution's primitive for one product, with the reorder between the user's HWIO kernel
// and the layout the primitive wants (none when they agree).
struct ConvPlan {
  bool ok = false;
  dnnl::primitive conv, reorder;
  bool reordered = false;
  memory::desc lhs, out_act, user_w, prim_w, scratch;
};

std::shared_ptr<const ConvPlan> make_plan(ConvKernel kernel, const ConvShape& s) {
  using namespace dnnl;
  auto plan = std::make_shared<ConvPlan>();
  plan->lhs = activation_desc(s.N, s.C, s.in, s.dtype);
  plan->out_act = activation_desc(s.N, s.O, s.out, s.dtype);
  plan->user_w = weights_desc(s);
  Dims strides(s.strides.begin(), s.strides.end()), dil, lo(s.pad_lo.begin(), s.pad_lo.end()),
      hi(s.pad_hi.begin(), s.pad_hi.end());
  for (std::int64_t r : s.rhs_dilation) dil.push_back(r - 1);  // oneDNN counts the gaps
  primitive_attr attr;
  attr.set_scratchpad_mode(scratchpad_mode::user);
  const memory::desc w_any = any_like(plan->user_w);
  try {
    const convolution_forward::desc fd(prop_kind::forward_training, algorithm::convolution_direct,
                                       plan->lhs, w_any, plan->out_act, strides, dil, lo, hi);
    const convolution_forward::primitive_desc fpd(fd, attr, cpu_engine());
    // Primitive P of primitive_desc `pd`: the kernel tensor's layout and the scratchpad's size.
    auto take = [&]<class P>(const typename P::primitive_desc& pd, const memory::desc& w) {
      if (s.dtype != float32 && is_reference(pd)) return;
      plan->conv = P(pd);
      plan->prim_w = w;
      plan->scratch = pd.scratchpad_desc();
    };
    using BwdData = convolution_backward_data;
    using BwdWeights = convolution_backward_weights;
    if (kernel == ConvKernel::forward) {
      take.operator()<convolution_forward>(fpd, fpd.weights_desc());
    } else if (kernel == ConvKernel::grad_lhs) {
      const BwdData::primitive_desc pd(
          {algorithm::convolution_direct, plan->lhs, w_any, plan->out_act, strides, dil, lo, hi},
          attr, cpu_engine(), fpd);
      take.operator()<BwdData>(pd, pd.weights_desc());
    } else {
      const BwdWeights::primitive_desc pd(
          {algorithm::convolution_direct, plan->lhs, w_any, plan->out_act, strides, dil, lo, hi},
          attr, cpu_engine(), fpd);
      take.operator()<BwdWeights>(pd, pd.diff_weights_desc());
    }
    if (!plan->conv) return plan;
    plan->reordered = plan->prim_w != plan->user_w;
    if (plan->reordered)
      plan->reorder = kernel == ConvKernel::grad_rhs
                          ? dnnl::reorder(reorder::primitive_desc(cpu_engine(), plan->prim_w,
                                                                  cpu_engine(), plan->user_w))
                          : dnnl::reorder(reorder::primitive_desc(cpu_engine(), plan->user_w,
                                                                  cpu_engine(), plan->prim_w));
    plan->ok = true;
  } catch (const dnnl::error&) {  // no kernel for this geometry: the caller's path runs
    plan->ok = false;
  }
  return plan;
}

// The threads oneDNN will run on: a primitive is built for a thread count and must run on it.
std::int64_t team_size() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

// Plans by `key` (product, geometry; the thread count is added), built by `make` on a miss. A
// training loop meets a handful; the cap only bounds a program that sweeps shapes.
template <class Plan, class Make>
std::shared_ptr<const Plan> cached_plan(std::vector<std::int64_t> key, const Make& make) {
  key.push_back(team_size());
  static std::mutex mutex;
  static std::map<std::vector<std::int64_t>, std::shared_ptr<const Plan>> plans;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = plans.find(key); it != plans.end()) return it->second;
  }
  std::shared_ptr<const Plan> plan = make();
  std::lock_guard<std::mutex> lock(mutex);
  if (plans.size() >= 512) plans.clear();
  plans.emplace(std::move(key), plan);
  return plan;
}

std::shared_ptr<const ConvPlan> plan_for(ConvKernel kernel, const ConvShape& s) {
  std::vector<std::int64_t> key{
      static_cast<std::int64_t>(kernel), static_cast<std::int64_t>(s.dtype), s.N, s.C, s.O, s.G};
  for (const auto* v : {&s.in, &s.k, &s.out, &s.strides, &s.rhs_dilation, &s.pad_lo, &s.pad_hi})
    key.insert(key.end(), v->begin(), v->end());
  return cached_plan<ConvPlan>(std::move(key), [&] { return make_plan(kernel, s); });
}

// Scratch bytes from linum's caching allocator (a training step then takes none from the OS).
struct Scratch {
  Array buf;
  void* get(std::size_t bytes) {
    if (bytes == 0) return nullptr;
    buf = empty({static_cast<std::int64_t>((bytes + 3) / 4)}, float32);  // float-aligned
    return out_ptr<float>(buf);
  }
};

// Runs `plan` on the operands (onednn_conv's).
void run_plan(const ConvPlan* plan, ConvKernel kernel, const void* a, const void* b, void* out) {
  using dnnl::memory;
  dnnl::engine& eng = cpu_engine();
  thread_local dnnl::stream stream(eng);
  Scratch weights, pad;
  auto mem = [&](const memory::desc& d, const void* p) {
    return memory(d, eng, const_cast<void*>(p));
  };
  // The product's operands by oneDNN's names; the kernel tensor goes through the reorder.
  const int a_arg = kernel == ConvKernel::grad_lhs ? DNNL_ARG_DIFF_DST : DNNL_ARG_SRC;
  const int out_arg = kernel == ConvKernel::forward    ? DNNL_ARG_DST
                      : kernel == ConvKernel::grad_lhs ? DNNL_ARG_DIFF_SRC
                                                       : DNNL_ARG_DIFF_WEIGHTS;
  std::unordered_map<int, memory> args{
      {a_arg, mem(kernel == ConvKernel::grad_lhs ? plan->out_act : plan->lhs, a)}};
  if (const std::size_t bytes = plan->scratch.get_size())
    args.emplace(DNNL_ARG_SCRATCHPAD, mem(plan->scratch, pad.get(bytes)));
  const memory user_w = mem(plan->user_w, kernel == ConvKernel::grad_rhs ? out : b);
  const memory prim_w =
      plan->reordered ? mem(plan->prim_w, weights.get(plan->prim_w.get_size())) : user_w;
  if (kernel == ConvKernel::grad_rhs) {
    args.emplace(DNNL_ARG_DIFF_DST, mem(plan->out_act, b));
    args.emplace(out_arg, prim_w);
    plan->conv.execute(stream, args);
    if (plan->reordered)
      plan->reorder.execute(stream, {{DNNL_ARG_FROM, prim_w}, {DNNL_ARG_TO, user_w}});
  } else {
    if (plan->reordered)
      plan->reorder.execute(stream, {{DNNL_ARG_FROM, user_w}, {DNNL_ARG_TO, prim_w}});
    args.emplace(DNNL_ARG_WEIGHTS, prim_w);
    args.emplace(out_arg, mem(kernel == ConvKernel::forward ? plan->out_act : plan->lhs, out));
    plan->conv.execute(stream, args);
  }
  stream.wait();
}

// A kernel that was built but failed to run, as linum's error for operation `op`.
[[noreturn]] void rethrow(const dnnl::error& e, const char* op) {
  const std::string what = std::string(op) + ": oneDNN failed: " + e.what();
  if (e.status == dnnl_out_of_memory) throw MemoryError(what);
  throw Error(what);
}

// A matmul primitive for one GEMM geometry: operands and result as strided row-major matrices.
struct GemmPlan {
  bool ok = false;
  dnnl::matmul prim;
  memory::desc a, b, c, scratch;
};

std::shared_ptr<const GemmPlan> make_gemm_plan(DType in, DType out, bool trans_a, bool trans_b,
                                               std::int64_t m, std::int64_t n, std::int64_t k,
                                               std::int64_t lda, std::int64_t ldb,
                                               std::int64_t ldc) {
  auto plan = std::make_shared<GemmPlan>();
  plan->a = memory::desc({m, k}, dnnl_type(in), trans_a ? Dims{1, lda} : Dims{lda, 1});
  plan->b = memory::desc({k, n}, dnnl_type(in), trans_b ? Dims{1, ldb} : Dims{ldb, 1});
  plan->c = memory::desc({m, n}, dnnl_type(out), Dims{ldc, 1});
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  try {
    const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(plan->a, plan->b, plan->c), attr,
                                          cpu_engine());
    if (is_reference(pd)) return plan;
    plan->prim = dnnl::matmul(pd);
    plan->scratch = pd.scratchpad_desc();
    plan->ok = true;
  } catch (const dnnl::error&) {  // no kernel for these types: the caller converts
  }
  return plan;
}

}  // namespace

bool onednn_native_reduced(DType in) {
  // oneDNN runs bfloat16 on any AVX-512 CPU, but without AVX512_BF16 it emulates the products.
  static const bool bf16 = [] {
    const auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
    return (isa & dnnl_cpu_isa_avx512_core_bf16) == dnnl_cpu_isa_avx512_core_bf16;
  }();
  static const bool f16 =
      make_gemm_plan(float16, float32, false, false, 64, 64, 64, 64, 64, 64)->ok;
  return in == bfloat16 ? bf16 : in == float16 && f16;
}

bool onednn_gemm_reduced(DType in, DType out, bool trans_a, bool trans_b, std::int64_t m,
                         std::int64_t n, std::int64_t k, const void* a, std::int64_t lda,
                         const void* b, std::int64_t ldb, void* c, std::int64_t ldc) {
  if (!onednn_native_reduced(in)) return false;
  const auto plan = cached_plan<GemmPlan>(
      {static_cast<std::int64_t>(in), static_cast<std::int64_t>(out), trans_a, trans_b, m, n, k,
       lda, ldb, ldc},
      [&] { return make_gemm_plan(in, out, trans_a, trans_b, m, n, k, lda, ldb, ldc); });
  if (!plan->ok) return false;
  dnnl::engine& eng = cpu_engine();
  thread_local dnnl::stream stream(eng);
  Scratch pad;
  auto mem = [&](const memory::desc& d, const void* p) {
    return memory(d, eng, const_cast<void*>(p));
  };
  std::unordered_map<int, memory> args{{DNNL_ARG_SRC, mem(plan->a, a)},
                                       {DNNL_ARG_WEIGHTS, mem(plan->b, b)},
                                       {DNNL_ARG_DST, mem(plan->c, c)}};
  if (const std::size_t bytes = plan->scratch.get_size())
    args.emplace(DNNL_ARG_SCRATCHPAD, mem(plan->scratch, pad.get(bytes)));
  try {
    plan->prim.execute(stream, args);
    stream.wait();
  } catch (const dnnl::error& e) {
    rethrow(e, "dot_general");
  }
  return true;
}

bool onednn_conv(ConvKernel kernel, const ConvShape& s, const void* a, const void* b, void* out) {
  if (s.dtype != float32 && !onednn_native_reduced(s.dtype)) return false;
  const auto plan = plan_for(kernel, s);
  if (!plan->ok) return false;
  try {
    run_plan(plan.get(), kernel, a, b, out);
  } catch (const dnnl::error& e) {
    rethrow(e, "conv_general_dilated");
  }
  return true;
}

}  // namespace linum::detail

#else  // no oneDNN in this build: every caller runs its own path

namespace linum::detail {

bool onednn_built() { return false; }
bool onednn_sgemm(bool, bool, std::int64_t, std::int64_t, std::int64_t, const float*, std::int64_t,
                  const float*, std::int64_t, float*, std::int64_t, bool) {
  return false;
}
bool onednn_gemm_reduced(DType, DType, bool, bool, std::int64_t, std::int64_t, std::int64_t,
                         const void*, std::int64_t, const void*, std::int64_t, void*,
                         std::int64_t) {
  return false;
}
bool onednn_native_reduced(DType) { return false; }
bool onednn_conv(ConvKernel, const ConvShape&, const void*, const void*, void*) { return false; }

}  // namespace linum::detail

#endif
