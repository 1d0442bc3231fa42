// optax's monitoring transformations: snapshot (keep a measurement of the updates in the
// state), monitor (several measurements, each a function of the updates or a transformation's
// output, with their states) and measure_with_ema (an exponential moving average of a
// measurement). Measurements are kept as dynamic Trees.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include <linum/optim/accumulation.hpp>
#include <linum/optim/base.hpp>
#include <linum/optim/erased.hpp>

namespace linum::optim {

using Measurements = std::map<std::string, Tree>;

struct SnapshotState {
  BOOST_HANA_DEFINE_STRUCT(SnapshotState, (Measurements, measurement));
};

// optax.snapshot(measure_name, measure): the updates unchanged; the state holds
// {measure_name: measure(updates)} (measure(params) after init).
template <class F>
struct Snapshot : Transformation<Snapshot<F>> {
  std::string measure_name;
  F measure;
  template <class P>
  SnapshotState init(const P& params) const {
    return {{{measure_name, detail::to_tree(measure(params))}}};
  }
  template <class U, class Q>
  std::pair<U, SnapshotState> update_impl(const U& updates, const SnapshotState&, const Q*) const {
    return {updates, {{{measure_name, detail::to_tree(measure(updates))}}}};
  }
};
template <class F>
Snapshot<F> snapshot(std::string measure_name, F measure) {
  // Aggregate initialisation: a capturing measure has no default constructor.
  return Snapshot<F>{{}, std::move(measure_name), std::move(measure)};
}

struct MonitorState {
  BOOST_HANA_DEFINE_STRUCT(MonitorState, (Measurements, measurements), (Tree, measure_states));
};

// One measure of monitor: a function of the updates (any pytree result; its state is
// EmptyState) or a transformation, whose output updates are the measurement.
template <class P>
struct Measure {
  template <class F>
  Measure(F f) {  // NOLINT(google-explicit-constructor): callables and transformations convert
    if constexpr (std::is_invocable_v<const F&, const P&>) {
      tx = GradientTransformation<P>(identity());  // its EmptyState, as optax's stateless(f)
      fn = [f](const P& u) { return detail::to_tree(f(u)); };
    } else {
      tx = GradientTransformation<P>(std::move(f));
    }
  }
  std::function<Tree(const P&)> fn;  // set for a function measure
  std::optional<GradientTransformation<P>> tx;
};

// optax.monitor(measures): the updates unchanged; MonitorState.measurements holds each
// measure's result on them, measure_states the states of the transformation measures.
template <class P>
struct Monitor : Transformation<Monitor<P>> {
  std::map<std::string, Measure<P>> measures;
  MonitorState init(const P& params) const {
    Tree::seq_type states;
    for (const auto& [name, m] : measures) states.push_back(m.tx->init(params));
    return {{}, Tree::tuple(std::move(states))};
  }
  std::pair<P, MonitorState> update_impl(const P& updates, const MonitorState& state,
                                         const P* params) const {
    return run(updates, state, params, nullptr);
  }
  std::pair<P, MonitorState> update_extra(const P& updates, const MonitorState& state,
                                          const P* params, const ExtraArgs<P>& extra) const {
    return run(updates, state, params, &extra);
  }

 private:
  std::pair<P, MonitorState> run(const P& updates, const MonitorState& state, const P* params,
                                 const ExtraArgs<P>* extra) const {
    if (!state.measure_states.is_tuple() || state.measure_states.size() != measures.size())
      throw ValueError(
          "monitor: the state holds " +
          std::to_string(state.measure_states.is_tuple() ? state.measure_states.size() : 0) +
          " measure states for " + std::to_string(measures.size()) + " measures");
    MonitorState next;
    Tree::seq_type states;
    std::size_t i = 0;
    for (const auto& [name, m] : measures) {
      const Tree& s = state.measure_states.items()[i++];
      if (m.fn) {
        next.measurements.insert_or_assign(name, m.fn(updates));
        states.push_back(s);
        continue;
      }
      auto [u, ns] = params && extra ? m.tx->update(updates, s, *params, *extra)
                     : params        ? m.tx->update(updates, s, *params)
                                     : m.tx->update(updates, s);
      next.measurements.insert_or_assign(name, detail::to_tree(u));
      states.push_back(std::move(ns));
    }
    next.measure_states = Tree::tuple(std::move(states));
    return {updates, std::move(next)};
  }
};
template <class P>
Monitor<P> monitor(std::map<std::string, Measure<P>> measures) {
  Monitor<P> t;
  t.measures = std::move(measures);
  return t;
}

// optax.measure_with_ema(measure, decay, debias, accumulator_dtype): chain(stateless(measure),
// ema) whose ema is initialised on measure(params): the output is the (debiased) moving average
// of measure(updates), a tree of measure's result type.
template <class F>
struct MeasureWithEma : Transformation<MeasureWithEma<F>> {
  F measure;
  Ema ema;
  template <class P>
  auto init(const P& params) const {
    auto m = measure(params);
    return std::tuple<EmptyState, EmaState<decltype(m)>>{EmptyState{}, ema.init(m)};
  }
  template <class U, class S, class Q>
  auto update_impl(const U& updates, const S& state, const Q*) const {
    auto m = measure(updates);
    auto [out, es] = ema.update(m, std::get<1>(state));
    return std::pair<decltype(out), S>{std::move(out), S{EmptyState{}, std::move(es)}};
  }
};
template <class F>
MeasureWithEma<F> measure_with_ema(F measure, double decay, bool debias = true,
                                   std::optional<DType> accumulator_dtype = std::nullopt) {
  return MeasureWithEma<F>{{}, std::move(measure), optim::ema(decay, debias, accumulator_dtype)};
}

}  // namespace linum::optim
