// The doctest main of the suites run under mpirun. Every process runs every test case (they call
// the same collectives in the same order); only process 0 prints doctest's summary (the others
// print failures only), so a run's test cases are counted once. A failure on any process fails
// every process's exit code.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>

#include <linum/distributed/distributed.hpp>
#include <linum/linum.hpp>

int main(int argc, char** argv) {
  namespace dist = linum::distributed;
  // A process that falls out of step fails its test after 30 s instead of hanging the suite.
  dist::initialize({.collective_timeout = 30});
  doctest::Context context(argc, argv);
  // mpirun hands the processes a terminal: colour codes would hide the summary from scripts/test.
  context.setOption("no-colors", true);
  if (dist::process_index() != 0) context.setOption("minimal", true);
  const int rc = context.run();
  if (context.shouldExit()) {
    dist::finalize();
    return rc;
  }
  const linum::Array failed(static_cast<float>(rc != 0));
  const float any =
      dist::pmap([](const linum::Array& f) { return linum::pmax(f, "devices"); })(failed)
          .item<float>();
  if (dist::process_index() == 0)
    std::printf("%d processes: %s\n", dist::process_count(),
                any > 0 ? "a test failed on some process" : "every process passed");
  dist::finalize();
  return any > 0 ? 1 : 0;
}
