// A user's program, built the same way by every consumer project beside it (CMake, pkg-config,
// meson subproject): initializes a small MLP, takes adam steps on y = sin(x), saves the
// parameters as a Flax checkpoint and restores them. Exits 1 unless the loss fell and the restored
// parameters equal the saved ones.
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

#include <linum/linum.hpp>
#include <linum/nn/serialization.hpp>

using linum::Array;
using linum::Tree;
namespace nn = linum::nn;
namespace optim = linum::optim;

struct MLP : nn::Module<MLP> {
  Array call(const Array& x) { return nn::Dense(1)(nn::tanh(nn::Dense(16)(x))); }
};

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : "checkpoint.msgpack";
  Array x = linum::reshape(linum::linspace(-2.0, 2.0, 32), {32, 1});
  Array y = linum::sin(x);
  Tree params = MLP().init(linum::random::PRNGKey(0), x)["params"];
  auto loss_fn = [&](const Tree& p) {
    Array err = MLP().apply(Tree{{"params", p}}, x) - y;
    return linum::mean(err * err);
  };

  auto tx = optim::adam(1e-2);
  auto opt_state = tx.init(params);
  double first = 0, last = 0;
  for (int step = 0; step < 20; ++step) {
    auto [loss, grads] = linum::value_and_grad(loss_fn)(params);
    auto [updates, new_opt_state] = tx.update(grads, opt_state, params);
    opt_state = new_opt_state;
    params = optim::apply_updates(params, updates);
    last = loss.item<double>();
    if (step == 0) first = last;
  }

  std::ofstream(path, std::ios::binary) << linum::serialization::to_bytes(params);
  std::ifstream in(path, std::ios::binary);
  const std::string bytes{std::istreambuf_iterator<char>(in), {}};
  const Tree restored = linum::serialization::from_bytes(params, bytes);
  bool same = true;
  const auto saved = linum::tree_leaves(params), loaded = linum::tree_leaves(restored);
  for (std::size_t i = 0; i < saved.size(); ++i)
    same = same && linum::max(linum::abs(saved[i] - loaded[i])).item<float>() == 0.0f;

  std::printf("loss %.4f -> %.4f after 20 adam steps; %s: %zu bytes, %zu arrays %s\n", first, last,
              path.c_str(), bytes.size(), loaded.size(), same ? "restored" : "DIFFER");
  return last < first && same && saved.size() == 4 ? 0 : 1;
}
