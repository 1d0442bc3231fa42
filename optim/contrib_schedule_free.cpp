// Leaf math of schedule_free (contrib_schedule_free.hpp) in optax's order of operations.
#include <cmath>
#include <limits>
#include <string>

#include <linum/error.hpp>
#include <linum/optim/contrib_schedule_free.hpp>

namespace linum::optim::detail {

std::array<Array, 2> schedule_free_weight(const Array& max_lr, const Array& weight_sum,
                                          double weight_lr_power) {
  Array weight = power(max_lr, weight_lr_power);
  Array total = weight_sum + weight;
  Array nan = full({}, std::numeric_limits<double>::quiet_NaN(), weight.dtype());
  Array ck = where(logical_or(isnan(weight), isnan(total)), nan,
                   nan_to_num(weight / total, 0.0, std::numeric_limits<double>::infinity()));
  return {ck, total};
}

std::array<Array, 2> schedule_free_leaf(double b1, const Array& ck, const Array& y,
                                        const Array& z_old, const Array& u) {
  if (!y.valid()) return {};
  Array z = astype(z_old + u, z_old.dtype());
  Array prev_x = (y - (1.0 - b1) * z_old) / b1;
  Array x = (1.0 - ck) * prev_x + ck * z;
  Array new_params = b1 * x + (1.0 - b1) * z;
  return {new_params - y, z};
}

Array schedule_free_eval_leaf(const Array& b1, const Array& y, const Array& z) {
  if (!y.valid()) return {};
  return (y - (1.0 - b1) * z) / b1;
}

void check_schedule_free_b1(double b1, const char* fn) {
  // optax divides by b1 (and documents that it must be strictly positive).
  if (!(b1 > 0.0))
    throw ValueError(std::string(fn) +
                     ": b1 must be strictly positive (the averaged iterate is "
                     "recovered by dividing by it), got " +
                     std::to_string(b1));
}

}  // namespace linum::optim::detail
