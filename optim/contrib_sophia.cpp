// Leaf math of Sophia and Hutchinson's estimator (contrib_sophia.hpp), with linum ops in optax's
// order of operations.
#include <linum/optim/contrib_sophia.hpp>

#include <iostream>
#include <string>

namespace linum::optim::detail {

std::pair<Array, Array> split_key(const Array& key) {
  Array keys = random::split(key);
  return {keys[0], keys[1]};
}

std::array<Array, 2> sophia_leaf(const SophiaConfig& c, const Array& count_inc, const Array& g,
                                 const Array& mu, const Array& nu) {
  if (!g.valid()) return {};
  Array m = update_moment(g, mu, c.b1, 1);
  Array u = bias_correction(m, c.b1, count_inc) / maximum(c.gamma * nu, c.eps);
  if (c.clip_threshold) u = clip(u, -*c.clip_threshold, *c.clip_threshold);
  return {u, cast(m, c.mu_dtype)};
}

void print_sophia_win_rate(const Array& count_inc, int every, const Array& not_clipped,
                           std::int64_t size) {
  // optax prints under jax.debug.print when count % every == 0; 0 turns it off.
  if (every <= 0 || count_inc.concrete().item<std::int64_t>() % every != 0) return;
  std::cout << "Sophia optimizer win rate: "
            << not_clipped.concrete().item<double>() / static_cast<double>(size) << "\n";
}

void throw_hutchinson_needs(const char* what) {
  throw ValueError(std::string("hutchinson_estimator_diag_hessian: ") + what +
                   " must be provided to hutchinson update function (obj_fn through "
                   "update(updates, state, params, ExtraArgs<Params>{.obj_fn = loss}))");
}

}  // namespace linum::optim::detail
