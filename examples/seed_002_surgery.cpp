// Seed 002 (the "Model surgery" notebook), its "Extracting intermediate values" half: SowCNN2,
// RefactoredCNN with method=, capture_intermediates (is_finite; the Dense filter), SeqCNN's
// first 7 layers and perturb. The notebook ran in mid 2023 with JAX's legacy threefry, which
// linum reproduces, so the printed values are checked against the notebook's own printout (its
// cells In[15], In[16], In[20], In[21]). The tree-surgery half is examples/surgery_modules.cpp.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <linum/linum.hpp>
#include <linum/nn/nn.hpp>

#include "seed_check.hpp"
#include "seed_models.hpp"

using namespace linum;
using lift::Filter;
using namespace seed_check;
using namespace seed_models;

namespace {
std::string fmt(float v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

// The notebook's printed values: equal to 6 significant digits of the vector's scale
// (|got - want| <= 1e-6 max|want|), relu's zeros exactly. Elementwise 6 digits is too strict for
// small entries of a 3136-term float32 dot product, whose summation order differs from XLA's.
void check_notebook(const Array& a, const std::vector<float>& head, const std::vector<float>& tail,
                    const std::string& what, float rtol = 1e-6f) {
  const float* d = a.data<float>();
  const auto n = static_cast<std::size_t>(a.size());
  bool ok = n >= head.size() + tail.size();
  float scale = 0.0f, worst = 0.0f;
  for (float w : head) scale = std::max(scale, std::abs(w));
  for (float w : tail) scale = std::max(scale, std::abs(w));
  auto close = [&](float got, float want) {
    worst = std::max(worst, std::abs(got - want));
    return want == 0.0f ? got == 0.0f : std::abs(got - want) <= rtol * scale;
  };
  for (std::size_t i = 0; ok && i < head.size(); ++i) ok = close(d[i], head[i]) && ok;
  for (std::size_t i = 0; n >= tail.size() && i < tail.size(); ++i)
    ok = close(d[n - tail.size() + i], tail[i]) && ok;
  check(ok, what + " equal the notebook's printout (max |diff| " + fmt(worst) + ", scale " +
                fmt(scale) + ")");
}

}  // namespace

int main() {
  // The notebook's JAX (mid 2023) used the legacy, non-partitionable threefry.
  random::set_threefry_partitionable(false);

  std::cout << "In [14]:\n";
  auto init = [](const Array& key, const Array& x) {
    Tree variables = SowCNN2().init(key, x);
    // By default the 'intermediates' collection is not mutable during init.
    // So variables will only contain 'params' here.
    return variables;
  };
  auto predict = [](const Tree& variables, const Array& x) {
    // If mutable='intermediates' is not specified, then .sow() acts as a noop.
    auto [output, mod_vars] = SowCNN2().apply(variables, x, {.mutable_ = "intermediates"});
    Tree features = mod_vars["intermediates"]["SowCNN"]["features"];
    return std::pair{output, features};
  };
  Array batch = ones({1, 28, 28, 1});
  Tree variables = init(random::PRNGKey(0), batch);
  auto [preds, feats] = predict(variables, batch);
  check(feats.size() == 2,
        "len(feats) == 2  # Tuple with two values since module was called twice.");
  std::cout << "In [15]: feats\n" << feats << "\n";
  for (int i = 0; i < 2; ++i)
    check_notebook(feats[i].leaf(), {0.1793044f, 0.0f, 0.3081015f},
                   {0.2719369f, 0.03271667f, 0.40916097f}, "feats[" + std::to_string(i) + "]");

  std::cout << "In [16]:\n";
  {
    auto init = [](const Array& key, const Array& x) {
      Tree variables = RefactoredCNN().init(key, x);
      return variables["params"];
    };
    auto features = [](const Tree& params, const Array& x) {
      return RefactoredCNN().apply(
          Tree{{"params", params}}, x,
          nn::method([](RefactoredCNN& module, const Array& x) { return module.features(x); }));
    };
    Tree params = init(random::PRNGKey(0), batch);
    Array f = features(params, batch);
    std::cout << f << "\n";
    check_notebook(f, {0.0f, 0.01445577f, 0.73324203f}, {0.0f, 0.0f, 0.21551636f},
                   "RefactoredCNN features");
  }

  std::cout << "In [17]:\n";
  {
    auto init = [](const Array& key, const Array& x) {
      Tree variables = CNN().init(key, x);
      return variables;
    };
    auto predict = [](const Tree& variables, const Array& x) {
      auto [y, state] = CNN().apply(
          variables, x, {.mutable_ = Filter{"intermediates"}, .capture_intermediates = true});
      Tree intermediates = state["intermediates"];
      Tree fin = pytree::tree_map([](const Array& xs) { return all(isfinite(xs)); }, intermediates);
      return std::pair{y, fin};
    };
    Tree variables = init(random::PRNGKey(0), batch);
    auto [y, is_finite] = predict(variables, batch);
    bool all_finite = true;
    for (const Array& leaf : pytree::tree_leaves<Array>(is_finite))
      all_finite = all_finite && leaf.item<bool>();
    check(all_finite, "all_finite  # non-finite intermediate detected!");
    std::cout << "In [18]: is_finite\n" << freeze(is_finite) << "\n";
    check(is_finite.as_dict().keys() ==
              std::vector<std::string>{"Conv_0", "Conv_1", "Dense_0", "Dense_1", "__call__"},
          "is_finite has the notebook's keys");

    auto filter_Dense = [](const nn::ModuleBase& mdl, const std::string&) {
      return nn::isinstance<nn::Dense>(mdl);
    };
    auto [y2, state] =
        CNN().apply(variables, batch,
                    {.mutable_ = Filter{"intermediates"}, .capture_intermediates = filter_Dense});
    Tree dense_intermediates = state["intermediates"];
    std::cout << "In [20]: dense_intermediates\n" << freeze(dense_intermediates) << "\n";
    // In [20] printed Dense_0's 256 values in full until the output was cut after 58 of them.
    check_notebook(
        dense_intermediates["Dense_0"]["__call__"][0].leaf(),
        {-0.4163544f,  -0.06839216f, -0.51570624f, -0.19137715f, 0.10282888f,  0.5738754f,
         0.13795005f,  0.18073687f,  0.00480315f,  0.64715713f,  0.3356169f,   -0.4829922f,
         0.4347183f,   0.51078403f,  -0.449439f,   0.17263898f,  0.22860987f,  0.08530779f,
         0.25815383f,  0.06415588f,  -0.1518939f,  -0.23635048f, 0.27043548f,  -0.1065058f,
         0.24950364f,  0.2170637f,   0.11157337f,  -0.08237511f, -0.19511226f, 0.2964567f,
         0.02076684f,  -0.3986773f,  -0.5505137f,  0.6888312f,   -0.3276731f,  0.16291578f,
         0.36783996f,  -0.46132872f, -0.32510972f, -0.04895904f, -0.36039907f, 0.26155755f,
         -0.32220736f, -0.04482261f, -0.20064123f, -0.08618929f, 0.55833423f,  -0.38625807f,
         0.15436846f,  0.38278913f,  -0.2882816f,  0.0843855f,   0.4771748f,   -0.14847872f,
         0.6558553f,   0.03806313f,  -0.41578537f, 0.01439955f,  -0.21037483f},
        {}, "Dense_0's captured output (its first 59 values)", 2e-6f);
    // Dense_0 sums 3136 float32 products, so the notebook's XLA sum and linum's differ by
    // rounding: both stay within float32's bound eps * sum_i |x_i w_i| of the float64 sum.
    {
      Tree vars = variables;
      Array f32 = dense_intermediates["Dense_0"]["__call__"][0].leaf();
      auto [y3, s3] =
          CNN().apply(vars, batch,
                      {.mutable_ = Filter{"intermediates"},
                       .capture_intermediates = [](const nn::ModuleBase& m, const std::string&) {
                         return nn::isinstance<nn::Conv>(m);
                       }});
      Array h = nn::avg_pool(nn::relu(s3["intermediates"]["Conv_1"]["__call__"][0].leaf()), {2, 2},
                             {2, 2});
      h = h.reshape({1, -1}).astype(float64);
      const Tree& d0 = variables["params"]["Dense_0"];
      Array f64 =
          matmul(h, d0["kernel"].leaf().astype(float64)) + d0["bias"].leaf().astype(float64);
      Array bound = 1.1920929e-07 * matmul(abs(h), abs(d0["kernel"].leaf().astype(float64)));
      std::cout << "# max |Dense_0 in float32 - in float64| = "
                << max(abs(f32.astype(float64) - f64)).item<double>()
                << "; float32 rounding bound eps * sum|x w| >= " << min(bound).item<double>()
                << "\n";
    }
  }

  std::cout << "In [21]:\n";
  {
    auto init = [](const Array& key, const Array& x) {
      Tree variables = SeqCNN().init(key, x);
      return variables["params"];
    };
    auto features = [](const Tree& params, const Array& x) {
      auto layers = SeqCNN().layers;
      return nn::Sequential(std::vector<nn::Layer>(layers.begin(), layers.begin() + 7))
          .apply(Tree{{"params", params}}, x);
    };
    Tree params = init(random::PRNGKey(0), batch);
    Array f = features(params, batch);
    std::cout << f << "\n";
    check_notebook(f, {0.7018405f, 0.0f, 1.0706136f}, {0.12816615f, 0.00970969f, 0.04631865f},
                   "SeqCNN()[0:7] features");
  }

  std::cout << "In [23]-[25]:\n";
  {
    Array x = zeros({1, 4});  // jnp.empty((1, 4)): random data (zeros, as the notebook's were)
    Array y = zeros({1, 2});  // jnp.empty((1, 2))
    Model model;
    Tree variables = model.init(random::PRNGKey(1), x);
    Tree params = variables["params"], perturbations = variables["perturbations"];
    auto loss_fn = [&](const Tree& params, const Tree& perturbations, const Array& x,
                       const Array& y) {
      Array y_pred = model.apply(Tree{{"params", params}, {"perturbations", perturbations}}, x);
      return mean(square(y_pred - y));
    };
    Tree intermediate_grads = grad(loss_fn, argnums<1>)(params, perturbations, x, y);
    std::cout << freeze(intermediate_grads) << "\n";
    // Dense biases start at zero, so with x = y = 0 every intermediate and its gradient is 0.
    check(all(equal(intermediate_grads["hidden"].leaf(), zeros({1, 8}))).item<bool>() &&
              all(equal(intermediate_grads["logits"].leaf(), zeros({1, 2}))).item<bool>(),
          "intermediate_grads are the notebook's zeros");
  }
  std::cout << (failures ? "FAILED\n" : "all notebook values reproduced\n");
  return failures ? 1 : 0;
}
