// Run by run_fault.py under mpirun with 2 processes; after a collective that works, process 1
// fails in one of three ways and the job must end quickly with a clear message:
//   hang:  process 1 never joins the next psum; process 0's watchdog gives up after the 2 s
//          collective timeout, says so and exits, and mpirun ends the job;
//   throw: process 1 throws before the psum; linum's terminate handler prints the error and
//          aborts the job while process 0 waits (timeout 120 s, so the abort is what stops it);
//   kill:  process 1 dies by SIGKILL (no handler runs); mpirun ends the job.
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
  if (mode != "hang" && mode != "throw" && mode != "kill") {
    std::fprintf(stderr, "usage: mpi_fault hang|throw|kill\n");
    return 2;
  }
  dist::initialize({.collective_timeout = mode == "hang" ? 2.0 : 120.0});
  auto total = dist::pmap([](const linum::Array& x) { return linum::psum(x, "devices"); });
  const float warm = total(linum::Array(1.0f)).item<float>();
  std::printf("process %d: warm-up psum %g\n", dist::process_index(), warm);
  std::fflush(stdout);
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
