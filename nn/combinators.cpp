// Sequential, as flax/linen/combinators.py; its module layers are adopted in setup under the
// field name, layers_<i>, as Flax names modules held in a list field.
#include <linum/nn/combinators.hpp>

namespace linum::nn {

void Sequential::setup() {
  if (layers.empty()) throw ValueError("Empty Sequential module Sequential.");
  bound_.clear();
  for (std::size_t i = 0; i < layers.size(); ++i) {
    if (!layers[i].is_module()) {
      bound_.push_back(nullptr);
      continue;
    }
    auto child = layers[i].module()->clone_base();
    child->attach_as_child(*this, "layers_" + std::to_string(i));
    bound_.push_back(std::move(child));
  }
}

Array Sequential::call(const Array& x) {
  Array y = x;
  for (std::size_t i = 0; i < layers.size(); ++i) y = layers[i](y, bound_[i].get());
  return y;
}

}  // namespace linum::nn
