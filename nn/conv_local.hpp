// flax.linen.ConvLocal: a convolution with a separate (unshared) kernel at every output position,
// a.k.a. a locally connected layer, computed as Flax does with lax.conv_general_dilated_local; and
// that lax function and its patch extraction, with Flax's layout (NHWC inputs).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include <linum/autodiff/ops.hpp>
#include <linum/nn/linear.hpp>
#include <linum/nn/module.hpp>

namespace linum::nn {

// lax.conv_general_dilated_patches for (N, spatial..., C) inputs: every output position's
// receptive window of filter_shape, flattened into the feature axis channel-major (index
// c * prod(filter_shape) + the window position, row-major), as JAX orders its "C" dimension. The
// output has conv_general_dilated's spatial shape for that window and `opts`; like JAX it runs as
// a grouped convolution with a one-hot kernel. opts.feature_group_count must be 1.
Array conv_general_dilated_patches(const Array& lhs, const std::vector<std::int64_t>& filter_shape,
                                   const ConvOptions& opts = {});

// lax.conv_general_dilated_local for (N, spatial..., C) inputs: rhs is
// (output spatial..., prod(filter_shape) * C, out_features), its middle axis ordered as the
// patches' (channel-major), and y[n, p, o] = sum_k patches[n, p, k] * rhs[p, k, o].
Array conv_general_dilated_local(const Array& lhs, const Array& rhs,
                                 const std::vector<std::int64_t>& filter_shape,
                                 const ConvOptions& opts = {});

// Conv's fields; kernel (output spatial..., prod(kernel_size) * in_features, features) and bias
// (output spatial..., features): one weight set per output position. Padding ('SAME', 'VALID',
// pairs, ints, 'CIRCULAR', 'REFLECT', 'CAUSAL'), strides and both dilations as Conv;
// feature_group_count must be 1 (Flax's NotImplementedError).
struct ConvLocal : Module<ConvLocal>, ConvConfig {
  explicit ConvLocal(ConvConfig c) : ConvConfig(std::move(c)) {
    if (name) named(*name);
  }
  Array call(const Array& x);
};

}  // namespace linum::nn
