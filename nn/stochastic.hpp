// flax.linen.Dropout: zeroes inputs with probability `rate` using the "dropout" rng stream and
// scales the kept ones by 1 / (1 - rate); the identity when deterministic.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <linum/nn/module.hpp>

namespace linum::nn {

struct DropoutConfig {
  double rate = 0.0;
  std::vector<int> broadcast_dims = {};
  std::optional<bool> deterministic = {};
  std::string rng_collection = "dropout";
  std::optional<std::string> name = {};
};

struct Dropout : Module<Dropout>, DropoutConfig {
  explicit Dropout(double rate) { this->rate = rate; }
  explicit Dropout(DropoutConfig c) : DropoutConfig(std::move(c)) {
    if (name) named(*name);
  }
  Array call(const Array& x, std::optional<bool> deterministic = std::nullopt);
};

}  // namespace linum::nn
