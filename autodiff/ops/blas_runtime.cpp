// The BLAS at run time: its threads, and its kernel set. OpenBLAS's DYNAMIC_ARCH builds (Debian's)
// pick kernels by CPU model at load time, and a model newer than the library falls back to old
// ones: Debian 12's OpenBLAS 0.3.21 runs Prescott (SSE3) kernels on Sapphire/Emerald Rapids,
// 4.6× slower sgemm than its Cooperlake kernels. linum checks the pick against the CPU's vector
// ISA once, before its first GEMM, and moves OpenBLAS to the widest kernels the CPU runs.
#include <cblas.h>

#include <cstdlib>
#include <mutex>
#include <string>

#include <linum/autodiff/ops/blas_runtime.hpp>
#include <linum/error.hpp>

// OpenBLAS's DYNAMIC_ARCH entry points (exported, not in cblas.h): quit forgets the kernel table,
// init picks it again, from OPENBLAS_CORETYPE when that is set. Weak, so that another BLAS links.
extern "C" {
void gotoblas_dynamic_init(void) __attribute__((weak));
void gotoblas_dynamic_quit(void) __attribute__((weak));
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

std::string current_core() {
  const char* name = openblas_get_corename();
  return name ? name : "";
}

BlasInfo& info() {
  static BlasInfo i;
  return i;
}

void choose_core() {
  BlasInfo& i = info();
  const char* config = openblas_get_config();
  i.config = config ? config : "";
  i.cpu_isa = running_cpu_isa();
  i.core = current_core();
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

std::string faster_blas_core(const std::string& core, BlasIsa cpu) {
  const BlasIsa have = blas_core_isa(core);
  // Cooperlake's float kernels are SkylakeX's: AVX-512 kernels are enough on a bf16 CPU.
  const BlasIsa need = cpu == BlasIsa::avx512_bf16 ? BlasIsa::avx512 : cpu;
  if (have == BlasIsa::unknown || have >= need) return "";
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

void set_num_threads(int n) {
  if (n < 1)
    throw ValueError("set_num_threads: expected at least 1 thread, got " + std::to_string(n));
  openblas_set_num_threads(n);
}

int num_threads() { return openblas_get_num_threads(); }

}  // namespace linum
