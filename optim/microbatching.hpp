// optax.microbatching: evaluating a function over a large batch in sequential microbatches (to
// bound peak memory) and combining the per-microbatch results by summing, averaging,
// concatenating them or by a user's Accumulator: microbatch, micro_vmap (a vmap that runs in
// microbatches), micro_grad (per-example gradients, transformed and accumulated),
// reshape_batch_axis, AccumulationType and Accumulator.
//
//   auto f = [](const Array& x) { return std::make_pair(x + 1, sum(3 * x)); };
//   auto mf = optim::microbatching::microbatch(
//       f, argnums<0>, 2, {AccumulationType::CONCAT, AccumulationType::SUM});
//   auto [y, s] = mf(array({1, 2, 3, 4}));  // ([2, 3, 4, 5], 30), as f(x)
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
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

// optax.microbatching.Accumulator: how one output leaf is combined over the microbatches,
//   carry = init(aval of one microbatch's value);
//   for i in microbatches: carry = update(carry, value_i, i);   (i: an int32 scalar)
//   result = finalize(carry);
// and aggregate(values), which reduces a leaf over its leading (batch) axis (micro_vmap's
// reduction inside a microbatch). The carry is any dynamic Tree of Arrays (an Array converts to
// one: read it back with carry.leaf()); it must keep its structure, shapes and dtypes.
struct Accumulator {
  std::function<Tree(const ShapeDtype& value)> init;
  std::function<Tree(const Tree& carry, const Array& value, const Array& index)> update;
  std::function<Array(const Tree& carry)> finalize;
  std::function<Array(const Array& values)> aggregate;
};

// The accumulation of each leaf of the function's output: one AccumulationType or Accumulator
// for every leaf, or one per leaf in flattening order (optax's pytree of them matching the
// output).
struct Accumulation {
  using Entry = std::variant<AccumulationType, Accumulator>;
  std::vector<Entry> entries;
  Accumulation(AccumulationType t) : entries{t} {}        // NOLINT(google-explicit-constructor)
  Accumulation(Accumulator a) : entries{std::move(a)} {}  // NOLINT(google-explicit-constructor)
  Accumulation(std::initializer_list<Entry> es) : entries(es) {}
};

namespace detail {
// The K-th of the argnums I... .
template <std::size_t K, int... I>
constexpr int nth_argnum() {
  constexpr int a[] = {I...};
  return a[K];
}
Array reshape_batch_leaf(const Array& x, std::int64_t microbatch_size, int axis);
// The per-leaf entries for n output leaves (ValueError when the counts differ).
std::vector<Accumulation::Entry> leaf_entries(const Accumulation& acc, std::size_t n);
// optax's _canonicalize: an AccumulationType as the Accumulator optax builds for it (MEAN and
// CONCAT need the number of microbatches).
Accumulator canonical(const Accumulation::Entry& e, std::int64_t num_microbatches);
// The common batch size of the batch arguments' leaves (ValueError when they differ, when one
// lacks the axis, or when microbatch_size does not divide it).
std::int64_t microbatch_count(const std::vector<std::pair<Arrays, int>>& batch_leaves,
                              std::int64_t microbatch_size);
void check_microbatch_size(std::optional<std::int64_t> microbatch_size);
void check_microbatch_args(std::size_t num_batch_args, std::vector<int>& in_axes,
                           std::optional<std::int64_t> microbatch_size);
void check_num_real_microbatches(std::int64_t num_real, std::int64_t num_microbatches);
// micro_vmap's in_axes as one optional axis per positional argument (ValueError for a nested
// spec, NotImplementedError for out_axes other than 0).
std::vector<std::optional<int>> micro_vmap_axes(const AxisSpec& in_axes, int out_axes);
void check_arg_count(std::size_t axes, std::size_t args, const char* fn);

// The accumulation loop: per output leaf its Accumulator (init from the proto leaves' avals),
// a fori_loop over `bound` microbatches of call(index), then finalize.
Arrays accumulate(const std::vector<Accumulator>& accs, const Arrays& proto, std::int64_t bound,
                  const std::function<Arrays(const Array& index)>& call);

// fun over the microbatches of the arguments whose axes[k] is set (the others are passed
// whole), each leaf combined by resolve(proto output)'s accumulation entries.
template <class F, class Resolve, class... A>
auto run_microbatched(const F& fun, const std::vector<std::optional<int>>& axes, std::int64_t m,
                      std::optional<std::int64_t> num_real, const Resolve& resolve,
                      const A&... args) {
  using Out = std::decay_t<std::invoke_result_t<const F&, const A&...>>;
  using Args = std::tuple<A...>;
  const Args all(args...);
  std::vector<std::pair<Arrays, int>> batch_leaves;
  auto each_batched = [&](auto&& f) {
    [&]<std::size_t... K>(std::index_sequence<K...>) {
      ((axes[K] ? f(std::integral_constant<std::size_t, K>{}, *axes[K]) : void()), ...);
    }
    (std::make_index_sequence<sizeof...(A)>{});
  };
  each_batched([&](auto k, int axis) {
    batch_leaves.emplace_back(linum::detail::tree_arrays(std::get<decltype(k)::value>(all)), axis);
  });
  const std::int64_t n = microbatch_count(batch_leaves, m);
  // The batch arguments reshaped to (..., num_microbatches, m, ...) at their axis.
  Args reshaped = all;
  each_batched([&](auto k, int axis) {
    std::get<decltype(k)::value>(reshaped) = linum::detail::tree_apply_skip_empty(
        std::get<decltype(k)::value>(all),
        [&](const Array& x) { return reshape_batch_leaf(x, m, axis); });
  });
  // fun on microbatch `index`: the batch arguments' rows at index along their axis.
  auto call = [&](const Array& index) {
    Args a = reshaped;
    each_batched([&](auto k, int axis) {
      std::get<decltype(k)::value>(a) = linum::detail::tree_apply_skip_empty(
          std::get<decltype(k)::value>(reshaped),
          [&](const Array& x) { return take(x, index, axis); });
    });
    return Out(std::apply(fun, a));
  };
  const Out proto = linum::detail::abstract_call(call, Array(0));
  const std::int64_t bound = num_real.value_or(n);
  check_num_real_microbatches(bound, n);
  std::vector<Accumulator> accs;
  for (const auto& e : resolve(proto)) accs.push_back(canonical(e, n));
  Arrays out = accumulate(accs, linum::detail::tree_arrays(proto), bound,
                          [&](const Array& i) { return linum::detail::tree_arrays(call(i)); });
  return linum::detail::tree_rebuild(proto, out);
}

// The same entries for every call: one for all leaves or one per leaf.
struct PerLeaf {
  Accumulation acc;
  template <class T>
  std::vector<Accumulation::Entry> operator()(const T& out) const {
    return leaf_entries(acc, linum::detail::tree_arrays(out).size());
  }
};

// micro_vmap with the accumulation entries of resolve(output).
template <class F, class Resolve>
auto micro_vmap_impl(F fun, std::vector<std::optional<int>> axes,
                     std::optional<std::int64_t> microbatch_size, Resolve resolve,
                     std::optional<std::int64_t> num_real_microbatches) {
  return [fun = std::move(fun), axes = std::move(axes), microbatch_size, resolve,
          num_real_microbatches](const auto&... args) {
    check_arg_count(axes.size(), sizeof...(args), "micro_vmap");
    // vmap over a microbatch, then each leaf reduced by its accumulator's aggregate.
    auto vmap_reduce = [&](const auto&... a) {
      VmapOptions o;
      std::vector<AxisSpec> spec;
      for (const auto& ax : axes) spec.emplace_back(ax ? AxisSpec(*ax) : AxisSpec(std::nullopt));
      o.in_axes = AxisSpec::seq(std::move(spec));
      auto out = vmap(fun, o)(a...);
      Arrays leaves = linum::detail::tree_arrays(out);
      const auto entries = resolve(out);
      for (std::size_t k = 0; k < leaves.size() && leaves[0].ndim() > 0; ++k)
        leaves[k] = canonical(entries[k], leaves[0].shape(0)).aggregate(leaves[k]);
      return linum::detail::tree_rebuild(out, leaves);
    };
    if (!microbatch_size) return vmap_reduce(args...);
    return run_microbatched(vmap_reduce, axes, *microbatch_size, num_real_microbatches, resolve,
                            args...);
  };
}
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
    static_assert(((I >= 0 && I < static_cast<int>(sizeof...(args))) && ...),
                  "microbatch: an argnum is not the index of an argument");
    if (!microbatch_size) return Out(fun(args...));
    std::vector<std::optional<int>> axes(sizeof...(args));
    [&]<std::size_t... K>(std::index_sequence<K...>) {
      ((axes[detail::nth_argnum<K, I...>()] = in_axes[K]), ...);
    }
    (std::make_index_sequence<sizeof...(I)>{});
    return Out(detail::run_microbatched(fun, axes, *microbatch_size, num_real_microbatches,
                                        detail::PerLeaf{accumulator}, args...));
  };
}

// optax.microbatching.micro_vmap(fun, in_axes, out_axes, microbatch_size=, accumulator=,
// num_real_microbatches=): vmap(fun) over the in_axes of its arguments (one axis or None per
// argument: {0, VmapOptions::kNone}; a single axis for a one-argument fun), run in microbatches
// of microbatch_size examples (all at once without it). Each output leaf is then aggregated over
// the examples of a microbatch and accumulated over the microbatches by `accumulator`: CONCAT
// (the default) gives vmap's result, SUM and MEAN its sum and mean over the batch. out_axes must
// be 0 (NotImplementedError otherwise); optax's vmap_fn has no C++ counterpart.
template <class F>
auto micro_vmap(F fun, const AxisSpec& in_axes = 0, int out_axes = 0,
                std::optional<std::int64_t> microbatch_size = std::nullopt,
                Accumulation accumulator = AccumulationType::CONCAT,
                std::optional<std::int64_t> num_real_microbatches = std::nullopt) {
  detail::check_microbatch_size(microbatch_size);
  return detail::micro_vmap_impl(std::move(fun), detail::micro_vmap_axes(in_axes, out_axes),
                                 microbatch_size, detail::PerLeaf{std::move(accumulator)},
                                 num_real_microbatches);
}

// optax's IndividualOutputs (a namedtuple "Aux"): micro_grad's per-example outputs, each with a
// leading batch axis: the function's values, metrics_fn of the gradients, and the function's aux
// (std::nullopt without has_aux).
template <class V, class M, class A>
struct IndividualOutputs {
  BOOST_HANA_DEFINE_STRUCT(IndividualOutputs, (V, values), (M, metrics), (A, aux));
};

// micro_grad's keyword arguments (optax's names and defaults).
struct MicroGradOptions {
  bool keep_batch_dim = true;
  std::optional<std::int64_t> microbatch_size{};
  Accumulation accumulator = AccumulationType::SUM;
  std::optional<std::int64_t> num_real_microbatches{};
};

// micro_grad's default transform_fn (the gradient itself) and metrics_fn (None).
struct IdentityTransform {
  template <class G>
  G operator()(const G& g) const {
    return g;
  }
};
struct NoMetrics {
  template <class G>
  std::optional<Array> operator()(const G&) const {
    return std::nullopt;
  }
};

namespace detail {
template <bool Aux, class F, int... I, int... B, class T, class M>
auto micro_grad_impl(F fun, Argnums<I...> argnums, Argnums<B...>, MicroGradOptions o,
                     T transform_fn, M metrics_fn) {
  static_assert(sizeof...(B) > 0, "micro_grad: batch_argnums names no batch argument");
  auto fun_aux = [fun = std::move(fun)](const auto&... a) {
    if constexpr (Aux)
      return fun(a...);
    else
      return std::make_pair(fun(a...), std::optional<Array>());
  };
  // One example's (transform_fn(grad), IndividualOutputs(value, metrics_fn(grad), aux)).
  auto grad_fn = [vg = value_and_grad(fun_aux, argnums, has_aux), transform_fn,
                  metrics_fn](const auto&... a) {
    auto [value_aux, g] = vg(a...);
    auto metrics = metrics_fn(g);
    return std::make_pair(
        transform_fn(g),
        IndividualOutputs<decltype(value_aux.first), decltype(metrics), decltype(value_aux.second)>{
            value_aux.first, std::move(metrics), value_aux.second});
  };
  // The transformed gradients' leaves take the user's accumulation, the outputs CONCAT.
  auto resolve = [acc = o.accumulator](const auto& out) {
    auto entries = leaf_entries(acc, linum::detail::tree_arrays(out.first).size());
    for (std::size_t k = linum::detail::tree_arrays(out.second).size(); k-- > 0;)
      entries.emplace_back(AccumulationType::CONCAT);
    return entries;
  };
  return [grad_fn = std::move(grad_fn), resolve, o](const auto&... args) {
    std::vector<std::optional<int>> axes(sizeof...(args));
    static_assert(((B >= 0 && B < static_cast<int>(sizeof...(args))) && ...),
                  "micro_grad: a batch_argnum is not the index of an argument");
    ((axes[B] = 0), ...);
    auto run = micro_vmap_impl(grad_fn, axes, o.microbatch_size, resolve, o.num_real_microbatches);
    if (!o.keep_batch_dim) return run(args...);
    // Each example keeps a batch axis of 1: fun sees batches.
    std::tuple<std::decay_t<decltype(args)>...> a(args...);
    ((std::get<B>(a) = linum::detail::tree_apply_skip_empty(
          std::get<B>(a), [](const Array& x) { return expand_dims(x, 1); })),
     ...);
    return std::apply(run, a);
  };
}
}  // namespace detail

// optax.microbatching.micro_grad(fun, has_aux, argnums, batch_argnums=, keep_batch_dim=,
// microbatch_size=, accumulator=, transform_fn=, metrics_fn=, num_real_microbatches=): a
// function of fun's arguments returning (the accumulated transform_fn(per-example gradient),
// IndividualOutputs{values, metrics, aux} per example). The batch_argnums arguments carry the
// batch (axis 0); each example is one row, with a batch axis of 1 when keep_batch_dim. The
// gradients are with respect to the argnums arguments (a tuple for several); accumulator
// (default SUM) combines the transformed gradients over the batch, in microbatches of
// microbatch_size examples.
template <class F, int... I, int... B, class T = IdentityTransform, class M = NoMetrics>
auto micro_grad(F fun, Argnums<I...> argnums, Argnums<B...> batch_argnums,
                MicroGradOptions options = {}, T transform_fn = {}, M metrics_fn = {}) {
  return detail::micro_grad_impl<false>(std::move(fun), argnums, batch_argnums, std::move(options),
                                        std::move(transform_fn), std::move(metrics_fn));
}
// With has_aux: fun returns (value, aux), and aux comes back per example.
template <class F, int... I, int... B, class T = IdentityTransform, class M = NoMetrics>
auto micro_grad(F fun, HasAux, Argnums<I...> argnums, Argnums<B...> batch_argnums,
                MicroGradOptions options = {}, T transform_fn = {}, M metrics_fn = {}) {
  return detail::micro_grad_impl<true>(std::move(fun), argnums, batch_argnums, std::move(options),
                                       std::move(transform_fn), std::move(metrics_fn));
}

}  // namespace linum::optim::microbatching
