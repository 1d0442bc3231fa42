#include <linum/optim/microbatching.hpp>

#include <set>
#include <string>

#include <linum/autodiff/ops.hpp>
#include <linum/error.hpp>

namespace linum::optim::microbatching::detail {

namespace {
void check_floating(const Array& proto) {
  if (!is_floating(proto.dtype()))
    throw ValueError("MEAN and RUNNING_MEAN Accumulators require floating-point values.");
}
}  // namespace

Array reshape_batch_leaf(const Array& x, std::int64_t microbatch_size, int axis) {
  if (axis < 0 || axis >= x.ndim())
    throw ValueError("reshape_batch_axis: axis " + std::to_string(axis) +
                     " is not an axis of a leaf of shape " + shape_str(x.shape()));
  const std::int64_t b = x.shape(axis);
  if (b % microbatch_size != 0)
    throw ValueError("reshape_batch_axis: the batch axis of size " + std::to_string(b) +
                     " must be divisible by microbatch_size=" + std::to_string(microbatch_size));
  // Column-major (n, m) is row-major (m, n) with the two axes swapped.
  Shape s = x.shape();
  s[static_cast<std::size_t>(axis)] = microbatch_size;
  s.insert(s.begin() + axis + 1, b / microbatch_size);
  return swapaxes(x.reshape(s), axis, axis + 1);
}

std::vector<AccumulationType> leaf_types(const Accumulation& acc, std::size_t n) {
  if (acc.types.size() == 1) return std::vector<AccumulationType>(n, acc.types[0]);
  if (acc.types.size() != n)
    throw ValueError("microbatch: the accumulator gives " + std::to_string(acc.types.size()) +
                     " accumulation types for a function output with " + std::to_string(n) +
                     " leaves (give one for all, or one per leaf)");
  return acc.types;
}

Array accumulator_init(AccumulationType t, const Array& proto, std::int64_t num_microbatches) {
  switch (t) {
    case AccumulationType::MEAN:
    case AccumulationType::RUNNING_MEAN:
      check_floating(proto);
      return zeros(proto.shape(), proto.dtype());
    case AccumulationType::SUM: return zeros(proto.shape(), proto.dtype());
    case AccumulationType::CONCAT: {
      Shape s = proto.shape();
      s.insert(s.begin(), num_microbatches);
      return zeros(s, proto.dtype());
    }
  }
  throw ValueError("microbatch: Unknown accumulator");
}

Array accumulator_update(AccumulationType t, const Array& carry, const Array& value,
                         const Array& index) {
  switch (t) {
    case AccumulationType::MEAN:
    case AccumulationType::SUM: return carry + value;
    case AccumulationType::RUNNING_MEAN: {
      // p = index / (index + 1) in the values' dtype: the running mean after index + 1 values.
      const Array i = astype(index, value.dtype());
      const Array p = i / (i + 1);
      return carry * p + value * (1 - p);
    }
    case AccumulationType::CONCAT: {
      Arrays start{astype(index, int32)};
      for (int d = 0; d < value.ndim(); ++d) start.push_back(zeros({}, int32));
      Shape s = value.shape();
      s.insert(s.begin(), 1);
      return dynamic_update_slice(carry, value.reshape(s), start);
    }
  }
  throw ValueError("microbatch: Unknown accumulator");
}

Array accumulator_finalize(AccumulationType t, const Array& carry, std::int64_t num_microbatches) {
  switch (t) {
    case AccumulationType::MEAN: return carry / static_cast<double>(num_microbatches);
    case AccumulationType::SUM:
    case AccumulationType::RUNNING_MEAN: return carry;
    case AccumulationType::CONCAT: {
      // optax's column-major reshape (n, m, ...) -> (n * m, ...): row i + n j is [i, j], which
      // puts the examples back in the batch's order.
      if (carry.ndim() < 2) return carry;
      Shape s(carry.shape().begin() + 1, carry.shape().end());
      s[0] *= carry.shape(0);
      return swapaxes(carry, 0, 1).reshape(s);
    }
  }
  throw ValueError("microbatch: Unknown accumulator");
}

std::int64_t microbatch_count(const std::vector<std::pair<Arrays, int>>& batch_leaves,
                              std::int64_t microbatch_size) {
  std::vector<std::int64_t> sizes;
  for (const auto& [leaves, axis] : batch_leaves)
    for (const Array& x : leaves) {
      if (!x.valid()) continue;
      if (axis < 0 || axis >= x.ndim())
        throw ValueError("microbatch: in_axes " + std::to_string(axis) +
                         " is not an axis of a batch argument's leaf of shape " +
                         shape_str(x.shape()));
      sizes.push_back(x.shape(axis));
    }
  if (sizes.empty()) throw ValueError("microbatch: the batch arguments hold no arrays");
  if (std::set<std::int64_t>(sizes.begin(), sizes.end()).size() > 1) {
    std::string list;
    for (std::int64_t s : sizes) list += (list.empty() ? "" : ", ") + std::to_string(s);
    throw ValueError("microbatch: Batch Arguments must have equal-size batch axes, found [" + list +
                     "].");
  }
  if (sizes[0] % microbatch_size != 0)
    throw ValueError("microbatch: batch_size=" + std::to_string(sizes[0]) +
                     " must be divisible by microbatch_size=" + std::to_string(microbatch_size) +
                     ".");
  return sizes[0] / microbatch_size;
}

void check_microbatch_args(std::size_t num_batch_args, std::vector<int>& in_axes,
                           std::optional<std::int64_t> microbatch_size) {
  if (microbatch_size && *microbatch_size <= 0)
    throw ValueError("microbatch: microbatch_size must be positive, got " +
                     std::to_string(*microbatch_size));
  if (in_axes.size() == 1) in_axes.assign(num_batch_args, in_axes[0]);
  if (in_axes.size() != num_batch_args)
    throw ValueError("microbatch: in_axes has " + std::to_string(in_axes.size()) + " entries for " +
                     std::to_string(num_batch_args) +
                     " batch arguments (give one for all, or one per argument)");
}

void check_num_real_microbatches(std::int64_t num_real, std::int64_t num_microbatches) {
  if (num_real < 0 || num_real > num_microbatches)
    throw ValueError("microbatch: num_real_microbatches must be in [0, " +
                     std::to_string(num_microbatches) + "], got " + std::to_string(num_real));
}

}  // namespace linum::optim::microbatching::detail
