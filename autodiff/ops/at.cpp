// JAX's x.at[...]: numpy's indexing rules (integers, static slices, advanced integer arrays, and
// concrete boolean masks) turned into one lax.gather, whose dimension numbers the updates reuse
// as a scatter, as jax.numpy's _index_to_gather does.
#include <linum/autodiff/ops/scatter.hpp>

#include <linum/autodiff/ops/index_util.hpp>
#include <linum/autodiff/ops/sort.hpp>

namespace linum {
namespace detail {
namespace {

struct IndexPlan {
  GatherDimensionNumbers dnums;
  Array indices;             // (batch..., k)
  Shape gather_slice_shape;  // lax.gather's slice_sizes
  Shape slice_shape;         // the shape x[index] has
  bool unique = true;        // no advanced index: windows never repeat
};

bool is_array(const Index& i) { return std::holds_alternative<Array>(i.value()); }

// Boolean masks become the integer arrays of their true positions (numpy's rule), which needs
// their values: under jit or vmap the mask is an error, as in JAX.
std::vector<Index> expand_bool_masks(const Shape& xs, const std::vector<Index>& index) {
  std::vector<Index> out;
  std::size_t axis = 0;
  for (std::size_t p = 0; p < index.size(); ++p) {
    const Index& i = index[p];
    if (!is_array(i) || std::get<Array>(i.value()).dtype() != bool_) {
      out.push_back(i);
      axis += 1;
      continue;
    }
    const Array& m = std::get<Array>(i.value());
    if (m.ndim() == 0)
      throw IndexError(
          "at: a scalar boolean index is not supported; index with a bool array "
          "that matches the indexed axes");
    for (int d = 0; d < m.ndim(); ++d)
      if (axis + d >= xs.size() || (m.shape()[d] != 0 && m.shape()[d] != xs[axis + d]))
        throw IndexError("at: boolean index did not match shape of indexed array in index " +
                         std::to_string(p) + ": got " + shape_str(m.shape()) +
                         " for the axes of shape " + shape_str(xs));
    const Array concrete = concrete_or_error(
        m, "at",
        "a boolean index needs a concrete value (its true count fixes the result's shape); under "
        "jit or vmap use where(mask, x, y) or nonzero with a size");
    for (const Array& nz : nonzero(concrete)) out.emplace_back(nz);
    axis += static_cast<std::size_t>(m.ndim());
  }
  return out;
}

// Negative integers count from the end (jnp's normalize_indices).
Array normalize(const Array& i, std::int64_t n) {
  if (i.dtype() == uint32) return i;
  return where(less(i, zeros({}, i.dtype())), add(i, full({}, static_cast<double>(n), i.dtype())),
               i);
}

IndexPlan plan_index(const Shape& xs, std::vector<Index> index) {
  index = expand_bool_masks(xs, index);
  if (index.size() > xs.size())
    throw IndexError("at: too many indices for array: array is " + std::to_string(xs.size()) +
                     "-dimensional, but " + std::to_string(index.size()) + " were indexed");
  while (index.size() < xs.size()) index.emplace_back(Slice{});
  // Advanced indices: integer arrays with at least one dim; integers join them when present.
  bool any_advanced = false;
  for (const Index& i : index)
    if (is_array(i)) {
      const Array& a = std::get<Array>(i.value());
      check_valid(a, "at");
      if (!is_integer(a.dtype()))
        throw IndexError(
            "at: indices must be integers, integer arrays, bool arrays or slices; "
            "got an array of dtype " +
            std::string(dtype_name(a.dtype())));
      any_advanced |= a.ndim() > 0;
    }
  std::vector<int> adv_pos;
  for (std::size_t p = 0; p < index.size(); ++p)
    if (!std::holds_alternative<Slice>(index[p].value())) adv_pos.push_back(static_cast<int>(p));
  bool contiguous = true;
  for (std::size_t k = 1; k < adv_pos.size(); ++k) contiguous &= adv_pos[k] == adv_pos[k - 1] + 1;

  auto as_index_array = [&](const Index& i, std::int64_t n) {
    if (is_array(i)) return normalize(std::get<Array>(i.value()), n);
    std::int64_t v = std::get<std::int64_t>(i.value());
    if (v < 0) v += n;
    return full({}, static_cast<double>(v), int32);
  };
  Arrays advanced;
  std::vector<int> x_advanced;
  if (any_advanced)
    for (int p : adv_pos) {
      advanced.push_back(as_index_array(index[p], xs[p]));
      x_advanced.push_back(p);
    }

  IndexPlan plan;
  std::vector<std::pair<Array, int>> pieces;  // (array, its first dim in the index batch shape)
  Shape batch_shape;
  int collapsed_y = 0;
  for (std::size_t p = 0; p < index.size(); ++p) {
    const int x_axis = static_cast<int>(p);
    if (any_advanced && static_cast<int>(p) == (contiguous ? adv_pos[0] : 0)) {
      Shape bs;
      for (const Array& a : advanced) bs = broadcast_shapes(bs, a.shape(), "at");
      const int start = static_cast<int>(batch_shape.size());
      for (const Array& a : advanced) pieces.emplace_back(broadcast_to(a, bs), start);
      batch_shape.insert(batch_shape.end(), bs.begin(), bs.end());
      for (int a : x_advanced) {
        plan.dnums.start_index_map.push_back(a);
        plan.dnums.collapsed_slice_dims.push_back(a);
      }
      plan.slice_shape.insert(plan.slice_shape.end(), bs.begin(), bs.end());
      collapsed_y += static_cast<int>(bs.size());
      plan.unique = false;
    }
    if (any_advanced && std::count(x_advanced.begin(), x_advanced.end(), x_axis)) {
      plan.gather_slice_shape.push_back(1);
      continue;
    }
    const Index& i = index[p];
    if (!std::holds_alternative<Slice>(i.value())) {  // a basic integer (or 0-d array)
      if (xs[p] == 0)
        throw IndexError("at: index is out of bounds for axis " + std::to_string(p) +
                         " with size 0");
      pieces.emplace_back(as_index_array(i, xs[p]), static_cast<int>(batch_shape.size()));
      plan.dnums.collapsed_slice_dims.push_back(x_axis);
      plan.dnums.start_index_map.push_back(x_axis);
      plan.gather_slice_shape.push_back(1);
      continue;
    }
    const Slice& s = std::get<Slice>(i.value());
    if (s.step == 0) throw ValueError("at: slice step cannot be zero");
    const auto [start, size] = python_slice(s, xs[p]);
    plan.slice_shape.push_back(size);
    if (s.step == 1) {
      if (size != xs[p]) {
        pieces.emplace_back(full({}, static_cast<double>(start), int32),
                            static_cast<int>(batch_shape.size()));
        plan.dnums.start_index_map.push_back(x_axis);
      }
      plan.gather_slice_shape.push_back(size);
      plan.dnums.offset_dims.push_back(collapsed_y);
    } else {  // a strided slice reads through an index array of its positions
      std::vector<std::int32_t> pos;
      for (std::int64_t k = 0; k < size; ++k)
        pos.push_back(static_cast<std::int32_t>(start + k * s.step));
      pieces.emplace_back(array(pos), static_cast<int>(batch_shape.size()));
      batch_shape.push_back(size);
      plan.gather_slice_shape.push_back(1);
      plan.dnums.start_index_map.push_back(x_axis);
      plan.dnums.collapsed_slice_dims.push_back(x_axis);
    }
    collapsed_y += 1;
  }
  std::sort(plan.dnums.collapsed_slice_dims.begin(), plan.dnums.collapsed_slice_dims.end());
  // The index vectors: each piece broadcast into the batch shape at its dims, then stacked.
  Arrays cols;
  Shape full_shape = batch_shape;
  full_shape.push_back(1);
  for (auto& [a, start] : pieces) {
    Shape s(batch_shape.size() + 1, 1);
    for (int d = 0; d < a.ndim(); ++d) s[start + d] = a.shape()[d];
    cols.push_back(broadcast_to(reshape(astype(a, int32), s), full_shape));
  }
  if (cols.empty())
    plan.indices = zeros({0}, int32);
  else
    plan.indices = cols.size() == 1 ? cols[0] : concatenate(cols, -1);
  return plan;
}

GatherScatterMode update_mode(const AtOptions& o) {
  return o.mode.value_or(GatherScatterMode::fill_or_drop);
}

using ScatterFn = Array (*)(const Array&, const Array&, const Array&,
                            const ScatterDimensionNumbers&, const ScatterOptions&);

// x[index] op= values: values promoted with x, broadcast to x[index]'s shape, scattered, and the
// result cast back to x's dtype and weak type (jax.numpy's _scatter_update).
Array scatter_update(const char* what, const Array& x, const std::vector<Index>& index,
                     const Array& values, ScatterFn fn, const AtOptions& opts) {
  check_valid(x, what);
  check_valid(values, what);
  IndexPlan plan = plan_index(x.shape(), index);
  if (shape_size(plan.slice_shape) == 0) return x;
  const ResultType r = result_type(x, values);
  const Array xp = promote_to(x, r);
  Array y = promote_to(values, r);
  try {
    y = broadcast_to(y, plan.slice_shape);
  } catch (const ValueError&) {
    throw ValueError(std::string(what) + ": values of shape " + shape_str(values.shape()) +
                     " do not broadcast to the indexed shape " + shape_str(plan.slice_shape));
  }
  ScatterDimensionNumbers dn{plan.dnums.offset_dims, plan.dnums.collapsed_slice_dims,
                             plan.dnums.start_index_map};
  ScatterOptions so{update_mode(opts), opts.indices_are_sorted || plan.unique,
                    opts.unique_indices || plan.unique};
  const Array out = fn(xp, plan.indices, y, dn, so);
  return convert_element_type(out, x.dtype(), x.weak_type());
}

}  // namespace
}  // namespace detail

using namespace detail;

IndexUpdateRef at(const Array& x, Index index) { return IndexUpdateRef(x, {std::move(index)}); }
IndexUpdateRef at(const Array& x, std::vector<Index> index) {
  return IndexUpdateRef(x, std::move(index));
}

Array IndexUpdateRef::get(const AtOptions& opts) const {
  check_valid(x_, "at.get");
  IndexPlan plan = plan_index(x_.shape(), index_);
  if (shape_size(plan.slice_shape) == 0) return zeros(plan.slice_shape, x_.dtype());
  GatherOptions go;
  go.mode = opts.mode.value_or(GatherScatterMode::promise_in_bounds);
  go.fill_value = opts.fill_value;
  go.indices_are_sorted = opts.indices_are_sorted || plan.unique;
  go.unique_indices = opts.unique_indices || plan.unique;
  return linum::gather(x_, plan.indices, plan.dnums, plan.gather_slice_shape, go);
}

Array IndexUpdateRef::set(const Array& v, const AtOptions& o) const {
  return scatter_update("at.set", x_, index_, v, &linum::scatter, o);
}
Array IndexUpdateRef::add(const Array& v, const AtOptions& o) const {
  return scatter_update("at.add", x_, index_, v, &linum::scatter_add, o);
}
Array IndexUpdateRef::subtract(const Array& v, const AtOptions& o) const {
  return scatter_update("at.subtract", x_, index_, v, &linum::scatter_sub, o);
}
Array IndexUpdateRef::multiply(const Array& v, const AtOptions& o) const {
  return scatter_update("at.multiply", x_, index_, v, &linum::scatter_mul, o);
}
Array IndexUpdateRef::min(const Array& v, const AtOptions& o) const {
  return scatter_update("at.min", x_, index_, v, &linum::scatter_min, o);
}
Array IndexUpdateRef::max(const Array& v, const AtOptions& o) const {
  return scatter_update("at.max", x_, index_, v, &linum::scatter_max, o);
}
// As JAX: x / (ones with the values multiplied in at index), and x ** (the same), in the
// dtype those ops give (an integer x divides to float).
Array IndexUpdateRef::divide(const Array& v, const AtOptions& o) const {
  check_valid(x_, "at.divide");
  return linum::divide(x_, at(ones_like(x_), index_).multiply(v, o));
}
Array IndexUpdateRef::power(const Array& v, const AtOptions& o) const {
  check_valid(x_, "at.power");
  return linum::power(x_, at(ones_like(x_), index_).multiply(v, o));
}

}  // namespace linum
