// Dropout, as flax/linen/stochastic.py.
#include <linum/nn/stochastic.hpp>

#include <linum/autodiff/ops.hpp>
#include <linum/autodiff/random/random.hpp>

namespace linum::nn {

Array Dropout::call(const Array& x, std::optional<bool> deterministic_arg) {
  const bool is_deterministic =
      merge_param("deterministic", deterministic, deterministic_arg, "Dropout");
  if (rate < 0.0 || rate > 1.0)
    throw ValueError("Dropout: rate must be in [0, 1], got " + std::to_string(rate));
  if (rate == 0.0 || is_deterministic) return x;
  if (rate == 1.0) return zeros_like(x);
  const double keep_prob = 1.0 - rate;
  Array rng = make_rng(rng_collection);
  Shape bshape = x.shape();
  for (int d : broadcast_dims) {
    const int a = d < 0 ? d + x.ndim() : d;
    if (a < 0 || a >= x.ndim())
      throw ValueError("Dropout: broadcast_dims entry " + std::to_string(d) + " out of range");
    bshape[static_cast<std::size_t>(a)] = 1;
  }
  Array mask = broadcast_to(random::bernoulli(rng, keep_prob, bshape), x.shape());
  return where(mask, x / keep_prob, zeros_like(x));
}

}  // namespace linum::nn
