// flax.linen.Embed: a (num_embeddings, features) table in the param 'embedding' (created in
// setup, as Flax does), looked up with integer inputs; attend(query) = query @ embedding.T, the
// logits of a weight-tied output layer.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <linum/nn/initializers.hpp>
#include <linum/nn/module.hpp>

namespace linum::nn {

// flax.linen.linear.default_embed_init: variance_scaling(1.0, 'fan_in', 'normal', out_axis=0).
initializers::Initializer default_embed_init();

struct EmbedConfig {
  std::int64_t num_embeddings = 0;
  std::int64_t features = 0;
  // The dtype of the looked-up vectors and of attend's product (default: the table's, and for
  // attend the query's promoted with it).
  std::optional<DType> dtype = std::nullopt;
  DType param_dtype = float32;
  initializers::Initializer embedding_init = default_embed_init();
  std::optional<std::string> name = {};
};

struct Embed : Module<Embed>, EmbedConfig {
  Array embedding;  // bound by setup

  Embed(std::int64_t num_embeddings, std::int64_t features) {
    this->num_embeddings = num_embeddings;
    this->features = features;
  }
  explicit Embed(EmbedConfig c) : EmbedConfig(std::move(c)) {
    if (name) named(*name);
  }
  void setup() override;
  // inputs (any shape, integer) -> inputs.shape + (features,); out-of-range indices give NaN.
  Array call(const Array& inputs);
  // query (..., features) -> (..., num_embeddings).
  Array attend(const Array& query);
};

}  // namespace linum::nn
