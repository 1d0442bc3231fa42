// Seed 004, "Managing Parameters and State", line for line: BiasAdderWithRunningMean trained with
// its state split off by pop(variables, "params") and mutable = the state's keys, then an MLP with
// BatchNorm(axis_name="batch") trained under vmap(..., out_axes=(0, None), axis_name="batch").
// The running statistics and the updated params are checked against hand computations.
#include <cmath>
#include <iostream>
#include <string>
#include <vector>

#include <linum/linum.hpp>
#include <linum/nn/nn.hpp>
#include <linum/optim/optim.hpp>

#include "seed_check.hpp"

using namespace linum;
using namespace seed_check;

namespace {
Shape tail_shape(const Array& x) { return Shape(x.shape().begin() + 1, x.shape().end()); }

struct BiasAdderWithRunningMean : nn::Module<BiasAdderWithRunningMean> {
  double momentum = 0.9;
  Array call(const Array& x) {
    bool is_initialized = has_variable("batch_stats", "mean");
    auto mean = variable(
        "batch_stats", "mean", [](const Shape& s) { return zeros(s); }, tail_shape(x));
    Array bias = param(
        "bias", [](const Array& /*rng*/, const Shape& s) { return zeros(s); }, tail_shape(x));
    if (is_initialized)
      mean.value() = (static_cast<float>(momentum) * mean.value() +
                      static_cast<float>(1.0 - momentum) * linum::mean(x, 0, true));
    return mean.value() + bias;
  }
};

struct MLP : nn::Module<MLP> {
  std::int64_t hidden_size, out_size;
  MLP(std::int64_t h, std::int64_t o) : hidden_size(h), out_size(o) {}
  Array call(Array x, bool train = false) {
    auto norm = [&] {
      return nn::BatchNorm({.use_running_average = !train,
                            .momentum = 0.9,
                            .epsilon = 1e-5,
                            .axis_name = "batch"});  // Name batch dim
    };
    x = nn::Dense(hidden_size)(x);
    x = norm()(x);
    x = nn::relu(x);
    x = nn::Dense(hidden_size)(x);
    x = norm()(x);
    x = nn::relu(x);
    Array y = nn::Dense(out_size)(x);
    return y;
  }
};

std::vector<std::string> keys_of(const Tree& t) { return t.as_dict().keys(); }
Tree merged(const Tree& params, const Tree& state) {  // {'params': params, **state}
  Tree v = state;
  v["params"] = params;
  return v;
}
}  // namespace

int main() {
  const int num_epochs = 3;
  auto tx = optim::sgd(0.02);

  std::cout << "## BiasAdderWithRunningMean\n";
  {
    Array dummy_input = random::normal(random::key(1), {8, 3});
    auto update_step = [&](const auto& apply_fn, const Array& x, auto opt_state, Tree params,
                           const Tree& state) {
      auto loss = [&](const Tree& params) {
        auto [y, updated_state] =
            apply_fn(merged(params, state), x, nn::ApplyOptions{.mutable_ = keys_of(state)});
        Array l = sum(square(x - y));  // Replace with your loss here.
        return std::pair{l, updated_state};
      };
      auto [l_and_state, grads] = value_and_grad(loss, has_aux)(params);
      auto [updates, new_opt_state] = tx.update(grads, opt_state);  // Defined below.
      params = optim::apply_updates(params, updates);
      return std::tuple{new_opt_state, params, l_and_state.second};
    };

    BiasAdderWithRunningMean model;
    Tree variables = model.init(random::key(0), dummy_input);
    // Split state and params (which are updated by optimizer).
    auto [state, params] = pop(variables, "params");
    auto opt_state = tx.init(params);
    auto apply_fn = [&](const Tree& v, const Array& x, nn::ApplyOptions o) {
      return model.apply(v, x, std::move(o));
    };
    // By hand: mean_k = 0.9 mean_{k-1} + 0.1 mean(x, 0); y = mean_k + bias;
    // d/dbias sum((x - y)^2) = -2 sum_rows(x - y); bias -= 0.02 * grad.
    Array m = zeros({3}), b = zeros({3});
    for (int epoch = 0; epoch < num_epochs; ++epoch) {
      std::tie(opt_state, params, state) =
          update_step(apply_fn, dummy_input, opt_state, params, state);
      m = 0.9f * m + 0.1f * mean(dummy_input, 0, true);
      Array y = m + b;
      b = b - 0.02f * (-2.0f * sum(dummy_input - y, 0));
      std::cout << "epoch " << epoch << ": batch_stats.mean = " << state["batch_stats"]["mean"]
                << ", bias = " << params["bias"] << "\n";
    }
    check(keys_of(state) == std::vector<std::string>{"batch_stats"},
          "pop(variables, 'params') leaves the state {'batch_stats'}");
    check(allclose(state["batch_stats"]["mean"].leaf(), m),
          "the running mean equals 0.9/0.1 momentum updates computed by hand");
    check(allclose(params["bias"].leaf(), b, 1e-4f),
          "sgd(0.02) on the bias equals the gradient steps computed by hand");
  }

  std::cout << "## vmap across the batch dimension (BatchNorm with axis_name)\n";
  {
    Array X = random::normal(random::key(2), {16, 5});
    Array Y = random::normal(random::key(3), {16, 1});
    Array dummy_input = X;
    auto update_step = [&](const auto& apply_fn, const Array& x_batch, const Array& y_batch,
                           auto opt_state, Tree params, const Tree& state) {
      auto batch_loss = [&](const Tree& params) {
        auto loss_fn = [&](const Array& x, const Array& y) {
          auto [pred, updated_state] = apply_fn(merged(params, state), x, /*train=*/true,
                                                nn::ApplyOptions{.mutable_ = keys_of(state)});
          return std::pair{square(pred - y), updated_state};
        };
        auto [loss, updated_state] =
            vmap(loss_fn, {.out_axes = {0, VmapOptions::kNone},  // Do not vmap `updated_state`.
                           .axis_name = "batch"})                // Name batch dim
            (x_batch, y_batch);  // vmap only `x`, `y`, but not `state`.
        return std::pair{mean(loss), updated_state};
      };
      auto [loss_and_state, grads] = value_and_grad(batch_loss, has_aux)(params);
      auto [updates, new_opt_state] = tx.update(grads, opt_state);  // Defined below.
      params = optim::apply_updates(params, updates);
      return std::tuple{new_opt_state, params, loss_and_state.second, loss_and_state.first};
    };

    MLP model(/*hidden_size=*/10, /*out_size=*/1);
    Tree variables = model.init(random::key(0), dummy_input);
    // Split state and params (which are updated by optimizer).
    auto [state, params] = pop(variables, "params");
    auto opt_state = tx.init(params);
    auto apply_fn = [&](const Tree& v, const Array& x, bool train, nn::ApplyOptions o) {
      return model.apply(v, x, train, std::move(o));
    };
    // The first step's running statistics by hand, from the params before the step.
    const Tree p0 = params;
    auto dense = [](const Tree& p, const Array& x) {
      return matmul(x, p["kernel"].leaf()) + p["bias"].leaf();
    };
    auto batch_norm_stats = [](const Array& h) {
      Array mu = mean(h, 0);
      return std::pair{mu, mean(square(h), 0) - square(mu)};
    };
    Array h0 = dense(p0["Dense_0"], X);
    auto [mu0, var0] = batch_norm_stats(h0);
    Array a0 = relu((h0 - mu0) / sqrt(var0 + 1e-5f) * p0["BatchNorm_0"]["scale"].leaf() +
                    p0["BatchNorm_0"]["bias"].leaf());
    auto [mu1, var1] = batch_norm_stats(dense(p0["Dense_1"], a0));

    std::vector<float> losses;
    for (int epoch = 0; epoch < num_epochs; ++epoch) {
      Array loss;
      std::tie(opt_state, params, state, loss) =
          update_step(apply_fn, X, Y, opt_state, params, state);
      losses.push_back(loss.item<float>());
      std::cout << "epoch " << epoch << ": loss = " << losses.back() << "\n";
      if (epoch == 0) {
        const Tree& bs = state["batch_stats"];
        std::cout << "batch_stats after one step: " << bs << "\n";
        check(allclose(bs["BatchNorm_0"]["mean"].leaf(), 0.1f * mu0) &&
                  allclose(bs["BatchNorm_0"]["var"].leaf(), 0.9f + 0.1f * var0),
              "BatchNorm_0's running mean/var equal the batch statistics computed by hand");
        check(allclose(bs["BatchNorm_1"]["mean"].leaf(), 0.1f * mu1, 1e-4f) &&
                  allclose(bs["BatchNorm_1"]["var"].leaf(), 0.9f + 0.1f * var1, 1e-4f),
              "BatchNorm_1's running mean/var equal the batch statistics computed by hand");
        check(bs["BatchNorm_0"]["mean"].leaf().shape() == Shape{10},
              "out_axes None: the state has no batch dimension");
      }
    }
    check(losses.back() < losses.front(), "sgd lowers the loss");
  }
  std::cout << (failures ? "FAILED\n" : "all seed checks hold\n");
  return failures ? 1 : 0;
}
