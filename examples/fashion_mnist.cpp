// Seed 000's CNN trained on Fashion-MNIST (Debian's dataset-fashion-mnist) with optim::adam, fed
// by linum::data as the Flax MNIST example feeds it (the IDX files loaded whole, an epoch's order
// from jax.random.permutation, batches prefetched): a progress line with the running loss and
// examples/s during each epoch, test accuracy after each.
// Flags: --epochs N  --batch-size N  --train-limit N (first N training images)  --threads N
//        --lr X  --data DIR  --dtype float32|bfloat16|float16  --distributed  --checkpoint PATH
// --dtype: mixed precision as Flax does it: float32 parameters (and optimizer), the layers
// computing in the given dtype, the loss in float32. float16 also scales the loss
// (optim::DynamicScale) and skips the steps whose gradients are not finite.
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
#include <optional>
#include <string>
#include <tuple>
#include <utility>

#include <linum/autodiff/random/random.hpp>
#include <linum/data/data.hpp>
#include <linum/distributed/distributed.hpp>
#include <linum/linum.hpp>
#include <linum/nn/serialization.hpp>

#include "seed_models.hpp"

using linum::Array;
using linum::Tree;
namespace nn = linum::nn;
namespace optim = linum::optim;
namespace dist = linum::distributed;
namespace data = linum::data;

// Seed 000's CNN, trained as the guide defines it.
using seed_models::CNN;

// (images, labels): NHWC float32 images in [0, 1] and int32 labels, as the Flax MNIST example
// prepares them (jnp.float32(images) / 255).
using Examples = std::pair<Array, Array>;

Examples load(const std::string& dir, const std::string& prefix, std::int64_t limit) {
  Array images = data::load_idx(dir + "/" + prefix + "-images-idx3-ubyte.gz");
  Array labels = data::load_idx(dir + "/" + prefix + "-labels-idx1-ubyte.gz");
  if (images.ndim() != 3 || images.shape(1) != 28 || images.shape(2) != 28 || labels.ndim() != 1 ||
      labels.shape(0) != images.shape(0))
    throw linum::ValueError("fashion_mnist: " + dir + "/" + prefix +
                            "-*: expected images [n, 28, 28] and labels [n]");
  const std::int64_t n = limit > 0 ? std::min(limit, images.shape(0)) : images.shape(0);
  images = linum::slice(images, {{0, n}});
  labels = linum::slice(labels, {{0, n}});
  return {linum::reshape(linum::astype(images, linum::float32) / 255.0f, {n, 28, 28, 1}),
          linum::astype(labels, linum::int32)};
}

// This process's rows [begin, end) of the leading axis.
Examples rows(const Examples& e, const dist::Shard& part) {
  return {linum::slice(e.first, {{part.begin, part.end}}),
          linum::slice(e.second, {{part.begin, part.end}})};
}

CNN model(std::optional<linum::DType> dtype) {
  CNN m;
  m.dtype = dtype;
  return m;
}

// Test accuracy; distributed, each process scores its shard and the counts are summed.
double accuracy(const CNN& cnn, const Tree& variables, const Examples& test, bool distributed) {
  const std::int64_t n = test.first.shape(0);
  const Examples mine = distributed ? rows(test, dist::shard_range(n)) : test;
  std::int64_t correct = 0;
  for (const auto& [x, y] : data::Dataset(mine).batch(500)) {
    Array pred = linum::argmax(CNN(cnn).apply(variables, x), 1);
    correct += linum::sum(linum::astype(linum::equal(pred, y), linum::int32)).item<std::int32_t>();
  }
  if (distributed)
    correct = dist::pmap([](const Array& c) { return linum::psum(c, "devices"); })(
                  linum::full({}, static_cast<double>(correct), linum::int32))
                  .item<std::int32_t>();
  return static_cast<double>(correct) / static_cast<double>(n);
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
  std::optional<linum::DType> dtype;  // unset: float32 throughout
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
    else if (a == "--dtype") {
      const std::string d = v;
      if (d == "bfloat16")
        dtype = linum::bfloat16;
      else if (d == "float16")
        dtype = linum::float16;
      else if (d != "float32") {
        std::fprintf(stderr, "fashion_mnist: --dtype must be float32, bfloat16 or float16\n");
        return 2;
      }
    }
    else {
      std::fprintf(stderr,
                   "fashion_mnist: unknown flag %s (flags: --epochs --batch-size --train-limit "
                   "--threads --lr --data --dtype --distributed --checkpoint)\n",
                   a.c_str());
      return 2;
    }
  }
  if (epochs < 1 || batch_size < 1 || threads < 1 || train_limit < 0) {
    std::fprintf(stderr, "fashion_mnist: --epochs, --batch-size and --threads must be >= 1\n");
    return 2;
  }
  const bool loss_scaling = dtype == linum::float16;
  if (loss_scaling && distributed) {
    // Each process would back off its own scale; Flax averages the gradients first (axis_name).
    std::fprintf(stderr, "fashion_mnist: --dtype float16 runs on one process only\n");
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

  const Examples train = load(dir, "train", train_limit), test = load(dir, "t10k", 0);
  const std::int64_t n_train = train.first.shape(0), n_test = test.first.shape(0);
  say("Fashion-MNIST: %lld train, %lld test; batch %lld, adam lr %g, %s compute, %d threads, "
      "%d process%s\n",
      static_cast<long long>(n_train), static_cast<long long>(n_test),
      static_cast<long long>(batch_size), lr,
      std::string(linum::dtype_name(dtype.value_or(linum::float32))).c_str(), threads,
      dist::process_count(), dist::process_count() == 1 ? "" : "es");

  const CNN cnn = model(dtype);
  Tree variables = CNN(cnn).init(linum::random::PRNGKey(0), linum::zeros({1, 28, 28, 1}));
  Tree params = variables["params"];
  // Every process starts from process 0's parameters.
  if (distributed) params = dist::broadcast_one_to_all(params);
  auto tx = optim::adam(lr);
  auto opt_state = tx.init(params);
  optim::DynamicScale dynamic_scale;
  std::int64_t skipped = 0;  // float16 steps whose gradients overflowed

  // Every process shuffles the same order from the same key, and takes its rows of each global
  // batch; the next batches are gathered on a background thread while this one trains.
  const auto train_ds = data::Dataset(train);
  const Array shuffle_key = linum::random::PRNGKey(1);
  const auto start = std::chrono::steady_clock::now();
  for (int epoch = 1; epoch <= epochs; ++epoch) {
    auto batches =
        train_ds.shuffle(linum::random::fold_in(shuffle_key, epoch)).batch(batch_size).prefetch(2);
    data::Progress progress(batches.cardinality(), {.desc = "epoch " + std::to_string(epoch),
                                                    .out = lead ? stdout : nullptr});
    for (const auto& [global_x, global_y] : batches) {
      const std::int64_t global = global_x.shape(0);
      const auto [x, y] = distributed ? rows({global_x, global_y}, dist::shard_range(global))
                                      : Examples{global_x, global_y};
      Array labels = linum::one_hot(y, 10);
      // The mean over the global batch: each process sums its rows over the global count, and
      // psum over "devices" adds the shards (pmean of the local means when shards are equal).
      auto loss_fn = [&](const Tree& p) {
        Array logp = CNN(cnn).apply(Tree{{"params", p}}, x);
        return -linum::sum(labels * logp) / static_cast<double>(global);
      };
      auto grads_fn = [&](const Tree& p) {
        auto [l, g] = linum::value_and_grad(loss_fn)(p);
        if (!distributed) return std::make_pair(l, g);
        return std::make_pair(linum::psum(l, "devices"), linum::psum(g, "devices"));
      };
      Array loss;
      Tree grads;
      if (loss_scaling) {
        // Flax's recipe: a step whose gradients are not finite leaves params and opt_state as
        // they were, and the scale backs off.
        auto r = dynamic_scale.value_and_grad(loss_fn)(params);
        dynamic_scale = r.dynamic_scale;
        if (!r.finite.item<bool>()) {
          ++skipped;
          continue;
        }
        loss = r.value, grads = r.grad;
      } else {
        std::tie(loss, grads) = distributed ? dist::pmap(grads_fn)(params) : grads_fn(params);
      }
      auto [updates, new_state] = tx.update(grads, opt_state, params);
      opt_state = new_state;
      params = optim::apply_updates(params, updates);
      progress.update(loss.item<double>(), global);
    }
    progress.close();
    const double acc = accuracy(cnn, Tree{{"params", params}}, test, distributed);
    say("epoch %d done: train loss %.4f, %.1f s (%.0f examples/s), test accuracy %.2f%%\n", epoch,
        progress.mean_loss(), progress.elapsed(), static_cast<double>(n_train) / progress.elapsed(),
        100.0 * acc);
    if (loss_scaling)
      say("loss scale %g, %lld steps skipped (gradients not finite)\n",
          dynamic_scale.scale.item<double>(), static_cast<long long>(skipped));
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
