// Run by run_fault.py (one host) and run_multihost.py (several) under mpirun; after a collective
// that works, process 1 fails in one of three ways and the job must end quickly with a clear
// message:
//   hang:  process 1 never joins the next psum; process 0's watchdog gives up after the 2 s
//          collective timeout, asks process 1's watchdog (which says it is in no collective),
//          names it and exits, and mpirun ends the job;
//   throw: process 1 throws before the psum; linum's terminate handler prints the error and
//          aborts the job while process 0 waits (timeout 120 s, so the abort is what stops it);
//   kill:  process 1 dies by SIGKILL (no handler runs); mpirun ends the job.
// A fourth mode fails nothing itself: loop: every process says "looping" and psums a 1 MiB array
// until the job ends, for run_multihost.py to take a host's network link down mid-allreduce
// (LINUM_COLLECTIVE_TIMEOUT, passed with mpirun -x, sets the timeout).
#include <chrono>
#include <csignal>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <thread>

#include <linum/distributed/distributed.hpp>
#include <linum/linum.hpp>

int main(int argc, char** argv) {
  namespace dist = linum::distributed;
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode != "hang" && mode != "throw" && mode != "kill" && mode != "loop") {
    std::fprintf(stderr, "usage: mpi_fault hang|throw|kill|loop\n");
    return 2;
  }
  dist::initialize({.collective_timeout = mode == "hang" ? 2.0 : 120.0});
  auto total = dist::pmap([](const linum::Array& x) { return linum::psum(x, "devices"); });
  const float warm = total(linum::Array(1.0f)).item<float>();
  std::printf("process %d: warm-up psum %g\n", dist::process_index(), warm);
  std::fflush(stdout);
  if (mode == "loop") {
    const linum::Array big = linum::ones({1 << 18});
    std::printf("process %d: looping (collective timeout %g s)\n", dist::process_index(),
                dist::collective_timeout());
    std::fflush(stdout);
    for (;;) total(big);
  }
  if (dist::process_index() == 1) {
    if (mode == "hang") std::this_thread::sleep_for(std::chrono::seconds(60));
    if (mode == "throw") throw std::runtime_error("simulated failure on process 1");
    if (mode == "kill") std::raise(SIGKILL);
  }
  total(linum::Array(2.0f));
  std::printf("process %d: the second psum completed (it must not)\n", dist::process_index());
  dist::finalize();
  return 0;
}
