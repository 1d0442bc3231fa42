// The robustness suite's main: caps the address space so that a huge shape that slips past the
// overflow checks fails its allocation instead of swapping the machine (not under ASan, whose
// shadow memory reserves terabytes of virtual space).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <sys/resource.h>

#if defined(__SANITIZE_ADDRESS__)
#define LINUM_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LINUM_UNDER_ASAN 1
#endif
#endif

#ifdef LINUM_UNDER_ASAN
// A refused allocation is a null pointer, as without ASan (instead of an abort): the MemoryError
// cases of test_overflow.cpp and test_reduction.cpp hold under the sanitizers too.
extern "C" const char* __asan_default_options() { return "allocator_may_return_null=1"; }
#endif

int main(int argc, char** argv) {
#ifndef LINUM_UNDER_ASAN
  const rlim_t limit = rlim_t{8} << 30;  // 8 GiB: far above what the suite needs
  rlimit rl{limit, limit};
  setrlimit(RLIMIT_AS, &rl);
#endif
  doctest::Context ctx(argc, argv);
  return ctx.run();
}
