// Seed 000's CNN trained on Fashion-MNIST (Debian's dataset-fashion-mnist) with optim::adam:
// a progress line with loss and examples/s during each epoch, test accuracy after each.
// Flags: --epochs N  --batch-size N  --train-limit N (first N training images)  --threads N
//        --lr X  --data DIR  --distributed  --checkpoint PATH
// --distributed: data-parallel over the processes of `mpirun -n P` (linum::distributed). Every
// process shuffles the same order, takes its shard of each global batch, and the gradients are
// summed over the "devices" axis, so P processes take the steps one process takes on the whole
// batch; parameters are checked bit-identical after each epoch. --checkpoint: process 0 writes
// the final parameters (Flax msgpack).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include <linum/autodiff/random/random.hpp>
#include <linum/distributed/distributed.hpp>
#include <linum/linum.hpp>
#include <linum/nn/serialization.hpp>

#include "idx.hpp"
#include "seed_models.hpp"

using linum::Array;
using linum::Tree;
namespace nn = linum::nn;
namespace optim = linum::optim;
namespace dist = linum::distributed;

// Seed 000's CNN, trained as the guide defines it.
using seed_models::CNN;

struct Data {
  linum::examples::Idx images, labels;
  std::int64_t n = 0;
};

Data load(const std::string& dir, const std::string& prefix, std::int64_t limit) {
  Data d{linum::examples::read_idx(dir + "/" + prefix + "-images-idx3-ubyte.gz"),
         linum::examples::read_idx(dir + "/" + prefix + "-labels-idx1-ubyte.gz")};
  if (d.images.type != 0x08 || d.images.dims.size() != 3 || d.images.dims[1] != 28 ||
      d.images.dims[2] != 28 || d.labels.type != 0x08 || d.labels.dims.size() != 1 ||
      d.labels.dims[0] != d.images.dims[0])
    throw linum::ValueError("fashion_mnist: " + dir + "/" + prefix +
                            "-*: expected uint8 images [n, 28, 28] and uint8 labels [n]");
  d.n = limit > 0 ? std::min(limit, d.images.dims[0]) : d.images.dims[0];
  return d;
}

// The examples idx[first, last) as an NHWC float batch in [0, 1] and their labels.
std::pair<Array, std::vector<std::int32_t>> batch(const Data& d,
                                                  const std::vector<std::int64_t>& idx,
                                                  std::size_t first, std::size_t last) {
  const std::int64_t b = static_cast<std::int64_t>(last - first);
  std::vector<float> x(static_cast<std::size_t>(b) * 784);
  std::vector<std::int32_t> y(static_cast<std::size_t>(b));
  for (std::int64_t i = 0; i < b; ++i) {
    const std::int64_t e = idx[first + i];
    const std::uint8_t* px = d.images.bytes.data() + e * 784;
    for (int j = 0; j < 784; ++j) x[i * 784 + j] = px[j] / 255.0f;
    y[i] = d.labels.bytes[e];
  }
  return {linum::array(x, {b, 28, 28, 1}), y};
}

// Test accuracy; distributed, each process scores its shard and the counts are summed.
double accuracy(const Tree& variables, const Data& test, bool distributed) {
  std::vector<std::int64_t> all(test.n);
  std::iota(all.begin(), all.end(), 0);
  const dist::Shard part = distributed ? dist::shard_range(test.n) : dist::Shard{0, test.n};
  all = std::vector<std::int64_t>(all.begin() + part.begin, all.begin() + part.end);
  std::int64_t correct = 0;
  for (std::size_t s = 0; s < all.size(); s += 500) {
    const std::size_t e = std::min(all.size(), s + 500);
    auto [x, y] = batch(test, all, s, e);
    Array pred = linum::argmax(CNN().apply(variables, x), 1);
    const std::int32_t* p = pred.data<std::int32_t>();
    for (std::size_t i = 0; i < y.size(); ++i) correct += p[i] == y[i];
  }
  if (distributed)
    correct = dist::pmap([](const Array& c) { return linum::psum(c, "devices"); })(
                  linum::full({}, static_cast<double>(correct), linum::int32))
                  .item<std::int32_t>();
  return static_cast<double>(correct) / test.n;
}

int run(int argc, char** argv);

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    // Distributed, one process's error must end the others too (they would wait for it).
    if (dist::is_initialized()) dist::abort(std::string("fashion_mnist: ") + e.what());
    std::fprintf(stderr, "fashion_mnist: %s\n", e.what());
    return 1;
  }
}

int run(int argc, char** argv) {
  int epochs = 2, threads = 2;
  bool distributed = false;
  std::string checkpoint;
  std::int64_t batch_size = 128, train_limit = 0;
  double lr = 1e-3;
  std::string dir = "/usr/share/datasets/fashion-mnist";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--distributed") {
      distributed = true;
      continue;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "fashion_mnist: %s needs a value\n", a.c_str());
      return 2;
    }
    const char* v = argv[++i];
    if (a == "--epochs")
      epochs = std::atoi(v);
    else if (a == "--batch-size")
      batch_size = std::atoll(v);
    else if (a == "--train-limit")
      train_limit = std::atoll(v);
    else if (a == "--threads")
      threads = std::atoi(v);
    else if (a == "--lr")
      lr = std::atof(v);
    else if (a == "--data")
      dir = v;
    else if (a == "--checkpoint")
      checkpoint = v;
    else {
      std::fprintf(stderr,
                   "fashion_mnist: unknown flag %s (flags: --epochs --batch-size --train-limit "
                   "--threads --lr --data --distributed --checkpoint)\n",
                   a.c_str());
      return 2;
    }
  }
  if (epochs < 1 || batch_size < 1 || threads < 1 || train_limit < 0) {
    std::fprintf(stderr, "fashion_mnist: --epochs, --batch-size and --threads must be >= 1\n");
    return 2;
  }
  // BLAS is linum's only thread pool: one thread per core we were given.
  linum::set_num_threads(threads);
  if (distributed) dist::initialize();
  const bool lead = dist::process_index() == 0;  // the process that prints
  auto say = [&](const char* fmt, auto... args) {
    if (!lead) return;
    std::printf(fmt, args...);
    std::fflush(stdout);
  };

  const Data train = load(dir, "train", train_limit), test = load(dir, "t10k", 0);
  say("Fashion-MNIST: %lld train, %lld test; batch %lld, adam lr %g, %d threads, %d process%s\n",
      static_cast<long long>(train.n), static_cast<long long>(test.n),
      static_cast<long long>(batch_size), lr, threads, dist::process_count(),
      dist::process_count() == 1 ? "" : "es");

  Tree variables = CNN().init(linum::random::PRNGKey(0), linum::zeros({1, 28, 28, 1}));
  Tree params = variables["params"];
  // Every process starts from process 0's parameters.
  if (distributed) params = dist::broadcast_one_to_all(params);
  auto tx = optim::adam(lr);
  auto opt_state = tx.init(params);

  std::mt19937_64 rng(0);
  std::vector<std::int64_t> order(train.n);
  std::iota(order.begin(), order.end(), 0);
  const auto start = std::chrono::steady_clock::now();
  const std::size_t steps = (order.size() + batch_size - 1) / batch_size;
  for (int epoch = 1; epoch <= epochs; ++epoch) {
    std::shuffle(order.begin(), order.end(), rng);
    const auto t0 = std::chrono::steady_clock::now();
    double loss_sum = 0;
    std::int64_t seen = 0, window = 0;
    auto tw = t0;
    for (std::size_t step = 0; step < steps; ++step) {
      const std::size_t s = step * batch_size, e = std::min(order.size(), s + batch_size);
      // The sharded loader: this process's rows of the global batch [s, e).
      const dist::Shard part = distributed ? dist::shard_range(static_cast<std::int64_t>(e - s))
                                           : dist::Shard{0, static_cast<std::int64_t>(e - s)};
      auto [x, y] = batch(train, order, s + part.begin, s + part.end);
      Array labels = linum::one_hot(linum::array(y, {static_cast<std::int64_t>(y.size())}), 10);
      // The mean over the global batch: each process sums its rows over the global count, and
      // psum over "devices" adds the shards (pmean of the local means when shards are equal).
      const double global = static_cast<double>(e - s);
      auto loss_fn = [&](const Tree& p) {
        Array logp = CNN().apply(Tree{{"params", p}}, x);
        return -linum::sum(labels * logp) / global;
      };
      auto grads_fn = [&](const Tree& p) {
        auto [l, g] = linum::value_and_grad(loss_fn)(p);
        if (!distributed) return std::make_pair(l, g);
        return std::make_pair(linum::psum(l, "devices"), linum::psum(g, "devices"));
      };
      auto [loss, grads] = distributed ? dist::pmap(grads_fn)(params) : grads_fn(params);
      auto [updates, new_state] = tx.update(grads, opt_state, params);
      opt_state = new_state;
      params = optim::apply_updates(params, updates);
      loss_sum += loss.item<double>() * static_cast<double>(e - s);
      seen += static_cast<std::int64_t>(e - s);
      window += static_cast<std::int64_t>(e - s);
      const auto now = std::chrono::steady_clock::now();
      if (step + 1 == steps || std::chrono::duration<double>(now - tw).count() >= 5.0) {
        const double dt = std::chrono::duration<double>(now - tw).count();
        say("epoch %d  step %zu/%zu  loss %.4f  %.0f examples/s\n", epoch, step + 1, steps,
            loss_sum / seen, window / dt);
        tw = now;
        window = 0;
      }
    }
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double acc = accuracy(Tree{{"params", params}}, test, distributed);
    say("epoch %d done: train loss %.4f, %.1f s (%.0f examples/s), test accuracy %.2f%%\n", epoch,
        loss_sum / seen, secs, seen / secs, 100.0 * acc);
    if (distributed) {
      if (!dist::is_replicated(params))
        throw linum::ValueError("the parameters differ between processes after epoch " +
                                std::to_string(epoch));
      say("parameters bit-identical on all %d processes\n", dist::process_count());
    }
  }
  say("total %.1f s\n",
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  if (!checkpoint.empty()) {
    if (distributed)
      dist::save_checkpoint(checkpoint, params);
    else
      std::ofstream(checkpoint, std::ios::binary)
          << linum::serialization::msgpack_serialize(params);
    say("parameters written to %s\n", checkpoint.c_str());
  }
  if (distributed) dist::finalize();
  return 0;
}
