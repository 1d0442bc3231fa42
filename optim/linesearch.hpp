// optax's linesearches: scale_by_backtracking_linesearch (Armijo backtracking) and
// scale_by_zoom_linesearch (the zoom linesearch for the strong Wolfe conditions, L-BFGS's
// default), plus value_and_grad_from_state. Both read the objective from the extra arguments:
// update(updates, state, params, ExtraArgs<Params>{value, grad, value_fn}). They run eagerly:
// the search's branches are taken on the host (linesearch.cpp holds the scalar logic).
#pragma once

#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <linum/autodiff/transforms.hpp>
#include <linum/optim/adaptive.hpp>
#include <linum/optim/base.hpp>
#include <linum/optim/state_utils.hpp>
#include <linum/optim/transform.hpp>

namespace linum::optim {

template <class I = Array, class F = Array>
struct BacktrackingLinesearchInfo {
  BOOST_HANA_DEFINE_STRUCT(BacktrackingLinesearchInfo, (I, num_linesearch_steps),
                           (F, decrease_error));
};

// grad is kept only with store_grad (None otherwise).
template <class P, class F = Array>
struct ScaleByBacktrackingLinesearchState {
  BOOST_HANA_DEFINE_STRUCT(ScaleByBacktrackingLinesearchState, (F, learning_rate), (F, value),
                           (std::optional<P>, grad), (BacktrackingLinesearchInfo<>, info));
};

template <class I = Array, class F = Array>
struct ZoomLinesearchInfo {
  BOOST_HANA_DEFINE_STRUCT(ZoomLinesearchInfo, (I, num_linesearch_steps), (F, decrease_error),
                           (F, curvature_error));
};

template <class P, class F = Array>
struct ScaleByZoomLinesearchState {
  BOOST_HANA_DEFINE_STRUCT(ScaleByZoomLinesearchState, (F, learning_rate), (F, value), (P, grad),
                           (ZoomLinesearchInfo<>, info));
};

namespace detail {

inline constexpr double kInf = std::numeric_limits<double>::infinity();

// The objective along the search line, at a trial stepsize: its value and slope (rounded to
// the value dtype), and the index of the gradient the caller stored for it.
struct LinePoint {
  double value, slope;
  int grad_index;
};
using LineFn = std::function<LinePoint(double stepsize)>;

struct BacktrackingOptions {
  int max_backtracking_steps;
  double slope_rtol, decrease_factor, increase_factor, max_learning_rate, atol, rtol;
};
struct BacktrackingResult {
  double learning_rate, value, decrease_error;
  int num_steps;
  double last_tried;  // the last stepsize tried (learning_rate is 0 when none was finite)
};
// Values computed in dtype (float32 or float64) as optax computes them; line gives the value at
// a stepsize (its slope is not read).
BacktrackingResult backtracking_linesearch(const BacktrackingOptions& o, DType dtype,
                                           double prev_learning_rate, double value, double slope,
                                           const LineFn& line);

struct ZoomOptions {
  int max_linesearch_steps;
  std::optional<double> max_stepsize;
  double tol, increase_factor, slope_rtol, curv_rtol;
  std::optional<double> approx_dec_rtol;
  double interval_threshold;
};
struct ZoomResult {
  double stepsize, value, decrease_error, curvature_error;
  int grad_index;  // -1: the gradient at the current params
  int num_steps;
};
ZoomResult zoom_linesearch(const ZoomOptions& o, DType dtype, double stepsize_guess,
                           double value_init, double slope_init, const LineFn& line);

DType value_dtype(const Arrays& leaves);
double scalar_value(const Array& x, const char* fn);

// params + stepsize * updates, the stepsize a scalar of dtype.
template <class P, class U>
P step_along(const P& params, double stepsize, const U& updates, DType dtype) {
  Array s = full({}, stepsize, dtype);
  return linum::detail::tree_apply_skip_empty(
      params, [&](const Array& p, const Array& u) { return p + s * u; }, updates);
}

[[noreturn]] void throw_missing_extra(const char* fn);
template <class Q>
void require_extra(const ExtraArgs<Q>& extra, const char* fn) {
  if (!extra.value || !extra.grad || !extra.value_fn) throw_missing_extra(fn);
}

}  // namespace detail

// optax.scale_by_backtracking_linesearch: scales the updates by the largest stepsize
// lr * decrease_factor**k (lr grown by increase_factor from the last step's, capped at
// max_learning_rate) that decreases the objective enough (Armijo), 0 when none is finite.
struct ScaleByBacktrackingLinesearch : Transformation<ScaleByBacktrackingLinesearch> {
  detail::BacktrackingOptions o{0, 1e-4, 0.8, 1.5, 1.0, 0.0, 0.0};
  bool store_grad = false;

  template <class P>
  ScaleByBacktrackingLinesearchState<P> init(const P& params) const {
    const DType dt = detail::value_dtype(linum::detail::tree_arrays(params));
    std::optional<P> grad;
    if (store_grad) grad = tree_utils::tree_zeros_like(params);
    return {full({}, 1.0, dt), full({}, detail::kInf, dt), std::move(grad),
            {zeros({}, int32), full({}, detail::kInf, dt)}};
  }
  template <class U, class S, class Q>
  std::pair<U, S> update_impl(const U&, const S&, const Q*) const {
    detail::throw_missing_extra("scale_by_backtracking_linesearch");
  }
  template <class U, class P, class Q>
  std::pair<U, ScaleByBacktrackingLinesearchState<P>> update_extra(
      const U& updates, const ScaleByBacktrackingLinesearchState<P>& s, const Q* params,
      const ExtraArgs<Q>& extra) const {
    detail::require_extra(extra, "scale_by_backtracking_linesearch");
    const DType dt = s.value.dtype();
    auto vg = linum::value_and_grad(extra.value_fn);
    std::optional<P> grad = s.grad;
    const double slope = detail::scalar_value(tree_utils::tree_vdot(updates, *extra.grad), "slope");
    detail::BacktrackingResult r = detail::backtracking_linesearch(
        o, dt, detail::scalar_value(s.learning_rate, "learning_rate"),
        detail::scalar_value(*extra.value, "value"), slope, [&](double lr) {
          Q trial = detail::step_along(*params, lr, updates, dt);
          return detail::LinePoint{
              detail::scalar_value(astype(extra.value_fn(trial), dt), "value_fn"), 0.0, 0};
        });
    // optax takes the gradient at the last stepsize tried (the accepted one when one is).
    if (store_grad) grad = P(vg(detail::step_along(*params, r.last_tried, updates, dt)).second);
    Array lr = full({}, r.learning_rate, dt);
    U out = linum::detail::tree_apply_skip_empty(updates, [&](const Array& u) { return lr * u; });
    return {std::move(out),
            {lr, full({}, r.value, dt), std::move(grad),
             {full({}, r.num_steps, int32), full({}, r.decrease_error, dt)}}};
  }
};
inline ScaleByBacktrackingLinesearch scale_by_backtracking_linesearch(
    int max_backtracking_steps, double slope_rtol = 1e-4, double decrease_factor = 0.8,
    double increase_factor = 1.5, double max_learning_rate = 1.0, double atol = 0.0,
    double rtol = 0.0, bool store_grad = false) {
  ScaleByBacktrackingLinesearch t;
  t.o = {max_backtracking_steps, slope_rtol,        decrease_factor, increase_factor,
         max_learning_rate,      atol,              rtol};
  t.store_grad = store_grad;
  return t;
}

// optax.scale_by_zoom_linesearch: scales the updates by a stepsize satisfying the strong Wolfe
// conditions (sufficient decrease and curvature), found by growing the stepsize until an
// interval brackets one, then zooming into it by cubic / quadratic interpolation or bisection.
// The state keeps the value and gradient at the new params (value_and_grad_from_state reads
// them). initial_guess_strategy: "one" (start from 1) or "keep" (from the last stepsize).
struct ScaleByZoomLinesearch : Transformation<ScaleByZoomLinesearch> {
  detail::ZoomOptions o{0, std::nullopt, 0.0, 2.0, 1e-4, 0.9, 1e-6, 1e-5};
  bool keep_guess = true;

  template <class P>
  ScaleByZoomLinesearchState<P> init(const P& params) const {
    const DType dt = detail::value_dtype(linum::detail::tree_arrays(params));
    // optax's info scalars are jnp.asarray(jnp.inf): float32 unless under x64.
    return {full({}, 1.0, dt), full({}, detail::kInf, dt), tree_utils::tree_zeros_like(params),
            {zeros({}, int32), full({}, detail::kInf, dt), full({}, detail::kInf, dt)}};
  }
  template <class U, class S, class Q>
  std::pair<U, S> update_impl(const U&, const S&, const Q*) const {
    detail::throw_missing_extra("scale_by_zoom_linesearch");
  }
  template <class U, class P, class Q>
  std::pair<U, ScaleByZoomLinesearchState<P>> update_extra(
      const U& updates, const ScaleByZoomLinesearchState<P>& s, const Q* params,
      const ExtraArgs<Q>& extra) const {
    detail::require_extra(extra, "scale_by_zoom_linesearch");
    const DType dt = s.value.dtype();
    auto vg = linum::value_and_grad(extra.value_fn);
    std::vector<Q> grads;
    const double slope =
        detail::scalar_value(astype(tree_utils::tree_vdot(updates, *extra.grad), dt), "slope");
    const double guess = keep_guess ? detail::scalar_value(s.learning_rate, "learning_rate") : 1.0;
    detail::ZoomResult r = detail::zoom_linesearch(
        o, dt, guess, detail::scalar_value(astype(*extra.value, dt), "value"), slope,
        [&](double stepsize) {
          auto [v, g] = vg(detail::step_along(*params, stepsize, updates, dt));
          const double sl =
              detail::scalar_value(astype(tree_utils::tree_vdot(g, updates), dt), "slope");
          grads.push_back(std::move(g));
          return detail::LinePoint{detail::scalar_value(astype(v, dt), "value_fn"), sl,
                                   static_cast<int>(grads.size()) - 1};
        });
    Array lr = full({}, r.stepsize, dt);
    U out = linum::detail::tree_apply_skip_empty(updates, [&](const Array& u) { return lr * u; });
    P grad = r.grad_index < 0 ? P(*extra.grad) : P(grads[r.grad_index]);
    return {std::move(out),
            {lr, full({}, r.value, dt), tree_utils::tree_cast_like(grad, s.grad),
             {full({}, r.num_steps, int32), full({}, r.decrease_error, dt),
              full({}, r.curvature_error, dt)}}};
  }
};
inline ScaleByZoomLinesearch scale_by_zoom_linesearch(
    int max_linesearch_steps, std::optional<double> max_learning_rate = std::nullopt,
    double tol = 0.0, double increase_factor = 2.0, double slope_rtol = 1e-4,
    double curv_rtol = 0.9, std::optional<double> approx_dec_rtol = 1e-6,
    double stepsize_precision = 1e-5, const std::string& initial_guess_strategy = "keep") {
  if (initial_guess_strategy != "one" && initial_guess_strategy != "keep")
    throw ValueError("Unknown initial guess strategy: " + initial_guess_strategy +
                     " (expected 'one' or 'keep')");
  ScaleByZoomLinesearch t;
  t.o = {max_linesearch_steps, max_learning_rate, tol,          increase_factor,
         slope_rtol,           curv_rtol,         approx_dec_rtol, stepsize_precision};
  t.keep_guess = initial_guess_strategy == "keep";
  return t;
}

// optax.value_and_grad_from_state(value_fn): (params, state) -> (value, grad), reusing the value
// and gradient a linesearch stored in the optimizer state when the value there is finite, else
// computing them. ValueError when the state keeps none.
template <class F>
auto value_and_grad_from_state(F value_fn) {
  return [value_fn](const auto& params, const auto& state) {
    using P = std::remove_cvref_t<decltype(params)>;
    std::optional<Tree> value = tree_utils::tree_get(state, "value");
    std::optional<Tree> grad = tree_utils::tree_get(state, "grad");
    if (!value || !grad || !value->is_leaf() || grad->is_none())
      throw ValueError(
          "Value or gradient not found in the state. Make sure that these values are stored in "
          "the state by the optimizer.");
    const double v = value->leaf().concrete().template item<double>();
    if (std::isfinite(v)) return std::pair<Array, P>{value->leaf(), detail::from_tree<P>(*grad)};
    auto [val, g] = linum::value_and_grad(value_fn)(params);
    return std::pair<Array, P>{val, P(g)};
  };
}

}  // namespace linum::optim
