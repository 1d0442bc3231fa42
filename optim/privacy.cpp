#include <linum/optim/privacy.hpp>

namespace linum::optim {

namespace detail {

std::pair<Arrays, Array> private_aggregate(const Arrays& per_example_grads, double l2_norm_clip,
                                           double noise_multiplier, const Array& rng_key) {
  check_batch_dims(per_example_grads, "differentially_private_aggregate");
  const std::int64_t batch = per_example_grads[0].shape(0);
  const Arrays clipped = per_example_clip(per_example_grads, l2_norm_clip).first;
  const double noise_std = l2_norm_clip * noise_multiplier;
  const auto n = static_cast<std::int64_t>(clipped.size());
  const Array keys = random::split(rng_key, n + 1);
  Arrays noised;
  for (std::int64_t i = 0; i < n; ++i) {
    const Array& g = clipped[static_cast<std::size_t>(i)];
    noised.push_back((g + noise_std * random::normal(keys[i + 1], g.shape(), g.dtype())) /
                     static_cast<int>(batch));
  }
  return {std::move(noised), keys[0]};
}

}  // namespace detail

DifferentiallyPrivateAggregate differentially_private_aggregate(double l2_norm_clip,
                                                                double noise_multiplier,
                                                                const Array& key) {
  DifferentiallyPrivateAggregate t;
  t.l2_norm_clip = l2_norm_clip, t.noise_multiplier = noise_multiplier, t.key = key;
  return t;
}

DifferentiallyPrivateAggregate differentially_private_aggregate(double l2_norm_clip,
                                                                double noise_multiplier,
                                                                std::int64_t seed) {
  return differentially_private_aggregate(l2_norm_clip, noise_multiplier, random::key(seed));
}

}  // namespace linum::optim
