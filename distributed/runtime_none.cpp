// The communication layer of a build without MPI (meson found no 'mpi' dependency, or
// -Dmpi=disabled): initialize() says so and how to fix it; everything else reports one process
// that was never initialised.
#include "runtime.hpp"

#include <cstdio>
#include <cstdlib>

#include <linum/distributed/distributed.hpp>

namespace linum::distributed {
namespace {

double g_timeout = 300;

[[noreturn]] void no_mpi(const char* what) {
  throw DistributedError(std::string("linum::distributed::") + what +
                         ": linum was built without MPI (meson found no 'mpi' dependency, or "
                         "-Dmpi=disabled). Install an MPI (Debian: apt-get install "
                         "libopenmpi-dev openmpi-bin), then reconfigure and rebuild linum.");
}

}  // namespace

void initialize(const InitializeOptions&) { no_mpi("initialize"); }
void finalize() { no_mpi("finalize"); }
bool is_initialized() { return false; }
int process_index() { return 0; }
int process_count() { return 1; }
double collective_timeout() { return g_timeout; }

void set_collective_timeout(double seconds) {
  if (!(seconds >= 0))
    throw DistributedError(
        "linum::distributed::set_collective_timeout: seconds must be >= 0 "
        "(0: wait forever)");
  g_timeout = seconds;
}

void abort(const std::string& message, int exit_code) {
  std::fprintf(stderr, "linum.distributed: %s\n", message.c_str());
  std::fflush(stderr);
  std::_Exit(exit_code);
}

void sync_global_devices(const std::string&) { no_mpi("sync_global_devices"); }

namespace detail {

void require_initialized(const char* what) { no_mpi(what); }
void allreduce(const void*, void*, std::int64_t, DType, Reduce, const char* what) { no_mpi(what); }
void allgather(const void*, void*, std::int64_t, const char* what) { no_mpi(what); }
void broadcast(void*, std::int64_t, int, const char* what) { no_mpi(what); }
void barrier(const char* what) { no_mpi(what); }

}  // namespace detail
}  // namespace linum::distributed
