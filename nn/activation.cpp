// flax.linen.PReLU (flax/linen/activation.py).
#include <linum/nn/activation.hpp>

namespace linum::nn {

Array PReLU::call(const Array& x) {
  const Array slope = param("negative_slope", [this](const Array&) {
    return full({}, negative_slope_init, param_dtype);
  });
  return where(greater_equal(x, 0), x, astype(slope, x.dtype()) * x);
}

}  // namespace linum::nn
