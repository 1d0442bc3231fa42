// The scalar logic of optax's linesearches (linesearch.hpp): the backtracking loop and the zoom
// linesearch's two phases (search for a bracketing interval, then zoom into it), in the value
// dtype's precision: T = float for float32 params, double for float64 ones, each operation
// rounded as JAX rounds it.
//
// No contraction of a * b + c into an FMA: JAX rounds every product on its own.
#pragma GCC optimize("fp-contract=off")

#include <cmath>
#include <limits>
#include <string>

#include <linum/optim/linesearch.hpp>

namespace linum::optim::detail {

void throw_missing_extra(const char* fn) {
  throw ValueError(std::string(fn) +
                   ": update needs the objective: call update(updates, state, params, "
                   "ExtraArgs<Params>{value, grad, value_fn})");
}

DType value_dtype(const Arrays& leaves) {
  for (const Array& x : leaves)
    if (x.valid()) return x.dtype() == float64 ? float64 : float32;
  return float32;
}

double scalar_value(const Array& x, const char* fn) {
  if (!x.valid() || x.size() != 1)
    throw ValueError(std::string("linesearch: ") + fn + " must be a scalar, got " +
                     (x.valid() ? "shape " + shape_str(x.shape()) : std::string("an empty Array")));
  return x.concrete().item<double>();
}

namespace {

// jnp.maximum / jnp.minimum propagate NaN.
template <class T>
T nan_max(T a, T b) {
  return std::isnan(a) || std::isnan(b) ? std::numeric_limits<T>::quiet_NaN() : (a > b ? a : b);
}
template <class T>
T nan_min(T a, T b) {
  return std::isnan(a) || std::isnan(b) ? std::numeric_limits<T>::quiet_NaN() : (a < b ? a : b);
}
template <class T>
T nan_to_inf(T x) {
  return std::isnan(x) ? std::numeric_limits<T>::infinity() : x;
}

// ---- backtracking ------------------------------------------------------------------------------

template <class T>
BacktrackingResult backtracking(const BacktrackingOptions& o, double prev_lr, double value0,
                                double slope0, const LineFn& line) {
  const T value = T(value0), slope = T(slope0);
  auto decrease_error = [&](T stepsize, T new_value) {
    T e = new_value - T(1.0 + o.rtol) * value - stepsize * T(o.slope_rtol) * slope;
    return nan_max(nan_to_inf(e), T(0));
  };
  T lr = std::min(T(o.increase_factor) * T(prev_lr), T(o.max_learning_rate));
  T new_value = value, err = std::numeric_limits<T>::infinity();
  int iter = 0;
  while (!(err <= T(o.atol)) && iter <= o.max_backtracking_steps) {
    if (iter > 0) lr = T(o.decrease_factor) * lr;
    new_value = T(line(lr).value);
    err = decrease_error(lr, new_value);
    ++iter;
  }
  const T accepted = std::isinf(err) ? T(0) : lr;
  return {accepted, new_value, err, iter, lr};
}

// ---- zoom --------------------------------------------------------------------------------------

template <class T>
struct Zoom {
  int count = 0;
  T stepsize_guess, stepsize = 0, value, slope, value_init, slope_init;
  int grad = -1;
  T decrease_error, curvature_error, error;
  bool interval_found = false, done = false, failed = false;
  T low = 0, value_low, slope_low, high = 0, value_high, slope_high, cubic_ref = 0,
    value_cubic_ref;
  T safe_stepsize = 0, safe_value;
  int safe_grad = -1;
};

// The minimiser of the cubic through (a, fa) with slope fpa at a, (b, fb) and (c, fc).
template <class T>
T cubicmin(T a, T fa, T fpa, T b, T fb, T c, T fc) {
  const T C = fpa, db = b - a, dc = c - a;
  const T denom = (db * dc) * (db * dc) * (db - dc);
  const T v0 = fb - fa - C * db, v1 = fc - fa - C * dc;
  const T A = (dc * dc * v0 + -(db * db) * v1) / denom;
  const T B = (-(dc * dc * dc) * v0 + db * db * db * v1) / denom;
  const T radical = B * B - T(3) * A * C;
  return a + (-B + std::sqrt(radical)) / (T(3) * A);
}

// The minimiser of the quadratic through (a, fa) with slope fpa at a and (b, fb).
template <class T>
T quadmin(T a, T fa, T fpa, T b, T fb) {
  const T D = fa, C = fpa, db = b - a;
  const T B = (fb - D - C * db) / (db * db);
  return a - C / (T(2) * B);
}

template <class T>
struct ZoomSearch {
  const ZoomOptions& o;
  const LineFn& line;

  T decrease_error(T stepsize, T value_step, T slope_step, T value_init, T slope_init) const {
    T e = value_step - value_init - T(o.slope_rtol) * stepsize * slope_init;
    if (o.approx_dec_rtol) {
      T approx = slope_step - T(2 * o.slope_rtol - 1.0) * slope_init;
      T delta = value_step - value_init - T(*o.approx_dec_rtol) * std::abs(value_init);
      e = nan_min(nan_max(approx, delta), e);
    }
    return nan_to_inf(nan_max(e, T(0)));
  }
  T curvature_error(T slope_step, T slope_init) const {
    return nan_to_inf(nan_max(std::abs(slope_step) - T(o.curv_rtol) * std::abs(slope_init), T(0)));
  }

  Zoom<T> search_interval(const Zoom<T>& s) const {
    Zoom<T> n = s;
    T new_stepsize = s.count == 0 ? s.stepsize_guess : T(o.increase_factor) * s.stepsize;
    bool max_reached = false;
    if (o.max_stepsize) {
      max_reached = new_stepsize >= T(*o.max_stepsize);
      new_stepsize = nan_min(new_stepsize, T(*o.max_stepsize));
    }
    LinePoint p = line(new_stepsize);
    const T v = T(p.value), sl = T(p.slope);
    const T de = decrease_error(new_stepsize, v, sl, s.value_init, s.slope_init);
    const T ce = curvature_error(sl, s.slope_init);
    const T err = nan_max(de, ce);
    if (de <= T(o.tol)) n.safe_stepsize = new_stepsize, n.safe_value = v, n.safe_grad = p.grad_index;
    const bool set_high_to_new = (de > T(0)) || ((v >= s.value) && s.count > 0);
    const bool set_low_to_new = (sl >= T(0)) && !set_high_to_new;
    if (set_low_to_new) {
      n.low = new_stepsize, n.value_low = v, n.slope_low = sl;
      n.high = s.stepsize, n.value_high = s.value, n.slope_high = s.slope;
    } else {
      n.low = s.stepsize, n.value_low = s.value, n.slope_low = s.slope;
      n.high = new_stepsize, n.value_high = v, n.slope_high = sl;
    }
    n.interval_found = set_high_to_new || set_low_to_new || err <= T(o.tol);
    n.done = err <= T(o.tol) || (max_reached && !n.interval_found);
    n.failed = s.count + 1 >= o.max_linesearch_steps && !n.done;
    n.count = s.count + 1;
    n.stepsize = new_stepsize, n.value = v, n.grad = p.grad_index, n.slope = sl;
    n.decrease_error = de, n.curvature_error = ce, n.error = err;
    n.cubic_ref = n.low, n.value_cubic_ref = n.value_low;
    return n;
  }

  Zoom<T> zoom_into_interval(const Zoom<T>& s) const {
    Zoom<T> n = s;
    const T delta = std::abs(s.high - s.low);
    const T left = nan_min(s.high, s.low), right = nan_max(s.high, s.low);
    const T cubic_chk = T(0.2) * delta, quad_chk = T(0.1) * delta;
    const bool too_small = delta <= T(o.interval_threshold);
    const T mc = cubicmin(s.low, s.value_low, s.slope_low, s.high, s.value_high, s.cubic_ref,
                          s.value_cubic_ref);
    const bool use_cubic = (mc > left + cubic_chk) && (mc < right - cubic_chk);
    const T mq = quadmin(s.low, s.value_low, s.slope_low, s.high, s.value_high);
    const bool use_quad = !use_cubic && (mq > left + quad_chk) && (mq < right - quad_chk);
    const T middle = use_cubic ? mc : use_quad ? mq : (s.low + s.high) / T(2);
    LinePoint p = line(middle);
    const T v = T(p.value), sl = T(p.slope);
    const T de = decrease_error(middle, v, sl, s.value_init, s.slope_init);
    const T ce = curvature_error(sl, s.slope_init);
    const T err = nan_max(de, ce);
    if (de <= T(o.tol) && v < s.safe_value)
      n.safe_stepsize = middle, n.safe_value = v, n.safe_grad = p.grad_index;
    n.done = err <= T(o.tol);
    const bool set_high_to_middle = (de > T(0)) || (v >= s.value_low);
    const bool set_high_to_low = (sl * (s.high - s.low) >= T(0)) && !set_high_to_middle;
    if (set_high_to_middle) n.high = middle, n.value_high = v, n.slope_high = sl;
    if (set_high_to_low) n.high = s.low, n.value_high = s.value_low, n.slope_high = s.slope_low;
    if (!set_high_to_middle) n.low = middle, n.value_low = v, n.slope_low = sl;
    if (set_high_to_middle || set_high_to_low)
      n.cubic_ref = s.high, n.value_cubic_ref = s.value_high;
    else
      n.cubic_ref = s.low, n.value_cubic_ref = s.value_low;
    const bool presumably_failed =
        s.count + 1 >= o.max_linesearch_steps || (too_small && n.safe_stepsize > T(0));
    n.failed = presumably_failed && !n.done;
    n.count = s.count + 1;
    n.stepsize = middle, n.value = v, n.grad = p.grad_index, n.slope = sl;
    n.decrease_error = de, n.curvature_error = ce, n.error = err;
    return n;
  }

  // The stepsize with sufficient decrease found so far (or the current one, when none was,
  // unless the objective was not finite there).
  static Zoom<T> try_safe_step(Zoom<T> s) {
    if (s.safe_stepsize > T(0) || std::isinf(s.decrease_error))
      s.stepsize = s.safe_stepsize, s.value = s.safe_value, s.grad = s.safe_grad;
    return s;
  }
};

template <class T>
ZoomResult zoom(const ZoomOptions& o, double guess, double value0, double slope0,
                const LineFn& line) {
  Zoom<T> s;
  const T inf = std::numeric_limits<T>::infinity();
  s.stepsize_guess = T(guess);
  s.value = s.value_init = s.value_low = s.value_high = s.value_cubic_ref = s.safe_value =
      T(value0);
  s.slope = s.slope_init = s.slope_low = s.slope_high = T(slope0);
  s.decrease_error = s.curvature_error = s.error = inf;
  ZoomSearch<T> search{o, line};
  while (!(s.done || s.failed)) {
    s = s.interval_found ? search.zoom_into_interval(s) : search.search_interval(s);
    if (s.failed) s = ZoomSearch<T>::try_safe_step(s);
  }
  return {s.stepsize, s.value, s.decrease_error, s.curvature_error, s.grad, s.count};
}

}  // namespace

BacktrackingResult backtracking_linesearch(const BacktrackingOptions& o, DType dtype,
                                           double prev_learning_rate, double value, double slope,
                                           const LineFn& line) {
  return dtype == float64 ? backtracking<double>(o, prev_learning_rate, value, slope, line)
                          : backtracking<float>(o, prev_learning_rate, value, slope, line);
}

ZoomResult zoom_linesearch(const ZoomOptions& o, DType dtype, double stepsize_guess,
                           double value_init, double slope_init, const LineFn& line) {
  return dtype == float64 ? zoom<double>(o, stepsize_guess, value_init, slope_init, line)
                          : zoom<float>(o, stepsize_guess, value_init, slope_init, line);
}

}  // namespace linum::optim::detail
