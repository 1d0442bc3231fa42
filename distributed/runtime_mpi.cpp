// The communication layer over MPI. Every collective runs on a duplicate of MPI_COMM_WORLD with
// MPI_ERRORS_RETURN, so a failed call becomes a DistributedError naming the operation. MPI has no
// timed collective: a watchdog thread enforces the collective timeout (watchdog_mpi.hpp).
#include "runtime.hpp"

// MPI's C interface only (watchdog_mpi.hpp includes mpi.h without its C++ bindings, which warn
// under -Wextra).
#include "watchdog_mpi.hpp"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include <linum/distributed/distributed.hpp>

namespace linum::distributed {
namespace {

struct State {
  bool initialized = false;
  bool finalized = false;
  bool we_initialized_mpi = false;
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Comm watchdog_comm = MPI_COMM_NULL;  // the watchdogs' questions and answers
  int rank = 0, size = 1;
  std::terminate_handler previous = nullptr;
  // Its destructor stops the thread of a program that returns without finalize().
  detail::Watchdog watchdog;
};

State& state() {
  static State s;
  return s;
}

std::string where() {
  const State& s = state();
  return "process " + std::to_string(s.rank) + " of " + std::to_string(s.size);
}

[[noreturn]] void fail(int rc, const char* what) {
  char msg[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS) len = 0;
  throw DistributedError(std::string("linum.distributed: ") + what + " failed on " + where() +
                         ": " + (len ? std::string(msg, len) : "MPI error " + std::to_string(rc)));
}

void check(int rc, const char* what) {
  if (rc != MPI_SUCCESS) fail(rc, what);
}

// Marks a collective as running for the watchdog while alive.
class Watch {
 public:
  explicit Watch(const char* what) { state().watchdog.enter(what); }
  ~Watch() { state().watchdog.leave(); }
  Watch(const Watch&) = delete;
  Watch& operator=(const Watch&) = delete;
};

MPI_Datatype mpi_type(DType d, const char* what) {
  switch (d) {
    case DType::float32: return MPI_FLOAT;
    case DType::float64: return MPI_DOUBLE;
    case DType::int32: return MPI_INT32_T;
    case DType::uint32: return MPI_UINT32_T;
    case DType::bool_: return MPI_C_BOOL;
    case DType::complex64:
    case DType::complex128:
    case DType::bfloat16:
    case DType::float16:
      throw DistributedError(std::string("linum.distributed: ") + what + ": " +
                             std::string(dtype_name(d)) + " arrays are not supported");
  }
  throw DistributedError(std::string("linum.distributed: ") + what + ": unknown dtype");
}

MPI_Op mpi_op(detail::Reduce op) {
  switch (op) {
    case detail::Reduce::sum: return MPI_SUM;
    case detail::Reduce::max: return MPI_MAX;
    case detail::Reduce::min: return MPI_MIN;
    case detail::Reduce::logical_and: return MPI_LAND;
    case detail::Reduce::logical_or: return MPI_LOR;
  }
  return MPI_SUM;
}

// The state a collective needs, or the error that says why it cannot run.
State& enter(const char* what) {
  detail::require_initialized(what);
  return state();
}

// MPI counts are ints: large buffers go in pieces.
constexpr std::int64_t kChunk = std::int64_t(1) << 28;

void on_terminate() {
  const State& s = state();
  std::string what = "std::terminate";
  if (std::exception_ptr e = std::current_exception()) {
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& x) {
      what = std::string("an uncaught exception: ") + x.what();
    } catch (...) {
      what = "an uncaught exception of unknown type";
    }
  }
  std::fprintf(stderr,
               "linum.distributed: %s ended with %s\nlinum.distributed: aborting every process "
               "of the job\n",
               where().c_str(), what.c_str());
  std::fflush(stderr);
  if (s.initialized) MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();
}

double env_timeout(double fallback) {
  const char* v = std::getenv("LINUM_COLLECTIVE_TIMEOUT");
  if (!v || !*v) return fallback;
  char* end = nullptr;
  const double t = std::strtod(v, &end);
  if (*end != '\0' || !(t >= 0))
    throw DistributedError(
        std::string("linum::distributed::initialize: LINUM_COLLECTIVE_TIMEOUT=") + v +
        " is not a number of seconds >= 0");
  return t;
}

}  // namespace

void initialize(const InitializeOptions& options) {
  State& s = state();
  if (s.initialized)
    throw DistributedError("linum::distributed::initialize: already initialised (" + where() +
                           "); call it once per process, and finalize() at the end");
  if (s.finalized)
    throw DistributedError(
        "linum::distributed::initialize: MPI was finalised in this process "
        "and cannot be initialised again");
  if (!(options.collective_timeout >= 0))
    throw DistributedError(
        "linum::distributed::initialize: collective_timeout must be >= 0 "
        "seconds (0: wait forever)");
  const double timeout = env_timeout(options.collective_timeout);
  int already = 0;
  MPI_Initialized(&already);
  if (!already) {
    // The watchdog thread asks the other processes' watchdogs while this thread waits in a
    // collective: MPI calls from two threads at once.
    int provided = 0;
    check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided), "MPI_Init_thread");
    s.we_initialized_mpi = true;
  }
  int level = MPI_THREAD_SINGLE;
  check(MPI_Query_thread(&level), "MPI_Query_thread");
  check(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  check(MPI_Comm_dup(MPI_COMM_WORLD, &s.comm), "MPI_Comm_dup");
  check(MPI_Comm_set_errhandler(s.comm, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  check(MPI_Comm_rank(s.comm, &s.rank), "MPI_Comm_rank");
  check(MPI_Comm_size(s.comm, &s.size), "MPI_Comm_size");
  if (level == MPI_THREAD_MULTIPLE && s.size > 1) {
    check(MPI_Comm_dup(MPI_COMM_WORLD, &s.watchdog_comm), "MPI_Comm_dup");
    check(MPI_Comm_set_errhandler(s.watchdog_comm, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  }
  s.watchdog.start(s.watchdog_comm, s.rank, s.size, timeout);
  s.initialized = true;
  s.previous = std::set_terminate(on_terminate);
}

void finalize() {
  State& s = state();
  if (!s.initialized)
    throw DistributedError(
        "linum::distributed::finalize: not initialised (call initialize() "
        "first, and finalize() once)");
  s.watchdog.stop_peers();
  {
    // MPI_Finalize synchronises with the other processes: the watchdog guards it too.
    Watch watch("finalize");
    check(MPI_Comm_free(&s.comm), "MPI_Comm_free");
    if (s.watchdog_comm != MPI_COMM_NULL) check(MPI_Comm_free(&s.watchdog_comm), "MPI_Comm_free");
    if (s.we_initialized_mpi) check(MPI_Finalize(), "MPI_Finalize");
  }
  s.watchdog.stop();
  s.initialized = false;
  s.finalized = true;
  std::set_terminate(s.previous);
  s.rank = 0;
  s.size = 1;
}

bool is_initialized() { return state().initialized; }
int process_index() { return state().initialized ? state().rank : 0; }
int process_count() { return state().initialized ? state().size : 1; }
double collective_timeout() { return state().watchdog.timeout(); }

void set_collective_timeout(double seconds) {
  if (!(seconds >= 0))
    throw DistributedError(
        "linum::distributed::set_collective_timeout: seconds must be >= 0 "
        "(0: wait forever)");
  state().watchdog.set_timeout(seconds);
}

void abort(const std::string& message, int exit_code) {
  std::fprintf(stderr, "linum.distributed: %s: %s\n", where().c_str(), message.c_str());
  std::fflush(stderr);
  int init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  if (init && !fin) MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::_Exit(exit_code);
}

void sync_global_devices(const std::string& name) {
  const std::string what = "sync_global_devices(" + name + ")";
  detail::barrier(what.c_str());
}

namespace detail {

void require_initialized(const char* what) {
  if (!state().initialized)
    throw DistributedError(std::string("linum.distributed: ") + what +
                           ": linum::distributed::initialize() has not been called in this "
                           "process (or finalize() already ran)");
}

void allreduce(const void* in, void* out, std::int64_t count, DType dtype, Reduce op,
               const char* what) {
  State& s = enter(what);
  const MPI_Datatype t = mpi_type(dtype, what);
  const std::size_t isz = itemsize(dtype);
  Watch watch(what);
  for (std::int64_t off = 0; off < count; off += kChunk) {
    const int n = static_cast<int>(std::min(kChunk, count - off));
    const void* src = in == out ? MPI_IN_PLACE : static_cast<const char*>(in) + off * isz;
    check(MPI_Allreduce(src, static_cast<char*>(out) + off * isz, n, t, mpi_op(op), s.comm), what);
  }
}

void allgather(const void* in, void* out, std::int64_t bytes, const char* what) {
  State& s = enter(what);
  if (bytes > INT_MAX)
    throw DistributedError(std::string("linum.distributed: ") + what + ": " +
                           std::to_string(bytes) + " bytes per process exceed MPI's int count");
  const int n = static_cast<int>(bytes);
  Watch watch(what);
  check(MPI_Allgather(in, n, MPI_BYTE, out, n, MPI_BYTE, s.comm), what);
}

void broadcast(void* buf, std::int64_t bytes, int root, const char* what) {
  State& s = enter(what);
  Watch watch(what);
  for (std::int64_t off = 0; off < bytes; off += kChunk) {
    const int n = static_cast<int>(std::min(kChunk, bytes - off));
    check(MPI_Bcast(static_cast<char*>(buf) + off, n, MPI_BYTE, root, s.comm), what);
  }
}

void barrier(const char* what) {
  State& s = enter(what);
  Watch watch(what);
  check(MPI_Barrier(s.comm), what);
}

}  // namespace detail
}  // namespace linum::distributed
