// The per-leaf updates of scale_by_adam, trace and scale_by_rms / scale_by_stddev, each one pass
// over memory on concrete float32/float64 leaves (fused.cpp), and the same math with linum ops
// everywhere else (tracers under grad/vmap/jvp/eval_shape, other dtypes, mixed shapes or dtypes),
// so that an update can still be transformed. A chain folds a following add_decayed_weights and
// scale (constant learning rate) into the same pass as an Epilogue; states stay as they are.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>

#include <linum/autodiff/array.hpp>
#include <linum/autodiff/tree_bridge.hpp>

namespace linum::optim::detail {

// Whether updates may take the one-pass kernels on this thread (on by default).
bool fused_updates_enabled();

// Scoped switch: FusedUpdates off(false) makes this thread's updates use the linum-op path until
// it goes out of scope (tests compare the two paths with it).
class FusedUpdates {
 public:
  explicit FusedUpdates(bool on);
  ~FusedUpdates();
  FusedUpdates(const FusedUpdates&) = delete;
  FusedUpdates& operator=(const FusedUpdates&) = delete;

 private:
  bool prev_;
};

// How many leaves this thread has updated with the one-pass kernels (tests check the path taken).
std::uint64_t fused_leaf_count();

// What a chain folds into the transformation before it: u + weight_decay * p
// (add_decayed_weights), then scale * u (scale / a constant scale_by_learning_rate).
struct Epilogue {
  bool decay = false;
  double weight_decay = 0.0;
  bool scaled = false;
  double scale = 1.0;
};

// 1 - decay**count in the dtype of the leaves that meet it, computed once per dtype and step
// with the same linum ops as bias_correction (the kernels need the value on the host).
class Debias {
 public:
  Debias(double decay, Array count) : decay_(decay), count_(std::move(count)) {}
  const Array& count() const { return count_; }
  double decay() const { return decay_; }
  double denominator(DType dtype) const;

 private:
  double decay_;
  Array count_;
  mutable std::optional<double> f32_, f64_;
};

// New update and state leaves of one parameter leaf; p is its parameter when the epilogue
// decays (else nullptr). An empty g with empty state leaves (optax's MaskedNode) stays empty.
struct AdamLeafConfig {
  double b1, b2, eps, eps_root;
  std::optional<DType> mu_dtype;
  bool nesterov;
  Debias c1, c2;
  std::optional<Debias> c1_next;  // nesterov: 1 - b1**(count + 2)
};
// {update, mu, nu}.
std::array<Array, 3> adam_leaf(const AdamLeafConfig& c, const Array& g, const Array& mu,
                               const Array& nu, const Array* p, const Epilogue& ep);

// {update, trace}.
struct TraceLeafConfig {
  double decay;
  bool nesterov;
};
std::array<Array, 2> trace_leaf(const TraceLeafConfig& c, const Array& g, const Array& trace,
                                const Array* p, const Epilogue& ep);

// {update, mu, nu}; mu is empty unless centered (scale_by_stddev). debias: the bias correction
// with the incremented count, or none.
struct SecondMomentLeafConfig {
  double decay, eps;
  bool eps_in_sqrt, centered;
  std::optional<Debias> debias;
};
std::array<Array, 3> second_moment_leaf(const SecondMomentLeafConfig& c, const Array& g,
                                        const Array& mu, const Array& nu, const Array* p,
                                        const Epilogue& ep);

// The leaf formulas of add_decayed_weights and scale, shared with the epilogue's linum-op path.
Array decayed_weights_leaf(const Array& g, double weight_decay, const Array& p);
Array scale_leaf(double step_size, const Array& g);

// Maps f(g, p_or_null, state leaves...) over the leaves of updates (the params tree joins when
// with_params); f returns the leaf's outputs {update, new state leaves...}. Returns the updates
// tree and, per state tree, the new leaves in walk order (rebuild them with rebuild_walked).
template <std::size_t N, class U, class Q, class F, class... S>
std::pair<U, std::array<Arrays, N - 1>> map_leaves(const U& updates, const Q* params,
                                                   bool with_params, F&& f, const S&... states) {
  std::array<Arrays, N - 1> out;
  auto leaf = [&](const Array& g, const Array* p, const auto&... s) {
    std::array<Array, N> r = f(g, p, s...);
    for (std::size_t i = 1; i < N; ++i) out[i - 1].push_back(std::move(r[i]));
    return r[0];
  };
  U u =
      with_params && params
          ? linum::detail::tree_apply(
                updates,
                [&](const Array& g, const Array& p, const auto&... s) { return leaf(g, &p, s...); },
                *params, states...)
          : linum::detail::tree_apply(
                updates, [&](const Array& g, const auto&... s) { return leaf(g, nullptr, s...); },
                states...);
  return {std::move(u), std::move(out)};
}

// A tree like `like` whose leaves are `leaves`, taken in the order tree_apply walks it.
template <class P>
P rebuild_walked(const P& like, const Arrays& leaves) {
  std::size_t i = 0;
  return linum::detail::tree_apply(like, [&](const Array&) { return leaves.at(i++); });
}

}  // namespace linum::optim::detail
