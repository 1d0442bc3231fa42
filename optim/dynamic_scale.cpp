#include <linum/optim/dynamic_scale.hpp>

#include <linum/autodiff/ops.hpp>
#include <linum/error.hpp>

namespace linum::optim {

Array DynamicScale::unscale(const Array& g) const {
  if (!is_inexact(g.dtype()))
    throw TypeError("DynamicScale.value_and_grad: expected floating gradients, got " +
                    std::string(dtype_name(g.dtype())));
  return astype(g, float32) / scale;
}

std::pair<DynamicScale, Array> DynamicScale::update(const std::vector<Array>& grads) const {
  Array finite = Array(true);
  for (const Array& g : grads) finite = logical_and(finite, all(isfinite(g)));
  const Array grow = equal(fin_steps, Array(growth_interval));
  const double float32_max = 3.4028234663852886e38;
  const Array fin_scale =
      where(logical_and(grow, finite), minimum(scale * growth_factor, float32_max), scale);
  Array inf_scale = scale * backoff_factor;
  if (minimum_scale) inf_scale = maximum(inf_scale, *minimum_scale);
  DynamicScale next = *this;
  next.scale = where(finite, fin_scale, inf_scale);
  next.fin_steps = where(logical_or(grow, logical_not(finite)), Array(0), fin_steps + 1);
  return {std::move(next), std::move(finite)};
}

}  // namespace linum::optim
