// optax.multi_normal: a Gaussian with diagonal covariance parameterised by its mean and the log of
// its standard deviation (optax's MultiNormalDiagFromLogScale), which samples and scores
// parameter perturbations.
#pragma once

#include <vector>

#include <linum/autodiff/array.hpp>

namespace linum::optim {

// optax's MultiNormalDiagFromLogScale(loc, log_scale): independent normals of mean loc and
// standard deviation exp(log_scale), broadcast together to the parameter shape.
class MultiNormalDiagFromLogScale {
 public:
  MultiNormalDiagFromLogScale(const Array& loc, const Array& log_scale);
  // sample(shape, key): normal(key, shape + parameter shape) * scale + loc. The draws are in the
  // parameters' dtype (JAX's default float for float32 parameters; float64 as under x64).
  Array sample(const Shape& shape, const Array& key) const;
  // log_prob(x): the normal log-density of x summed over the trailing parameter axes.
  Array log_prob(const Array& x) const;
  const Array& log_scale() const { return log_scale_; }
  // params: [loc, log_scale].
  std::vector<Array> params() const { return {mean_, log_scale_}; }
  const Shape& param_shape() const { return param_shape_; }

 private:
  Array log_scale_, scale_, mean_;
  Shape param_shape_;
};

// optax.multi_normal(loc, log_scale).
MultiNormalDiagFromLogScale multi_normal(const Array& loc, const Array& log_scale);

}  // namespace linum::optim
