// optax.inject_hyperparams: a transformation whose numeric hyper-parameters live in its state
// (InjectStatefulHyperparamsState.hyperparams), so they can be read or changed between steps,
// and whose scheduled ones are evaluated every step (WrappedSchedule's count).
//
//   auto tx = optim::inject_hyperparams(
//       [](const optim::Hyperparams& h) { return optim::adam(h.at("learning_rate"), h.at("b1")); },
//       {{"learning_rate", optim::exponential_decay(1e-2, 100, 0.5)}, {"b1", 0.9}});
//   auto state = tx.init(params);
//   state.hyperparams["b1"] = Array(0.95f);  // takes effect at the next update
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include <linum/optim/base.hpp>
#include <linum/optim/schedule.hpp>
#include <linum/optim/transform.hpp>
#include <linum/optim/tree_utils.hpp>

namespace linum::optim {

// The hyper-parameter values a factory gets, by name.
using Hyperparams = std::map<std::string, double>;

// A hyper-parameter of inject_hyperparams: a number (kept in the state) or a schedule.
struct Hyperparam {
  Hyperparam(double v) : value(v) {}                  // NOLINT(google-explicit-constructor)
  Hyperparam(Schedule s) : schedule(std::move(s)) {}  // NOLINT(google-explicit-constructor)
  template <class F>
  requires(std::is_invocable_r_v<double, const F&, std::int64_t> && !std::is_arithmetic_v<F>)
      Hyperparam(F f)  // NOLINT(google-explicit-constructor)
      : schedule(Schedule(std::move(f))) {}
  std::optional<double> value;
  Schedule schedule;
};

template <class C = Array>
struct WrappedScheduleState {
  BOOST_HANA_DEFINE_STRUCT(WrappedScheduleState, (C, count));
};

// optax.WrappedSchedule: a schedule made stateful: its count is its state.
struct WrappedSchedule {
  Schedule schedule_fn;
  WrappedScheduleState<> init() const { return {zero_count()}; }
  WrappedScheduleState<> update(const WrappedScheduleState<>& s) const {
    return {safe_increment(s.count)};
  }
  double operator()(const WrappedScheduleState<>& s) const {
    return schedule_fn(concrete_count(s.count, "WrappedSchedule"));
  }
};

using HyperparamValues = std::map<std::string, Array>;
using HyperparamStates = std::map<std::string, WrappedScheduleState<>>;

// optax.InjectStatefulHyperparamsState, the state inject_hyperparams keeps in optax 0.2.8.
template <class S, class C = Array>
struct InjectStatefulHyperparamsState {
  BOOST_HANA_DEFINE_STRUCT(InjectStatefulHyperparamsState, (C, count),
                           (HyperparamValues, hyperparams), (HyperparamStates, hyperparams_states),
                           (S, inner_state));
};

template <class Factory>
struct InjectHyperparams : Transformation<InjectHyperparams<Factory>> {
  Factory inner_factory;
  std::map<std::string, double> numeric;
  std::map<std::string, WrappedSchedule> schedules;
  std::optional<DType> hyperparam_dtype;

  template <class P>
  auto init(const P& params) const {
    const DType dt = dtype_for(params);
    std::map<std::string, Array> h;
    std::map<std::string, WrappedScheduleState<>> hs;
    for (const auto& [k, v] : numeric) h.insert_or_assign(k, full({}, v, dt));
    for (const auto& [k, f] : schedules) {
      hs.insert_or_assign(k, f.init());
      h.insert_or_assign(k, full({}, f(hs.at(k)), dt));
    }
    auto inner_state = inner_factory(read(h)).init(params);
    return InjectStatefulHyperparamsState<decltype(inner_state)>{
        zero_count(), std::move(h), std::move(hs), std::move(inner_state)};
  }

  template <class U, class S, class Q>
  std::pair<U, S> update_impl(const U& updates, const S& state, const Q* params) const {
    return run(updates, state, params, static_cast<const ExtraArgs<Q>*>(nullptr));
  }
  template <class U, class S, class Q>
  std::pair<U, S> update_extra(const U& updates, const S& state, const Q* params,
                               const ExtraArgs<Q>& extra) const {
    return run(updates, state, params, &extra);
  }

 private:
  template <class T>
  DType dtype_for(const T& tree) const {
    if (hyperparam_dtype) return *hyperparam_dtype;
    const DType d = tree_utils::tree_dtype(tree, "highest");
    return is_floating(d) ? d : float32;
  }
  static Hyperparams read(const std::map<std::string, Array>& h) {
    Hyperparams out;
    for (const auto& [k, v] : h) out.insert_or_assign(k, v.concrete().template item<double>());
    return out;
  }

  template <class U, class S, class Q>
  std::pair<U, S> run(const U& updates, const S& state, const Q* params,
                      const ExtraArgs<Q>* extra) const {
    const DType dt = params ? dtype_for(*params) : dtype_for(updates);
    S next = state;
    // Numbers: as the state holds them (the user may have changed them), in dt.
    for (auto& [k, v] : next.hyperparams)
      if (!schedules.count(k) && is_floating(v.dtype())) v = astype(v, dt);
    for (const auto& [k, f] : schedules) {
      auto it = state.hyperparams_states.find(k);
      if (it == state.hyperparams_states.end())
        throw ValueError("inject_hyperparams: the state has no schedule state for '" + k + "'");
      next.hyperparams.insert_or_assign(k, full({}, f(it->second), dt));
      next.hyperparams_states.insert_or_assign(k, f.update(it->second));
    }
    auto tx = inner_factory(read(next.hyperparams));
    auto [u, inner] = params && extra ? tx.update(updates, state.inner_state, *params, *extra)
                      : params        ? tx.update(updates, state.inner_state, *params)
                                      : tx.update(updates, state.inner_state);
    next.count = safe_increment(state.count);
    next.inner_state = std::move(inner);
    return {U(std::move(u)), std::move(next)};
  }
};

// optax.inject_hyperparams(inner_factory)(**hyperparams): inner_factory(Hyperparams) builds the
// transformation from the current values (bind the other, static, arguments in it); numbers
// start in the state as given (in hyperparam_dtype, default the params' widest float dtype),
// schedules are evaluated at their own step count every update.
template <class Factory>
InjectHyperparams<Factory> inject_hyperparams(
    Factory inner_factory, const std::map<std::string, Hyperparam>& hyperparams,
    std::optional<DType> hyperparam_dtype = std::nullopt) {
  // Aggregate initialisation: a capturing factory has no default constructor.
  InjectHyperparams<Factory> t{{}, std::move(inner_factory), {}, {}, hyperparam_dtype};
  for (const auto& [k, h] : hyperparams) {
    if (h.value)
      t.numeric.insert_or_assign(k, *h.value);
    else
      t.schedules.insert_or_assign(k, WrappedSchedule{h.schedule});
  }
  return t;
}

// optax.inject_stateful_hyperparams: deprecated in optax for inject_hyperparams, which it is.
template <class Factory>
InjectHyperparams<Factory> inject_stateful_hyperparams(
    Factory inner_factory, const std::map<std::string, Hyperparam>& hyperparams,
    std::optional<DType> hyperparam_dtype = std::nullopt) {
  return inject_hyperparams(std::move(inner_factory), hyperparams, hyperparam_dtype);
}

}  // namespace linum::optim
