// reduce_on_plateau's scalar logic (contrib_reduce_on_plateau.hpp), with linum ops as optax
// writes it (selects where optax has lax.cond), so that it traces under jit and vmap.
#include <linum/optim/contrib_reduce_on_plateau.hpp>

#include <limits>
#include <string>

namespace linum::optim::detail {

namespace {
std::string num(double x) {
  std::string s = std::to_string(x);
  while (s.size() > 1 && s.back() == '0' && s[s.size() - 2] != '.') s.pop_back();
  return s;
}
Array int32_scalar(std::int64_t v) { return full({}, static_cast<double>(v), int32); }
}  // namespace

void check_reduce_on_plateau(const PlateauConfig& c) {
  if (c.factor <= 0.0 || c.factor >= 1.0)
    throw ValueError("reduce_on_plateau: Factor must be in the range (0, 1), got factor = " +
                     num(c.factor) + ".");
  if (c.rtol < 0.0 || c.atol < 0.0)
    throw ValueError("reduce_on_plateau: Both rtol and atol must be non-negative, got rtol = " +
                     num(c.rtol) + " and atol = " + num(c.atol) + ".");
  if (c.rtol == 0.0 && c.atol == 0.0)
    throw ValueError(
        "reduce_on_plateau: At least one of rtol or atol must be positive, got rtol "
        "= 0 and atol = 0.");
  if (c.rtol > 1.0)
    throw ValueError("reduce_on_plateau: rtol must be less than or equal to 1.0, got rtol = " +
                     num(c.rtol) + ".");
}

ReduceLROnPlateauState<> plateau_init(DType lowest, DType highest) {
  return {ones({}, lowest), full({}, std::numeric_limits<double>::infinity(), highest),
          zeros({}, int32), zeros({}, int32),
          zeros({}, int32), zeros({}, highest)};
}

ReduceLROnPlateauState<> plateau_step(const PlateauConfig& c, const ReduceLROnPlateauState<>& s,
                                      const Array& value) {
  const DType avg_dt = s.avg_value.dtype();
  Array new_count = safe_increment(s.count);
  Array avg = astype((s.count * s.avg_value + astype(value, avg_dt)) / new_count, avg_dt);
  ReduceLROnPlateauState<> acc = s;
  acc.count = new_count, acc.avg_value = avg;

  // optax's _update_scale, run when accumulation_size values are in.
  Array improved = avg < (1.0 - c.rtol) * s.best_value - c.atol;
  Array best = where(improved, astype(avg, s.best_value.dtype()), s.best_value);
  Array curr = where(improved, zeros({}, int32), safe_increment(s.plateau_count));
  Array hit = equal(curr, int32_scalar(c.patience));
  Array in_cooldown = s.cooldown_count > zeros({}, int32);
  ReduceLROnPlateauState<> done;
  done.plateau_count = where(in_cooldown, zeros({}, int32), where(hit, zeros({}, int32), curr));
  done.scale =
      where(in_cooldown, s.scale, maximum(where(hit, s.scale * c.factor, s.scale), c.min_scale));
  done.cooldown_count = where(in_cooldown, s.cooldown_count - 1,
                              where(hit, int32_scalar(c.cooldown), zeros({}, int32)));
  done.best_value = best;
  done.count = zeros({}, int32);
  done.avg_value = zeros({}, avg_dt);

  Array due = equal(new_count, int32_scalar(c.accumulation_size));
  return pytree::tree_map([&](const Array& d, const Array& a) { return where(due, d, a); }, done,
                          acc);
}

void throw_plateau_needs_value() {
  throw TypeError(
      "reduce_on_plateau: update needs the objective's value (optax's required keyword argument "
      "'value'): call update(updates, state, params, ExtraArgs<Params>{value})");
}

}  // namespace linum::optim::detail
