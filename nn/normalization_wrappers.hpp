// flax.linen's layer wrappers SpectralNorm and WeightNorm: they run a wrapped layer through
// nn.map_variables over the layer's own scope, so the layer's variables stay where Flax keeps
// them (a layer built in a compact method is that module's Dense_1, one built outside any module
// is this wrapper's field "layer_instance"), and the layer sees them normalized. SpectralNorm keeps
// each matrix's power-iteration state ("<layer>/<path>/u", ".../sigma") in `collection_name`;
// WeightNorm learns "<layer>/<path>/scale" params. Both are plain (type-erased) modules so that
// they auto-name SpectralNorm_0 / WeightNorm_0 as Flax does; the wrapped layer is called with one
// Array, as nn::Sequential's layers.
#pragma once

#include <concepts>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <linum/nn/initializers.hpp>
#include <linum/nn/module.hpp>
#include <linum/nn/tabulate.hpp>
#include <linum/nn/transforms.hpp>
#include <linum/pytree/key_path.hpp>

namespace linum::nn {

namespace detail {
// The wrapped layer of SpectralNorm / WeightNorm (Flax's `layer_instance` field): a prototype, and
// per binding of the wrapper a copy that is the same module (it shares the prototype's binding)
// registered as the field "layer_instance", as Flax's _register_submodules: a layer already bound
// in this tree stays where it is, an unbound one is adopted by the wrapper.
class WrappedLayer {
 public:
  template <class M>
  requires std::derived_from<M, ModuleBase>
  explicit WrappedLayer(M layer)
      : proto_(std::make_shared<M>(std::move(layer))),
        share_([](const ModuleBase& m) -> std::shared_ptr<ModuleBase> {
          return std::make_shared<M>(static_cast<const M&>(m));
        }),
        run_([](ModuleBase& bound, const Array& x, const VariablesMap& trans_in_fn,
                const lift::MapVariablesOptions& opts) -> Array {
          auto layer_forward = [](M& m, const Array& in) -> Array { return m(in); };
          return nn::map_variables(layer_forward, true, trans_in_fn, identity_variables, opts)(
              static_cast<M&>(bound), x);
        }) {}

  const ModuleBase& prototype() const { return *proto_; }
  // Forgets the copy of a previous binding (a clone of a bound wrapper carries it).
  void reset() { bound_.reset(); }
  // The copy registered in `owner` (bound, so its name is known).
  ModuleBase& bound(ModuleBase& owner);
  // The layer's call on x through nn.map_variables(mapped_collections=True, trans_in_fn).
  Array run(ModuleBase& owner, const Array& x, const VariablesMap& trans_in_fn,
            const lift::MapVariablesOptions& opts);

 private:
  std::shared_ptr<ModuleBase> proto_, bound_;
  std::function<std::shared_ptr<ModuleBase>(const ModuleBase&)> share_;
  std::function<Array(ModuleBase&, const Array&, const VariablesMap&,
                      const lift::MapVariablesOptions&)>
      run_;
};
}  // namespace detail

struct SpectralNormConfig {
  int n_steps = 1;         // power iterations per call; < 1 leaves the variables as they are
  double epsilon = 1e-12;  // added inside the l2-normalization's rsqrt
  std::optional<DType> dtype = {};   // the result's dtype (default: promoted from the inputs)
  DType param_dtype = float32;       // dtype of the u and sigma variables
  bool error_on_non_matrix = false;  // rank > 2 variables: error instead of (-1, last) reshape
  std::string collection_name = "batch_stats";
  std::optional<std::string> name = {};
};

// SpectralNorm(layer): every variable of the layer of rank >= 2 divided by its largest singular
// value, estimated by n_steps power iterations from the stored u (initialized with
// random::normal from the "params" stream of this module, (1, last axis)). call(x, update_stats):
// update_stats = true stores the new u and sigma (their collection must be mutable).
struct SpectralNorm : Module<SpectralNorm>, SpectralNormConfig {
  template <class M>
  requires std::derived_from<M, ModuleBase>
  explicit SpectralNorm(M layer_instance, SpectralNormConfig c = {})
      : SpectralNormConfig(std::move(c)), layer_(std::move(layer_instance)) {
    if (name) named(*name);
  }
  // The wrapped layer as given (Flax's layer_instance field).
  const ModuleBase& layer_instance() const { return layer_.prototype(); }
  void setup() override;
  Array call(const Array& x, bool update_stats);
  // Flax's update_stats is keyword-only: tabulate lists it after the inputs.
  Array operator()(const Array& x, bool update_stats) {
    return run_method(
        "__call__", [&] { return call(x, update_stats); }, detail::is_compact<SpectralNorm>(),
        [&] {
          return detail::inputs_with_keywords(
              {Tree(x)}, {{"update_stats", detail::keyword_bool(update_stats)}});
        });
  }

 private:
  detail::WrappedLayer layer_;
  Array spectral_normalize(const std::string& layer_name, const pytree::KeyPath& path,
                           const Array& vs, bool update_stats);
};

struct WeightNormConfig {
  double epsilon = 1e-12;
  std::optional<DType> dtype = {};
  DType param_dtype = float32;
  bool use_scale = true;
  initializers::Initializer scale_init = initializers::ones_init();
  // Axes kept by the l2-norm (one norm and one scale per feature); empty is Flax's None: the
  // norm over every axis and a scalar scale.
  std::vector<int> feature_axes = {-1};
  // Only variables whose "<layer>/<path>" contains one of these strings are normalized; empty is
  // Flax's None: every variable.
  std::vector<std::string> variable_filter = {"kernel"};
  std::optional<std::string> name = {};
};

// WeightNorm(layer): the layer's variables chosen by variable_filter l2-normalized over their
// non-feature axes and, with use_scale, multiplied by the params "<layer>/<path>/scale" of the
// feature axes' shape.
struct WeightNorm : Module<WeightNorm>, WeightNormConfig {
  template <class M>
  requires std::derived_from<M, ModuleBase>
  explicit WeightNorm(M layer_instance, WeightNormConfig c = {})
      : WeightNormConfig(std::move(c)), layer_(std::move(layer_instance)) {
    if (name) named(*name);
  }
  const ModuleBase& layer_instance() const { return layer_.prototype(); }
  void setup() override;
  Array call(const Array& x);

 private:
  detail::WrappedLayer layer_;
  Array l2_normalize(const std::string& layer_name, const pytree::KeyPath& path, const Array& vs);
};

}  // namespace linum::nn
