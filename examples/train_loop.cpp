// A training loop as optax users write it: value_and_grad of the loss, adam's update, then
// apply_updates. A one-hidden-layer MLP learns y = sin(x) on [-2, 2]; the loss goes down.
#include <cstdio>
#include <map>
#include <string>

#include <linum/autodiff/random/random.hpp>
#include <linum/linum.hpp>

using linum::Array;
namespace optim = linum::optim;
using Params = std::map<std::string, Array>;

Array mlp(const Params& p, const Array& x) {
  Array h = linum::tanh(linum::matmul(x, p.at("w1")) + p.at("b1"));
  return linum::matmul(h, p.at("w2")) + p.at("b2");
}

int main() {
  // Data: 64 points of y = sin(x).
  Array x = linum::reshape(linum::linspace(-2.0, 2.0, 64), {64, 1});
  Array y = linum::sin(x);

  // Parameters: a 1 -> 32 -> 1 MLP with normal(0, 0.5) weights.
  Array key = linum::random::PRNGKey(0);
  Params params{{"w1", 0.5 * linum::random::normal(linum::random::fold_in(key, 1), {1, 32})},
                {"b1", linum::zeros({32})},
                {"w2", 0.5 * linum::random::normal(linum::random::fold_in(key, 2), {32, 1})},
                {"b2", linum::zeros({1})}};

  auto loss_fn = [&](const Params& p) {
    Array err = mlp(p, x) - y;
    return linum::mean(err * err);
  };

  auto tx = optim::adam(1e-2);
  auto opt_state = tx.init(params);
  for (int step = 0; step <= 1000; ++step) {
    auto [loss, grads] = linum::value_and_grad(loss_fn)(params);
    auto [updates, new_opt_state] = tx.update(grads, opt_state, params);
    opt_state = new_opt_state;
    params = optim::apply_updates(params, updates);
    if (step % 100 == 0) std::printf("step %4d  loss %.6f\n", step, loss.item<double>());
  }
  return 0;
}
