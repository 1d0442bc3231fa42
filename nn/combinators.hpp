// flax.linen.Sequential: applies its layers in order; module layers become the children
// layers_<i> (i = the position in the list), functions (nn::relu, lambdas) are called as they are.
#pragma once

#include <concepts>
#include <functional>
#include <memory>
#include <vector>

#include <linum/nn/module.hpp>

namespace linum::nn {

// One entry of Sequential's list: a module (kept as an unbound prototype) or a function.
class Layer {
 public:
  template <class M>
  requires std::derived_from<std::remove_cvref_t<M>, ModuleBase> Layer(
      M m)  // NOLINT(google-explicit-constructor)
      : module_(std::make_shared<std::remove_cvref_t<M>>(std::move(m))),
        call_([](ModuleBase& b, const Array& x) {
          return static_cast<std::remove_cvref_t<M>&>(b)(x);
        }) {}
  template <class F>
  requires(!std::derived_from<std::remove_cvref_t<F>, ModuleBase> &&
           std::is_invocable_r_v<Array, const F&, const Array&>)
      Layer(F f)  // NOLINT(google-explicit-constructor)
      : fn_([f = std::move(f)](const Array& x) -> Array { return f(x); }) {}

  bool is_module() const { return module_ != nullptr; }
  const std::shared_ptr<ModuleBase>& module() const { return module_; }
  // Calls a module layer's bound copy `bound`, or the function.
  Array operator()(const Array& x, ModuleBase* bound) const {
    return bound ? call_(*bound, x) : fn_(x);
  }

 private:
  std::shared_ptr<ModuleBase> module_;
  std::function<Array(ModuleBase&, const Array&)> call_;
  std::function<Array(const Array&)> fn_;
};

struct Sequential : Module<Sequential> {
  std::vector<Layer> layers;
  explicit Sequential(std::vector<Layer> layers) : layers(std::move(layers)) {}
  void setup() override;
  Array call(const Array& x);

 private:
  std::vector<std::shared_ptr<ModuleBase>> bound_;  // per layer: its bound copy, or null
};

}  // namespace linum::nn
