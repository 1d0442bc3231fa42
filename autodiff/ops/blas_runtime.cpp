// The BLAS at run time: its threads, its kernel set and the GEMM / convolution backends.
// OpenBLAS's DYNAMIC_ARCH builds (Debian's) pick kernels by CPU model at load time, and a model
// newer than the library falls back to old ones: Debian 12's OpenBLAS 0.3.21 runs Prescott (SSE3)
// kernels on Sapphire/Emerald Rapids, 4.6× slower sgemm than its Cooperlake kernels, and Haswell
// (AVX2) ones on AMD Zen 5, 1.9× slower than SkylakeX's. linum checks the pick against the CPU's
// vector ISA once, before its first GEMM, and moves OpenBLAS to the widest kernels the CPU runs.
#include <dlfcn.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <string>

#ifdef _OPENMP
#include <omp.h>
#endif

#include <linum/autodiff/ops/backends.hpp>
#include <linum/autodiff/ops/blas_runtime.hpp>
#include <linum/autodiff/ops/dnnl_backend.hpp>
#include <linum/error.hpp>

// Each BLAS's own entry points, weak: the library linked (OpenBLAS, BLIS or another CBLAS) is
// asked through whichever of them exist, so every BLAS links and none is called when absent.
// cblas_sgemm (declared here without cblas.h's types: only its address is taken) tells which
// library serves the GEMMs when two are loaded (BLIS beside the OpenBLAS under LAPACK).
extern "C" {
void cblas_sgemm() __attribute__((weak));
// OpenBLAS. The DYNAMIC_ARCH pair (exported, not in cblas.h): quit forgets the kernel table,
// init picks it again, from OPENBLAS_CORETYPE when that is set.
char* openblas_get_config(void) __attribute__((weak));
char* openblas_get_corename(void) __attribute__((weak));
void openblas_set_num_threads(int) __attribute__((weak));
int openblas_get_num_threads(void) __attribute__((weak));
void gotoblas_dynamic_init(void) __attribute__((weak));
void gotoblas_dynamic_quit(void) __attribute__((weak));
// BLIS (dim_t is int64_t in Debian's build; arch_t an enum).
char* bli_info_get_version_str(void) __attribute__((weak));
int bli_arch_query_id(void) __attribute__((weak));
char* bli_arch_string(int) __attribute__((weak));
void bli_thread_set_num_threads(std::int64_t) __attribute__((weak));
std::int64_t bli_thread_get_num_threads(void) __attribute__((weak));
}

namespace linum {
namespace detail {

namespace {

struct CoreIsa {
  const char* core;
  BlasIsa isa;
};
// OpenBLAS's x86-64 kernel sets (openblas_get_corename spellings) by the widest ISA they use.
constexpr CoreIsa kCores[] = {
    {"Katmai", BlasIsa::sse},
    {"Coppermine", BlasIsa::sse},
    {"Northwood", BlasIsa::sse},
    {"Prescott", BlasIsa::sse},
    {"Banias", BlasIsa::sse},
    {"Atom", BlasIsa::sse},
    {"Core2", BlasIsa::sse},
    {"Penryn", BlasIsa::sse},
    {"Dunnington", BlasIsa::sse},
    {"Nehalem", BlasIsa::sse},
    {"Athlon", BlasIsa::sse},
    {"Opteron", BlasIsa::sse},
    {"Opteron_SSE3", BlasIsa::sse},
    {"Barcelona", BlasIsa::sse},
    {"Nano", BlasIsa::sse},
    {"Bobcat", BlasIsa::sse},
    {"Sandybridge", BlasIsa::avx},
    {"Bulldozer", BlasIsa::avx},
    {"Piledriver", BlasIsa::avx},
    {"Steamroller", BlasIsa::avx},
    {"Excavator", BlasIsa::avx2},
    {"Haswell", BlasIsa::avx2},
    {"Zen", BlasIsa::avx2},
    {"SkylakeX", BlasIsa::avx512},
    {"Cooperlake", BlasIsa::avx512_bf16},
    {"SapphireRapids", BlasIsa::avx512_bf16},
};

BlasIsa running_cpu_isa() {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
    return __builtin_cpu_supports("avx512bf16") ? BlasIsa::avx512_bf16 : BlasIsa::avx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return BlasIsa::avx2;
  if (__builtin_cpu_supports("avx")) return BlasIsa::avx;
  return BlasIsa::sse;
}

std::string str(const char* s) { return s ? s : ""; }

// The file of the loaded object that defines `fn` ("" when absent or unknown).
std::string object_of(void (*fn)()) {
  Dl_info d;
  return fn && dladdr(reinterpret_cast<void*>(fn), &d) && d.dli_fname ? d.dli_fname : "";
}

enum class Library { unknown, openblas, blis };

// The BLAS whose cblas_sgemm linum calls: the one whose own entry point lives beside it.
Library gemm_library() {
  static const Library lib = [] {
    const std::string gemm = object_of(cblas_sgemm);
    auto beside = [&](void (*fn)()) { return fn && object_of(fn) == gemm; };
    if (beside(reinterpret_cast<void (*)()>(openblas_get_config))) return Library::openblas;
    if (beside(reinterpret_cast<void (*)()>(bli_info_get_version_str))) return Library::blis;
    return Library::unknown;
  }();
  return lib;
}

std::string current_core() {
  if (gemm_library() == Library::openblas) return str(openblas_get_corename());
  if (gemm_library() == Library::blis) return str(bli_arch_string(bli_arch_query_id()));
  return "";
}

BlasInfo& info() {
  static BlasInfo i;
  return i;
}

void choose_core() {
  BlasInfo& i = info();
  i.cpu_isa = running_cpu_isa();
  i.core = current_core();
  if (gemm_library() != Library::openblas) {  // BLIS reports its pick (it has no switch)
    const bool blis = gemm_library() == Library::blis;
    i.config = blis ? "BLIS " + str(bli_info_get_version_str()) : "";
    i.chosen_by = blis ? "BLIS" : "";
    return;
  }
  i.config = str(openblas_get_config());
  i.chosen_by = std::getenv("OPENBLAS_CORETYPE") ? "OPENBLAS_CORETYPE" : "OpenBLAS";
  // A user's OPENBLAS_CORETYPE is theirs to choose; a build without DYNAMIC_ARCH cannot switch.
  if (std::getenv("OPENBLAS_CORETYPE") || !gotoblas_dynamic_init || !gotoblas_dynamic_quit ||
      i.config.find("DYNAMIC_ARCH") == std::string::npos)
    return;
  const std::string better = faster_blas_core(i.core, i.cpu_isa);
  if (better.empty()) return;
  // force_coretype reads only the environment: set it for the call, then put it back.
  setenv("OPENBLAS_CORETYPE", better.c_str(), 1);
  gotoblas_dynamic_quit();
  gotoblas_dynamic_init();
  unsetenv("OPENBLAS_CORETYPE");
  i.replaced_core = i.core;
  i.core = current_core();
  i.chosen_by = "linum";
}

std::once_flag core_chosen;

// At load, so that code calling cblas directly in the same process gets the fast kernels too.
[[maybe_unused]] const bool chosen_at_load = (ensure_fast_blas_core(), true);

}  // namespace

BlasIsa blas_core_isa(const std::string& core) {
  for (const CoreIsa& c : kCores)
    if (core == c.core) return c.isa;
  return BlasIsa::unknown;
}

BlasIsa blis_arch_isa(const std::string& arch) {
  constexpr CoreIsa kArchs[] = {
      {"generic", BlasIsa::sse},    {"penryn", BlasIsa::sse},     {"sandybridge", BlasIsa::avx},
      {"bulldozer", BlasIsa::avx},  {"piledriver", BlasIsa::avx}, {"steamroller", BlasIsa::avx},
      {"excavator", BlasIsa::avx2}, {"haswell", BlasIsa::avx2},   {"zen", BlasIsa::avx2},
      {"zen2", BlasIsa::avx2},      {"zen3", BlasIsa::avx2},      {"skx", BlasIsa::avx512},
      {"knl", BlasIsa::avx512},
  };
  for (const CoreIsa& a : kArchs)
    if (arch == a.core) return a.isa;
  return BlasIsa::unknown;
}

bool narrower_than_cpu(BlasIsa have, BlasIsa cpu) {
  // Cooperlake's float kernels are SkylakeX's: AVX-512 kernels are enough on a bf16 CPU.
  const BlasIsa need = cpu == BlasIsa::avx512_bf16 ? BlasIsa::avx512 : cpu;
  return have != BlasIsa::unknown && have < need;
}

std::string faster_blas_core(const std::string& core, BlasIsa cpu) {
  if (!narrower_than_cpu(blas_core_isa(core), cpu)) return "";
  switch (cpu) {
    case BlasIsa::avx512_bf16: return "Cooperlake";
    case BlasIsa::avx512: return "SkylakeX";
    case BlasIsa::avx2: return "Haswell";
    case BlasIsa::avx: return "Sandybridge";
    default: return "";
  }
}

void ensure_fast_blas_core() { std::call_once(core_chosen, choose_core); }

}  // namespace detail

BlasInfo blas_info() {
  detail::ensure_fast_blas_core();
  return detail::info();
}

const char* to_string(BlasIsa isa) {
  switch (isa) {
    case BlasIsa::sse: return "sse";
    case BlasIsa::avx: return "avx";
    case BlasIsa::avx2: return "avx2";
    case BlasIsa::avx512: return "avx512";
    case BlasIsa::avx512_bf16: return "avx512_bf16";
    default: return "unknown";
  }
}

// The BLAS's own count first (OpenBLAS's OpenMP build also sets OpenMP's; BLIS keeps its own),
// then OpenMP's, which oneDNN and linum's kernels read.
void set_num_threads(int n) {
  if (n < 1)
    throw ValueError("set_num_threads: expected at least 1 thread, got " + std::to_string(n));
  if (openblas_set_num_threads) openblas_set_num_threads(n);
  if (bli_thread_set_num_threads) bli_thread_set_num_threads(n);
#ifdef _OPENMP
  omp_set_num_threads(n);
#endif
}

int num_threads() {
  using detail::gemm_library, detail::Library;
  if (gemm_library() == Library::openblas) return openblas_get_num_threads();
  if (gemm_library() == Library::blis && bli_thread_get_num_threads() > 0)
    return static_cast<int>(bli_thread_get_num_threads());
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

// ---- backends ------------------------------------------------------------------------------

namespace {

// The start value: the environment's, else oneDNN where built in.
template <class B>
B backend_from_env(const char* var, const char* other, B other_value) {
  const char* env = std::getenv(var);
  if (!env || !*env) return detail::onednn_built() ? B::onednn : other_value;
  const std::string v = env;
  if (v == other) return other_value;
  if (v == "onednn") {
    if (!detail::onednn_built())
      throw ValueError(std::string(var) + "=onednn: this build of linum has no oneDNN (meson " +
                       "-Donednn=enabled with libdnnl-dev installed)");
    return B::onednn;
  }
  throw ValueError(std::string(var) + ": expected '" + other + "' or 'onednn', got '" + v + "'");
}

std::atomic<GemmBackend>& gemm_choice() {
  static std::atomic<GemmBackend> b{
      backend_from_env("LINUM_GEMM_BACKEND", "blas", GemmBackend::blas)};
  return b;
}
std::atomic<ConvBackend>& conv_choice() {
  static std::atomic<ConvBackend> b{
      backend_from_env("LINUM_CONV_BACKEND", "im2col", ConvBackend::im2col)};
  return b;
}

void require_onednn(const char* fn) {
  if (!detail::onednn_built())
    throw ValueError(std::string(fn) + ": this build of linum has no oneDNN (meson " +
                     "-Donednn=enabled with libdnnl-dev installed)");
}

}  // namespace

bool onednn_available() { return detail::onednn_built(); }

bool native_reduced_gemm(DType dtype) {
  return is_reduced_float(dtype) && gemm_backend() == GemmBackend::onednn &&
         detail::onednn_native_reduced(dtype);
}
bool native_reduced_conv(DType dtype) {
  return is_reduced_float(dtype) && conv_backend() == ConvBackend::onednn &&
         detail::onednn_native_reduced(dtype);
}

void set_gemm_backend(GemmBackend b) {
  if (b == GemmBackend::onednn) require_onednn("set_gemm_backend");
  gemm_choice().store(b, std::memory_order_relaxed);
}
GemmBackend gemm_backend() { return gemm_choice().load(std::memory_order_relaxed); }

void set_conv_backend(ConvBackend b) {
  if (b == ConvBackend::onednn) require_onednn("set_conv_backend");
  conv_choice().store(b, std::memory_order_relaxed);
}
ConvBackend conv_backend() { return conv_choice().load(std::memory_order_relaxed); }

const char* to_string(GemmBackend b) { return b == GemmBackend::onednn ? "onednn" : "blas"; }
const char* to_string(ConvBackend b) { return b == ConvBackend::onednn ? "onednn" : "im2col"; }

}  // namespace linum
