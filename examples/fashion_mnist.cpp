// Seed 000's CNN trained on Fashion-MNIST (Debian's dataset-fashion-mnist) with optim::adam:
// a progress line with loss and examples/s during each epoch, test accuracy after each.
// Flags: --epochs N  --batch-size N  --train-limit N (first N training images)  --threads N
//        --lr X  --data DIR
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include <linum/autodiff/random/random.hpp>
#include <linum/linum.hpp>

#include "idx.hpp"
#include "seed_models.hpp"

using linum::Array;
using linum::Tree;
namespace nn = linum::nn;
namespace optim = linum::optim;

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

double accuracy(const Tree& variables, const Data& test) {
  std::vector<std::int64_t> all(test.n);
  std::iota(all.begin(), all.end(), 0);
  std::int64_t correct = 0;
  for (std::size_t s = 0; s < all.size(); s += 500) {
    const std::size_t e = std::min(all.size(), s + 500);
    auto [x, y] = batch(test, all, s, e);
    Array pred = linum::argmax(CNN().apply(variables, x), 1);
    const std::int32_t* p = pred.data<std::int32_t>();
    for (std::size_t i = 0; i < y.size(); ++i) correct += p[i] == y[i];
  }
  return static_cast<double>(correct) / test.n;
}

int main(int argc, char** argv) {
  int epochs = 2, threads = 2;
  std::int64_t batch_size = 128, train_limit = 0;
  double lr = 1e-3;
  std::string dir = "/usr/share/datasets/fashion-mnist";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
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
    else {
      std::fprintf(stderr,
                   "fashion_mnist: unknown flag %s (flags: --epochs --batch-size --train-limit "
                   "--threads --lr --data)\n",
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

  const Data train = load(dir, "train", train_limit), test = load(dir, "t10k", 0);
  std::printf("Fashion-MNIST: %lld train, %lld test; batch %lld, adam lr %g, %d threads\n",
              static_cast<long long>(train.n), static_cast<long long>(test.n),
              static_cast<long long>(batch_size), lr, threads);

  Tree variables = CNN().init(linum::random::PRNGKey(0), linum::zeros({1, 28, 28, 1}));
  Tree params = variables["params"];
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
      auto [x, y] = batch(train, order, s, e);
      Array labels = linum::one_hot(linum::array(y, {static_cast<std::int64_t>(y.size())}), 10);
      auto loss_fn = [&](const Tree& p) {
        Array logp = CNN().apply(Tree{{"params", p}}, x);
        return -linum::mean(linum::sum(labels * logp, 1));
      };
      auto [loss, grads] = linum::value_and_grad(loss_fn)(params);
      auto [updates, new_state] = tx.update(grads, opt_state, params);
      opt_state = new_state;
      params = optim::apply_updates(params, updates);
      loss_sum += loss.item<double>() * static_cast<double>(e - s);
      seen += static_cast<std::int64_t>(e - s);
      window += static_cast<std::int64_t>(e - s);
      const auto now = std::chrono::steady_clock::now();
      if (step + 1 == steps || std::chrono::duration<double>(now - tw).count() >= 5.0) {
        const double dt = std::chrono::duration<double>(now - tw).count();
        std::printf("epoch %d  step %zu/%zu  loss %.4f  %.0f examples/s\n", epoch, step + 1, steps,
                    loss_sum / seen, window / dt);
        std::fflush(stdout);
        tw = now;
        window = 0;
      }
    }
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double acc = accuracy(Tree{{"params", params}}, test);
    std::printf("epoch %d done: train loss %.4f, %.1f s (%.0f examples/s), test accuracy %.2f%%\n",
                epoch, loss_sum / seen, secs, seen / secs, 100.0 * acc);
    std::fflush(stdout);
  }
  std::printf("total %.1f s\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  return 0;
}
