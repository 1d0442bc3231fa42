// Searching and counting: the searchsorted primitive (a binary search per value), and nonzero,
// argwhere, flatnonzero, compress and extract, composed as jax.numpy composes them so that they
// run under jit and vmap once given a static size.
#include <linum/autodiff/ops/sort.hpp>

#include <cmath>

#include <linum/autodiff/ops/cumulative.hpp>
#include <linum/autodiff/ops/index_util.hpp>
#include <linum/autodiff/ops/manipulation.hpp>
#include <linum/autodiff/ops/scatter.hpp>

namespace linum {
namespace detail {
namespace {

Array searchsorted_bind(const Array& a, const Array& v, bool right, int nbatch);

// For each value of v, the number of entries of its row of a that are less than it (left) or
// not greater (right). a: (batch..., n); v: (batch..., m...), the leading `nbatch` dims shared.
struct SearchSorted final : Primitive {
  bool right;
  int nbatch;
  SearchSorted(bool r, int nb) : right(r), nbatch(nb) {}
  const char* name() const override { return "searchsorted"; }
  bool differentiable() const override { return false; }
  bool weak_type_rule(bool) const override { return false; }
  Avals abstract_eval(std::span<const ShapeDtype> in) const override {
    return {{in[1].shape, int32}};
  }
  void print_params(std::ostream& os) const override {
    os << "side=" << (right ? "right" : "left") << " batch_dims=" << nbatch;
  }
  Arrays eval(std::span<const Array> in) const override {
    const Array &a = in[0], &v = in[1];
    Array out = empty(v.shape(), int32);
    const std::int64_t rows = shape_size(Shape(a.shape().begin(), a.shape().begin() + nbatch));
    const std::int64_t n = a.shape().back();
    const std::int64_t m = rows ? v.size() / std::max<std::int64_t>(rows, 1) : 0;
    auto* o = out_ptr<std::int32_t>(out);
    std::vector<double> row(static_cast<std::size_t>(n)), vals(static_cast<std::size_t>(v.size()));
    dispatch(v.dtype(), [&]<class T>() {
      const T* p = in_ptr<T>(v);
      for (std::size_t i = 0; i < vals.size(); ++i) vals[i] = static_cast<double>(p[i]);
    });
    for (std::int64_t r = 0; r < rows; ++r) {
      dispatch(a.dtype(), [&]<class T>() {
        const T* p = in_ptr<T>(a) + r * n;
        for (std::int64_t i = 0; i < n; ++i) row[i] = static_cast<double>(p[i]);
      });
      for (std::int64_t j = 0; j < m; ++j) {
        const double x = vals[r * m + j];
        // The first entry e with !(e < x) (left) or x < e (right), by bisection.
        std::int64_t lo = 0, hi = n;
        while (lo < hi) {
          const std::int64_t mid = lo + (hi - lo) / 2;
          const bool before = right ? !sort_less(x, row[mid]) : sort_less(row[mid], x);
          if (before)
            lo = mid + 1;
          else
            hi = mid;
        }
        o[r * m + j] = static_cast<std::int32_t>(lo);
      }
    }
    return {out};
  }
  Batched vmap(std::span<const Array> in, std::span<const int> bdims) const override {
    const std::int64_t n = bdims[0] >= 0 ? in[0].shape(bdims[0]) : in[1].shape(bdims[1]);
    return {{searchsorted_bind(move_bdim(in[0], bdims[0], 0, n), move_bdim(in[1], bdims[1], 0, n),
                               right, nbatch + 1)},
            {0}};
  }
};

Array searchsorted_bind(const Array& a, const Array& v, bool right, int nbatch) {
  return bind1(std::make_shared<const SearchSorted>(right, nbatch), {a, v});
}

// The number of nonzero entries, which fixes a result's size: needs a concrete value.
std::int64_t static_count(const Array& n, const char* op) {
  return concrete_or_error(n, op,
                           "the size argument must be given to use it under jit or vmap (the "
                           "number of nonzero entries is not static there)")
      .item<std::int64_t>();
}

Array as_mask(const Array& a) {
  return a.dtype() == bool_ ? a : not_equal(a, zeros({}, a.dtype()));
}

}  // namespace
}  // namespace detail

using namespace detail;

Array searchsorted(const Array& a, const Array& v, SearchSide side,
                   const std::optional<Array>& sorter, SearchMethod) {
  check_valid(a, "searchsorted");
  check_valid(v, "searchsorted");
  if (a.ndim() != 1)
    throw ValueError("searchsorted: a should be 1-dimensional, got shape " + shape_str(a.shape()));
  const ResultType r = result_type(a, v);
  Array ap = promote_to(a, r);
  if (sorter) ap = take(ap, *sorter, 0, GatherMode::clip);
  return searchsorted_bind(ap, promote_to(v, r), side == SearchSide::right, 0);
}

Arrays nonzero(const Array& a, const SizeOptions& opts) {
  check_valid(a, "nonzero");
  if (a.ndim() == 0)
    throw ValueError(
        "nonzero: calling nonzero on 0d arrays is not allowed; use "
        "nonzero(atleast_1d(x)) instead");
  const Array mask = as_mask(a);
  const std::int64_t size = opts.size ? *opts.size : static_count(sum(mask), "nonzero");
  if (size < 0) throw ValueError("nonzero: size must be non-negative, got " + std::to_string(size));
  const int nd = a.ndim();
  if (!opts.fill_value.empty() && opts.fill_value.size() != 1 &&
      static_cast<int>(opts.fill_value.size()) != nd)
    throw ValueError("nonzero: fill_value must be a scalar or a tuple of length " +
                     std::to_string(nd) + "; got " + std::to_string(opts.fill_value.size()) +
                     " values");
  if (a.size() == 0 || size == 0) return Arrays(static_cast<std::size_t>(nd), zeros({size}, int32));
  // JAX's algorithm: the k-th nonzero flat index is the number of positions whose running count
  // of nonzeros is at most k (a bincount of the running counts, summed up).
  const Array counts = cumsum(ravel(mask));
  const Array bins = at(zeros({size}, int32), counts).add(ones(counts.shape(), int32));
  const Array flat = cumsum(bins);
  Arrays out;
  std::int64_t stride = a.size();
  for (int d = 0; d < nd; ++d) {
    stride /= a.shape()[d];
    out.push_back(index_mod(index_floordiv(flat, stride), a.shape()[d]));
  }
  if (!opts.fill_value.empty()) {
    const Array missing = greater_equal(arange(std::int64_t{0}, size, std::int64_t{1}, int32),
                                        astype(sum(mask), int32));
    for (int d = 0; d < nd; ++d) {
      const double f = static_cast<double>(opts.fill_value.size() == 1 ? opts.fill_value[0]
                                                                       : opts.fill_value[d]);
      out[d] = where(missing, full({}, f, int32), out[d]);
    }
  }
  return out;
}

Arrays where(const Array& condition, const SizeOptions& opts) { return nonzero(condition, opts); }

Array flatnonzero(const Array& a, const SizeOptions& opts) {
  check_valid(a, "flatnonzero");
  return nonzero(ravel(a), opts)[0];
}

Array argwhere(const Array& a, const SizeOptions& opts) {
  check_valid(a, "argwhere");
  const Array r = transpose(stack(nonzero(atleast_1d(a), opts), 0));
  if (a.ndim() == 0) return reshape(slice(r, {Slice{0, 0}}), {r.shape(0), 0});
  return r;
}

Array compress(const Array& condition, const Array& a, std::optional<int> axis,
               std::optional<std::int64_t> size, double fill_value) {
  check_valid(condition, "compress");
  check_valid(a, "compress");
  if (condition.ndim() != 1)
    throw ValueError("compress: condition must be a 1D array, got shape " +
                     shape_str(condition.shape()));
  const Array cond = as_mask(condition);
  Array arr = axis ? moveaxis(a, *axis, 0) : ravel(a);
  const std::int64_t n = std::min(arr.shape(0), cond.shape(0));
  const Array extra = slice(cond, {Slice{n, std::nullopt}});
  const Array c = slice(cond, {Slice{0, n}});
  arr = slice(arr, {Slice{0, n}});
  Array result;
  if (!size) {
    if (static_count(sum(extra), "compress") > 0)
      throw ValueError("compress: condition contains entries that are out of bounds");
    result = take(arr, nonzero(c)[0], 0);
  } else {
    if (*size < 0 || *size > n)
      throw ValueError(
          "compress: size must be positive and not greater than the size of the "
          "array axis; got size=" +
          std::to_string(*size) + " for a.shape[axis]=" + std::to_string(n));
    Shape ms(static_cast<std::size_t>(arr.ndim()), 1);
    ms[0] = n;
    arr = where(reshape(c, ms), arr, full({}, fill_value, arr.dtype()));
    result = slice(take(arr, argsort(c, 0, true, true), 0), {Slice{0, *size}});
  }
  return axis ? moveaxis(result, 0, *axis) : result;
}

Array extract(const Array& condition, const Array& arr, std::optional<std::int64_t> size,
              double fill_value) {
  check_valid(condition, "extract");
  check_valid(arr, "extract");
  return compress(ravel(condition), ravel(arr), std::nullopt, size, fill_value);
}

}  // namespace linum
