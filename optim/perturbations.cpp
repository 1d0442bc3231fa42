// optax.perturbations' noise distributions and the checks of make_perturbed_fun's arguments.
#include <string>

#include <linum/autodiff/random/random.hpp>
#include <linum/optim/perturbations.hpp>

namespace linum::optim::perturbations {

Array Normal::sample(const Array& key, const Shape& sample_shape, DType dtype) const {
  return random::normal(key, sample_shape, dtype);
}
Array Normal::log_prob(const Array& inputs) const { return -0.5 * square(inputs); }

Array Gumbel::sample(const Array& key, const Shape& sample_shape, DType dtype) const {
  return random::gumbel(key, sample_shape, dtype);
}
Array Gumbel::log_prob(const Array& inputs) const { return -inputs - exp(-inputs); }

namespace detail {
void check_perturbation_args(std::int64_t num_samples, double sigma) {
  if (num_samples < 1)
    throw ValueError("make_perturbed_fun: num_samples must be at least 1, got " +
                     std::to_string(num_samples));
  if (sigma == 0.0)
    throw ValueError("make_perturbed_fun: sigma must be nonzero (the noise is divided by it)");
}
}  // namespace detail

}  // namespace linum::optim::perturbations
