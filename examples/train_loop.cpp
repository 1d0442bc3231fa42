// A training loop as Flax and optax users write it: an in-memory dataset shuffled each epoch from
// a PRNGKey and cut into minibatches (linum::data), value_and_grad of the loss, adam's update,
// then apply_updates, with a progress line. A one-hidden-layer MLP learns y = sin(x) on [-2, 2];
// the loss goes down.
#include <cstdio>
#include <map>
#include <string>
#include <utility>

#include <linum/autodiff/random/random.hpp>
#include <linum/data/data.hpp>
#include <linum/linum.hpp>

using linum::Array;
namespace data = linum::data;
namespace optim = linum::optim;
namespace jr = linum::random;
using Params = std::map<std::string, Array>;

Array mlp(const Params& p, const Array& x) {
  Array h = linum::tanh(linum::matmul(x, p.at("w1")) + p.at("b1"));
  return linum::matmul(h, p.at("w2")) + p.at("b2");
}

Array mse(const Params& p, const Array& x, const Array& y) {
  Array err = mlp(p, x) - y;
  return linum::mean(err * err);
}

int main() {
  // Data: 256 points of y = sin(x).
  Array x = linum::reshape(linum::linspace(-2.0, 2.0, 256), {256, 1});
  Array y = linum::sin(x);

  // Parameters: a 1 -> 32 -> 1 MLP with normal(0, 0.5) weights.
  Array key = jr::PRNGKey(0);
  Params params{{"w1", 0.5 * jr::normal(jr::fold_in(key, 1), {1, 32})},
                {"b1", linum::zeros({32})},
                {"w2", 0.5 * jr::normal(jr::fold_in(key, 2), {32, 1})},
                {"b2", linum::zeros({1})}};
  std::printf("initial loss %.6f\n", mse(params, x, y).item<double>());

  auto tx = optim::adam(1e-2);
  auto opt_state = tx.init(params);
  const auto dataset = data::Dataset(std::pair{x, y});
  const Array shuffle_key = jr::fold_in(key, 3);
  for (int epoch = 1; epoch <= 100; ++epoch) {
    // Each epoch in its own order, jax.random.permutation(fold_in(shuffle_key, epoch), 256).
    auto batches = dataset.shuffle(jr::fold_in(shuffle_key, epoch)).batch(32);
    // A line every 10 epochs: the mean minibatch loss of the epoch.
    data::Progress progress(batches.cardinality(), {.desc = "epoch " + std::to_string(epoch),
                                                    .out = epoch % 10 == 0 ? stdout : nullptr});
    for (const auto& [xb, yb] : batches) {
      auto loss_fn = [&](const Params& p) { return mse(p, xb, yb); };
      auto [loss, grads] = linum::value_and_grad(loss_fn)(params);
      auto [updates, new_opt_state] = tx.update(grads, opt_state, params);
      opt_state = new_opt_state;
      params = optim::apply_updates(params, updates);
      progress.update(loss.item<double>(), xb.shape(0));
    }
  }
  std::printf("final loss %.6f\n", mse(params, x, y).item<double>());
  return 0;
}
