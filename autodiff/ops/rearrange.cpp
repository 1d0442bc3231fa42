// Rearranging ops composed from slices, reshapes, broadcasts, concatenations and gathers, as
// jax.numpy composes them: flips and rotations, rolls, tiles and repeats, stacking and splitting,
// append, insert and delete. Their rules (grad, jvp, vmap, jit) are those of their parts.
#include <linum/autodiff/ops/manipulation.hpp>

#include <numeric>

#include <linum/autodiff/ops/cumulative.hpp>
#include <linum/autodiff/ops/index_util.hpp>
#include <linum/autodiff/ops/scatter.hpp>
#include <linum/autodiff/ops/sort.hpp>

namespace linum {
namespace detail {
namespace {

Array ints_array(const std::vector<std::int64_t>& v) {
  std::vector<std::int32_t> w(v.begin(), v.end());
  return array(w);
}

std::vector<std::int64_t> int_values(const Array& a) {
  const Array c = astype(ravel(a), int32);
  const auto* p = c.data<std::int32_t>();
  return std::vector<std::int64_t>(p, p + c.size());
}

}  // namespace
}  // namespace detail

using namespace detail;

// ---- flips and rotations ----------------------------------------------------------------------

Array flip(const Array& m, const Axes& axis) {
  check_valid(m, "flip");
  const std::vector<int> axes = normalize_axes(axis, m.ndim(), "flip");
  if (axes.empty()) return m;
  std::vector<Slice> s(static_cast<std::size_t>(axes.back() + 1), Slice{});
  for (int a : axes) s[a].step = -1;
  return slice(m, s);
}

Array rev(const Array& operand, const std::vector<int>& dimensions) {
  return flip(operand, Axes(dimensions));
}

Array fliplr(const Array& m) {
  check_valid(m, "fliplr");
  if (m.ndim() < 2)
    throw ValueError("fliplr: requires an array of at least 2 dimensions, got shape " +
                     shape_str(m.shape()));
  return flip(m, 1);
}

Array flipud(const Array& m) {
  check_valid(m, "flipud");
  if (m.ndim() < 1) throw ValueError("flipud: requires an array of at least 1 dimension");
  return flip(m, 0);
}

Array swapaxes(const Array& a, int axis1, int axis2) {
  check_valid(a, "swapaxes");
  const int a1 = normalize_axis(axis1, a.ndim(), "swapaxes"),
            a2 = normalize_axis(axis2, a.ndim(), "swapaxes");
  std::vector<int> perm(static_cast<std::size_t>(a.ndim()));
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[a1], perm[a2]);
  return transpose(a, perm);
}

Array rot90(const Array& m, int k, std::pair<int, int> axes) {
  check_valid(m, "rot90");
  if (m.ndim() < 2)
    throw ValueError(
        "rot90: requires its first argument to have ndim at least two, but got "
        "shape " +
        shape_str(m.shape()));
  const int a1 = normalize_axis(axes.first, m.ndim(), "rot90"),
            a2 = normalize_axis(axes.second, m.ndim(), "rot90");
  if (a1 == a2) throw ValueError("rot90: axes must be different");
  k = ((k % 4) + 4) % 4;
  if (k == 0) return m;
  if (k == 2) return flip(m, {a1, a2});
  if (k == 1) return swapaxes(flip(m, a2), a1, a2);
  return flip(swapaxes(m, a1, a2), a2);
}

// ---- rolls ------------------------------------------------------------------------------------

Array roll(const Array& a, const std::vector<std::int64_t>& shift, const std::vector<int>& axis) {
  check_valid(a, "roll");
  if (shift.size() != axis.size() && shift.size() != 1 && axis.size() != 1)
    throw ValueError(
        "roll: 'shift' and 'axis' must be scalars or 1D sequences of the same "
        "length, got " +
        std::to_string(shift.size()) + " shifts and " + std::to_string(axis.size()) + " axes");
  const std::size_t n = std::max(shift.size(), axis.size());
  Array x = a;
  for (std::size_t i = 0; i < n; ++i) {
    const int ax = normalize_axis(axis[axis.size() == 1 ? 0 : i], a.ndim(), "roll");
    const std::int64_t len = x.shape()[ax];
    if (len == 0) continue;
    const std::int64_t s = shift[shift.size() == 1 ? 0 : i];
    const std::int64_t start = ((-s) % len + len) % len;
    if (start == 0) continue;
    x = concatenate({slice_in_dim(x, start, len, ax), slice_in_dim(x, 0, start, ax)}, ax);
  }
  return x;
}

Array roll(const Array& a, std::int64_t shift, std::optional<int> axis) {
  check_valid(a, "roll");
  if (!axis) return reshape(roll(ravel(a), std::vector<std::int64_t>{shift}, {0}), a.shape());
  return roll(a, std::vector<std::int64_t>{shift}, std::vector<int>{*axis});
}

// A traced shift: x concatenated with itself and a dynamic slice of it (JAX's _roll_dynamic).
Array roll(const Array& a, const Array& shift, std::optional<std::vector<int>> axis) {
  check_valid(a, "roll");
  check_valid(shift, "roll");
  if (!is_integer(shift.dtype()))
    throw TypeError("roll: shift must be integers, got dtype " +
                    std::string(dtype_name(shift.dtype())));
  if (!axis) return reshape(roll(ravel(a), shift, std::vector<int>{0}), a.shape());
  if (shift.ndim() > 1) throw ValueError("roll: 'shift' must be a scalar or a 1D array");
  const std::int64_t ns = shift.ndim() == 0 ? 1 : shift.shape(0);
  const std::size_t n = std::max<std::size_t>(static_cast<std::size_t>(ns), axis->size());
  if ((ns != 1 && static_cast<std::size_t>(ns) != n) || (axis->size() != 1 && axis->size() != n))
    throw ValueError("roll: 'shift' and 'axis' must be scalars or 1D arrays of the same length");
  const Array shifts =
      broadcast_to(reshape(astype(shift, int32), {ns}), {static_cast<std::int64_t>(n)});
  Array x = a;
  for (std::size_t i = 0; i < n; ++i) {
    const int ax = normalize_axis((*axis)[axis->size() == 1 ? 0 : i], a.ndim(), "roll");
    const std::int64_t len = x.shape()[ax];
    if (len == 0) continue;
    const Array len_a = full({}, static_cast<double>(len), int32);
    const Array s = reshape(
        slice(shifts, {Slice{static_cast<std::int64_t>(i), static_cast<std::int64_t>(i + 1)}}), {});
    // The rolled array starts at len - (s mod len) of [x, x].
    Arrays starts(static_cast<std::size_t>(x.ndim()), zeros({}, int32));
    starts[ax] = subtract(len_a, index_mod(s, len));
    Shape sizes = x.shape();
    x = dynamic_slice(concatenate({x, x}, ax), starts,
                      std::vector<std::int64_t>(sizes.begin(), sizes.end()));
  }
  return x;
}

// ---- tiles and repeats ------------------------------------------------------------------------

Array tile(const Array& A, const std::vector<std::int64_t>& reps_in) {
  check_valid(A, "tile");
  for (auto r : reps_in)
    if (r < 0) throw ValueError("tile: reps must be non-negative, got " + std::to_string(r));
  std::vector<std::int64_t> reps = reps_in;
  if (static_cast<int>(reps.size()) < A.ndim())
    reps.insert(reps.begin(), static_cast<std::size_t>(A.ndim()) - reps.size(), 1);
  Shape xs = A.shape();
  xs.insert(xs.begin(), reps.size() - xs.size(), 1);
  // (1, d0, 1, d1, ...) broadcast to (r0, d0, r1, d1, ...), then merged pairwise.
  Shape pairs, target, out;
  for (std::size_t i = 0; i < reps.size(); ++i) {
    pairs.insert(pairs.end(), {1, xs[i]});
    target.insert(target.end(), {reps[i], xs[i]});
    out.push_back(checked_mul("tile", reps[i], xs[i]));
  }
  return reshape(broadcast_to(reshape(A, pairs), target), out);
}

Array repeat(const Array& a, std::int64_t repeats, std::optional<int> axis,
             std::optional<std::int64_t> total_repeat_length) {
  check_valid(a, "repeat");
  if (repeats < 0) throw ValueError("repeat: repeats may not contain negative values");
  if (total_repeat_length)
    return repeat(a, full({}, static_cast<double>(repeats), int32), axis, total_repeat_length);
  if (!axis) return repeat(ravel(a), repeats, 0);
  if (a.ndim() == 0) return broadcast_to(a, {repeats});
  const int ax = normalize_axis(*axis, a.ndim(), "repeat");
  Shape aux = a.shape(), out = a.shape();
  aux.insert(aux.begin() + ax + 1, repeats);
  out[ax] = checked_mul("repeat", out[ax], repeats);
  return reshape(broadcast_to(expand_dims(a, ax + 1), aux), out);
}

Array repeat(const Array& a, const std::vector<std::int64_t>& repeats, std::optional<int> axis,
             std::optional<std::int64_t> total_repeat_length) {
  check_valid(a, "repeat");
  for (auto r : repeats)
    if (r < 0) throw ValueError("repeat: repeats may not contain negative values");
  if (repeats.size() == 1) return repeat(a, repeats[0], axis, total_repeat_length);
  if (total_repeat_length) return repeat(a, ints_array(repeats), axis, total_repeat_length);
  if (!axis) return repeat(ravel(a), repeats, 0);
  if (a.ndim() == 0)
    throw ValueError(
        "repeat: repeat with a scalar parameter a is only implemented for scalar "
        "values of the parameter repeats");
  const int ax = normalize_axis(*axis, a.ndim(), "repeat");
  if (static_cast<std::int64_t>(repeats.size()) != a.shape()[ax])
    throw ValueError("repeat: repeats has " + std::to_string(repeats.size()) +
                     " entries for an axis of size " + std::to_string(a.shape()[ax]));
  std::vector<std::int32_t> idx;  // static repeats: the gather indices are known now
  for (std::size_t i = 0; i < repeats.size(); ++i)
    idx.insert(idx.end(), static_cast<std::size_t>(repeats[i]), static_cast<std::int32_t>(i));
  return take(a, array(idx), ax, GatherMode::clip);
}

// JAX's algorithm for counts known only at run time: block starts scattered into the output
// length, a cumulative sum of them naming each output entry's source.
Array repeat(const Array& a, const Array& repeats, std::optional<int> axis,
             std::optional<std::int64_t> total_repeat_length) {
  check_valid(a, "repeat");
  check_valid(repeats, "repeat");
  if (!is_integer(repeats.dtype()))
    throw TypeError("repeat: repeats must be integers, got dtype " +
                    std::string(dtype_name(repeats.dtype())));
  if (!total_repeat_length) {
    const Array r = concrete_or_error(
        repeats, "repeat",
        "the total number of repeats must be static under jit or vmap; give a static repeats or "
        "total_repeat_length");
    return repeat(a, int_values(r), axis);
  }
  if (!axis) return repeat(ravel(a), repeats, 0, total_repeat_length);
  const std::int64_t total = *total_repeat_length;
  if (total < 0) throw ValueError("repeat: total_repeat_length must be non-negative");
  Array reps = astype(ravel(repeats), int32);
  if (a.ndim() == 0) {
    if (reps.size() != 1)
      throw ValueError(
          "repeat: repeat with a scalar parameter a is only implemented for scalar "
          "values of the parameter repeats");
    return broadcast_to(a, {total});
  }
  const int ax = normalize_axis(*axis, a.ndim(), "repeat");
  const std::int64_t n = a.shape()[ax];
  reps = broadcast_to(reps, {n});
  if (total == 0) {
    Shape s = a.shape();
    s[ax] = 0;
    return zeros(s, a.dtype());
  }
  if (n == 0) return a;
  const Array exclusive = at(roll(reps, 1), 0).set(zeros({}, int32));
  const Array starts = cumsum(exclusive);
  const Array marks = at(zeros({total}, int32), starts).add(ones({n}, int32));
  const Array src = subtract(cumsum(marks), ones({}, int32));
  return take(a, src, ax);
}

// ---- stacking and splitting -------------------------------------------------------------------

Array atleast_1d(const Array& x) {
  check_valid(x, "atleast_1d");
  return x.ndim() == 0 ? reshape(x, {1}) : x;
}
Array atleast_2d(const Array& x) {
  check_valid(x, "atleast_2d");
  if (x.ndim() >= 2) return x;
  return reshape(x, {1, x.ndim() == 0 ? 1 : x.shape(0)});
}
Array atleast_3d(const Array& x) {
  check_valid(x, "atleast_3d");
  if (x.ndim() == 0) return reshape(x, {1, 1, 1});
  if (x.ndim() == 1) return reshape(x, {1, x.shape(0), 1});
  if (x.ndim() == 2) return reshape(x, {x.shape(0), x.shape(1), 1});
  return x;
}

namespace {
Arrays each(const Arrays& xs, Array (*f)(const Array&)) {
  Arrays r;
  for (const Array& x : xs) r.push_back(f(x));
  return r;
}
}  // namespace

Array hstack(const Arrays& tup) {
  if (tup.empty()) throw ValueError("hstack: need at least one array to concatenate");
  const Arrays xs = each(tup, atleast_1d);
  return concatenate(xs, xs[0].ndim() == 1 ? 0 : 1);
}
Array vstack(const Arrays& tup) {
  if (tup.empty()) throw ValueError("vstack: need at least one array to concatenate");
  return concatenate(each(tup, atleast_2d), 0);
}
Array dstack(const Arrays& tup) {
  if (tup.empty()) throw ValueError("dstack: need at least one array to concatenate");
  return concatenate(each(tup, atleast_3d), 2);
}
Array column_stack(const Arrays& tup) {
  if (tup.empty()) throw ValueError("column_stack: need at least one array to concatenate");
  Arrays xs;
  for (const Array& x : tup) {
    check_valid(x, "column_stack");
    xs.push_back(x.ndim() < 2 ? transpose(atleast_2d(x)) : x);
  }
  return concatenate(xs, 1);
}

Arrays array_split(const Array& x, std::int64_t sections, int axis) {
  check_valid(x, "array_split");
  if (sections <= 0)
    throw ValueError("array_split: number sections must be larger than 0, got " +
                     std::to_string(sections));
  const int ax = normalize_axis(axis, x.ndim(), "array_split");
  const std::int64_t n = x.shape()[ax], each_n = n / sections, extras = n % sections;
  std::vector<std::int64_t> bounds;
  std::int64_t at_ = 0;
  for (std::int64_t i = 0; i + 1 < sections; ++i) {
    at_ += each_n + (i < extras ? 1 : 0);
    bounds.push_back(at_);
  }
  return split(x, bounds, ax);
}
Arrays array_split(const Array& x, const std::vector<std::int64_t>& indices, int axis) {
  return split(x, indices, axis);
}

namespace {
int hsplit_axis(const Array& x) {
  check_valid(x, "hsplit");
  if (x.ndim() == 0)
    throw ValueError("hsplit: hsplit only works on arrays of 1 or more dimensions");
  return x.ndim() == 1 ? 0 : 1;
}
void check_rank(const Array& x, int rank, const char* op) {
  check_valid(x, op);
  if (x.ndim() < rank)
    throw ValueError(std::string(op) + ": only works on arrays of " + std::to_string(rank) +
                     " or more dimensions, got shape " + shape_str(x.shape()));
}
}  // namespace

Arrays hsplit(const Array& x, std::int64_t sections) { return split(x, sections, hsplit_axis(x)); }
Arrays hsplit(const Array& x, const std::vector<std::int64_t>& indices) {
  return split(x, indices, hsplit_axis(x));
}
Arrays vsplit(const Array& x, std::int64_t sections) {
  check_rank(x, 2, "vsplit");
  return split(x, sections, 0);
}
Arrays vsplit(const Array& x, const std::vector<std::int64_t>& indices) {
  check_rank(x, 2, "vsplit");
  return split(x, indices, 0);
}
Arrays dsplit(const Array& x, std::int64_t sections) {
  check_rank(x, 3, "dsplit");
  return split(x, sections, 2);
}
Arrays dsplit(const Array& x, const std::vector<std::int64_t>& indices) {
  check_rank(x, 3, "dsplit");
  return split(x, indices, 2);
}

// ---- append, insert, delete ---------------------------------------------------------------------

Array append(const Array& arr, const Array& values, std::optional<int> axis) {
  check_valid(arr, "append");
  check_valid(values, "append");
  if (!axis) return concatenate({ravel(arr), ravel(values)}, 0);
  return concatenate({arr, values}, *axis);
}

namespace {
// numpy.array(values, ndmin=n): leading 1s up to rank n.
Array with_min_rank(const Array& v, int n) {
  if (v.ndim() >= n) return v;
  Shape s = v.shape();
  s.insert(s.begin(), static_cast<std::size_t>(n - v.ndim()), 1);
  return reshape(v, s);
}
// x.at[(slice(None),) * axis + (idx,)] as an at() index.
std::vector<Index> along(int axis, const Array& idx) {
  std::vector<Index> v(static_cast<std::size_t>(axis), Index(Slice{}));
  v.emplace_back(idx);
  return v;
}
}  // namespace

// JAX's algorithm: the inserted values' positions come from the sorted indices, the original
// entries fill the remaining positions (found with a sized nonzero), both written with scatters.
Array insert(const Array& arr, const Array& obj, const Array& values, std::optional<int> axis) {
  check_valid(arr, "insert");
  check_valid(obj, "insert");
  check_valid(values, "insert");
  if (!axis) return insert(ravel(arr), obj, values, 0);
  const Array& a = arr;
  const int ax = normalize_axis(*axis, a.ndim(), "insert");
  if (obj.ndim() > 1)
    throw ValueError(
        "insert: obj must be a slice, a one-dimensional array, or a scalar; got "
        "shape " +
        shape_str(obj.shape()));
  if (!is_integer(obj.dtype()))
    throw ValueError("insert: index array must be integer typed; got dtype " +
                     std::string(dtype_name(obj.dtype())));
  Array vals = with_min_rank(astype(values, a.dtype()), a.ndim());
  Array idx = astype(obj, int32);
  if (idx.size() == 1) {
    const Array index = reshape(idx, {});
    if (idx.ndim() == 0) vals = moveaxis(vals, 0, ax);
    idx = broadcast_to(index, {vals.shape()[ax]});
  }
  const std::int64_t n_input = a.shape()[ax];
  std::int64_t n_insert = vals.shape()[ax];
  if (idx.shape(0) != n_insert) {
    if (n_insert != 1 && idx.shape(0) != 1)
      throw ValueError("insert: " + std::to_string(idx.shape(0)) + " indices do not match " +
                       std::to_string(n_insert) + " values along axis " + std::to_string(ax));
    n_insert = std::max(n_insert, idx.shape(0));
    idx = broadcast_to(idx, {n_insert});
  }
  Shape out_shape = a.shape();
  out_shape[ax] += n_insert;
  const Array n_in = full({}, static_cast<double>(n_input), int32);
  idx = clip(where(less(idx, zeros({}, int32)), add(idx, n_in), idx), zeros({}, int32), n_in);
  const Array values_ind =
      at(idx, argsort(idx)).add(arange(std::int64_t{0}, n_insert, std::int64_t{1}, int32));
  const Array arr_mask = at(ones({n_input + n_insert}, bool_), values_ind).set(zeros({}, bool_));
  const Array arr_ind = where(arr_mask, SizeOptions{n_input, {}})[0];
  Array out = zeros(out_shape, a.dtype());
  out = at(out, along(ax, values_ind)).set(vals);
  return at(out, along(ax, arr_ind)).set(a);
}

Array insert(const Array& arr, std::int64_t obj, const Array& values, std::optional<int> axis) {
  return insert(arr, full({}, static_cast<double>(obj), int32), values, axis);
}

Array insert(const Array& arr, const Slice& obj, const Array& values, std::optional<int> axis) {
  check_valid(arr, "insert");
  const Array a = axis ? arr : ravel(arr);
  const int ax = normalize_axis(axis.value_or(0), a.ndim(), "insert");
  if (obj.step == 0) throw ValueError("insert: slice step cannot be zero");
  auto [start, len] = python_slice(obj, a.shape()[ax]);
  std::vector<std::int64_t> pos;
  for (std::int64_t k = 0; k < len; ++k) pos.push_back(start + k * obj.step);
  return insert(a, ints_array(pos), values, ax);
}

Array delete_(const Array& arr, std::int64_t obj, std::optional<int> axis) {
  check_valid(arr, "delete");
  const Array a = axis ? arr : ravel(arr);
  const int ax = normalize_axis(axis.value_or(0), a.ndim(), "delete");
  const std::int64_t n = a.shape()[ax];
  if (obj < -n || obj >= n)
    throw IndexError("delete: index " + std::to_string(obj) + " is out of bounds for axis " +
                     std::to_string(ax) + " with size " + std::to_string(n));
  if (obj < 0) obj += n;
  return concatenate({slice_in_dim(a, 0, obj, ax), slice_in_dim(a, obj + 1, std::nullopt, ax)}, ax);
}

Array delete_(const Array& arr, const Slice& obj, std::optional<int> axis) {
  check_valid(arr, "delete");
  const Array a = axis ? arr : ravel(arr);
  const int ax = normalize_axis(axis.value_or(0), a.ndim(), "delete");
  if (obj.step == 0) throw ValueError("delete: slice step cannot be zero");
  auto [start, len] = python_slice(obj, a.shape()[ax]);
  std::vector<std::int64_t> pos;
  for (std::int64_t k = 0; k < len; ++k) pos.push_back(start + k * obj.step);
  return delete_(a, ints_array(pos), ax, true);
}

Array delete_(const Array& arr, const Array& obj, std::optional<int> axis,
              bool assume_unique_indices) {
  check_valid(arr, "delete");
  check_valid(obj, "delete");
  const Array a = axis ? arr : ravel(arr);
  const int ax = normalize_axis(axis.value_or(0), a.ndim(), "delete");
  const std::int64_t n = a.shape()[ax];
  if (is_integer(obj.dtype()) && assume_unique_indices) {
    // Unique indices (may be traced): the kept positions i + #(deleted indices <= shifted i).
    const Array nn = full({}, static_cast<double>(n), int32);
    Array o = astype(ravel(obj), int32);
    o = sort(clip(where(less(o, zeros({}, int32)), add(o, nn), o), zeros({}, int32), nn));
    const std::int64_t k = o.size();
    o = subtract(o, arange(std::int64_t{0}, k, std::int64_t{1}, int32));
    Array i = arange(std::int64_t{0}, n - k, std::int64_t{1}, int32);
    i = add(i,
            astype(sum(astype(greater_equal(reshape(i, {1, n - k}), reshape(o, {k, 1})), int32), 0),
                   int32));
    return take(a, i, ax, GatherMode::clip);
  }
  const Array c = concrete_or_error(
      obj, "delete", "the indices must be static under jit or vmap unless assume_unique_indices");
  std::vector<std::uint8_t> keep(static_cast<std::size_t>(n), 1);
  if (is_integer(c.dtype())) {
    for (auto i : int_values(c)) {
      if (i < -n || i >= n)
        throw IndexError("delete: index " + std::to_string(i) + " is out of bounds for axis " +
                         std::to_string(ax) + " with size " + std::to_string(n));
      keep[static_cast<std::size_t>(i < 0 ? i + n : i)] = 0;
    }
  } else if (c.dtype() == bool_) {
    if (c.shape() != Shape{n})
      throw ValueError(
          "delete: for boolean indices, obj must be one-dimensional with length "
          "matching specified axis");
    const auto* p = c.data<bool>();
    for (std::int64_t i = 0; i < n; ++i) keep[i] = !p[i];
  } else {
    throw ValueError("delete: got obj.dtype=" + std::string(dtype_name(c.dtype())) +
                     "; must be integer or bool");
  }
  std::vector<std::int32_t> kept;
  for (std::int64_t i = 0; i < n; ++i)
    if (keep[i]) kept.push_back(static_cast<std::int32_t>(i));
  return take(a, array(kept), ax, GatherMode::clip);
}

}  // namespace linum
