// SpectralNorm and WeightNorm, as flax/linen/normalization.py: the wrapped layer's call runs
// through nn.map_variables (every collection mapped) whose trans_in_fn maps each variable by its
// key path, in JAX's sorted-key order (the order their "params" rng draws are made in).
#include <linum/nn/normalization_wrappers.hpp>

#include <algorithm>

#include <linum/autodiff/ops.hpp>
#include <linum/autodiff/random/random.hpp>
#include <linum/nn/dtypes.hpp>
#include <linum/nn/normalization.hpp>
#include <linum/pytree/tree_map.hpp>

namespace linum::nn {

namespace detail {

ModuleBase& WrappedLayer::bound(ModuleBase& owner) {
  if (!bound_) {
    bound_ = share_(*proto_);
    owner.submodule("layer_instance", *bound_);
  }
  bound_->scope();  // a compact child of another module is bound (and named) at first use
  return *bound_;
}

Array WrappedLayer::run(ModuleBase& owner, const Array& x, const VariablesMap& trans_in_fn,
                        const lift::MapVariablesOptions& opts) {
  return run_(bound(owner), x, trans_in_fn, opts);
}

}  // namespace detail

namespace {

// The variable's name below the wrapped layer: the key path without its collection, '/'-joined
// (Flax joins the dict keys; a metadata box adds its field, "value").
std::string variable_path(const std::string& layer_name, const pytree::KeyPath& path) {
  const pytree::KeyPath below(path.begin() + 1, path.end());
  return layer_name + "/" + pytree::keystr(below, true, "/");
}

std::string shape_text(const Shape& s) {
  std::string out = "(";
  for (std::size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + (s.size() == 1 ? ",)" : ")");
}

// Flax's _l2_normalize over every axis: x * rsqrt(sum(x * x) + eps).
Array l2_normalize_all(const Array& x, double eps) { return x * rsqrt(sum(x * x) + eps); }

// Maps every leaf of the layer's variables {collection: ...} with f(key path, value).
template <class F>
Tree map_layer_variables(const Tree& vs, const F& f) {
  return pytree::tree_map_with_path(
      [&](const pytree::KeyPath& path, const Array& v) { return f(path, v); }, vs);
}

}  // namespace

// ---- SpectralNorm ----

void SpectralNorm::setup() {
  layer_.reset();
  layer_.bound(*this);
}

Array SpectralNorm::call(const Array& x, bool update_stats) {
  const std::string layer_name = layer_.bound(*this).module_name().value_or("");
  VariablesMap trans_in = [this, &layer_name, update_stats](const Tree& vs) {
    return map_layer_variables(vs, [&](const pytree::KeyPath& path, const Array& v) {
      return spectral_normalize(layer_name, path, v, update_stats);
    });
  };
  return layer_.run(*this, x, trans_in, {.init = is_initializing(), .mutable_ = true});
}

Array SpectralNorm::spectral_normalize(const std::string& layer_name, const pytree::KeyPath& path,
                                       const Array& vs, bool update_stats) {
  // Scalars, vectors, and no power iteration: the variable as it is, and no state for it.
  if (vs.ndim() <= 1 || n_steps < 1) return vs;
  const std::string var = variable_path(layer_name, path);
  Array value = vs;
  if (vs.ndim() > 2) {
    if (error_on_non_matrix) {
      throw ValueError(
          "SpectralNorm: error_on_non_matrix is true, so every variable must have "
          "rank 2 at most, but \"" +
          var + "\" has rank " + std::to_string(vs.ndim()) + " (shape " + shape_text(vs.shape()) +
          ")");
    }
    value = reshape(vs, {-1, vs.shape(-1)});
  }
  const std::string u_name = var + "/u", sigma_name = var + "/sigma";
  // As Flax, the "params" rng is drawn only when u does not exist yet.
  std::optional<Array> key;
  if (!has_variable(collection_name, u_name)) key = make_rng("params");
  const Shape u_shape{1, value.shape(-1)};
  auto u_var =
      variable(collection_name, u_name, [&] { return random::normal(*key, u_shape, param_dtype); });
  auto sigma_var =
      variable(collection_name, sigma_name, [&] { return ones(Shape{}, param_dtype); });
  Array u0 = u_var.value();
  if (u0.shape() != u_shape) {
    throw ValueError("SpectralNorm: the stored \"" + u_name + "\" in \"" + collection_name +
                     "\" has shape " + shape_text(u0.shape()) + ", expected " +
                     shape_text(u_shape) + " for \"" + var + "\" of shape " +
                     shape_text(vs.shape()));
  }
  // Power iteration for the largest singular value of value (m, n): v (1, m), u (1, n).
  Array v0;
  for (int i = 0; i < n_steps; ++i) {
    v0 = l2_normalize_all(matmul(u0, transpose(value)), epsilon);
    u0 = l2_normalize_all(matmul(v0, value), epsilon);
  }
  u0 = stop_gradient(u0);
  v0 = stop_gradient(v0);
  const Array sigma = reshape(matmul(matmul(v0, value), transpose(u0)), Shape{});
  const Array value_bar =
      reshape(value / where(not_equal(sigma, zeros_like(sigma)), sigma, 1.0), vs.shape());
  if (update_stats) {
    u_var.value() = u0;
    sigma_var.value() = sigma;
  }
  return detail::cast(value_bar,
                      detail::canonicalize_dtype("SpectralNorm", dtype, {vs, u0, v0, sigma}));
}

// ---- WeightNorm ----

void WeightNorm::setup() {
  layer_.reset();
  layer_.bound(*this);
}

Array WeightNorm::call(const Array& x) {
  const std::string layer_name = layer_.bound(*this).module_name().value_or("");
  VariablesMap trans_in = [this, &layer_name](const Tree& vs) {
    return map_layer_variables(vs, [&](const pytree::KeyPath& path, const Array& v) {
      return l2_normalize(layer_name, path, v);
    });
  };
  return layer_.run(*this, x, trans_in, {.init = is_initializing(), .mutable_ = false});
}

Array WeightNorm::l2_normalize(const std::string& layer_name, const pytree::KeyPath& path,
                               const Array& vs) {
  const std::string str_path = variable_path(layer_name, path);
  // Flax matches a filter entry anywhere in the path text ('kernel' in 'Dense_0/kernel').
  if (!variable_filter.empty() &&
      std::none_of(variable_filter.begin(), variable_filter.end(),
                   [&](const std::string& f) { return str_path.find(f) != std::string::npos; }))
    return vs;
  // Flax's _canonicalize_axes: non-negative and deduplicated (a set).
  const int nd = vs.ndim();
  std::vector<int> features;
  for (int a : feature_axes) {
    if (a < -nd || a >= nd) {
      throw ValueError("WeightNorm: feature axis " + std::to_string(a) + " is out of range for \"" +
                       str_path + "\" of shape " + shape_text(vs.shape()) + " (rank " +
                       std::to_string(nd) + ")");
    }
    const int c = a < 0 ? a + nd : a;
    if (std::find(features.begin(), features.end(), c) == features.end()) features.push_back(c);
  }
  std::vector<int> reduction;
  Shape feature_shape(static_cast<std::size_t>(vs.ndim()), 1), reduced_feature_shape;
  for (int i = 0; i < nd; ++i) {
    if (std::find(features.begin(), features.end(), i) == features.end()) {
      reduction.push_back(i);
    } else {
      feature_shape[static_cast<std::size_t>(i)] = vs.shape(i);
      reduced_feature_shape.push_back(vs.shape(i));
    }
  }
  // Flax's _l2_normalize over the non-feature axes (none: each entry on its own).
  Array sq = vs * vs;
  if (!reduction.empty()) sq = sum(sq, Axes(reduction), true);
  Array value_bar = vs * rsqrt(sq + epsilon);
  std::vector<std::optional<Array>> operands{vs};
  if (use_scale) {
    Array scale = reshape(
        param(str_path + "/scale", scale_init, reduced_feature_shape, param_dtype), feature_shape);
    value_bar = value_bar * scale;
    operands.emplace_back(scale);
  }
  return detail::cast(value_bar, detail::canonicalize_dtype("WeightNorm", dtype, operands));
}

}  // namespace linum::nn
