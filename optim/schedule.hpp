// optax schedules: step count -> hyper-parameter value (constant, polynomial, linear, exponential
// decay, cosine decay, warmup + constant / cosine / exponential decay, piecewise constant and
// interpolated, one-cycle, SGDR, join_schedules).
// Values are computed in double on the host; scale_by_schedule casts them to the update's dtype.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <linum/autodiff/array.hpp>

namespace linum::optim {

// A schedule: any callable count -> value. Schedule s = [](std::int64_t t) { return 0.1 / (1 + t);
// };
class Schedule {
 public:
  Schedule() = default;
  template <class F>
  requires(!std::is_same_v<std::remove_cvref_t<F>, Schedule> &&
           std::is_invocable_r_v<double, const F&, std::int64_t>) Schedule(F f)
      : fn_(std::move(f)) {}  // NOLINT(google-explicit-constructor): lambdas convert

  double operator()(std::int64_t count) const;
  // At a concrete integer counter (an optimizer state's count): a float32 scalar, like optax.
  Array operator()(const Array& count) const;
  explicit operator bool() const { return static_cast<bool>(fn_); }

 private:
  std::function<double(std::int64_t)> fn_;
};

// The value of a concrete counter (ValueError under vmap, where it is not known on the host).
std::int64_t concrete_count(const Array& count, const char* fn);

Schedule constant_schedule(double value);

// init -> end over transition_steps (after transition_begin) as (init - end) * (1 - t/T)**power +
// end. transition_steps <= 0 gives the constant init_value; a negative transition_begin counts as
// 0.
Schedule polynomial_schedule(double init_value, double end_value, double power,
                             std::int64_t transition_steps, std::int64_t transition_begin = 0);

Schedule linear_schedule(double init_value, double end_value, std::int64_t transition_steps,
                         std::int64_t transition_begin = 0);

// init * decay_rate**((t - begin) / transition_steps), floor'ed with staircase; end_value bounds
// it (below when decay_rate < 1, above otherwise).
Schedule exponential_decay(double init_value, std::int64_t transition_steps, double decay_rate,
                           std::int64_t transition_begin = 0, bool staircase = false,
                           std::optional<double> end_value = std::nullopt);

// init * ((1 - alpha) * (0.5 * (1 + cos(pi * min(t, T) / T)))**exponent + alpha).
// ValueError unless decay_steps > 0.
Schedule cosine_decay_schedule(double init_value, std::int64_t decay_steps, double alpha = 0.0,
                               double exponent = 1.0);

// init * product of the scales of every boundary <= t. ValueError for a negative scale.
Schedule piecewise_constant_schedule(
    double init_value, const std::map<std::int64_t, double>& boundaries_and_scales = {});

// schedules[0] until boundaries[0], then schedules[1] counted from boundaries[0], ...
// ValueError unless there is one boundary fewer than schedules.
Schedule join_schedules(std::vector<Schedule> schedules, std::vector<std::int64_t> boundaries);

// Linear warmup from init to peak over warmup_steps, then cosine decay to end_value until
// decay_steps (which includes the warmup).
Schedule warmup_cosine_decay_schedule(double init_value, double peak_value,
                                      std::int64_t warmup_steps, std::int64_t decay_steps,
                                      double end_value = 0.0, double exponent = 1.0);

// Linear warmup, then exponential_decay from peak_value.
Schedule warmup_exponential_decay_schedule(double init_value, double peak_value,
                                           std::int64_t warmup_steps, std::int64_t transition_steps,
                                           double decay_rate, std::int64_t transition_begin = 0,
                                           bool staircase = false,
                                           std::optional<double> end_value = std::nullopt);

// optax.warmup_constant_schedule: linear from init_value to peak_value over warmup_steps, then
// peak_value.
Schedule warmup_constant_schedule(double init_value, double peak_value, std::int64_t warmup_steps);

// optax.piecewise_interpolate_schedule: values init_value * cumulative products of the scales at
// the boundaries (and 0 at step 0), interpolated "linear" or "cosine" between consecutive
// boundaries; the last value after the last boundary, 0 before step 0. ValueError for another
// interpolate_type or a negative scale.
Schedule piecewise_interpolate_schedule(
    const std::string& interpolate_type, double init_value,
    const std::map<std::int64_t, double>& boundaries_and_scales = {});

// optax.linear_onecycle_schedule: linear from peak / div_factor up to peak_value at
// pct_start * T, down to peak / div_factor at pct_final * T, and to that / final_div_factor at T.
// ValueError unless transition_steps > 0.
Schedule linear_onecycle_schedule(std::int64_t transition_steps, double peak_value,
                                  double pct_start = 0.3, double pct_final = 0.85,
                                  double div_factor = 25.0, double final_div_factor = 1e4);

// optax.cosine_onecycle_schedule: cosine from peak / div_factor up to peak_value at
// pct_start * T, then down to peak / (div_factor * final_div_factor) at T.
Schedule cosine_onecycle_schedule(std::int64_t transition_steps, double peak_value,
                                  double pct_start = 0.3, double div_factor = 25.0,
                                  double final_div_factor = 1e4);

// The keyword arguments of one warmup_cosine_decay_schedule (sgdr_schedule's list of dicts).
struct WarmupCosineDecayArgs {
  double init_value, peak_value;
  std::int64_t warmup_steps, decay_steps;
  double end_value = 0.0, exponent = 1.0;
};
// optax.sgdr_schedule: warmup_cosine_decay_schedules run one after the other, each for its
// decay_steps (SGD with warm restarts).
Schedule sgdr_schedule(const std::vector<WarmupCosineDecayArgs>& cosine_kwargs);

}  // namespace linum::optim
