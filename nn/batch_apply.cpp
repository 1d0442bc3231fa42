// BatchApply's reshapes and errors, as flax/linen/batch_apply.py.
#include <linum/nn/batch_apply.hpp>

#include <string>

#include <linum/autodiff/ops.hpp>

namespace linum::nn::detail {

Array merge_leading_dims(const Array& x, int num_dims) {
  if (x.ndim() < num_dims) return x;
  const Shape& s = x.shape();
  std::int64_t n = 1;
  for (int d = 0; d < num_dims; ++d) n *= s[static_cast<std::size_t>(d)];
  Shape merged{n};
  merged.insert(merged.end(), s.begin() + num_dims, s.end());
  return reshape(x, merged);
}

Array split_leading_dim(const Array& x, const Shape& to_dim) {
  Shape split = to_dim;
  if (x.ndim() > 0) split.insert(split.end(), x.shape().begin() + 1, x.shape().end());
  if (shape_size(split) != x.size()) {
    throw ValueError("BatchApply: can't split the leading axis of an output of shape " +
                     shape_str(x.shape()) + " into the inputs' leading dims " + shape_str(to_dim) +
                     " (the output would be " + shape_str(split) + ")");
  }
  return reshape(x, split);
}

void throw_no_mergeable_input(int num_dims) {
  throw ValueError(
      "BatchApply requires at least one input with ndim >= " + std::to_string(num_dims) + ".");
}

void check_batch_apply_num_dims(int num_dims) {
  if (num_dims < 0)
    throw ValueError("BatchApply: num_dims (the leading dims to merge) must be >= 0, got " +
                     std::to_string(num_dims));
}

}  // namespace linum::nn::detail
