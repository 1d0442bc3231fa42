// linum::distributed: data parallelism across processes and machines over MPI, as
// jax.distributed + pmap: initialize() / finalize(), process_index() / process_count(), pmap
// (a process-level named axis whose psum/pmean/pmax/pmin/all_gather/axis_index are MPI
// collectives, composing with vmap axes, grad and jit), and the multi-host utilities a
// data-parallel training loop needs (broadcast_one_to_all, is_replicated, shard_range, a
// checkpoint written by process 0). Launch with `mpirun -n N program`. This header holds no MPI.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include <linum/autodiff/array.hpp>
#include <linum/autodiff/collectives.hpp>
#include <linum/autodiff/tree_bridge.hpp>
#include <linum/error.hpp>

namespace linum::distributed {

// Misuse (not initialised, initialised twice, built without MPI) and failed MPI calls.
struct DistributedError : Error {
  using Error::Error;
};

struct InitializeOptions {
  // Seconds a collective may wait for the other processes; past that the process prints which
  // collective timed out and exits, and mpirun ends the job. 0 waits forever. The environment
  // variable LINUM_COLLECTIVE_TIMEOUT (seconds) overrides it.
  double collective_timeout = 300;
};

// jax.distributed.initialize: joins the job mpirun started (one process without mpirun). Errors
// are returned, not fatal (MPI_ERRORS_RETURN), and become DistributedError; an uncaught exception
// on any process aborts the whole job with its message instead of leaving the others waiting.
void initialize(const InitializeOptions& options = {});
// jax.distributed.shutdown. Every process must call it before exiting (MPI's rule: mpirun
// reports a process that exits without it as an abnormal termination).
void finalize();
bool is_initialized();
// jax.process_index / jax.process_count (0 and 1 when not initialised, as JAX on one host).
int process_index();
int process_count();
// The collective timeout in force (seconds, 0: none) and a way to change it.
double collective_timeout();
void set_collective_timeout(double seconds);
// Ends every process of the job with `message` on stderr (MPI_Abort).
[[noreturn]] void abort(const std::string& message, int exit_code = 1);
// multihost_utils.sync_global_devices: returns once every process has reached it.
void sync_global_devices(const std::string& name);

struct PmapOptions {
  std::string axis_name = "devices";
};

namespace detail {
// The process-level axis `name`: one member per process of the job (initialize() first).
std::shared_ptr<const linum::detail::AxisProvider> process_axis(const std::string& name);
}  // namespace detail

// pmap(f, {.axis_name}): f runs on this process's values with `axis_name` bound to the processes
// of the job, so psum(x, "devices") sums x over every process (JAX's pmap with one device per
// process; each process passes its own shard, there is no leading device axis). Collectives
// over the name are primitives: grad transposes psum to psum, vmap inside composes
// (psum(x, {"devices", "batch"})), jit records them and replays the MPI call.
template <class F>
auto pmap(F f, PmapOptions options = {}) {
  return [f = std::move(f), options = std::move(options)](auto&&... args) {
    linum::detail::AxisProviderScope scope(options.axis_name,
                                           detail::process_axis(options.axis_name));
    return f(std::forward<decltype(args)>(args)...);
  };
}

namespace detail {
Arrays broadcast_arrays(const Arrays& leaves, const char* what);
bool arrays_replicated(const Arrays& leaves, const char* what);
}  // namespace detail

// multihost_utils.broadcast_one_to_all: process 0's values of `tree` on every process (initial
// parameters). Every process must pass the same structure, shapes and dtypes (else ValueError on
// all of them).
template <class T>
T broadcast_one_to_all(const T& tree) {
  return linum::detail::tree_rebuild(
      tree, detail::broadcast_arrays(linum::detail::tree_arrays(tree), "broadcast_one_to_all"));
}

// Whether every process holds bit for bit the same values of `tree` (same answer on all).
template <class T>
bool is_replicated(const T& tree) {
  return detail::arrays_replicated(linum::detail::tree_arrays(tree), "is_replicated");
}

// This process's contiguous part [begin, end) of n items: sizes differ by at most one, the first
// n % process_count() processes taking one more (a sharded loader's rows of a global batch).
struct Shard {
  std::int64_t begin = 0, end = 0;
  std::int64_t size() const { return end - begin; }
};
Shard shard_range(std::int64_t n);

// Flax msgpack checkpoint of `tree` written by process 0 only (atomically: a temporary file
// renamed); returns on every process once it is written, true on the one that wrote it. A write
// error is thrown on every process.
bool save_checkpoint(const std::string& path, const Tree& tree);
// The checkpoint read by process 0 and broadcast: every process gets the same tree, even with no
// shared file system.
Tree restore_checkpoint(const std::string& path);

}  // namespace linum::distributed
