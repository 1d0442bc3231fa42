// The sort and top_k primitives and the ops built on them (sort, argsort, lexsort, partition).
// Both differentiate as JAX's: the tangents of the outputs are the inputs' tangents gathered by
// the sorting permutation, so the cotangents scatter back through it.
#include <linum/autodiff/ops/sort.hpp>

#include <algorithm>
#include <cstring>
#include <limits>
#include <numeric>

#include <linum/autodiff/ops/index_util.hpp>
#include <linum/autodiff/ops/manipulation.hpp>

namespace linum {
namespace detail {
namespace {

// An array viewed as rows along `axis`: element (r, i) of row r = (outer o, inner q) lives at
// (o * n + i) * inner + q.
struct Rows {
  std::int64_t outer = 1, n = 1, inner = 1;
  Rows(const Shape& s, int axis) {
    for (int a = 0; a < axis; ++a) outer *= s[a];
    n = s[axis];
    for (std::size_t a = axis + 1; a < s.size(); ++a) inner *= s[a];
  }
  std::int64_t count() const { return outer * inner; }
  std::int64_t base(std::int64_t r) const { return (r / inner) * n * inner + r % inner; }
};

// A key row as doubles in JAX's sort order: -0.0 is 0.0 and every NaN is +NaN (which compares
// last). int32/uint32/float32 convert to double exactly.
void read_row(const Array& x, const Rows& rows, std::int64_t r, std::vector<double>& out) {
  out.resize(static_cast<std::size_t>(rows.n));
  const std::int64_t b = rows.base(r);
  dispatch(x.dtype(), [&]<class T>() {
    const T* p = in_ptr<T>(x) + b;
    for (std::int64_t i = 0; i < rows.n; ++i) {
      const double v = static_cast<double>(p[i * rows.inner]);
      out[i] = v == 0 ? 0.0 : v;
    }
  });
}

// Copies x's rows permuted: out(r, j) = x(r, perm_r[j]).
template <class T>
void permute_rows(const T* x, T* o, const Rows& rows, std::int64_t r, const std::int64_t* perm) {
  const std::int64_t b = rows.base(r);
  for (std::int64_t j = 0; j < rows.n; ++j) o[b + j * rows.inner] = x[b + perm[j] * rows.inner];
}

Arrays sort_bind(const Arrays& operands, int dimension, bool is_stable, int num_keys);

// The gather dims that read x(r, idx(r, j)) along `axis` (take_along_axis with equal shapes).
GatherDims along_axis(int ndim, int axis) {
  GatherDims d;
  d.collapsed = {axis};
  d.start_index_map = {axis};
  d.slice_sizes = Shape(static_cast<std::size_t>(ndim), 1);
  for (int a = 0; a < ndim; ++a)
    if (a != axis) {
      d.operand_batching.push_back(a);
      d.indices_batching.push_back(a);
    }
  return d;
}
Array gather_along(const Array& x, const Array& perm, int axis) {
  Shape s = perm.shape();
  s.push_back(1);
  return gather(x, reshape(perm, s), along_axis(x.ndim(), axis));
}
// The transpose of gather_along: values added back at their indices (zeros elsewhere).
Array scatter_along(const Shape& xs, const Array& perm, const Array& ct, int axis) {
  Shape s = perm.shape();
  s.push_back(1);
  return scatter(zeros(xs, ct.dtype()), reshape(perm, s), ct, along_axis(ct.ndim(), axis),
                 ScatterOp::add, WindowBounds::clamp, true);
}

Array iota_along(const Shape& s, int axis) {
  Shape r(s.size(), 1);
  r[axis] = s[axis];
  return broadcast_to(reshape(arange(std::int64_t{0}, s[axis], std::int64_t{1}, int32), r), s);
}

struct Sort final : Primitive {
  int dimension;
  bool is_stable;
  int num_keys;
  Sort(int d, bool s, int k) : dimension(d), is_stable(s), num_keys(k) {}
  const char* name() const override { return "sort"; }
  Avals abstract_eval(std::span<const ShapeDtype> in) const override {
    return Avals(in.begin(), in.end());
  }
  void print_params(std::ostream& os) const override {
    os << "dimension=" << dimension << " is_stable=" << (is_stable ? "true" : "false")
       << " num_keys=" << num_keys;
  }
  bool vjp_reads_output(std::size_t) const override { return false; }
  Arrays eval(std::span<const Array> in) const override {
    const Rows rows(in[0].shape(), dimension);
    Arrays outs;
    for (const Array& x : in) outs.push_back(empty(x.shape(), x.dtype()));
    std::vector<std::vector<double>> keys(static_cast<std::size_t>(num_keys));
    std::vector<std::int64_t> perm(static_cast<std::size_t>(rows.n));
    for (std::int64_t r = 0; r < rows.count(); ++r) {
      for (int k = 0; k < num_keys; ++k) read_row(in[k], rows, r, keys[k]);
      std::iota(perm.begin(), perm.end(), 0);
      auto less = [&](std::int64_t i, std::int64_t j) {
        for (const auto& key : keys) {
          if (sort_less(key[i], key[j])) return true;
          if (!sort_equal(key[i], key[j])) return false;
        }
        return false;
      };
      if (is_stable)
        std::stable_sort(perm.begin(), perm.end(), less);
      else
        std::sort(perm.begin(), perm.end(), less);
      for (std::size_t o = 0; o < in.size(); ++o)
        dispatch(in[o].dtype(), [&]<class T>() {
          permute_rows(in_ptr<T>(in[o]), out_ptr<T>(outs[o]), rows, r, perm.data());
        });
    }
    return outs;
  }
  // The sorting permutation: the operands sorted with an iota beside them (JAX's sort JVP).
  Array permutation(std::span<const Array> p) const {
    Arrays with_iota(p.begin(), p.end());
    with_iota.push_back(iota_along(p[0].shape(), dimension));
    return sort_bind(with_iota, dimension, is_stable, num_keys).back();
  }
  Arrays jvp(std::span<const Array> p, std::span<const Array> t,
             std::span<const Array>) const override {
    Arrays r(p.size());
    bool any = false;
    for (const Array& ti : t) any |= ti.valid();
    if (!any) return r;
    const Array perm = permutation(p);
    for (std::size_t i = 0; i < p.size(); ++i)
      if (t[i].valid()) r[i] = gather_along(t[i], perm, dimension);
    return r;
  }
  Arrays vjp(std::span<const Array> p, std::span<const Array> ct,
             std::span<const Array>) const override {
    Arrays r(p.size());
    bool any = false;
    for (const Array& c : ct) any |= c.valid();
    if (!any) return r;
    const Array perm = permutation(p);
    for (std::size_t i = 0; i < p.size(); ++i)
      if (ct[i].valid()) r[i] = scatter_along(p[i].shape(), perm, ct[i], dimension);
    return r;
  }
  Batched vmap(std::span<const Array> in, std::span<const int> bdims) const override {
    std::int64_t n = 0;
    for (std::size_t i = 0; i < in.size(); ++i)
      if (bdims[i] >= 0) n = in[i].shape(bdims[i]);
    Arrays xs;
    for (std::size_t i = 0; i < in.size(); ++i) xs.push_back(move_bdim(in[i], bdims[i], 0, n));
    Arrays outs = sort_bind(xs, dimension + 1, is_stable, num_keys);
    return {outs, std::vector<int>(outs.size(), 0)};
  }
};

Arrays sort_bind(const Arrays& operands, int dimension, bool is_stable, int num_keys) {
  return linum::bind(std::make_shared<const Sort>(dimension, is_stable, num_keys), operands);
}

// top_k's order: larger first in the total order of the bit patterns (XLA's CPU top_k), so
// -0.0 < 0.0 and NaN is the largest; equal values keep the lower index first.
template <class T>
auto sortable(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    using I = std::conditional_t<sizeof(T) == 4, std::int32_t, std::int64_t>;
    I i;
    std::memcpy(&i, &v, sizeof(T));
    return i < 0 ? static_cast<I>(i ^ std::numeric_limits<I>::max()) : i;  // negatives reversed
  } else {
    return v;
  }
}

std::pair<Array, Array> top_k_bind(const Array& x, std::int64_t k, int axis);

struct TopK final : Primitive {
  std::int64_t k;
  int axis;
  TopK(std::int64_t kk, int a) : k(kk), axis(a) {}
  const char* name() const override { return "top_k"; }
  Avals abstract_eval(std::span<const ShapeDtype> in) const override {
    Shape s = in[0].shape;
    s[axis] = k;
    return {{s, in[0].dtype}, {s, int32}};
  }
  void print_params(std::ostream& os) const override { os << "k=" << k << " axis=" << axis; }
  bool vjp_reads_input(std::size_t) const override { return false; }
  Arrays eval(std::span<const Array> in) const override {
    const Array& x = in[0];
    Shape s = x.shape();
    s[axis] = k;
    Array vals = empty(s, x.dtype()), idx = empty(s, int32);
    const Rows rows(x.shape(), axis), out_rows(s, axis);
    std::vector<std::int64_t> order(static_cast<std::size_t>(rows.n));
    dispatch(x.dtype(), [&]<class T>() {
      const T* p = in_ptr<T>(x);
      T* ov = out_ptr<T>(vals);
      auto* oi = out_ptr<std::int32_t>(idx);
      for (std::int64_t r = 0; r < rows.count(); ++r) {
        const T* row = p + rows.base(r);
        std::iota(order.begin(), order.end(), 0);
        std::partial_sort(
            order.begin(), order.begin() + k, order.end(), [&](std::int64_t i, std::int64_t j) {
              const auto a = sortable(row[i * rows.inner]), b = sortable(row[j * rows.inner]);
              return a > b || (a == b && i < j);
            });
        const std::int64_t ob = out_rows.base(r);
        for (std::int64_t j = 0; j < k; ++j) {
          ov[ob + j * out_rows.inner] = row[order[j] * rows.inner];
          oi[ob + j * out_rows.inner] = static_cast<std::int32_t>(order[j]);
        }
      }
    });
    return {vals, idx};
  }
  Arrays jvp(std::span<const Array>, std::span<const Array> t,
             std::span<const Array> outs) const override {
    if (!t[0].valid()) return {Array(), Array()};
    return {gather_along(t[0], outs[1], axis), Array()};
  }
  Arrays vjp(std::span<const Array> p, std::span<const Array> ct,
             std::span<const Array> outs) const override {
    if (!ct[0].valid()) return {Array()};
    return {scatter_along(p[0].shape(), outs[1], ct[0], axis)};
  }
  Batched vmap(std::span<const Array> in, std::span<const int> bdims) const override {
    auto [v, i] = top_k_bind(move_bdim(in[0], bdims[0], 0, 0), k, axis + 1);
    return {{v, i}, {0, 0}};
  }
};

std::pair<Array, Array> top_k_bind(const Array& x, std::int64_t k, int axis) {
  Arrays r = linum::bind(std::make_shared<const TopK>(k, axis), std::span<const Array>(&x, 1));
  return {r[0], r[1]};
}

int sort_axis(const Array& a, int axis, const char* op) {
  if (a.ndim() == 0)
    throw ValueError(std::string(op) + ": cannot sort a 0-dimensional array (shape ())");
  return normalize_axis(axis, a.ndim(), op);
}

}  // namespace
}  // namespace detail

using namespace detail;

Arrays lax_sort(const Arrays& operands, int dimension, bool is_stable, int num_keys) {
  if (operands.empty()) throw TypeError("lax_sort: sort requires at least one operand");
  for (const Array& x : operands) check_valid(x, "lax_sort");
  if (num_keys < 1 || num_keys > static_cast<int>(operands.size()))
    throw ValueError("lax_sort: num_keys=" + std::to_string(num_keys) + " must be between 1 and " +
                     std::to_string(operands.size()) + " (the number of operands)");
  for (const Array& x : operands)
    if (x.shape() != operands[0].shape())
      throw ValueError("lax_sort: all operands must have the same shape, got " +
                       shape_str(operands[0].shape()) + " and " + shape_str(x.shape()));
  const int d = sort_axis(operands[0], dimension, "lax_sort");
  return sort_bind(operands, d, is_stable, num_keys);
}

std::pair<Array, Array> sort_key_val(const Array& keys, const Array& values, int dimension,
                                     bool is_stable) {
  Arrays r = lax_sort({keys, values}, dimension, is_stable, 1);
  return {r[0], r[1]};
}

Array sort(const Array& a, std::optional<int> axis, bool stable, bool descending) {
  check_valid(a, "sort");
  if (!axis) return sort(ravel(a), 0, stable, descending);
  const int d = sort_axis(a, *axis, "sort");
  const Array s = sort_bind({a}, d, stable, 1)[0];
  return descending ? flip(s, d) : s;
}

Array argsort(const Array& a, std::optional<int> axis, bool stable, bool descending) {
  check_valid(a, "argsort");
  if (!axis) return argsort(ravel(a), 0, stable, descending);
  const int d = sort_axis(a, *axis, "argsort");
  Array x = a, iota = iota_along(a.shape(), d);
  // Reversing before a stable sort keeps equal elements in their original order once the
  // indices are reversed back (JAX's descending argsort).
  if (descending && stable) {
    x = flip(x, d);
    iota = flip(iota, d);
  }
  const Array idx = sort_bind({x, iota}, d, stable, 1)[1];
  return descending ? flip(idx, d) : idx;
}

Array lexsort(const Arrays& keys, int axis) {
  if (keys.empty()) throw TypeError("lexsort: need sequence of keys with len > 0 in lexsort");
  for (const Array& k : keys) {
    check_valid(k, "lexsort");
    if (k.shape() != keys[0].shape())
      throw ValueError("lexsort: all keys need to be the same shape, got " +
                       shape_str(keys[0].shape()) + " and " + shape_str(k.shape()));
  }
  if (keys[0].ndim() == 0) return zeros({}, int32);
  const int d = normalize_axis(axis, keys[0].ndim(), "lexsort");
  Arrays ops(keys.rbegin(), keys.rend());
  ops.push_back(iota_along(keys[0].shape(), d));
  return sort_bind(ops, d, true, static_cast<int>(keys.size())).back();
}

std::pair<Array, Array> top_k(const Array& operand, std::int64_t k, int axis) {
  check_valid(operand, "top_k");
  if (operand.ndim() == 0) throw TypeError("top_k: operand must have >= 1 dimension, got shape ()");
  if (k < 0)
    throw ValueError("top_k: k argument to top_k must be nonnegative, got " + std::to_string(k));
  const int ax = normalize_axis(axis, operand.ndim(), "top_k");
  if (operand.shape()[ax] < k)
    throw ValueError("top_k: k argument to top_k must be no larger than size along axis; got k=" +
                     std::to_string(k) + " with shape=" + shape_str(operand.shape()) +
                     " and axis=" + std::to_string(ax));
  return top_k_bind(operand, k, ax);
}

namespace {
// Moves `axis` last, as jnp.partition does before its top_k calls.
int partition_axis(const Array& a, std::int64_t& kth, int axis, const char* op) {
  check_valid(a, op);
  if (a.ndim() == 0) throw ValueError(std::string(op) + ": a must have at least one dimension");
  const int ax = normalize_axis(axis, a.ndim(), op);
  const std::int64_t n = a.shape()[ax];
  if (kth < -n || kth >= n)
    throw ValueError(std::string(op) + ": kth=" + std::to_string(kth) +
                     " is out of bounds for an axis of size " + std::to_string(n));
  if (kth < 0) kth += n;
  return ax;
}
// -x, or -(x + 1) for unsigned x (so that 0 stays the smallest), as JAX negates for top_k.
Array flip_order(const Array& x) { return x.dtype() == uint32 ? negative(x + 1) : negative(x); }
}  // namespace

Array partition(const Array& a, std::int64_t kth, int axis) {
  const int ax = partition_axis(a, kth, axis, "partition");
  if (a.dtype() == bool_) throw TypeError("partition: bool arrays are not supported");
  const Array arr = swapaxes(a, ax, -1);
  const std::int64_t n = arr.shape(-1);
  const Array bottom = flip_order(top_k(flip_order(arr), kth + 1).first);
  const Array top = top_k(arr, n - kth - 1).first;
  return swapaxes(concatenate({bottom, top}, -1), -1, ax);
}

Array argpartition(const Array& a, std::int64_t kth, int axis) {
  const int ax = partition_axis(a, kth, axis, "argpartition");
  if (a.dtype() == bool_) throw TypeError("argpartition: bool arrays are not supported");
  const Array arr = swapaxes(a, ax, -1);
  const std::int64_t n = arr.shape(-1);
  const Array bottom = top_k(flip_order(arr), kth + 1).second;
  // The rest are the indices not in `bottom`: a proxy of ones with zeros at bottom's indices.
  const Array in_bottom =
      scatter_along(arr.shape(), bottom, ones(bottom.shape(), float32), arr.ndim() - 1);
  const Array top = top_k(subtract(ones(arr.shape(), float32), in_bottom), n - kth - 1).second;
  return swapaxes(concatenate({bottom, top}, -1), -1, ax);
}

}  // namespace linum
