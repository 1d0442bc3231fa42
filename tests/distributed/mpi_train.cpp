// A data-parallel training run whose final parameters run_multihost.py compares byte for byte:
// an MLP trained with adam on step t's global batch of 24 rows (the same on every process, from
// random::key(100 + t)). Flags:
//   --steps N          train until step N
//   --distributed      under mpirun: each process takes its rows of the batch (shard_range) and
//                      the gradients are psum'd over "devices";
//   --accumulate A     one process, the batch as A micro-batches of the rows A processes would
//                      take, their gradients summed in order (gradient accumulation): with A = 2
//                      the same additions as a 2-process psum, so the same bits; A = 1 is the
//                      whole batch in one pass (the same numbers up to float rounding);
//   --save-at K --checkpoint PATH   after step K, save params, optimizer state and step;
//   --die-at J         the last process SIGKILLs itself before step J (a host's process dies);
//   --resume PATH      start from a checkpoint instead of step 0;
//   --out PATH         the final parameters (Flax msgpack, written by process 0).
// Prints "replicated" when the parameters are bit-identical on every process at the end.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

#include <linum/autodiff/random/random.hpp>
#include <linum/distributed/distributed.hpp>
#include <linum/linum.hpp>
#include <linum/nn/nn.hpp>
#include <linum/nn/serialization.hpp>
#include <linum/optim/optim.hpp>

using namespace linum;
namespace dist = linum::distributed;
namespace nn = linum::nn;

namespace {

constexpr std::int64_t kGlobal = 24;  // rows per step: divisible by 1, 2 and 3 processes

struct Mlp : nn::Module<Mlp> {
  Array call(const Array& x) { return nn::log_softmax(nn::Dense(3)(nn::tanh(nn::Dense(16)(x)))); }
};

struct Batch {
  Array x, labels;
};

Batch global_batch(int t) {
  Array x = random::normal(random::key(100 + t), {kGlobal, 5});
  Array y = argmax(slice(x, {{}, {0, 3}}) + 0.3 * slice(x, {{}, {2, 5}}), 1);
  return {x, one_hot(y, 3)};
}

Batch rows(const Batch& b, std::int64_t begin, std::int64_t end) {
  return {slice(b.x, {{begin, end}}), slice(b.labels, {{begin, end}})};
}

// The gradient of these rows' share of the global mean loss.
Tree grads_of(const Tree& params, const Batch& b) {
  return grad([&](const Tree& p) {
    return -sum(b.labels * Mlp().apply(Tree{{"params", p}}, b.x)) / static_cast<double>(kGlobal);
  })(params);
}

Tree read_checkpoint(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return serialization::msgpack_restore(std::string(std::istreambuf_iterator<char>(f), {}));
}

std::string flag(int argc, char** argv, const std::string& name, const std::string& fallback) {
  for (int i = 1; i + 1 < argc; ++i)
    if (argv[i] == name) return argv[i + 1];
  return fallback;
}

bool has(int argc, char** argv, const std::string& name) {
  for (int i = 1; i < argc; ++i)
    if (argv[i] == name) return true;
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  const bool distributed = has(argc, argv, "--distributed");
  const int steps = std::atoi(flag(argc, argv, "--steps", "8").c_str());
  const int accumulate = std::atoi(flag(argc, argv, "--accumulate", "1").c_str());
  const int save_at = std::atoi(flag(argc, argv, "--save-at", "-1").c_str());
  const int die_at = std::atoi(flag(argc, argv, "--die-at", "-1").c_str());
  const std::string checkpoint = flag(argc, argv, "--checkpoint", "");
  const std::string resume = flag(argc, argv, "--resume", "");
  const std::string out = flag(argc, argv, "--out", "");
  if (accumulate < 1 || kGlobal % accumulate != 0 || (save_at >= 0 && checkpoint.empty())) {
    std::fprintf(stderr, "mpi_train: --accumulate must divide %lld; --save-at needs --checkpoint\n",
                 static_cast<long long>(kGlobal));
    return 2;
  }
  set_num_threads(1);  // one BLAS thread: a process's sums in one fixed order
  if (distributed) dist::initialize();
  const int rank = dist::process_index(), procs = dist::process_count();

  auto tx = optim::adam(1e-2);
  Tree params = Mlp().init(random::key(0), slice(global_batch(0).x, {{0, 2}}))["params"];
  if (distributed) params = dist::broadcast_one_to_all(params);
  auto opt_state = tx.init(params);
  int start = 0;
  if (!resume.empty()) {
    // Every process gets process 0's checkpoint: no shared file system needed.
    const Tree saved = distributed ? dist::restore_checkpoint(resume) : read_checkpoint(resume);
    params = serialization::from_state_dict(params, saved["params"]);
    opt_state = serialization::from_state_dict(opt_state, saved["opt_state"]);
    start = saved["step"].leaf().item<int>();
    if (rank == 0) std::printf("resumed from %s at step %d\n", resume.c_str(), start);
  }

  for (int t = start; t < steps; ++t) {
    if (t == die_at && rank == procs - 1) {
      std::printf("process %d: dying before step %d\n", rank, t);
      std::fflush(stdout);
      std::raise(SIGKILL);
    }
    const Batch b = global_batch(t);
    Tree grads;
    if (distributed) {
      const dist::Shard s = dist::shard_range(kGlobal);
      grads = dist::pmap([&](const Tree& p) {
        return psum(grads_of(p, rows(b, s.begin, s.end)), "devices");
      })(params);
    } else {
      const std::int64_t part = kGlobal / accumulate;
      for (int a = 0; a < accumulate; ++a) {
        Tree g = grads_of(params, rows(b, a * part, (a + 1) * part));
        grads = a == 0 ? g
                       : detail::tree_apply(
                             grads, [](const Array& x, const Array& y) { return x + y; }, g);
      }
    }
    auto [updates, new_state] = tx.update(grads, opt_state, params);
    opt_state = new_state;
    params = optim::apply_updates(params, updates);
    if (t + 1 == save_at) {
      const Tree state{{"params", params},
                       {"opt_state", serialization::to_state_dict(opt_state)},
                       {"step", Array(t + 1)}};
      if (distributed)
        dist::save_checkpoint(checkpoint, state);
      else
        std::ofstream(checkpoint, std::ios::binary) << serialization::msgpack_serialize(state);
      if (rank == 0) std::printf("checkpoint after step %d: %s\n", t + 1, checkpoint.c_str());
      std::fflush(stdout);
    }
  }
  if (distributed && dist::is_replicated(params) && rank == 0)
    std::printf("replicated on %d processes\n", procs);
  if (!out.empty()) {
    if (distributed)
      dist::save_checkpoint(out, Tree{{"params", params}});
    else
      std::ofstream(out, std::ios::binary)
          << serialization::msgpack_serialize(Tree{{"params", params}});
  }
  if (rank == 0) std::printf("trained to step %d on %d process(es)\n", steps, procs);
  if (distributed) dist::finalize();
  return 0;
}
