// optax schedules, evaluated in double precision (formulas of optax/schedules/_schedule.py).
#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>

#include <linum/optim/schedule.hpp>

namespace linum::optim {

double Schedule::operator()(std::int64_t count) const {
  if (!fn_) throw ValueError("Schedule: calling an empty schedule");
  return fn_(count);
}

Array Schedule::operator()(const Array& count) const {
  return full({}, (*this)(concrete_count(count, "Schedule")), float32);
}

std::int64_t concrete_count(const Array& count, const char* fn) {
  if (!count.valid()) throw ValueError(std::string(fn) + ": the step counter is an empty Array");
  if (count.size() != 1) {
    throw ValueError(std::string(fn) + ": the step counter must be a scalar, got shape " +
                     shape_str(count.shape()));
  }
  return count.concrete().item<std::int64_t>();
}

Schedule constant_schedule(double value) {
  return [value](std::int64_t) { return value; };
}

Schedule polynomial_schedule(double init_value, double end_value, double power,
                             std::int64_t transition_steps, std::int64_t transition_begin) {
  if (transition_steps <= 0) return constant_schedule(init_value);
  transition_begin = std::max<std::int64_t>(transition_begin, 0);
  return [=](std::int64_t count) {
    const double t = static_cast<double>(
        std::clamp(count - transition_begin, std::int64_t{0}, transition_steps));
    const double frac = 1.0 - t / static_cast<double>(transition_steps);
    return (init_value - end_value) * std::pow(frac, power) + end_value;
  };
}

Schedule linear_schedule(double init_value, double end_value, std::int64_t transition_steps,
                         std::int64_t transition_begin) {
  return polynomial_schedule(init_value, end_value, 1.0, transition_steps, transition_begin);
}

Schedule exponential_decay(double init_value, std::int64_t transition_steps, double decay_rate,
                           std::int64_t transition_begin, bool staircase,
                           std::optional<double> end_value) {
  if (transition_steps <= 0 || decay_rate == 0.0) return constant_schedule(init_value);
  transition_begin = std::max<std::int64_t>(transition_begin, 0);
  return [=](std::int64_t count) {
    const std::int64_t decreased = count - transition_begin;
    double p = static_cast<double>(decreased) / static_cast<double>(transition_steps);
    if (staircase) p = std::floor(p);
    double value = decreased <= 0 ? init_value : init_value * std::pow(decay_rate, p);
    if (end_value)
      value = decay_rate < 1.0 ? std::max(value, *end_value) : std::min(value, *end_value);
    return value;
  };
}

Schedule cosine_decay_schedule(double init_value, std::int64_t decay_steps, double alpha,
                               double exponent) {
  if (decay_steps <= 0) {
    throw ValueError("The cosine_decay_schedule requires positive decay_steps, got decay_steps=" +
                     std::to_string(decay_steps) + ".");
  }
  return [=](std::int64_t count) {
    const double t = static_cast<double>(std::min(count, decay_steps));
    const double cosine =
        0.5 * (1.0 + std::cos(std::numbers::pi * t / static_cast<double>(decay_steps)));
    return init_value * ((1.0 - alpha) * std::pow(cosine, exponent) + alpha);
  };
}

Schedule piecewise_constant_schedule(double init_value,
                                     const std::map<std::int64_t, double>& boundaries_and_scales) {
  for (const auto& [boundary, scale] : boundaries_and_scales) {
    if (scale < 0.0) {
      throw ValueError("`piecewise_constant_schedule` expects non-negative scale factors, got " +
                       std::to_string(scale) + " at step " + std::to_string(boundary));
    }
  }
  return [init_value, boundaries_and_scales](std::int64_t count) {
    double v = init_value;
    for (const auto& [boundary, scale] : boundaries_and_scales) {
      if (count >= boundary) v *= scale;
    }
    return v;
  };
}

Schedule join_schedules(std::vector<Schedule> schedules, std::vector<std::int64_t> boundaries) {
  if (schedules.empty() || boundaries.size() + 1 != schedules.size()) {
    throw ValueError("join_schedules: expected one boundary fewer than schedules, got " +
                     std::to_string(schedules.size()) + " schedules and " +
                     std::to_string(boundaries.size()) + " boundaries");
  }
  return [schedules = std::move(schedules), boundaries = std::move(boundaries)](std::int64_t step) {
    // As optax: each boundary reached hands over to the next schedule, counted from that boundary.
    double out = schedules[0](step);
    for (std::size_t k = 0; k < boundaries.size(); ++k) {
      if (step >= boundaries[k]) out = schedules[k + 1](step - boundaries[k]);
    }
    return out;
  };
}

Schedule warmup_cosine_decay_schedule(double init_value, double peak_value,
                                      std::int64_t warmup_steps, std::int64_t decay_steps,
                                      double end_value, double exponent) {
  const double alpha = peak_value == 0.0 ? 0.0 : end_value / peak_value;
  return join_schedules(
      {linear_schedule(init_value, peak_value, warmup_steps),
       cosine_decay_schedule(peak_value, decay_steps - warmup_steps, alpha, exponent)},
      {warmup_steps});
}

Schedule warmup_exponential_decay_schedule(double init_value, double peak_value,
                                           std::int64_t warmup_steps, std::int64_t transition_steps,
                                           double decay_rate, std::int64_t transition_begin,
                                           bool staircase, std::optional<double> end_value) {
  return join_schedules({linear_schedule(init_value, peak_value, warmup_steps),
                         exponential_decay(peak_value, transition_steps, decay_rate,
                                           transition_begin, staircase, end_value)},
                        {warmup_steps});
}

Schedule warmup_constant_schedule(double init_value, double peak_value, std::int64_t warmup_steps) {
  return linear_schedule(init_value, peak_value, warmup_steps);
}

Schedule piecewise_interpolate_schedule(
    const std::string& interpolate_type, double init_value,
    const std::map<std::int64_t, double>& boundaries_and_scales) {
  const bool linear = interpolate_type == "linear";
  if (!linear && interpolate_type != "cosine")
    throw ValueError(
        "piecewise_interpolate_schedule: `interpolate_type` must be either 'cosine' "
        "or 'linear', got '" +
        interpolate_type + "'");
  std::vector<std::int64_t> bounds{0};
  std::vector<double> values{init_value};
  for (const auto& [boundary, scale] : boundaries_and_scales) {
    if (scale < 0.0)
      throw ValueError("piecewise_interpolate_schedule: expects non-negative scale factors, got " +
                       std::to_string(scale) + " at step " + std::to_string(boundary));
    bounds.push_back(boundary);
    values.push_back(values.back() * scale);  // jnp.cumprod
  }
  return [=](std::int64_t count) {
    // optax: indicator . interpolated + (bounds[-1] <= count) * values[-1]; the indicator
    // selects the interval [bounds[i], bounds[i + 1]) holding count (at most one).
    double out = bounds.back() <= count ? values.back() : 0.0;
    for (std::size_t i = 0; i + 1 < bounds.size(); ++i) {
      if (bounds[i] <= count && count < bounds[i + 1]) {
        const double size =
            static_cast<double>(std::max<std::int64_t>(bounds[i + 1] - bounds[i], 1));
        const double pct = static_cast<double>(count - bounds[i]) / size;
        const double a = values[i], b = values[i + 1];
        out += linear ? (b - a) * pct + a
                      : b + (a - b) / 2.0 * (std::cos(std::numbers::pi * pct) + 1.0);
      }
    }
    return out;
  };
}

namespace {
void check_transition_steps(std::int64_t transition_steps, const char* fn, const char* kind) {
  if (transition_steps <= 0)
    throw ValueError(std::string(fn) + ": A " + kind +
                     " onecycle schedule was set with a non-positive `transition_steps`, got " +
                     std::to_string(transition_steps));
}
}  // namespace

Schedule linear_onecycle_schedule(std::int64_t transition_steps, double peak_value,
                                  double pct_start, double pct_final, double div_factor,
                                  double final_div_factor) {
  check_transition_steps(transition_steps, "linear_onecycle_schedule", "linear");
  // optax builds a dict: a later boundary equal to an earlier one replaces its scale.
  std::map<std::int64_t, double> b;
  const double t = static_cast<double>(transition_steps);
  b.insert_or_assign(static_cast<std::int64_t>(pct_start * t), div_factor);
  b.insert_or_assign(static_cast<std::int64_t>(pct_final * t), 1.0 / div_factor);
  b.insert_or_assign(transition_steps, 1.0 / final_div_factor);
  return piecewise_interpolate_schedule("linear", peak_value / div_factor, b);
}

Schedule cosine_onecycle_schedule(std::int64_t transition_steps, double peak_value,
                                  double pct_start, double div_factor, double final_div_factor) {
  check_transition_steps(transition_steps, "cosine_onecycle_schedule", "cosine");
  std::map<std::int64_t, double> b;
  b.insert_or_assign(static_cast<std::int64_t>(pct_start * static_cast<double>(transition_steps)),
                     div_factor);
  b.insert_or_assign(transition_steps, 1.0 / (div_factor * final_div_factor));
  return piecewise_interpolate_schedule("cosine", peak_value / div_factor, b);
}

Schedule sgdr_schedule(const std::vector<WarmupCosineDecayArgs>& cosine_kwargs) {
  std::vector<Schedule> schedules;
  std::vector<std::int64_t> boundaries;
  std::int64_t step = 0;
  for (const auto& k : cosine_kwargs) {
    schedules.push_back(warmup_cosine_decay_schedule(k.init_value, k.peak_value, k.warmup_steps,
                                                     k.decay_steps, k.end_value, k.exponent));
    step += k.decay_steps;
    boundaries.push_back(step);
  }
  if (!boundaries.empty()) boundaries.pop_back();
  return join_schedules(std::move(schedules), std::move(boundaries));
}

}  // namespace linum::optim
