// Private to distributed/: the communication layer under the process axis and the multi-host
// utilities. runtime_mpi.cpp implements it over MPI (with the collective timeout and MPI errors
// turned into DistributedError); runtime_none.cpp, built without MPI, refuses to initialise.
#pragma once

#include <cstdint>

#include <linum/autodiff/dtype.hpp>

namespace linum::distributed::detail {

enum class Reduce { sum, max, min, logical_and, logical_or };

// Throws DistributedError naming `what` unless initialize() ran (and finalize() did not).
void require_initialized(const char* what);
// Elementwise reduction of `count` elements of every process into `out` (in may equal out).
void allreduce(const void* in, void* out, std::int64_t count, DType dtype, Reduce op,
               const char* what);
// Every process's `bytes` bytes of `in`, concatenated in process order into `out`.
void allgather(const void* in, void* out, std::int64_t bytes, const char* what);
// Process `root`'s `bytes` bytes of `buf` into every process's `buf`.
void broadcast(void* buf, std::int64_t bytes, int root, const char* what);
void barrier(const char* what);

}  // namespace linum::distributed::detail
