// optax.microbatching: evaluating a function over a large batch in sequential microbatches (to
// bound peak memory) and combining the per-microbatch results by summing, averaging or
// concatenating them: microbatch, reshape_batch_axis and AccumulationType.
//
//   auto f = [](const Array& x) { return std::make_pair(x + 1, sum(3 * x)); };
//   auto mf = optim::microbatching::microbatch(
//       f, argnums<0>, 2, {AccumulationType::CONCAT, AccumulationType::SUM});
//   auto [y, s] = mf(array({1, 2, 3, 4}));  // ([2, 3, 4, 5], 30), as f(x)
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <linum/autodiff/control_flow.hpp>
#include <linum/autodiff/eval_shape.hpp>
#include <linum/autodiff/transforms.hpp>
#include <linum/autodiff/tree_bridge.hpp>

namespace linum::optim::microbatching {

// optax.microbatching.AccumulationType: how the microbatches' results are combined. MEAN divides
// the sum by the number of microbatches; RUNNING_MEAN averages over the microbatches that ran
// (num_real_microbatches); CONCAT puts the results back in the batch's order along axis 0.
enum class AccumulationType { MEAN, SUM, RUNNING_MEAN, CONCAT };

// The accumulation of each leaf of the function's output: one type for every leaf, or one per
// leaf in flattening order (optax's pytree of AccumulationTypes matching the output).
struct Accumulation {
  std::vector<AccumulationType> types;
  Accumulation(AccumulationType t) : types{t} {}  // NOLINT(google-explicit-constructor)
  Accumulation(std::initializer_list<AccumulationType> ts) : types(ts) {}
};

namespace detail {
// The K-th of the argnums I... .
template <std::size_t K, int... I>
constexpr int nth_argnum() {
  constexpr int a[] = {I...};
  return a[K];
}
Array reshape_batch_leaf(const Array& x, std::int64_t microbatch_size, int axis);
// The per-leaf accumulation types for n output leaves (ValueError when the counts differ).
std::vector<AccumulationType> leaf_types(const Accumulation& acc, std::size_t n);
// optax's Accumulator init / update / finalize for one leaf; proto is the leaf's aval.
Array accumulator_init(AccumulationType t, const Array& proto, std::int64_t num_microbatches);
Array accumulator_update(AccumulationType t, const Array& carry, const Array& value,
                         const Array& index);
Array accumulator_finalize(AccumulationType t, const Array& carry, std::int64_t num_microbatches);
// The common batch size of the batch arguments' leaves (ValueError when they differ, when one
// lacks the axis, or when microbatch_size does not divide it).
std::int64_t microbatch_count(const std::vector<std::pair<Arrays, int>>& batch_leaves,
                              std::int64_t microbatch_size);
void check_microbatch_args(std::size_t num_batch_args, std::vector<int>& in_axes,
                           std::optional<std::int64_t> microbatch_size);
void check_num_real_microbatches(std::int64_t num_real, std::int64_t num_microbatches);
}  // namespace detail

// optax.microbatching.reshape_batch_axis(tree, microbatch_size, axis): every leaf's `axis`, of
// size B, becomes (B / microbatch_size, microbatch_size) in column-major order, as optax: row
// i of the new leading axis holds the examples i, i + n, i + 2n, ... (n = B / microbatch_size).
template <class T>
T reshape_batch_axis(const T& tree, std::int64_t microbatch_size, int axis = 0) {
  return linum::detail::tree_apply_skip_empty(
      tree, [&](const Array& x) { return detail::reshape_batch_leaf(x, microbatch_size, axis); });
}

// optax.microbatch(fun, argnums, microbatch_size, accumulator, in_axes=,
// num_real_microbatches=): a function with fun's arguments that runs fun on the
// batch / microbatch_size microbatches of the argnums arguments (their axis in_axes[k], every
// leaf of the k-th batch argument; one in_axes entry is used for all) one after the other, in a
// fori_loop, and combines the results leaf by leaf as `accumulator` says. Without
// microbatch_size it is fun itself. The microbatches are reshape_batch_axis's (strided) rows;
// with num_real_microbatches only the first that many run. optax's argnames (keyword
// arguments) have no C++ counterpart.
template <class F, int... I>
auto microbatch(F fun, Argnums<I...>, std::optional<std::int64_t> microbatch_size,
                Accumulation accumulator = AccumulationType::SUM, std::vector<int> in_axes = {0},
                std::optional<std::int64_t> num_real_microbatches = std::nullopt) {
  static_assert(sizeof...(I) > 0, "microbatch: argnums names no batch argument");
  detail::check_microbatch_args(sizeof...(I), in_axes, microbatch_size);
  return [fun = std::move(fun), microbatch_size, accumulator = std::move(accumulator), in_axes,
          num_real_microbatches](const auto&... args) {
    using Out = std::decay_t<std::invoke_result_t<const F&, decltype(args)...>>;
    if (!microbatch_size) return Out(fun(args...));
    const std::int64_t m = *microbatch_size;
    using Args = std::tuple<std::decay_t<decltype(args)>...>;
    const Args all(args...);
    // The batch arguments' leaves and axes: their common batch size gives the microbatches.
    std::vector<std::pair<Arrays, int>> batch_leaves;
    [&]<std::size_t... K>(std::index_sequence<K...>) {
      (batch_leaves.emplace_back(
           linum::detail::tree_arrays(std::get<detail::nth_argnum<K, I...>()>(all)), in_axes[K]),
       ...);
    }
    (std::make_index_sequence<sizeof...(I)>{});
    const std::int64_t n = detail::microbatch_count(batch_leaves, m);
    // The batch arguments reshaped to (..., num_microbatches, m, ...) at their axis.
    auto reshaped = [&]<std::size_t... K>(std::index_sequence<K...>) {
      return std::make_tuple(
          reshape_batch_axis(std::get<detail::nth_argnum<K, I...>()>(all), m, in_axes[K])...);
    }
    (std::make_index_sequence<sizeof...(I)>{});
    // fun on microbatch `index`: the batch arguments' rows at index along their axis.
    auto call = [&](const Array& index) {
      Args a = all;
      [&]<std::size_t... K>(std::index_sequence<K...>) {
        ((std::get<detail::nth_argnum<K, I...>()>(a) = linum::detail::tree_apply_skip_empty(
              std::get<K>(reshaped), [&](const Array& x) { return take(x, index, in_axes[K]); })),
         ...);
      }
      (std::make_index_sequence<sizeof...(I)>{});
      return Out(std::apply(fun, a));
    };
    const Out proto = linum::detail::abstract_call(call, Array(0));
    const Arrays proto_leaves = linum::detail::tree_arrays(proto);
    const std::vector<AccumulationType> types =
        detail::leaf_types(accumulator, proto_leaves.size());
    Arrays carry;
    for (std::size_t k = 0; k < proto_leaves.size(); ++k)
      carry.push_back(detail::accumulator_init(types[k], proto_leaves[k], n));
    const std::int64_t bound = num_real_microbatches.value_or(n);
    detail::check_num_real_microbatches(bound, n);
    carry = fori_loop(
        Array(0), Array(static_cast<int>(bound)),
        [&](const Array& index, const Arrays& c) {
          const Arrays v = linum::detail::tree_arrays(call(index));
          Arrays next;
          for (std::size_t k = 0; k < c.size(); ++k)
            next.push_back(detail::accumulator_update(types[k], c[k], v[k], index));
          return next;
        },
        carry);
    for (std::size_t k = 0; k < carry.size(); ++k)
      carry[k] = detail::accumulator_finalize(types[k], carry[k], n);
    return linum::detail::tree_rebuild(proto, carry);
  };
}

}  // namespace linum::optim::microbatching
