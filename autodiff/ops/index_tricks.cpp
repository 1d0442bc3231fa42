// Index arithmetic and the functional in-place writers, composed as jax.numpy composes them:
// nonzero of a triangle for its indices, divmod chains for flat indices, and x.at[...].set for
// every write (so their gradients, batching and tracing are the scatter's).
#include <linum/autodiff/ops/index_tricks.hpp>

#include <limits>

#include <linum/autodiff/ops/index_util.hpp>
#include <linum/autodiff/ops/manipulation.hpp>
#include <linum/autodiff/ops/reshaping.hpp>
#include <linum/autodiff/ops/sort.hpp>

namespace linum {
namespace detail {
namespace {

// The number of entries of the upper triangle from diagonal k of an n x m matrix (JAX's
// _triu_size), the static size of triu_indices.
std::int64_t triu_size(std::int64_t n, std::int64_t m, std::int64_t k) {
  if (k < 0) return n * m - triu_size(m, n, 1 - k);
  if (k >= m) return 0;
  const std::int64_t mk = std::min(n, m - k);
  return mk * (mk + 1) / 2 + mk * (m - k - mk);
}

void check_dims(const char* op, std::int64_t n, std::optional<std::int64_t> m) {
  if (n < 0 || (m && *m < 0))
    throw ValueError(std::string(op) + ": matrix dimensions must be non-negative, got n=" +
                     std::to_string(n) + (m ? ", m=" + std::to_string(*m) : std::string()));
}

std::pair<Array, Array> as_pair(const Arrays& ij) { return {ij[0], ij[1]}; }

Shape matrix_shape(const Array& arr, const char* op) {
  check_valid(arr, op);
  if (arr.ndim() != 2)
    throw ValueError(std::string(op) + ": only 2-D inputs are accepted, got shape " +
                     shape_str(arr.shape()));
  return arr.shape();
}

void check_integer(const Array& x, const char* op, const char* what) {
  check_valid(x, op);
  if (!is_integer(x.dtype()))
    throw TypeError(std::string(op) + ": " + what + " must be an integer array, got " +
                    std::string(dtype_name(x.dtype())));
}

// JAX's _tile_to_size: the 1-D arr repeated (or cut) to `size` entries.
Array tile_to_size(const Array& arr, std::int64_t size) {
  Array r = arr;
  if (r.size() < size) r = tile(r, {(size + r.size() - 1) / r.size()});
  return r.size() > size ? slice(r, {Slice{0, size}}) : r;
}

std::vector<Index> as_index(const Arrays& idx) { return {idx.begin(), idx.end()}; }

}  // namespace
}  // namespace detail

using namespace detail;

std::pair<Array, Array> triu_indices(std::int64_t n, std::int64_t k,
                                     std::optional<std::int64_t> m) {
  check_dims("triu_indices", n, m);
  const std::int64_t cols = m.value_or(n);
  return as_pair(nonzero(triu(ones({n, cols}), k), {.size = triu_size(n, cols, k)}));
}

std::pair<Array, Array> tril_indices(std::int64_t n, std::int64_t k,
                                     std::optional<std::int64_t> m) {
  check_dims("tril_indices", n, m);
  const std::int64_t cols = m.value_or(n);
  return as_pair(nonzero(tril(ones({n, cols}), k), {.size = triu_size(cols, n, -k)}));
}

std::pair<Array, Array> triu_indices_from(const Array& arr, std::int64_t k) {
  const Shape s = matrix_shape(arr, "triu_indices_from");
  return triu_indices(s[0], k, s[1]);
}

std::pair<Array, Array> tril_indices_from(const Array& arr, std::int64_t k) {
  const Shape s = matrix_shape(arr, "tril_indices_from");
  return tril_indices(s[0], k, s[1]);
}

Arrays diag_indices(std::int64_t n, int ndim) {
  if (n < 0)
    throw ValueError("diag_indices: n argument to diag_indices must be nonnegative, got " +
                     std::to_string(n));
  if (ndim < 0)
    throw ValueError("diag_indices: ndim argument to diag_indices must be nonnegative, got " +
                     std::to_string(ndim));
  return Arrays(static_cast<std::size_t>(ndim), arange(std::int64_t{0}, n, std::int64_t{1}, int32));
}

Arrays diag_indices_from(const Array& arr) {
  check_valid(arr, "diag_indices_from");
  if (arr.ndim() < 2)
    throw ValueError("diag_indices_from: input array must be at least 2-d, got shape " +
                     shape_str(arr.shape()));
  for (auto d : arr.shape())
    if (d != arr.shape()[0])
      throw ValueError("diag_indices_from: all dimensions of input must be of equal length, got " +
                       shape_str(arr.shape()));
  return diag_indices(arr.shape()[0], arr.ndim());
}

std::pair<Array, Array> mask_indices(std::int64_t n, const MaskFunc& mask_func, std::int64_t k,
                                     std::optional<std::int64_t> size) {
  check_dims("mask_indices", n, std::nullopt);
  const Array mask = mask_func(ones({n, n}), k);
  if (mask.ndim() != 2)
    throw ValueError("mask_indices: mask_func must return a 2-D array, got shape " +
                     shape_str(mask.shape()));
  return as_pair(nonzero(mask, {.size = size}));
}

Arrays unravel_index(const Array& indices, const Shape& shape) {
  check_integer(indices, "unravel_index", "indices");
  for (auto s : shape)
    if (s <= 0)
      throw ValueError("unravel_index: cannot unravel into shape " + shape_str(shape) +
                       " (dimensions must be positive)");
  Arrays out(shape.size());
  Array rest = indices;
  for (std::size_t i = shape.size(); i-- > 0;) {
    auto [q, r] = divmod(rest, full({}, static_cast<double>(shape[i]), indices.dtype()));
    rest = q;
    out[i] = r;
  }
  // What is left past the first dimension: > 0 above the end, < -1 below -size (numpy's
  // negative indices in range leave exactly -1).
  const Array above = rest > 0;
  const Array below = indices.dtype() == uint32 ? zeros({}, bool_) : rest < -1;
  for (std::size_t i = 0; i < shape.size(); ++i)
    out[i] = where(above, full({}, static_cast<double>(shape[i] - 1), indices.dtype()),
                   where(below, zeros({}, indices.dtype()), out[i]));
  return out;
}

Array ravel_multi_index(const Arrays& multi_index, const Shape& dims, IndexMode mode, char order) {
  const char* op = "ravel_multi_index";
  if (multi_index.size() != dims.size())
    throw ValueError(std::string(op) + ": got " + std::to_string(multi_index.size()) +
                     " index arrays for " + std::to_string(dims.size()) + " dimensions " +
                     shape_str(dims));
  if (order != 'C' && order != 'F')
    throw ValueError(std::string(op) + ": invalid order='" + std::string(1, order) +
                     "'. Expected 'C' or 'F'");
  // result_type(int, *multi_index): a weak int takes the indices' integer dtype.
  ResultType t{int32, true};
  for (const Array& i : multi_index) {
    check_valid(i, op);
    if (!is_integer(i.dtype()))
      throw TypeError(std::string(op) + ": only int indices permitted, got " +
                      std::string(dtype_name(i.dtype())));
    t = result_type(t.dtype, t.weak_type, i.dtype(), i.weak_type());
  }
  const double limit = t.dtype == int32
                           ? static_cast<double>(std::numeric_limits<std::int32_t>::max())
                           : static_cast<double>(std::numeric_limits<std::uint32_t>::max());
  double total = 1;
  for (auto d : dims) total *= static_cast<double>(d);
  if (total - 1 > limit)
    throw ValueError(std::string(op) + ": " + std::string(dtype_name(t.dtype)) +
                     " is not large enough to hold flattened indices for dims " + shape_str(dims));
  Arrays idx = multi_index;
  for (std::size_t i = 0; i < idx.size(); ++i) {
    const double d = static_cast<double>(dims[i]);
    switch (mode) {
      case IndexMode::raise: {
        const Array c = concrete_or_error(idx[i], op,
                                          "mode=raise needs concrete indices (under jit or vmap "
                                          "use IndexMode::wrap or IndexMode::clip)");
        if (any(logical_or(c < 0, c >= d)).item<bool>())
          throw ValueError(std::string(op) + ": invalid entry in coordinates array");
        break;
      }
      case IndexMode::clip: idx[i] = clip(idx[i], 0, dims[i] - 1); break;
      case IndexMode::wrap: idx[i] = remainder(idx[i], full({}, d, idx[i].dtype())); break;
      case IndexMode::ignore: break;
    }
  }
  Array result = zeros({}, t.dtype);
  double stride = 1;
  for (std::size_t k = 0; k < idx.size(); ++k) {
    const std::size_t i = order == 'C' ? idx.size() - 1 - k : k;
    result = result + astype(idx[i], t.dtype) * full({}, stride, t.dtype);
    stride *= static_cast<double>(dims[i]);
  }
  return result;
}

Arrays ix_(const Arrays& args) {
  const std::size_t n = args.size();
  Arrays out;
  for (std::size_t i = 0; i < n; ++i) {
    const Array& a = args[i];
    check_valid(a, "ix_");
    if (a.ndim() != 1)
      throw ValueError("ix_: arguments must be 1-dimensional, got shape " + shape_str(a.shape()));
    if (a.dtype() == bool_)
      throw NotImplementedError("ix_: boolean arguments are not implemented (as in JAX)");
    Shape s(n, 1);
    s[i] = a.shape(0);
    // numpy uses an integer index type for empty arrays.
    out.push_back(a.size() == 0 ? zeros(s, int32) : reshape(a, s));
  }
  return out;
}

Array choose(const Array& a, const Arrays& choices, IndexMode mode) {
  check_valid(a, "choose");
  if (!is_integer(a.dtype()))
    throw ValueError("choose: `a` array must be integer typed, got " +
                     std::string(dtype_name(a.dtype())));
  if (choices.empty()) throw ValueError("choose: at least one choice is required");
  const auto n = static_cast<std::int64_t>(choices.size());
  Array idx = a;
  switch (mode) {
    case IndexMode::raise: {
      const Array c = concrete_or_error(a, "choose",
                                        "mode=raise needs a concrete `a` (under jit or vmap use "
                                        "IndexMode::wrap or IndexMode::clip)");
      if (any(logical_or(c < 0, c >= n)).item<bool>())
        throw ValueError("choose: invalid entry in choice array");
      break;
    }
    case IndexMode::wrap: idx = remainder(a, full({}, static_cast<double>(n), a.dtype())); break;
    case IndexMode::clip: idx = clip(a, 0, n - 1); break;
    case IndexMode::ignore:
      throw ValueError("choose: mode must be raise, wrap or clip, got ignore");
  }
  Arrays all{idx};
  all.insert(all.end(), choices.begin(), choices.end());
  Arrays b = broadcast_arrays(all);
  const Array idx_b = b[0];
  b.erase(b.begin());
  const Array stacked = stack(b, 0);
  return squeeze(take_along_axis(stacked, expand_dims(idx_b, 0), 0, GatherMode::clip), 0);
}

Array put(const Array& a, const Array& ind, const Array& v, std::optional<IndexMode> mode) {
  check_valid(a, "put");
  check_valid(v, "put");
  check_integer(ind, "put", "ind");
  Array flat_ind = ravel(ind);
  const Array vals = ravel(v);
  if (a.size() == 0 || flat_ind.size() == 0 || vals.size() == 0) return a;
  AtOptions opts{.mode = GatherScatterMode::fill_or_drop};
  if (mode == IndexMode::clip) {
    flat_ind = clip(flat_ind, 0, a.size() - 1);
    opts.mode = GatherScatterMode::promise_in_bounds;
  } else if (mode == IndexMode::wrap) {
    flat_ind = remainder(flat_ind, full({}, static_cast<double>(a.size()), flat_ind.dtype()));
    opts.mode = GatherScatterMode::promise_in_bounds;
  } else if (mode == IndexMode::raise) {
    throw NotImplementedError("put: the 'raise' mode to jnp.put is not supported");
  } else if (mode == IndexMode::ignore) {
    throw ValueError("put: mode must be nullopt, clip or wrap, got ignore");
  }
  return reshape(at(ravel(a), flat_ind).set(tile_to_size(vals, flat_ind.size()), opts), a.shape());
}

Array put_along_axis(const Array& arr, const Array& indices, const Array& values,
                     std::optional<int> axis, std::optional<GatherScatterMode> mode) {
  const char* op = "put_along_axis";
  check_valid(arr, op);
  check_valid(values, op);
  check_integer(indices, op, "indices");
  const Array x = axis ? arr : ravel(arr);
  if (x.ndim() != indices.ndim())
    throw ValueError(std::string(op) +
                     ": arguments 'arr' and 'indices' must have same ndim, got shapes " +
                     shape_str(x.shape()) + " and " + shape_str(indices.shape()));
  const int ax = axis ? normalize_axis(*axis, x.ndim(), op) : 0;
  Array vals;
  try {
    vals = broadcast_to(values, indices.shape());
  } catch (const ValueError&) {
    throw ValueError(std::string(op) + ": argument 'values' of shape " + shape_str(values.shape()) +
                     " must be broadcastable to 'indices' of shape " + shape_str(indices.shape()));
  }
  // indices(arr.shape, sparse=True) with `indices` along the axis.
  Arrays idx;
  for (int d = 0; d < x.ndim(); ++d) {
    if (d == ax) {
      idx.push_back(indices);
      continue;
    }
    Shape s(static_cast<std::size_t>(x.ndim()), 1);
    s[d] = x.shape()[d];
    idx.push_back(reshape(arange(std::int64_t{0}, x.shape()[d], std::int64_t{1}, int32), s));
  }
  const Array r = at(x, as_index(idx)).set(vals, {.mode = mode});
  return axis ? r : reshape(r, arr.shape());
}

Array place(const Array& arr, const Array& mask, const Array& vals) {
  check_valid(arr, "place");
  check_valid(mask, "place");
  check_valid(vals, "place");
  if (arr.size() != mask.size())
    throw ValueError("place: arr and mask must be the same size, got shapes " +
                     shape_str(arr.shape()) + " and " + shape_str(mask.shape()));
  if (vals.size() == 0) throw ValueError("place: cannot place values from an empty array");
  if (arr.size() == 0) return arr;
  const std::int64_t n = mask.size();
  const Array pos = nonzero(ravel(mask), {.size = n, .fill_value = {n}})[0];
  return reshape(at(ravel(arr), pos)
                     .set(tile_to_size(ravel(vals), n), {.mode = GatherScatterMode::fill_or_drop}),
                 arr.shape());
}

Array fill_diagonal(const Array& a, const Array& val) {
  check_valid(a, "fill_diagonal");
  check_valid(val, "fill_diagonal");
  if (a.ndim() < 2)
    throw ValueError("fill_diagonal: array must be at least 2-d, got shape " +
                     shape_str(a.shape()));
  if (a.ndim() > 2)
    for (auto d : a.shape())
      if (d != a.shape()[0])
        throw ValueError(
            "fill_diagonal: all dimensions of input must be of equal length, got shape " +
            shape_str(a.shape()));
  const std::int64_t n = *std::min_element(a.shape().begin(), a.shape().end());
  const Arrays idx = diag_indices(n, a.ndim());
  const Array v = val.ndim() == 0 || n == 0 || val.size() == 0 ? val : tile_to_size(ravel(val), n);
  return at(a, as_index(idx)).set(v);
}

}  // namespace linum
