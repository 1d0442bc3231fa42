// optax.contrib.reduce_on_plateau: scales the updates by a factor that drops (by `factor`) when
// the objective's value, averaged over accumulation_size updates, has not improved for
// `patience` such averages, with a cooldown after each drop; ReduceLROnPlateauState. The
// scalar logic is in contrib_reduce_on_plateau.cpp.
#pragma once

#include <cstdint>
#include <utility>

#include <linum/optim/base.hpp>
#include <linum/optim/transform.hpp>

namespace linum::optim {

// scale: in the params' lowest dtype; best_value, avg_value: in their highest; the counts int32.
template <class C = Array>
struct ReduceLROnPlateauState {
  BOOST_HANA_DEFINE_STRUCT(ReduceLROnPlateauState, (C, scale), (C, best_value), (C, plateau_count),
                           (C, cooldown_count), (C, count), (C, avg_value));
};

namespace detail {
struct PlateauConfig {
  double factor;
  std::int64_t patience;
  double rtol, atol;
  std::int64_t cooldown, accumulation_size;
  double min_scale;
};
void check_reduce_on_plateau(const PlateauConfig& c);
ReduceLROnPlateauState<> plateau_init(DType lowest, DType highest);
// The state after one value: averaged in, and every accumulation_size values compared with the
// best so far (the plateau and cooldown counters, the scale).
ReduceLROnPlateauState<> plateau_step(const PlateauConfig& c, const ReduceLROnPlateauState<>& s,
                                      const Array& value);
[[noreturn]] void throw_plateau_needs_value();
}  // namespace detail

struct ReduceOnPlateau : Transformation<ReduceOnPlateau> {
  detail::PlateauConfig c{0.1, 10, 1e-4, 0.0, 0, 1, 0.0};
  template <class P>
  ReduceLROnPlateauState<> init(const P& params) const {
    return detail::plateau_init(tree_utils::tree_dtype(params, "lowest"),
                                tree_utils::tree_dtype(params, "highest"));
  }
  template <class U, class Q>
  std::pair<U, ReduceLROnPlateauState<>> update_impl(const U&, const ReduceLROnPlateauState<>&,
                                                     const Q*) const {
    detail::throw_plateau_needs_value();
  }
  template <class U, class Q>
  std::pair<U, ReduceLROnPlateauState<>> update_extra(const U& updates,
                                                      const ReduceLROnPlateauState<>& s, const Q*,
                                                      const ExtraArgs<Q>& extra) const {
    if (!extra.value) detail::throw_plateau_needs_value();
    ReduceLROnPlateauState<> next = detail::plateau_step(c, s, *extra.value);
    U out = linum::detail::tree_apply_skip_empty(updates,
                                                 [&](const Array& g) { return next.scale * g; });
    return {std::move(out), std::move(next)};
  }
};

// optax.contrib.reduce_on_plateau(factor, patience, rtol, atol, cooldown, accumulation_size,
// min_scale): an improvement is an average below (1 - rtol) * best - atol; after `patience`
// averages without one the scale is multiplied by factor (not below min_scale) and `cooldown`
// averages are ignored. update needs ExtraArgs<Params>{value}. ValueError for factor outside
// (0, 1), a negative rtol or atol, both zero, or rtol > 1.
inline ReduceOnPlateau reduce_on_plateau(double factor = 0.1, std::int64_t patience = 10,
                                         double rtol = 1e-4, double atol = 0.0,
                                         std::int64_t cooldown = 0,
                                         std::int64_t accumulation_size = 1,
                                         double min_scale = 0.0) {
  ReduceOnPlateau t;
  t.c = {factor, patience, rtol, atol, cooldown, accumulation_size, min_scale};
  detail::check_reduce_on_plateau(t.c);
  return t;
}

}  // namespace linum::optim
