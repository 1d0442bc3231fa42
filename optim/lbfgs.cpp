// The L-BFGS step of scale_by_lbfgs (lbfgs.hpp) over the leaves: memory update and the two-loop
// recursion, with linum ops in optax's order of operations. Empty leaves (optax's MaskedNode)
// stay empty and take no part in the inner products.
#include <linum/optim/lbfgs.hpp>

namespace linum::optim::detail {

namespace {

// <a, b> over the leaves.
Array vdot(const Arrays& a, const Arrays& b) {
  Array acc;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!a[i].valid()) continue;
    Array s = sum(a[i] * b[i]);
    acc = acc.valid() ? acc + s : s;
  }
  return acc.valid() ? acc : Array(0.0f);
}

std::vector<std::int64_t> row_start(const Array& mem, std::int64_t r) {
  std::vector<std::int64_t> start(mem.ndim(), 0);
  start[0] = r;
  return start;
}

Array row(const Array& mem, std::int64_t r) {
  std::vector<std::int64_t> limit(mem.shape().begin(), mem.shape().end());
  limit[0] = r + 1;
  Shape s(mem.shape().begin() + 1, mem.shape().end());
  return lax_slice(mem, row_start(mem, r), limit).reshape(s);
}

Array set_row(const Array& mem, std::int64_t r, const Array& x) {
  Shape s = mem.shape();
  s[0] = 1;
  return dynamic_update_slice(mem, astype(x, mem.dtype()).reshape(s), row_start(mem, r));
}

Arrays rows(const Arrays& mem, std::int64_t r) {
  Arrays out;
  for (const Array& m : mem) out.push_back(m.valid() ? row(m, r) : Array());
  return out;
}

// vec + s * d leafwise, cast back to vec's dtypes.
void add_scaled(Arrays& vec, const Array& s, const Arrays& d) {
  for (std::size_t i = 0; i < vec.size(); ++i)
    if (vec[i].valid()) vec[i] = astype(vec[i] + s * d[i], vec[i].dtype());
}

}  // namespace

Array lbfgs_memory_leaf(std::int64_t memory_size, const Array& p) {
  Shape s{memory_size};
  s.insert(s.end(), p.shape().begin(), p.shape().end());
  return zeros(s, p.dtype());
}

LbfgsStep lbfgs_step(bool scale_init_precond, std::int64_t count, const Arrays& updates,
                     const Arrays& params, const Arrays& prev_params, const Arrays& prev_updates,
                     const Arrays& dp_memory, const Arrays& du_memory, const Array& weights) {
  const std::int64_t m = weights.shape().at(0);
  const std::int64_t memory_idx = count % m, prev_idx = ((count - 1) % m + m) % m;
  Arrays dp(updates.size()), du(updates.size());
  for (std::size_t i = 0; i < updates.size(); ++i) {
    if (!updates[i].valid()) continue;
    dp[i] = params[i] - prev_params[i];
    du[i] = updates[i] - prev_updates[i];
  }
  Array v = vdot(du, dp);
  Array weight = where(equal(v, zeros_like(v)), 0.0, 1.0 / v);
  if (count == 0) {
    for (std::size_t i = 0; i < updates.size(); ++i)
      if (dp[i].valid()) dp[i] = zeros_like(dp[i]), du[i] = zeros_like(du[i]);
    weight = zeros_like(weight);
  }
  LbfgsStep out{{}, dp_memory, du_memory, set_row(weights, prev_idx, weight)};
  for (std::size_t i = 0; i < updates.size(); ++i) {
    if (!updates[i].valid()) continue;
    out.diff_params_memory[i] = set_row(dp_memory[i], prev_idx, dp[i]);
    out.diff_updates_memory[i] = set_row(du_memory[i], prev_idx, du[i]);
  }
  Array identity_scale = Array(1.0f);
  if (scale_init_precond) {
    Array numerator = vdot(du, dp), denominator = vdot(du, du);
    Array scale = where(denominator > 0.0, numerator / denominator, 1.0);
    Array update_norm = sqrt(vdot(updates, updates));
    Array capped_inv_norm = minimum(1.0 / update_norm, 1.0);
    identity_scale = count > 0 ? scale : capped_inv_norm;
  }
  // The two-loop recursion over the memory slots, oldest first.
  const Array& rho = out.weights_memory;
  std::vector<std::int64_t> idx(m);
  for (std::int64_t j = 0; j < m; ++j) idx[j] = (memory_idx + j) % m;
  Arrays vec = updates;
  std::vector<Array> alphas(m);
  for (std::int64_t j = m - 1; j >= 0; --j) {
    Arrays dwi = rows(out.diff_params_memory, idx[j]), dui = rows(out.diff_updates_memory, idx[j]);
    alphas[j] = row(rho, idx[j]) * vdot(dwi, vec);
    add_scaled(vec, -alphas[j], dui);
  }
  for (Array& x : vec)
    if (x.valid()) x = identity_scale * x;
  for (std::int64_t j = 0; j < m; ++j) {
    Arrays dwi = rows(out.diff_params_memory, idx[j]), dui = rows(out.diff_updates_memory, idx[j]);
    Array beta = row(rho, idx[j]) * vdot(dui, vec);
    add_scaled(vec, alphas[j] - beta, dwi);
  }
  out.updates = std::move(vec);
  return out;
}

}  // namespace linum::optim::detail
