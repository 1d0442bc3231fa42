// The demo: a 1-32-32-1 tanh MLP fitted to y = sin(3x) on 256 points with linum::value_and_grad
// and plain gradient descent written inline (the loss visibly goes down).
#include <cmath>
#include <cstdio>
#include <map>
#include <string>

#include <linum/autodiff/random/random.hpp>
#include <linum/linum.hpp>

using linum::Array;
using Params = std::map<std::string, Array>;  // a pytree: grads come back with the same keys

Array mlp(const Params& p, const Array& x) {
  Array h = linum::tanh(linum::matmul(x, p.at("w1")) + p.at("b1"));
  h = linum::tanh(linum::matmul(h, p.at("w2")) + p.at("b2"));
  return linum::matmul(h, p.at("w3")) + p.at("b3");
}

int main() {
  Array x = linum::reshape(linum::linspace(-1.0, 1.0, 256), {256, 1});
  Array y = linum::sin(3.0f * x);

  // LeCun-normal weights (Flax's Dense default), zero biases.
  Array key = linum::random::PRNGKey(0);
  auto dense = [&](int i, std::int64_t n_in, std::int64_t n_out) {
    Array w = linum::random::normal(linum::random::fold_in(key, i), {n_in, n_out});
    return w / std::sqrt(static_cast<float>(n_in));
  };
  Params params{{"w1", dense(1, 1, 32)},    {"b1", linum::zeros({32})}, {"w2", dense(2, 32, 32)},
                {"b2", linum::zeros({32})}, {"w3", dense(3, 32, 1)},    {"b3", linum::zeros({1})}};

  auto loss_fn = [&](const Params& p) {
    Array err = mlp(p, x) - y;
    return linum::mean(err * err);
  };

  const float lr = 0.03f;
  float loss = 0;
  for (int step = 0; step <= 3000; ++step) {
    auto [value, grads] = linum::value_and_grad(loss_fn)(params);
    for (auto& [name, w] : params) w = w - lr * grads.at(name);  // SGD
    loss = value.item<float>();
    if (step % 300 == 0) std::printf("step %4d  loss %.6f\n", step, loss);
  }
  std::printf("final loss %.6f\n", loss);
  return loss < 0.01f ? 0 : 1;
}
