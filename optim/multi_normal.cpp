#include <linum/optim/multi_normal.hpp>

#include <string>
#include <vector>

#include <linum/autodiff/ops.hpp>
#include <linum/autodiff/ops/kernel_util.hpp>
#include <linum/autodiff/random/random.hpp>
#include <linum/error.hpp>

namespace linum::optim {

MultiNormalDiagFromLogScale::MultiNormalDiagFromLogScale(const Array& loc, const Array& log_scale)
    : log_scale_(log_scale),
      scale_(exp(log_scale)),
      mean_(loc),
      param_shape_(
          linum::detail::broadcast_shapes(loc.shape(), log_scale.shape(), "multi_normal")) {
  if (!is_floating(loc.dtype()) || !is_floating(log_scale.dtype()))
    throw TypeError("multi_normal: loc and log_scale must be float32 or float64, got " +
                    std::string(dtype_name(loc.dtype())) + " and " +
                    std::string(dtype_name(log_scale.dtype())));
}

Array MultiNormalDiagFromLogScale::sample(const Shape& shape, const Array& key) const {
  Shape sample_shape = shape;
  sample_shape.insert(sample_shape.end(), param_shape_.begin(), param_shape_.end());
  const DType dt = promote_types(mean_.dtype(), scale_.dtype());
  return random::normal(key, sample_shape, dt) * scale_ + mean_;
}

Array MultiNormalDiagFromLogScale::log_prob(const Array& x) const {
  const Array lp = stats::norm::logpdf(x, mean_, scale_);
  // lp has the parameters' axes last (x broadcasts against them).
  const int n = static_cast<int>(param_shape_.size());
  std::vector<int> axes;
  for (int i = 0; i < n; ++i) axes.push_back(-(i + 1));
  return n == 0 ? lp : sum(lp, Axes(axes));
}

MultiNormalDiagFromLogScale multi_normal(const Array& loc, const Array& log_scale) {
  return MultiNormalDiagFromLogScale(loc, log_scale);
}

}  // namespace linum::optim
