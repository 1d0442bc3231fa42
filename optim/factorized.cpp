// Adafactor's per-leaf numerics (optax/_src/factorized.py), with linum ops.
#include <algorithm>
#include <numeric>
#include <optional>
#include <utility>
#include <vector>

#include <linum/optim/factorized.hpp>

namespace linum::optim::detail {

namespace {

// The two largest axes (second largest d1, largest d0), as optax's np.argsort picks them; none
// when not factoring, for rank < 2, or when the second largest is below min_dim_size_to_factor.
std::optional<std::pair<int, int>> factored_dims(const Shape& shape, const FactoredOptions& o) {
  if (!o.factored || shape.size() < 2) return std::nullopt;
  std::vector<int> order(shape.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return shape[a] < shape[b]; });
  const int d1 = order[order.size() - 2], d0 = order.back();
  if (shape[d1] < o.min_dim_size_to_factor) return std::nullopt;
  return std::pair{d1, d0};
}

Shape without(const Shape& s, int axis) {
  Shape out = s;
  out.erase(out.begin() + axis);
  return out;
}

}  // namespace

FactoredLeaf factored_init(const Array& param, const FactoredOptions& o) {
  const DType dt = param.dtype();
  if (auto dims = factored_dims(param.shape(), o)) {
    auto [d1, d0] = *dims;
    return {zeros({1}, dt), zeros(without(param.shape(), d0), dt),
            zeros(without(param.shape(), d1), dt), zeros({1}, dt)};
  }
  return {zeros({1}, dt), zeros({1}, dt), zeros({1}, dt), zeros(param.shape(), dt)};
}

FactoredLeaf factored_update(const Array& grad, const Array& v_row, const Array& v_col,
                             const Array& v, const Array& param, const Array& count,
                             const FactoredOptions& o) {
  // decay_t = 1 - (t + 1)**-decay_rate, in float32 as optax's _decay_rate_pow.
  Array t = astype(count - static_cast<int>(o.step_offset), float32) + 1.0;
  Array decay = 1.0 - power(t, full({}, -o.decay_rate, float32));
  Array keep = 1.0 - decay;
  Array grad_sqr = grad * grad + o.epsilon;
  const DType dt = param.dtype();
  FactoredLeaf out{Array(), zeros({1}, dt), zeros({1}, dt), zeros({1}, dt)};
  if (auto dims = factored_dims(param.shape(), o)) {
    auto [d1, d0] = *dims;
    // The float32 decay promotes the statistics: optax casts them back to the param's dtype
    // before the update reads them, so 2-byte params keep 2-byte states and updates.
    out.v_row = astype(decay * v_row + keep * mean(grad_sqr, d0), dt);
    out.v_col = astype(decay * v_col + keep * mean(grad_sqr, d1), dt);
    const int reduced_d1 = d1 > d0 ? d1 - 1 : d1;
    Array row_col_mean = mean(out.v_row, reduced_d1, /*keepdims=*/true);
    Array row_factor = rsqrt(out.v_row / row_col_mean);
    Array col_factor = rsqrt(out.v_col);
    out.update = grad * expand_dims(row_factor, d0) * expand_dims(col_factor, d1);
  } else {
    out.v = astype(decay * v + keep * grad_sqr, dt);
    out.update = grad * rsqrt(out.v);
  }
  return out;
}

Array clip_block_rms(const Array& u, double threshold) {
  Array rms = sqrt(mean(u * u));
  return u / maximum(rms / threshold, 1.0);
}

Array safe_root_mean_squares(const Array& x, double min_rms) {
  return maximum(sqrt(mean(x * x)), min_rms);
}

}  // namespace linum::optim::detail
