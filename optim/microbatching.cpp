// optax.microbatching's accumulators (the four AccumulationTypes as optax builds them, and the
// loop over any Accumulator), the column-major batch reshape and the argument checks.
#include <linum/optim/microbatching.hpp>

#include <set>
#include <string>

#include <linum/autodiff/ops.hpp>
#include <linum/error.hpp>

namespace linum::optim::microbatching::detail {

namespace {
void check_floating(DType dtype) {
  if (!is_floating(dtype))
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

std::vector<Accumulation::Entry> leaf_entries(const Accumulation& acc, std::size_t n) {
  if (acc.entries.size() == 1) return std::vector<Accumulation::Entry>(n, acc.entries[0]);
  if (acc.entries.size() != n)
    throw ValueError("microbatch: the accumulator gives " + std::to_string(acc.entries.size()) +
                     " accumulation types for a function output with " + std::to_string(n) +
                     " leaves (give one for all, or one per leaf)");
  return acc.entries;
}

namespace {
Array zeros_of(const ShapeDtype& s) { return zeros(s.shape, s.dtype); }
Tree add_value(const Tree& carry, const Array& value, const Array&) { return carry.leaf() + value; }
Array same(const Tree& carry) { return carry.leaf(); }
Tree zeros_floating(const ShapeDtype& s) {
  check_floating(s.dtype);
  return zeros_of(s);
}
}  // namespace

Accumulator canonical(const Accumulation::Entry& e, std::int64_t num_microbatches) {
  if (const auto* a = std::get_if<Accumulator>(&e)) {
    if (!a->init || !a->update || !a->finalize || !a->aggregate)
      throw ValueError(
          "microbatch: an Accumulator needs all of init, update, finalize and "
          "aggregate");
    return *a;
  }
  const auto t = std::get<AccumulationType>(e);
  if ((t == AccumulationType::MEAN || t == AccumulationType::CONCAT) && num_microbatches <= 0)
    throw ValueError("microbatch: num_microbatches=" + std::to_string(num_microbatches) +
                     " must be positive.");
  switch (t) {
    case AccumulationType::SUM:
      return {[](const ShapeDtype& s) { return Tree(zeros_of(s)); }, add_value, same,
              [](const Array& v) { return sum(v, 0); }};
    case AccumulationType::MEAN:
      return {zeros_floating, add_value,
              [num_microbatches](const Tree& c) {
                return c.leaf() / static_cast<double>(num_microbatches);
              },
              [](const Array& v) { return mean(v, 0); }};
    case AccumulationType::RUNNING_MEAN:
      return {zeros_floating,
              [](const Tree& carry, const Array& value, const Array& index) {
                // p = index / (index + 1) in the values' dtype: the mean after index + 1 values.
                const Array i = astype(index, value.dtype());
                const Array p = i / (i + 1);
                return Tree(carry.leaf() * p + value * (1 - p));
              },
              same, [](const Array& v) { return mean(v, 0); }};
    case AccumulationType::CONCAT:
      return {[num_microbatches](const ShapeDtype& s) {
                Shape shape = s.shape;
                shape.insert(shape.begin(), num_microbatches);
                return Tree(zeros(shape, s.dtype));
              },
              [](const Tree& carry, const Array& value, const Array& index) {
                Arrays start{astype(index, int32)};
                for (int d = 0; d < value.ndim(); ++d) start.push_back(zeros({}, int32));
                Shape s = value.shape();
                s.insert(s.begin(), 1);
                return Tree(dynamic_update_slice(carry.leaf(), value.reshape(s), start));
              },
              [](const Tree& c) {
                // optax's column-major reshape (n, m, ...) -> (n * m, ...): row i + n j is
                // [i, j], which puts the examples back in the batch's order.
                const Array& carry = c.leaf();
                if (carry.ndim() < 2) return carry;
                Shape s(carry.shape().begin() + 1, carry.shape().end());
                s[0] *= carry.shape(0);
                return swapaxes(carry, 0, 1).reshape(s);
              },
              [](const Array& v) { return v; }};
  }
  throw ValueError("microbatch: Unknown accumulator");
}

Arrays accumulate(const std::vector<Accumulator>& accs, const Arrays& proto, std::int64_t bound,
                  const std::function<Arrays(const Array& index)>& call) {
  // Each leaf's carry is a Tree: the loop carries all their leaves, rebuilt around each update.
  std::vector<Tree> carries;
  std::vector<std::size_t> sizes;
  Arrays flat;
  for (std::size_t k = 0; k < proto.size(); ++k) {
    carries.push_back(
        accs[k].init(ShapeDtype{proto[k].shape(), proto[k].dtype(), proto[k].weak_type()}));
    Arrays leaves = linum::detail::tree_arrays(carries.back());
    sizes.push_back(leaves.size());
    flat.insert(flat.end(), leaves.begin(), leaves.end());
  }
  auto unpack = [&](const Arrays& f) {
    std::vector<Tree> out;
    std::size_t at = 0;
    for (std::size_t k = 0; k < carries.size(); ++k) {
      out.push_back(linum::detail::tree_rebuild(
          carries[k], Arrays(f.begin() + static_cast<std::ptrdiff_t>(at),
                             f.begin() + static_cast<std::ptrdiff_t>(at + sizes[k]))));
      at += sizes[k];
    }
    return out;
  };
  flat = fori_loop(
      Array(0), Array(static_cast<int>(bound)),
      [&](const Array& index, const Arrays& c) {
        const Arrays v = call(index);
        const std::vector<Tree> cs = unpack(c);
        Arrays next;
        for (std::size_t k = 0; k < cs.size(); ++k) {
          Arrays leaves = linum::detail::tree_arrays(accs[k].update(cs[k], v[k], index));
          next.insert(next.end(), leaves.begin(), leaves.end());
        }
        return next;
      },
      flat);
  const std::vector<Tree> cs = unpack(flat);
  Arrays out;
  for (std::size_t k = 0; k < cs.size(); ++k) out.push_back(accs[k].finalize(cs[k]));
  return out;
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

void check_microbatch_size(std::optional<std::int64_t> microbatch_size) {
  if (microbatch_size && *microbatch_size <= 0)
    throw ValueError("microbatch: microbatch_size must be positive, got " +
                     std::to_string(*microbatch_size));
}

void check_microbatch_args(std::size_t num_batch_args, std::vector<int>& in_axes,
                           std::optional<std::int64_t> microbatch_size) {
  check_microbatch_size(microbatch_size);
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

std::vector<std::optional<int>> micro_vmap_axes(const AxisSpec& in_axes, int out_axes) {
  if (out_axes != 0)
    throw NotImplementedError("micro_vmap: out_axis != 0 is not currently supported");
  std::vector<std::optional<int>> axes;
  if (in_axes.kind() == AxisSpec::Kind::Leaf) return {in_axes.axis()};
  if (in_axes.kind() == AxisSpec::Kind::Seq)
    for (const AxisSpec& a : in_axes.items()) {
      if (a.kind() != AxisSpec::Kind::Leaf)
        throw ValueError("micro_vmap: in_axes must give one axis or None per argument, got " +
                         in_axes.to_string());
      axes.push_back(a.axis());
    }
  else
    throw ValueError("micro_vmap: in_axes must give one axis or None per argument, got " +
                     in_axes.to_string());
  return axes;
}

void check_arg_count(std::size_t axes, std::size_t args, const char* fn) {
  if (axes != args)
    throw ValueError(std::string(fn) + ": in_axes gives " + std::to_string(axes) +
                     " axes for a function called with " + std::to_string(args) + " arguments");
}

}  // namespace linum::optim::microbatching::detail
