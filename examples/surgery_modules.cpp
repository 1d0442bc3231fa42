// Seed 002, Flax's "Model surgery" guide: the params of its CNN (CNN().init) are flattened with
// sep "/", Dense_1/kernel is replaced by a normalised copy, and the result is unflattened and
// refrozen; then the same surgery on an Adam state's mu/nu. Every printout matches the
// notebook's cells In[3], In[7], In[8], In[9], In[10] and In[11] character for character.
#include <cmath>
#include <cstdint>
#include <iostream>
#include <string>
#include <tuple>
#include <vector>

#include <linum/linum.hpp>
#include <linum/nn/nn.hpp>
#include <linum/pytree/pytree.hpp>

#include "seed_models.hpp"

namespace pytree = linum::pytree;
namespace traverse_util = linum::traverse_util;
using linum::FrozenDict;
using Shape = std::vector<std::int64_t>;  // linum's shape type; prints as a Python tuple

// A small dense tensor, standing in for linum::Array in this pytree-only example.
struct Tensor {
  Shape shape;
  std::vector<float> data;
};
template <>
struct linum::pytree::is_leaf<Tensor> : std::true_type {};

Tensor operator/(const Tensor& t, float s) {
  Tensor out = t;
  for (float& x : out.data) x /= s;
  return out;
}

float norm(const Tensor& t) {  // jnp.linalg.norm of the flattened tensor
  double sum = 0;
  for (float x : t.data) sum += double(x) * x;
  return static_cast<float>(std::sqrt(sum));
}

Tensor zeros_like(const Tensor& t) { return {t.shape, std::vector<float>(t.data.size(), 0.f)}; }

using Params = FrozenDict<Tensor>;
using Tree = pytree::BasicTree<Tensor>;

using seed_models::CNN;  // the notebook's CNN, shared with seed_002_surgery.cpp

// The params of CNN().init(key, ones((1, 28, 28, 1)))['params'], copied into Tensors.
Params get_initial_params(const linum::Array& key) {
  linum::Array init_shape = linum::ones({1, 28, 28, 1});
  linum::Tree initial_params = CNN().init(key, init_shape)["params"];
  auto to_tensor = [](const linum::Array& a) {
    const float* d = a.data<float>();
    return Tensor{Shape(a.shape().begin(), a.shape().end()), std::vector<float>(d, d + a.size())};
  };
  return linum::freeze(pytree::tree_map(to_tensor, initial_params));
}

// optax.adam's state: (ScaleByAdamState(count, mu, nu), EmptyState()). A template over its field
// types, so that tree_map can turn it into a state of shapes.
template <class Count, class Moments>
struct ScaleByAdamState {
  BOOST_HANA_DEFINE_STRUCT(ScaleByAdamState, (Count, count), (Moments, mu), (Moments, nu));
};
struct EmptyState {
  BOOST_HANA_DEFINE_STRUCT(EmptyState);
};

// How IPython displays a tuple that does not fit on one line: one element per line, the lines
// of a multi-line element indented by the tuple's one-space group indent.
template <class... Ts>
std::string ipython_display(const std::tuple<Ts...>& t) {
  std::vector<std::string> items;
  std::apply([&](const auto&... x) { (items.push_back(pytree::repr(x)), ...); }, t);
  std::string flat = pytree::repr(t);
  if (flat.size() <= 79 && flat.find('\n') == std::string::npos) return flat;
  std::string out = "(";
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i) out += ",\n ";
    for (char c : items[i]) {
      out += c;
      if (c == '\n') out += ' ';
    }
  }
  return out + (items.size() == 1 ? ",)" : ")");
}

int main() {
  auto shape = [](const Tensor& t) { return t.shape; };  // jnp.shape

  std::cout << "## Surgery with Flax Modules\n\n";
  // The notebook's JAX (mid 2023) used the legacy threefry.
  linum::random::set_threefry_partitionable(false);
  linum::Array key = linum::random::PRNGKey(0);
  Params params = get_initial_params(key);
  std::cout << "In [3]: jax.tree_util.tree_map(jnp.shape, params)\n"
            << pytree::tree_map(shape, params) << "\n\n";

  // Get a flattened key-value list.
  auto flat_params = traverse_util::flatten_dict(params, "/");
  std::cout << "In [7]: jax.tree_util.tree_map(jnp.shape, flat_params)\n"
            << pytree::pformat(pytree::tree_map(shape, flat_params)) << "\n\n";

  // Somehow modify a layer.
  const Tensor dense_kernel = flat_params.at("Dense_1/kernel").leaf();
  flat_params["Dense_1/kernel"] = dense_kernel / norm(dense_kernel);
  // Unflatten, and refreeze.
  Params unflat_params = linum::freeze(traverse_util::unflatten_dict(flat_params, "/"));
  std::cout << "In [8]: jax.tree_util.tree_map(jnp.shape, unflat_params)\n"
            << pytree::tree_map(shape, unflat_params) << "\n\n";
  std::cout << "# norm(Dense_1/kernel): before " << norm(dense_kernel) << ", after "
            << norm(unflat_params["Dense_1"]["kernel"].leaf()) << "\n\n";
  // The surgery changed Dense_1/kernel only: to unit norm, and nothing else.
  bool ok =
      std::abs(norm(unflat_params["Dense_1"]["kernel"].leaf()) - 1.0f) < 1e-6f &&
      pytree::repr(pytree::tree_map(shape, unflat_params)) ==
          pytree::repr(pytree::tree_map(shape, params)) &&
      unflat_params["Dense_0"]["kernel"].leaf().data == params["Dense_0"]["kernel"].leaf().data;

  std::cout << "## Surgery with Optimizers\n\n";
  // tx = optax.adam(1.0); opt_state = tx.init(params)
  auto zeros = pytree::tree_map(zeros_like, params);
  std::tuple opt_state{ScaleByAdamState<Tensor, Params>{Tensor{{}, {0.f}}, zeros, zeros},
                       EmptyState{}};
  std::cout << "In [9]: jax.tree_util.tree_map(jnp.shape, opt_state)\n"
            << ipython_display(pytree::tree_map(shape, opt_state)) << "\n\n";

  auto flat_mu = traverse_util::flatten_dict(std::get<0>(opt_state).mu, "/");
  auto flat_nu = traverse_util::flatten_dict(std::get<0>(opt_state).nu, "/");
  std::cout << "In [10]: jax.tree_util.tree_map(jnp.shape, flat_mu)\n"
            << pytree::pformat(pytree::tree_map(shape, flat_mu)) << "\n\n";

  // Recreate the optimizer state from the (modified) flat moments: mu and nu become plain dicts,
  // as opt_state[0]._replace(mu=unflatten_dict(...), ...) makes them in Python.
  std::tuple new_opt_state{
      ScaleByAdamState<Tensor, Tree>{std::get<0>(opt_state).count,
                                     traverse_util::unflatten_dict(flat_mu, "/"),
                                     traverse_util::unflatten_dict(flat_nu, "/")},
      std::get<1>(opt_state)};
  std::cout << "In [11]: jax.tree_util.tree_map(jnp.shape, opt_state)\n"
            << ipython_display(pytree::tree_map(shape, new_opt_state)) << "\n";
  std::cout << (ok ? "surgery checks hold\n" : "FAILED\n");
  return ok ? 0 : 1;
}
