// optax's two Hungarian algorithms (assignment.hpp), ported from optax's JAX loops to host loops
// over the same arrays, in the same order of operations and with the same comparisons (so the
// same tie-breaking). One primitive per algorithm: its kernel solves every matrix of a
// (..., n, m) batch, which is also its batching rule.
//
// No contraction of a - b - c into an FMA: JAX rounds every operation on its own.
#pragma GCC optimize("fp-contract=off")

#include <linum/optim/assignment.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include <linum/autodiff/ops/kernel_util.hpp>

namespace linum::optim::assignment {
namespace {

using linum::detail::in_ptr;
using linum::detail::out_ptr;
using Index = std::int64_t;

struct Solution {
  std::vector<std::int32_t> i, j;
};

[[noreturn]] void throw_infeasible(const char* fn) {
  throw ValueError(std::string(fn) +
                   ": the cost matrix is infeasible: no assignment of finite cost");
}

// A row-major (n, m) matrix and its transpose.
template <class T>
std::vector<T> transposed(const std::vector<T>& c, Index n, Index m) {
  std::vector<T> t(c.size());
  for (Index r = 0; r < n; ++r)
    for (Index k = 0; k < m; ++k) t[k * n + r] = c[r * m + k];
  return t;
}

// optax's base_hungarian_algorithm: for each row, Dijkstra over reduced costs until a free
// column (the sink), then the potentials update and the augmentation along `path`.
template <class T>
Solution base_lsa(std::vector<T> c, Index n, Index m) {
  const bool transpose = m < n;
  if (transpose) c = transposed(c, n, m), std::swap(n, m);
  const T inf = std::numeric_limits<T>::infinity();
  std::vector<T> u(n, 0), v(m, 0), spc(m);
  std::vector<Index> path(m, -1), col4row(n, -1), row4col(m, -1), remaining(m);
  std::vector<char> sr(n), sc(m);
  for (Index cur = 0; cur < n; ++cur) {
    T min_value = 0;
    Index num_remaining = m, sink = -1, i = cur;
    for (Index k = 0; k < m; ++k) remaining[k] = m - 1 - k;
    std::fill(sr.begin(), sr.end(), 0);
    std::fill(sc.begin(), sc.end(), 0);
    std::fill(spc.begin(), spc.end(), inf);
    while (sink == -1) {
      Index index = -1;
      T lowest = inf;
      sr[i] = 1;
      for (Index it = 0; it < num_remaining; ++it) {
        const Index j = remaining[it];
        const T r = min_value + c[i * m + j] - u[i] - v[j];
        if (r < spc[j]) path[j] = i;
        spc[j] = std::min(spc[j], r);
        if (spc[j] < lowest || (spc[j] == lowest && row4col[j] == -1)) index = it;
        lowest = std::min(lowest, spc[j]);
      }
      min_value = lowest;
      if (min_value == inf || index < 0) throw_infeasible("base_hungarian_algorithm");
      const Index j = remaining[index];
      if (row4col[j] == -1)
        sink = j;
      else
        i = row4col[j];
      sc[j] = 1;
      remaining[index] = remaining[--num_remaining];
    }
    u[cur] += min_value;
    for (Index r = 0; r < n; ++r)
      if (sr[r] && r != cur) u[r] = u[r] + min_value - spc[col4row[r]];
    for (Index j = 0; j < m; ++j)
      if (sc[j]) v[j] = v[j] + spc[j] - min_value;
    for (Index j = sink;;) {
      const Index r = path[j];
      row4col[j] = r;
      std::swap(col4row[r], j);
      if (r == cur) break;
    }
  }
  Solution s;
  if (transpose) {  // col4row.argsort(): the original rows in increasing order
    std::vector<Index> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](Index a, Index b) { return col4row[a] < col4row[b]; });
    for (Index k : order) {
      s.i.push_back(static_cast<std::int32_t>(col4row[k]));
      s.j.push_back(static_cast<std::int32_t>(k));
    }
  } else {
    for (Index r = 0; r < n; ++r) {
      s.i.push_back(static_cast<std::int32_t>(r));
      s.j.push_back(static_cast<std::int32_t>(col4row[r]));
    }
  }
  return s;
}

// optax's hungarian_algorithm (Scenic's): columns 1-based with column 0 the row being added;
// parent[col] is the (1-based) row of a column, u[rows + 1] the sink of unused scatter-adds.
template <class T>
Solution scenic_lsa(std::vector<T> c, Index rows, Index cols) {
  const bool transpose = rows > cols;
  if (transpose) c = transposed(c, rows, cols), std::swap(rows, cols);
  const T inf = std::numeric_limits<T>::infinity();
  std::vector<T> u(rows + 2, 0), v(cols + 1, 0), minv(cols);
  std::vector<Index> parent(cols + 1, 0), path(cols);
  std::vector<char> used(cols + 1), unused(cols);
  for (Index row = 0; row < rows; ++row) {
    parent[0] = row + 1;
    std::fill(path.begin(), path.end(), 0);
    std::fill(used.begin(), used.end(), 0);
    std::fill(minv.begin(), minv.end(), inf);
    Index col = 0;
    while (parent[col] != 0) {
      used[col] = 1;
      const Index r = parent[col];
      for (Index k = 0; k < cols; ++k) {
        unused[k] = !used[k + 1];
        const T cur = unused[k] ? c[(r - 1) * cols + k] - u[r] - v[k + 1] : inf;
        if (cur < minv[k]) path[k] = col, minv[k] = cur;
      }
      // argmin of minv over the unused columns (inf elsewhere): the first smallest.
      Index best = 0;
      T delta = inf;
      for (Index k = 0; k < cols; ++k) {
        const T x = unused[k] ? minv[k] : inf;
        if (x < delta) best = k, delta = x;
      }
      if (delta == inf) throw_infeasible("hungarian_algorithm");
      col = best + 1;
      for (Index k = 0; k <= cols; ++k) u[used[k] ? parent[k] : rows + 1] += delta;
      for (Index k = 0; k <= cols; ++k)
        if (used[k]) v[k] = v[k] - delta;
      for (Index k = 0; k < cols; ++k)
        if (unused[k]) minv[k] = minv[k] - delta;
    }
    while (col != 0) {
      const Index prev = path[col - 1];
      parent[col] = parent[prev];
      col = prev;
    }
  }
  // Square: every column's row. Otherwise lax.top_k(parent[1:], rows): the assigned columns by
  // decreasing row, the lower column first among equals.
  std::vector<Index> cols_order(cols);
  std::iota(cols_order.begin(), cols_order.end(), 0);
  if (rows != cols)
    std::stable_sort(cols_order.begin(), cols_order.end(),
                     [&](Index a, Index b) { return parent[a + 1] > parent[b + 1]; });
  Solution s;
  for (Index k = 0; k < rows; ++k) {
    const Index col_k = cols_order[k];
    const auto row_k = static_cast<std::int32_t>(parent[col_k + 1] - 1);
    (transpose ? s.j : s.i).push_back(row_k);
    (transpose ? s.i : s.j).push_back(static_cast<std::int32_t>(col_k));
  }
  return s;
}

template <bool kBase>
constexpr const char* op_name() {
  return kBase ? "base_hungarian_algorithm" : "hungarian_algorithm";
}

// The matrices of a (..., n, m) batch, read in T, solved one by one.
template <bool kBase, class T>
void solve_all(const Array& x, Array& oi, Array& oj) {
  const Index n = x.shape(x.ndim() - 2), m = x.shape(x.ndim() - 1), r = std::min(n, m);
  const Index count = n * m != 0 ? x.size() / (n * m) : 0;
  std::vector<T> c(static_cast<std::size_t>(n * m));
  for (Index b = 0; b < count; ++b) {
    linum::detail::dispatch(x.dtype(), [&]<class S>() {
      const S* p = in_ptr<S>(x) + b * n * m;
      for (Index k = 0; k < n * m; ++k) c[k] = static_cast<T>(p[k]);
    });
    for (T e : c)
      if (std::isnan(e) || e == -std::numeric_limits<T>::infinity())
        throw ValueError(std::string(op_name<kBase>()) +
                         ": the cost matrix contains NaN or -inf entries");
    Solution s = kBase ? base_lsa(c, n, m) : scenic_lsa(c, n, m);
    std::copy(s.i.begin(), s.i.end(), out_ptr<std::int32_t>(oi) + b * r);
    std::copy(s.j.begin(), s.j.end(), out_ptr<std::int32_t>(oj) + b * r);
  }
}

Shape result_shape(const Shape& in) {
  Shape s(in.begin(), in.end() - 1);
  s.back() = std::min(in[in.size() - 2], in.back());
  return s;
}

template <bool kBase>
struct Hungarian final : Primitive {
  const char* name() const override { return op_name<kBase>(); }
  bool differentiable() const override { return false; }
  bool weak_type_rule(bool) const override { return false; }
  Avals abstract_eval(std::span<const ShapeDtype> in) const override {
    const Shape s = result_shape(in[0].shape);
    return {{s, int32}, {s, int32}};
  }
  Arrays eval(std::span<const Array> in) const override {
    const Shape s = result_shape(in[0].shape());
    Array oi = empty(s, int32), oj = empty(s, int32);
    if (in[0].dtype() == float64)
      solve_all<kBase, double>(in[0], oi, oj);
    else
      solve_all<kBase, float>(in[0], oi, oj);
    return {oi, oj};
  }
  // A batch of matrices is what the kernel solves: the batch axis goes first.
  Batched vmap(std::span<const Array> in, std::span<const int> bdims) const override {
    Array x = moveaxis(in[0], bdims[0], 0);
    return {bind(singleton<Hungarian>(), std::span<const Array>(&x, 1)), {0, 0}};
  }
};

template <bool kBase>
std::pair<Array, Array> solve(const Array& cost_matrix) {
  if (!cost_matrix.valid())
    throw ValueError(std::string(op_name<kBase>()) + ": got an empty Array()");
  if (cost_matrix.ndim() != 2)
    throw ValueError(std::string(op_name<kBase>()) +
                     ": cost_matrix must be a matrix (rank 2), got shape " +
                     shape_str(cost_matrix.shape()));
  if (is_complex(cost_matrix.dtype()))
    throw TypeError(std::string(op_name<kBase>()) + ": cost_matrix must be real, got " +
                    std::string(dtype_name(cost_matrix.dtype())));
  Arrays out = bind(singleton<Hungarian<kBase>>(), std::span<const Array>(&cost_matrix, 1));
  return {out[0], out[1]};
}

}  // namespace

std::pair<Array, Array> hungarian_algorithm(const Array& cost_matrix) {
  return solve<false>(cost_matrix);
}

std::pair<Array, Array> base_hungarian_algorithm(const Array& cost_matrix) {
  return solve<true>(cost_matrix);
}

}  // namespace linum::optim::assignment
