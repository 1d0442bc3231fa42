// Multi-host utilities (jax.experimental.multihost_utils): broadcast of process 0's arrays, the
// bitwise replication check, the sharded loader's row ranges, and checkpoints that only process
// 0 writes. Every check that can fail is agreed on by all processes before anyone throws, so a
// mismatch on one process is an error everywhere instead of a hang in the next collective.
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include <linum/distributed/distributed.hpp>
#include <linum/nn/serialization.hpp>

#include "runtime.hpp"

namespace linum::distributed {
namespace detail {
namespace {

// "float32[3,4];int32[]": what must agree across processes before bytes are exchanged.
std::string signature(const Arrays& leaves, const char* what) {
  std::ostringstream os;
  for (const Array& a : leaves) {
    if (!a.valid())
      throw ValueError(std::string("linum::distributed::") + what + ": an empty Array leaf");
    if (a.is_tracer())
      throw TypeError(std::string("linum::distributed::") + what +
                      ": got a traced value; call it outside grad, vmap and jit");
    os << dtype_name(a.dtype()) << shape_str(a.shape()) << ';';
  }
  return os.str();
}

// Whether every process passes true.
bool all_agree(bool mine, const char* what) {
  std::uint8_t v = mine ? 1 : 0, all = 0;
  allreduce(&v, &all, 1, DType::bool_, Reduce::logical_and, what);
  return all != 0;
}

// Process 0's string on every process.
std::string broadcast_string(std::string s, const char* what) {
  std::int64_t n = static_cast<std::int64_t>(s.size());
  broadcast(&n, sizeof n, 0, what);
  s.resize(static_cast<std::size_t>(n));
  broadcast(s.data(), n, 0, what);
  return s;
}

std::vector<char> pack(const Arrays& leaves) {
  std::vector<char> bytes;
  for (const Array& a : leaves) {
    const Array c = a.concrete();
    const auto* p = static_cast<const char*>(
        static_cast<const linum::detail::ConcreteImpl*>(c.impl().get())->data);
    bytes.insert(bytes.end(), p, p + c.size() * static_cast<std::int64_t>(itemsize(c.dtype())));
  }
  return bytes;
}

}  // namespace

Arrays broadcast_arrays(const Arrays& leaves, const char* what) {
  require_initialized(what);
  const std::string sig = signature(leaves, what);
  const std::string root = broadcast_string(sig, what);
  if (!all_agree(sig == root, what))
    throw ValueError(std::string("linum::distributed::") + what +
                     ": the processes pass different structures, shapes or dtypes (" +
                     (process_index() == 0
                          ? "another process differs from "
                          : "process " + std::to_string(process_index()) + ": " + sig + " ") +
                     "process 0: " + root + ")");
  std::vector<char> bytes = pack(leaves);
  broadcast(bytes.data(), static_cast<std::int64_t>(bytes.size()), 0, what);
  Arrays out;
  out.reserve(leaves.size());
  std::size_t off = 0;
  for (const Array& a : leaves) {
    out.push_back(linum::detail::from_buffer(bytes.data() + off, a.shape(), a.dtype(), a.dtype()));
    out.back().impl()->weak_type = a.weak_type();
    off += static_cast<std::size_t>(a.size()) * itemsize(a.dtype());
  }
  return out;
}

bool arrays_replicated(const Arrays& leaves, const char* what) {
  require_initialized(what);
  const std::string sig = signature(leaves, what);
  if (!all_agree(sig == broadcast_string(sig, what), what)) return false;
  const std::vector<char> mine = pack(leaves);
  std::vector<char> root = mine;
  broadcast(root.data(), static_cast<std::int64_t>(root.size()), 0, what);
  return all_agree(root == mine, what);
}

}  // namespace detail

Shard shard_range(std::int64_t n) {
  if (n < 0)
    throw ValueError("linum::distributed::shard_range: n must be >= 0, got " + std::to_string(n));
  const std::int64_t p = process_count(), r = process_index();
  const std::int64_t q = n / p, extra = n % p;
  const std::int64_t begin = r * q + std::min(r, extra);
  return {begin, begin + q + (r < extra ? 1 : 0)};
}

bool save_checkpoint(const std::string& path, const Tree& tree) {
  const char* what = "save_checkpoint";
  detail::require_initialized(what);
  const bool writer = process_index() == 0;
  std::string error;
  if (writer) {
    try {
      const std::string bytes = serialization::msgpack_serialize(tree);
      const std::string tmp = path + ".tmp";
      {
        std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
        f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
        f.close();
        if (!f) throw ValueError("cannot write " + tmp);
      }
      std::error_code ec;
      std::filesystem::rename(tmp, path, ec);
      if (ec) throw ValueError("cannot rename " + tmp + " to " + path + ": " + ec.message());
    } catch (const std::exception& e) {
      error = e.what();
      if (error.empty()) error = "unknown error";
    }
  }
  // Process 0's outcome, so that every process returns or throws together.
  error = detail::broadcast_string(error, what);
  if (!error.empty())
    throw DistributedError("linum::distributed::save_checkpoint: process 0 failed to write " +
                           path + ": " + error);
  return writer;
}

Tree restore_checkpoint(const std::string& path) {
  const char* what = "restore_checkpoint";
  detail::require_initialized(what);
  std::string bytes, error;
  if (process_index() == 0) {
    std::ifstream f(path, std::ios::binary);
    if (!f)
      error = "cannot open " + path;
    else
      bytes.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
  }
  error = detail::broadcast_string(error, what);
  if (!error.empty())
    throw DistributedError("linum::distributed::restore_checkpoint: process 0: " + error);
  return serialization::msgpack_restore(detail::broadcast_string(std::move(bytes), what));
}

}  // namespace linum::distributed
