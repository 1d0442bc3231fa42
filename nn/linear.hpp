// flax.linen.Dense, Conv, ConvTranspose and Einsum: Flax's fields, defaults (lecun_normal kernels,
// zero biases) and parameter names, so the same seed gives the same parameters as Flax.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <linum/autodiff/ops.hpp>
#include <linum/nn/initializers.hpp>
#include <linum/nn/module.hpp>

namespace linum::nn {

// flax.linen.linear.default_kernel_init.
initializers::Initializer default_kernel_init();

// repr() texts of dtype fields: float32, or None for an unset computation dtype.
std::string attr_repr(DType d);
std::string attr_repr(const std::optional<DType>& d);

struct DenseConfig {
  std::int64_t features = 0;
  bool use_bias = true;
  // The computation dtype: x, kernel and bias are cast to it before the dot; nullopt means
  // their result_type (float32 at least), as flax.linen.dtypes.promote_dtype.
  std::optional<DType> dtype = std::nullopt;
  DType param_dtype = float32;
  initializers::Initializer kernel_init = default_kernel_init();
  initializers::Initializer bias_init = initializers::zeros_init();
  std::optional<std::string> name = {};
};

// y = x @ kernel + bias over the last axis; kernel (in, features), bias (features,).
struct Dense : Module<Dense>, DenseConfig {
  explicit Dense(std::int64_t features) { this->features = features; }
  explicit Dense(DenseConfig c) : DenseConfig(std::move(c)) {
    if (name) named(*name);
  }
  Array call(const Array& x);
  // Flax's fields in declaration order, for repr().
  Attributes attributes() const override;
};

// flax.linen.linear.PaddingLike, what Conv and ConvTranspose take: a lax padding ('SAME',
// 'SAME_LOWER', 'VALID', (low, high) pairs), Flax's 'CIRCULAR' (periodic) and 'REFLECT' (Conv
// only) and 'CAUSAL' (1-D Conv: left padding keeping the length), an int p meaning (p, p) on every
// spatial dim, or one int per spatial dim. canonicalize_padding turns the ints into pairs.
struct PaddingLike : Padding {
  PaddingLike(const char* m) : Padding(m) {}             // NOLINT(google-explicit-constructor)
  PaddingLike(std::string m) : Padding(std::move(m)) {}  // NOLINT(google-explicit-constructor)
  PaddingLike(const Padding& p) : Padding(p) {}          // NOLINT(google-explicit-constructor)
  PaddingLike(std::vector<std::pair<std::int64_t, std::int64_t>> p)  // NOLINT
      : Padding(std::move(p)) {}
  PaddingLike(std::initializer_list<std::pair<std::int64_t, std::int64_t>> p)  // NOLINT
      : Padding(std::vector<std::pair<std::int64_t, std::int64_t>>(p)) {}
  PaddingLike(int p) : Padding(""), every_dim(p) {}           // NOLINT(google-explicit-constructor)
  PaddingLike(std::int64_t p) : Padding(""), every_dim(p) {}  // NOLINT(google-explicit-constructor)
  PaddingLike(std::vector<std::int64_t> p) : Padding(""), ints(std::move(p)) {}  // NOLINT
  PaddingLike(std::initializer_list<std::int64_t> p)  // NOLINT(google-explicit-constructor)
      : Padding(""), ints(p) {}

  std::optional<std::int64_t> every_dim;          // the int form
  std::optional<std::vector<std::int64_t>> ints;  // the sequence-of-ints form
};

// flax.linen.linear.canonicalize_padding: a string as it is, the int forms as (p, p) pairs; a
// sequence must have `rank` entries (Flax's "Invalid padding format" ValueError otherwise).
Padding canonicalize_padding(const PaddingLike& padding, std::size_t rank);

struct ConvConfig {
  std::int64_t features = 0;
  std::vector<std::int64_t> kernel_size = {};
  std::vector<std::int64_t> strides = {};  // 1 per spatial dim
  PaddingLike padding = "SAME";
  std::vector<std::int64_t> input_dilation = {};   // 1 per spatial dim
  std::vector<std::int64_t> kernel_dilation = {};  // 1 per spatial dim
  std::int64_t feature_group_count = 1;
  bool use_bias = true;
  // The computation dtype (see DenseConfig::dtype).
  std::optional<DType> dtype = std::nullopt;
  DType param_dtype = float32;
  initializers::Initializer kernel_init = default_kernel_init();
  initializers::Initializer bias_init = initializers::zeros_init();
  std::optional<std::string> name = {};
};

// N-d convolution over (batch..., spatial..., features) inputs: several batch dims are folded into
// one and unfolded after, an input without a batch dim gets one, as in Flax; kernel kernel_size +
// (in / feature_group_count, features), bias (features,).
struct Conv : Module<Conv>, ConvConfig {
  explicit Conv(ConvConfig c) : ConvConfig(std::move(c)) {
    if (name) named(*name);
  }
  Array call(const Array& x);
};

namespace detail {
// The input of a Flax _Conv (Conv and ConvLocal) ready for lax: batch dims folded into one (an
// input without any gets one), 'CIRCULAR'/'REFLECT'/'CAUSAL' applied as explicit input padding,
// so `padding` is what lax gets. `op` names the layer in errors.
struct ConvInput {
  Array x;            // (batch, spatial..., features)
  Shape batch_shape;  // the input's batch dims, restored on the output
  Padding padding;
};
ConvInput conv_input(const char* op, const Array& inputs, const ConvConfig& c);
// (batch, spatial..., features) back to (batch dims..., spatial..., features).
Array unfold_conv_output(const Array& y, const Shape& batch_shape);
}  // namespace detail

struct ConvTransposeConfig {
  std::int64_t features = 0;
  std::vector<std::int64_t> kernel_size = {};
  std::vector<std::int64_t> strides = {};  // 1 per spatial dim
  PaddingLike padding = "SAME";
  std::vector<std::int64_t> kernel_dilation = {};  // 1 per spatial dim
  bool use_bias = true;
  bool transpose_kernel = false;
  // The computation dtype (see DenseConfig::dtype).
  std::optional<DType> dtype = std::nullopt;
  DType param_dtype = float32;
  initializers::Initializer kernel_init = default_kernel_init();
  initializers::Initializer bias_init = initializers::zeros_init();
  std::optional<std::string> name = {};
};

// flax.linen.ConvTranspose: lax.conv_transpose over (batch..., spatial..., features) inputs, batch
// dims handled as Conv's; kernel kernel_size + (in, features) — (features, in) with
// transpose_kernel — and bias (features,). 'CIRCULAR' runs a VALID transpose and wraps its
// output periodically onto input size * stride, as Flax.
struct ConvTranspose : Module<ConvTranspose>, ConvTransposeConfig {
  explicit ConvTranspose(ConvTransposeConfig c) : ConvTransposeConfig(std::move(c)) {
    if (name) named(*name);
  }
  Array call(const Array& x);
};

struct EinsumConfig {
  std::vector<std::int64_t> shape = {};  // the kernel's shape
  std::optional<std::string> einsum_str = {};
  bool use_bias = true;
  // The computation dtype (see DenseConfig::dtype).
  std::optional<DType> dtype = std::nullopt;
  DType param_dtype = float32;
  initializers::Initializer kernel_init = default_kernel_init();
  initializers::Initializer bias_init = initializers::zeros_init();
  std::optional<std::string> name = {};
};

// flax.linen.Einsum: jnp.einsum(einsum_str, inputs, kernel) with a kernel of `shape`, plus a bias
// over the output axes the kernel's term names. einsum_str is given here or at call time.
struct Einsum : Module<Einsum>, EinsumConfig {
  explicit Einsum(EinsumConfig c) : EinsumConfig(std::move(c)) {
    if (name) named(*name);
  }
  Array call(const Array& x, const std::optional<std::string>& einsum_str = std::nullopt);
};

}  // namespace linum::nn
