// jax.numpy's set operations, composed as JAX composes them: one sort of the flattened values,
// a mask of the entries that start a new value, and nonzero / scatters over that mask. With a
// static size every step keeps a static shape, so they run under jit and vmap.
#include <linum/autodiff/ops/set_ops.hpp>

#include <linum/autodiff/ops/complex.hpp>
#include <linum/autodiff/ops/differences.hpp>
#include <linum/autodiff/ops/index_util.hpp>
#include <linum/autodiff/ops/manipulation.hpp>
#include <linum/autodiff/ops/scatter.hpp>
#include <linum/autodiff/ops/sort.hpp>

namespace linum {
namespace detail {
namespace {

Array iota(std::int64_t n) { return arange(std::int64_t{0}, n, std::int64_t{1}, int32); }

// The first `size` positions hold results: a bool mask of arange(size) < count.
Array first(std::int64_t size, const Array& count) { return less(iota(size), count); }

Array tail(const Array& x) { return slice(x, {Slice{1, std::nullopt}}); }
Array head(const Array& x) { return slice(x, {Slice{0, -1}}); }

void check_size(const char* op, std::optional<std::int64_t> size) {
  if (size && *size < 0)
    throw ValueError(std::string(op) + ": size must be non-negative, got " + std::to_string(*size));
}

// Without a static size the result's length depends on the values: they must be concrete.
void require_concrete(const Array& x, const char* op) {
  concrete_or_error(x, op,
                    "the size argument must be given to use it under jit or vmap (the number of "
                    "results is not static there)");
}

void check_sortable(const Array& x, const char* op) {
  check_valid(x, op);
  if (is_complex(x.dtype()))
    throw TypeError(std::string(op) + ": complex arrays are not supported (linum sorts real " +
                    "values only), got " + std::string(dtype_name(x.dtype())));
}

// JAX's _unique of a flattened array: sorted values, the first index of each, the inverse (in
// x's shape), the counts, and the number of distinct values (int32 scalar).
struct UniqueParts {
  Array values, indices, inverse, counts, true_size;
};

UniqueParts unique_parts(const Array& x, const char* op, bool equal_nan,
                         std::optional<std::int64_t> size, std::optional<Array> fill_value) {
  check_sortable(x, op);
  check_size(op, size);
  if (!size) require_concrete(x, op);
  const Array flat = ravel(x);
  const std::int64_t n = flat.size();
  UniqueParts r;
  if (n == 0) {
    if (size && *size > 0 && !fill_value)
      throw ValueError(std::string(op) +
                       ": for zero-sized input with nonzero size argument, fill_value must be "
                       "specified");
    r.values = fill_value ? broadcast_to(astype(*fill_value, x.dtype()), {size.value_or(0)})
                          : zeros({size.value_or(0)}, x.dtype());
    r.indices = r.counts = zeros({0}, int32);
    r.inverse = zeros(x.shape(), int32);
    r.true_size = zeros({}, int32);
    return r;
  }
  const Array perm = argsort(flat, 0);
  const Array aux = take(flat, perm, 0, GatherMode::clip);
  Array differs = not_equal(tail(aux), head(aux));
  if (equal_nan && is_floating(aux.dtype()))
    differs = logical_and(differs, logical_not(logical_and(isnan(tail(aux)), isnan(head(aux)))));
  const Array mask = concatenate({ones({1}, bool_), differs}, 0);
  r.true_size = astype(sum(mask), int32);
  const Array ind = nonzero(mask, {.size = size})[0];
  r.values = take(aux, ind, 0, GatherMode::clip);
  if (size && fill_value)
    r.values = where(first(*size, r.true_size), r.values, astype(*fill_value, x.dtype()));
  r.indices = take(perm, ind, 0, GatherMode::clip);
  r.inverse = reshape(at(zeros({n}, int32), perm).set(cumsum(mask) - 1), x.shape());
  // The starts of the runs of equal values, then the end: their differences are the counts
  // (padding starts read as n, so that the padding counts are 0).
  Array starts;
  if (!size) {
    starts = concatenate({nonzero(mask)[0], full({1}, static_cast<double>(n), int32)}, 0);
  } else {
    const Array s = nonzero(mask, {.size = *size + 1})[0];
    starts = concatenate(
        {slice(s, {Slice{0, 1}}), where(tail(s), tail(s), full({}, static_cast<double>(n), int32))},
        0);
  }
  r.counts = diff(starts);
  return r;
}

// The flattened arrays promoted to their common dtype.
std::pair<Array, Array> promoted_flat(const Array& a, const Array& b, const char* op) {
  check_valid(a, op);
  check_valid(b, op);
  const ResultType t = result_type(a, b);
  return {ravel(promote_to(a, t)), ravel(promote_to(b, t))};
}

// x where `valid`, elsewhere fill_value, or by default the smallest valid entry (JAX fills with
// the maximum first so that the minimum ignores the padding).
Array pad_results(const Array& vals, const Array& valid, std::optional<double> fill_value) {
  if (fill_value) return where(valid, vals, full({}, *fill_value, vals.dtype()));
  if (vals.size() == 0) return vals;
  const Array hi = where(valid, vals, max(vals));
  return where(valid, hi, min(hi));
}

// JAX's _in1d: whether each entry of the flattened a1 is in a2 (or not, with invert).
Array in1d(const Array& a1, const Array& a2, bool invert, IsinMethod method, bool assume_unique) {
  auto [x, y] = promoted_flat(a1, a2, "isin");
  if (x.size() == 0 || y.size() == 0) return full(x.shape(), invert ? 1 : 0, bool_);
  switch (method) {
    case IsinMethod::auto_:
    case IsinMethod::compare_all: {
      const Array eq = equal(expand_dims(x, 1), expand_dims(y, 0));
      return invert ? logical_not(any(eq, -1)) : any(eq, -1);
    }
    case IsinMethod::binary_search: {
      check_sortable(y, "isin");
      const Array s = sort(y);
      const Array found = take(s, searchsorted(s, x), 0, GatherMode::clip);
      return invert ? not_equal(x, found) : equal(x, found);
    }
    case IsinMethod::sort: {
      check_sortable(x, "isin");
      check_sortable(y, "isin");
      // Sort both together: an entry of x is in y when the entry after it in the sorted order
      // (an entry of y, since x's own repeats are removed first) is equal.
      Array xs = x, inverse;
      if (!assume_unique) {
        const UniqueParts u = unique_parts(x, "isin", true, x.size(), max(y));
        xs = u.values;
        inverse = u.inverse;
      }
      const Array both = concatenate({xs, y}, 0);
      auto [aux, ind] = sort_key_val(both, iota(both.size()));
      const Array hit = invert ? not_equal(tail(aux), head(aux)) : equal(tail(aux), head(aux));
      const Array found = at(full(xs.shape(), invert ? 1 : 0, bool_), head(ind))
                              .set(hit, {.mode = GatherScatterMode::fill_or_drop});
      return assume_unique ? found : take(found, inverse, 0, GatherMode::clip);
    }
  }
  throw ValueError("isin: unknown method");
}

// JAX's _concat_unique: the distinct values of a, then those of b, in one array of length
// a.size + b.size (the rest padding), and how many entries are real.
std::pair<Array, Array> concat_unique(const Array& a, const Array& b, const char* op) {
  const UniqueParts ua = unique_parts(a, op, true, a.size(), std::nullopt);
  const UniqueParts ub = unique_parts(b, op, true, b.size(), std::nullopt);
  Array arr = zeros({a.size() + b.size()}, a.dtype());
  arr = dynamic_update_slice(arr, ua.values, Arrays{zeros({}, int32)});
  arr = dynamic_update_slice(arr, ub.values, Arrays{ua.true_size});
  return {arr, ua.true_size + ub.true_size};
}

}  // namespace
}  // namespace detail

using namespace detail;

namespace {
std::optional<Array> fill_array(std::optional<double> fill_value) {
  if (!fill_value) return std::nullopt;
  return full({}, *fill_value, float64);
}
}  // namespace

// linum::unique (declared with the sorting ops) is the same machinery with NaNs counted as one.
Array unique(const Array& ar, std::optional<std::int64_t> size, std::optional<double> fill_value) {
  return unique_parts(ar, "unique", true, size, fill_array(fill_value)).values;
}

UniqueAllResult unique_all(const Array& x, std::optional<std::int64_t> size,
                           std::optional<double> fill_value) {
  UniqueParts u = unique_parts(x, "unique_all", false, size, fill_array(fill_value));
  return {u.values, u.indices, u.inverse, u.counts};
}

UniqueCountsResult unique_counts(const Array& x, std::optional<std::int64_t> size,
                                 std::optional<double> fill_value) {
  UniqueParts u = unique_parts(x, "unique_counts", false, size, fill_array(fill_value));
  return {u.values, u.counts};
}

UniqueInverseResult unique_inverse(const Array& x, std::optional<std::int64_t> size,
                                   std::optional<double> fill_value) {
  UniqueParts u = unique_parts(x, "unique_inverse", false, size, fill_array(fill_value));
  return {u.values, u.inverse};
}

Array unique_values(const Array& x, std::optional<std::int64_t> size,
                    std::optional<double> fill_value) {
  return unique_parts(x, "unique_values", false, size, fill_array(fill_value)).values;
}

Array union1d(const Array& ar1, const Array& ar2, std::optional<std::int64_t> size,
              std::optional<double> fill_value) {
  auto [a, b] = promoted_flat(ar1, ar2, "union1d");
  return unique_parts(concatenate({a, b}, 0), "union1d", true, size, fill_array(fill_value)).values;
}

std::tuple<Array, Array, Array> intersect1d_indices(const Array& ar1, const Array& ar2,
                                                    bool assume_unique,
                                                    std::optional<std::int64_t> size,
                                                    std::optional<double> fill_value) {
  const char* op = "intersect1d";
  auto [a, b] = promoted_flat(ar1, ar2, op);
  check_sortable(a, op);
  check_size(op, size);
  const std::int64_t na = a.size(), nb = b.size();
  if (!size) {
    // Eagerly: the distinct values of each, sorted together; equal neighbours are the results.
    require_concrete(a, op);
    require_concrete(b, op);
    Array ind1 = iota(na), ind2 = iota(nb);
    if (!assume_unique) {
      const UniqueParts ua = unique_parts(a, op, true, std::nullopt, std::nullopt);
      const UniqueParts ub = unique_parts(b, op, true, std::nullopt, std::nullopt);
      a = ua.values, ind1 = ua.indices;
      b = ub.values, ind2 = ub.indices;
    }
    const Array both = concatenate({a, b}, 0);
    if (both.size() == 0) return {both, zeros({0}, int32), zeros({0}, int32)};
    auto [aux, ind] = sort_key_val(both, iota(both.size()));
    const Array pos = nonzero(equal(tail(aux), head(aux)))[0];
    const Array i1 = take(head(ind), pos, 0, GatherMode::clip);
    const Array i2 = take(tail(ind), pos, 0, GatherMode::clip) - static_cast<int>(a.size());
    return {take(head(aux), pos, 0, GatherMode::clip), take(ind1, i1, 0, GatherMode::clip),
            take(ind2, i2, 0, GatherMode::clip)};
  }
  // With a size (JAX's _intersect1d_size): the distinct values of each padded to full length,
  // sorted with the padding last; equal neighbours among the real entries are the results.
  Array arr, aux, aux_ind, mask, ind1 = iota(na), ind2 = iota(nb), n1 = full({}, na, int32);
  if (assume_unique) {
    arr = concatenate({a, b}, 0);
    std::tie(aux, aux_ind) = sort_key_val(arr, iota(arr.size()));
    mask = ones(arr.shape(), bool_);
  } else {
    const UniqueParts ua = unique_parts(a, op, true, na, zeros({}, a.dtype()));
    const UniqueParts ub = unique_parts(b, op, true, nb, zeros({}, a.dtype()));
    ind1 = ua.indices, ind2 = ub.indices, n1 = ua.true_size;
    arr = zeros({na + nb}, a.dtype());
    arr = dynamic_update_slice(arr, ua.values, Arrays{zeros({}, int32)});
    arr = dynamic_update_slice(arr, ub.values, Arrays{ua.true_size});
    mask = first(arr.size(), ua.true_size + ub.true_size);
    const Arrays sorted = lax_sort({logical_not(mask), arr, iota(arr.size())}, 0, true, 2);
    aux = sorted[1], aux_ind = sorted[2];
  }
  if (aux.size() == 0) {
    const Array vals = full({*size}, fill_value.value_or(0), a.dtype());
    return {vals, full({*size}, na, int32), full({*size}, nb, int32)};
  }
  const Array hit = logical_and(equal(tail(aux), head(aux)), tail(mask));
  const Array count = astype(sum(hit), int32);
  const Array pos = nonzero(hit, {.size = *size, .fill_value = {aux.size()}})[0];
  const Array valid = first(*size, count);
  const Array vals = pad_results(take(aux, pos, 0, GatherMode::fill, 0.0), valid, fill_value);
  Array i1 = where(valid, take(aux_ind, pos, 0, GatherMode::fill, na), full({}, na, int32));
  Array i2 =
      where(valid, take(aux_ind, pos + 1, 0, GatherMode::fill, nb) - n1, full({}, nb, int32));
  if (!assume_unique) {
    // ind.at[i].get(mode='fill', fill_value=ind.size): an empty ind reads only the fill.
    auto lookup = [](const Array& ind, const Array& i) {
      return ind.size() == 0 ? full(i.shape(), 0, int32)
                             : take(ind, i, 0, GatherMode::fill, ind.size());
    };
    i1 = lookup(ind1, i1);
    i2 = lookup(ind2, i2);
  }
  return {vals, i1, i2};
}

Array intersect1d(const Array& ar1, const Array& ar2, bool assume_unique,
                  std::optional<std::int64_t> size, std::optional<double> fill_value) {
  return std::get<0>(intersect1d_indices(ar1, ar2, assume_unique, size, fill_value));
}

Array setdiff1d(const Array& ar1, const Array& ar2, bool assume_unique,
                std::optional<std::int64_t> size, std::optional<double> fill_value) {
  const char* op = "setdiff1d";
  check_valid(ar1, op);
  check_valid(ar2, op);
  check_size(op, size);
  Array a = ravel(ar1);
  const Array b = ravel(ar2);
  if (!size) require_concrete(a, op);
  const double fill = fill_value.value_or(0);
  if (a.size() == 0) return full({size.value_or(0)}, fill, a.dtype());
  if (!assume_unique)
    a = unique_parts(a, op, true, size ? std::optional(a.size()) : std::nullopt, std::nullopt)
            .values;
  Array mask = in1d(a, b, true, IsinMethod::auto_, assume_unique);
  if (!size) return take(a, nonzero(mask)[0], 0);
  if (!assume_unique) {
    // unique() padded with its smallest value: those repeats of a[0] are not results.
    const Array n_unique = a.size() + 1 - astype(sum(equal(a, slice(a, {Slice{0, 1}}))), int32);
    mask = logical_and(mask, first(a.size(), n_unique));
  }
  const Array vals = take(a, nonzero(mask, {.size = *size})[0], 0, GatherMode::clip);
  return where(first(*size, astype(sum(mask), int32)), vals, full({}, fill, a.dtype()));
}

Array setxor1d(const Array& ar1, const Array& ar2, bool assume_unique,
               std::optional<std::int64_t> size, std::optional<double> fill_value) {
  const char* op = "setxor1d";
  auto [a, b] = promoted_flat(ar1, ar2, op);
  check_sortable(a, op);
  check_size(op, size);
  if (!size) {
    require_concrete(a, op);
    require_concrete(b, op);
    if (!assume_unique) {
      a = unique_parts(a, op, true, std::nullopt, std::nullopt).values;
      b = unique_parts(b, op, true, std::nullopt, std::nullopt).values;
    }
    const Array aux = sort(concatenate({a, b}, 0));
    if (aux.size() == 0) return aux;
    // A value is in exactly one set when it differs from both neighbours.
    const Array edge = ones({1}, bool_);
    const Array flag = concatenate({edge, not_equal(tail(aux), head(aux)), edge}, 0);
    return take(aux, nonzero(logical_and(tail(flag), head(flag)))[0], 0);
  }
  Array aux, flag;
  if (assume_unique) {
    aux = sort(concatenate({a, b}, 0));
    flag = concatenate(
        {full({1}, aux.size() ? 1 : 0, bool_), not_equal(tail(aux), head(aux)), ones({1}, bool_)},
        0);
  } else {
    auto [arr, num_unique] = concat_unique(a, b, op);
    const Array mask = first(arr.size() + 1, num_unique + 1);
    aux = lax_sort({logical_not(tail(mask)), arr}, 0, true, 2)[1];
    flag = concatenate(
        {full({1}, aux.size() ? 1 : 0, bool_), not_equal(tail(aux), head(aux)), zeros({1}, bool_)},
        0);
    flag = logical_and(mask, at(flag, num_unique).set(ones({}, bool_)));
  }
  const Array hit = logical_and(tail(flag), head(flag));
  const Array valid = first(*size, astype(sum(hit), int32));
  if (aux.size() == 0) return pad_results(zeros({*size}, aux.dtype()), valid, fill_value);
  const Array pos = nonzero(hit, {.size = *size, .fill_value = {aux.size()}})[0];
  return pad_results(take(aux, pos, 0, GatherMode::fill, 0.0), valid, fill_value);
}

Array isin(const Array& element, const Array& test_elements, bool assume_unique, bool invert,
           IsinMethod method) {
  check_valid(element, "isin");
  check_valid(test_elements, "isin");
  return reshape(in1d(element, test_elements, invert, method, assume_unique), element.shape());
}

Array sort_complex(const Array& a) {
  check_valid(a, "sort_complex");
  if (a.ndim() == 0)
    throw ValueError("sort_complex: expected an array of at least one dimension, got a scalar");
  if (!is_complex(a.dtype())) return astype(sort(a, -1), complex_dtype(a.dtype()));
  // lax.sort's order on complex numbers: by real part, ties by imaginary part. The parts are
  // gathered separately (linum's gather is real-only).
  const Array order = lexsort({imag(a), real(a)}, -1);
  return complex(take_along_axis(real(a), order, -1), take_along_axis(imag(a), order, -1));
}

}  // namespace linum
