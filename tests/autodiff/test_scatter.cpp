// lax.gather, the lax.scatter family and x.at[...] (linum::at): values against hand-worked
// results and numpy's indexing (run here with numpy 1.24, as noted), JAX's out-of-bounds modes,
// gradients (finite differences and JAX's closed-form rules), vmap against a loop, and jit.
#include <cmath>
#include <limits>

#include "numerics_testing.hpp"

namespace test_scatter {

using namespace linum;
using namespace linum::optest;
using linum::testing::check_grads;

namespace {

GatherDimensionNumbers rows_dims() {  // x[i] rows of a matrix: x.at[i].get() with i a vector
  return GatherDimensionNumbers{{1}, {0}, {0}};
}
ScatterDimensionNumbers scalar_dims() {  // x.at[i] for a vector x
  return ScatterDimensionNumbers{{}, {0}, {0}};
}
const double kNan = std::numeric_limits<double>::quiet_NaN();

}  // namespace

TEST_CASE("gather: rows, 2-D windows, operand batching dims, and each out-of-bounds mode") {
  const Array x = iota({3, 4});
  const Array idx = ints({1, 2, 5, -1}, {4, 1});
  // promise_in_bounds (the default) and clip clamp the start: 5 -> 2, -1 -> 0 (no wrapping).
  check_array(gather(x, idx, rows_dims(), {1, 4}), {4, 4}, float64,
              {4, 5, 6, 7, 8, 9, 10, 11, 8, 9, 10, 11, 0, 1, 2, 3});
  check_array(gather(x, idx, rows_dims(), {1, 4}, {.mode = GatherScatterMode::clip}), {4, 4},
              float64, {4, 5, 6, 7, 8, 9, 10, 11, 8, 9, 10, 11, 0, 1, 2, 3});
  // fill_or_drop: a window out of bounds is all fill_value (NaN by default for floats).
  check_array(gather(x, idx, rows_dims(), {1, 4}, {.mode = GatherScatterMode::fill_or_drop}),
              {4, 4}, float64,
              {4, 5, 6, 7, 8, 9, 10, 11, kNan, kNan, kNan, kNan, kNan, kNan, kNan, kNan});
  check_array(gather(astype(x, int32), idx, rows_dims(), {1, 4},
                     {.mode = GatherScatterMode::fill_or_drop, .fill_value = -7}),
              {4, 4}, int32, {4, 5, 6, 7, 8, 9, 10, 11, -7, -7, -7, -7, -7, -7, -7, -7});
  // 2x2 windows at (1, 1) and (2, 3); the second clamps to (1, 2). offset_dims puts the window
  // first: output (2, 2, batch).
  const Array w =
      gather(x, ints({1, 1, 2, 3}, {2, 2}), GatherDimensionNumbers{{0, 1}, {}, {0, 1}}, {2, 2});
  check_array(w, {2, 2, 2}, float64, {5, 6, 6, 7, 9, 10, 10, 11});
  // A window partly outside is dropped whole under fill_or_drop.
  check_array(gather(x, ints({1, 1, 2, 3}, {2, 2}), GatherDimensionNumbers{{1, 2}, {}, {0, 1}},
                     {2, 2}, {.mode = GatherScatterMode::fill_or_drop, .fill_value = 0}),
              {2, 2, 2}, float64, {5, 6, 9, 10, 0, 0, 0, 0});
  // Operand batching dims: row b reads x[b, idx[b]] (take_along_axis with one index per row).
  const GatherDimensionNumbers along{{}, {1}, {1}, {0}, {0}};
  check_array(gather(x, ints({3, 0, 2}, {3, 1}), along, {1, 1}), {3}, float64, {3, 4, 10});
}

TEST_CASE("gather and scatter reject malformed dimension numbers and indices") {
  const Array x = iota({3, 4});
  LINUM_CHECK_ERROR(gather(x, f64({1}, {1, 1}), rows_dims(), {1, 4}), TypeError, "integer");
  LINUM_CHECK_ERROR(gather(x, ints({1}, {1, 1}), rows_dims(), {1, 5}), ValueError,
                    "slice_sizes (1, 5) must be between zero and operand shape (3, 4)");
  LINUM_CHECK_ERROR(gather(x, ints({1}, {1, 1}), rows_dims(), {2, 4}), ValueError,
                    "collapsed_slice_dims (0,) must have slice size 0 or 1");
  LINUM_CHECK_ERROR(gather(x, ints({1, 1}, {1, 2}), rows_dims(), {1, 4}), ValueError,
                    "start_index_map (0,) must have one entry per index component");
  LINUM_CHECK_ERROR(gather(x, ints({1}, {1, 1}), GatherDimensionNumbers{{0, 1}, {0}, {0}}, {1, 4}),
                    ValueError, "offset_dims");
  // A window narrower than the operand is fine (XLA allows it); a wider one is not.
  check_array(scatter_add(x, ints({1}, {1, 1}), ones({1, 3}, float64),
                          ScatterDimensionNumbers{{1}, {0}, {0}}),
              {3, 4}, float64, {0, 1, 2, 3, 5, 6, 7, 7, 8, 9, 10, 11});
  LINUM_CHECK_ERROR(
      scatter_add(x, ints({1}, {1, 1}), iota({1, 5}), ScatterDimensionNumbers{{1}, {0}, {0}}),
      ValueError, "the window of updates");
  LINUM_CHECK_ERROR(
      scatter(x, ints({1}, {1, 1}), iota({1, 4}, float32), ScatterDimensionNumbers{{1}, {0}, {0}}),
      TypeError, "updates dtype float32 must match the operand dtype float64");
  LINUM_CHECK_ERROR(
      scatter(x, ints({1, 2}, {2, 1}), iota({3, 4}), ScatterDimensionNumbers{{1}, {0}, {0}}),
      ValueError, "must match the batch dims of indices");
}

TEST_CASE("scatter family: repeated indices combine, out-of-bounds updates drop or clip") {
  const Array x = f64({10, 20, 30, 40, 50});
  const Array idx = ints({0, 2, 0, 7, -1}, {5, 1});
  const Array u = f64({1, 2, 3, 4, 5});
  // Hand-worked: index 0 gets updates 1 and 3; 7 and -1 are out of bounds (XLA does not wrap).
  check_array(scatter_add(x, idx, u, scalar_dims()), {5}, float64, {14, 20, 32, 40, 50});
  check_array(scatter_sub(x, idx, u, scalar_dims()), {5}, float64, {6, 20, 28, 40, 50});
  check_array(scatter(x, idx, u, scalar_dims()), {5}, float64, {3, 20, 2, 40, 50});  // last wins
  check_array(scatter_mul(x, idx, u, scalar_dims()), {5}, float64, {30, 20, 60, 40, 50});
  check_array(scatter_min(x, idx, f64({12, 2, 3, 4, 5}), scalar_dims()), {5}, float64,
              {3, 20, 2, 40, 50});
  check_array(scatter_max(x, idx, f64({12, 2, 3, 4, 5}), scalar_dims()), {5}, float64,
              {12, 20, 30, 40, 50});
  // clip: 7 -> 4 and -1 -> 0.
  check_array(scatter_add(x, idx, u, scalar_dims(), {.mode = GatherScatterMode::clip}), {5},
              float64, {19, 20, 32, 40, 54});
  // NaN wins a min or a max, as lax.min / lax.max.
  check_array(scatter_max(x, ints({1}, {1, 1}), f64({kNan}), scalar_dims()), {5}, float64,
              {10, kNan, 30, 40, 50});
  // Bool operands: add is or, mul is and.
  const Array b = array(std::vector<bool>{true, false, false});
  check_array(scatter_add(b, ints({1}, {1, 1}), array(std::vector<bool>{true}), scalar_dims()), {3},
              bool_, {1, 1, 0});
  check_array(scatter_mul(b, ints({0}, {1, 1}), array(std::vector<bool>{false}), scalar_dims()),
              {3}, bool_, {0, 0, 0});
  // 2x2 windows into a 4x4 operand: the one at (3, 3) does not fit and is dropped, or clipped
  // to (2, 2).
  const ScatterDimensionNumbers win{{1, 2}, {}, {0, 1}};
  const Array starts = ints({0, 0, 3, 3}, {2, 2});
  const Array ones4 = ones({2, 2, 2}, float64);
  check_array(scatter_add(zeros({4, 4}, float64), starts, ones4, win), {4, 4}, float64,
              {1, 1, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});
  check_array(
      scatter_add(zeros({4, 4}, float64), starts, ones4, win, {.mode = GatherScatterMode::clip}),
      {4, 4}, float64, {1, 1, 0, 0, 1, 1, 0, 0, 0, 0, 1, 1, 0, 0, 1, 1});
}

TEST_CASE("at: integers, slices, advanced arrays and masks index as numpy does") {
  const Array x = iota({10});
  check_array(at(x, 2).set(100.0), {10}, float64, {0, 1, 100, 3, 4, 5, 6, 7, 8, 9});
  check_array(at(x, -1).add(5.0), {10}, float64, {0, 1, 2, 3, 4, 5, 6, 7, 8, 14});
  check_array(at(x, Slice{1, 8, 3}).multiply(2.0), {10}, float64, {0, 2, 2, 3, 8, 5, 6, 14, 8, 9});
  check_array(at(x, Slice{std::nullopt, std::nullopt, -4}).set(-1.0), {10}, float64,
              {0, -1, 2, 3, 4, -1, 6, 7, 8, -1});
  // Repeated indices accumulate (add), out-of-bounds ones are dropped by default.
  check_array(at(x, ints({0, 0, 3, 20})).add(1.0), {10}, float64, {2, 1, 2, 4, 4, 5, 6, 7, 8, 9});
  check_array(at(x, ints({1, 20})).set(7.0), {10}, float64, {0, 7, 2, 3, 4, 5, 6, 7, 8, 9});
  check_array(at(x, ints({1, 20})).set(7.0, {.mode = GatherScatterMode::clip}), {10}, float64,
              {0, 7, 2, 3, 4, 5, 6, 7, 8, 7});
  // get() clamps by default (JAX's indexing), fills on request.
  check_array(at(x, ints({1, 20, -2})).get(), {3}, float64, {1, 9, 8});
  check_array(at(x, ints({1, 20})).get({.mode = GatherScatterMode::fill_or_drop}), {2}, float64,
              {1, kNan});
  check_array(at(x, ints({3, 1})).subtract(f64({1, 2})), {10}, float64,
              {0, -1, 2, 2, 4, 5, 6, 7, 8, 9});
  check_array(at(x, ints({3, 3})).min(f64({2.5, 1})), {10}, float64,
              {0, 1, 2, 1, 4, 5, 6, 7, 8, 9});
  check_array(at(x, ints({3, 4})).max(f64({2.5, 6})), {10}, float64,
              {0, 1, 2, 3, 6, 5, 6, 7, 8, 9});
  check_array(at(x, ints({2, 4})).divide(2.0), {10}, float64, {0, 1, 1, 3, 2, 5, 6, 7, 8, 9});
  check_array(at(x, 3).power(2.0), {10}, float64, {0, 1, 2, 9, 4, 5, 6, 7, 8, 9});
  // An integer array keeps its dtype: the float value is cast back (2.7 -> 2), as JAX.
  check_array(at(astype(x, int32), 0).set(2.7), {10}, int32, {2, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  // Boolean masks select where true.
  const Array mask = less(x, 3.0);
  check_array(at(x, mask).set(0.0), {10}, float64, {0, 0, 0, 3, 4, 5, 6, 7, 8, 9});

  // numpy (1.24, run here): x = np.arange(12.).reshape(3, 4); x[[0, 2], [1, 3]] = [1, 11];
  // x[:, [0, 0]] = [0, 0, 4, 4, 8, 8]; x3 = np.arange(24.).reshape(2, 3, 4):
  // x3[[0, 1], :, [1, 2]] (advanced axes apart: their dims first) = [1 5 9 14 18 22], shape
  // (2, 3); x3[1, :, [1, 2]] = [13 17 21 14 18 22], shape (2, 3); x3[:, 1:3, 0] = [4 8 16 20];
  // x3[::-1, ::2, 1] = [13 21 1 9]; x3[:, [[0], [2]], [1, 3]] = [1 3 9 11 13 15 21 23], (2, 2, 2).
  const Array m = iota({3, 4}), x3 = iota({2, 3, 4});
  check_array(at(m, {ints({0, 2}), ints({1, 3})}).get(), {2}, float64, {1, 11});
  check_array(at(m, {Slice{}, ints({0, 0})}).get(), {3, 2}, float64, {0, 0, 4, 4, 8, 8});
  check_array(at(x3, {ints({0, 1}), Slice{}, ints({1, 2})}).get(), {2, 3}, float64,
              {1, 5, 9, 14, 18, 22});
  check_array(at(x3, {1, Slice{}, ints({1, 2})}).get(), {2, 3}, float64, {13, 17, 21, 14, 18, 22});
  check_array(at(x3, {Slice{}, Slice{1, 3}, 0}).get(), {2, 2}, float64, {4, 8, 16, 20});
  check_array(
      at(x3, {Slice{std::nullopt, std::nullopt, -1}, Slice{std::nullopt, std::nullopt, 2}, 1})
          .get(),
      {2, 2}, float64, {13, 21, 1, 9});
  check_array(at(x3, {Slice{}, ints({0, 2}, {2, 1}), ints({1, 3})}).get(), {2, 2, 2}, float64,
              {1, 3, 9, 11, 13, 15, 21, 23});
  // The same index as an update: values broadcast to x3[:, [[0], [2]], [1, 3]]'s shape.
  const Array y = at(x3, {Slice{}, ints({0, 2}, {2, 1}), ints({1, 3})}).set(-1.0);
  const auto v = linum::testing::values(y);
  for (int k : {1, 3, 9, 11, 13, 15, 21, 23}) CHECK(v[k] == -1);
  CHECK(v[0] == 0);
  CHECK(v[2] == 2);
}

TEST_CASE("take's wrap mode takes indices modulo the axis length, as jnp.take") {
  check_array(take(f64({10, 20, 30}), ints({-1, 3, 7, -5})), {4}, float64, {30, kNan, kNan, kNan});
  check_array(take(f64({10, 20, 30}), ints({-1, 3, 7, -5}), 0, GatherMode::wrap), {4}, float64,
              {30, 10, 20, 20});
  check_array(take_along_axis(iota({2, 3}), ints({4, -1}, {2, 1}), 1, GatherMode::wrap), {2, 1},
              float64, {1, 5});
  check_grads(
      [](const Array& x) {
        return take(x, ints({5, -2, 2}), 0, GatherMode::wrap);
      },
      f64({0.5, -1, 2}));
}

TEST_CASE("at: bad indices and values are clear errors") {
  const Array x = iota({3, 4});
  LINUM_CHECK_ERROR(at(x, {0, 1, 2}).get(), IndexError, "too many indices");
  LINUM_CHECK_ERROR(at(x, f64({1})).get(), IndexError, "indices must be integers");
  LINUM_CHECK_ERROR(at(x, 0).set(f64({1, 2})), ValueError,
                    "do not broadcast to the indexed shape (4,)");
  LINUM_CHECK_ERROR(at(x, array(std::vector<bool>{true, false})).get(), IndexError,
                    "boolean index did not match");
  auto masked = jit([](const Array& a) { return at(a, greater(a, 2.0)).set(0.0); });
  LINUM_CHECK_ERROR(masked(x), ConcretizationTypeError, "boolean index needs a concrete value");
}

TEST_CASE("scatter gradients: set masks overwritten entries and credits the winning update") {
  // JAX's rule: x.at[[1, 1, 3]].set(y) takes its cotangent from positions 1 and 3 to the
  // updates that landed there (y[1] for position 1, the last), none to x there.
  const Array x = f64({1, 2, 3, 4}), y = f64({10, 20, 30});
  const Array w = f64({1, 2, 3, 4});
  const Array idx = ints({1, 1, 3});
  auto loss = [&](const Array& a, const Array& b) { return sum(w * at(a, idx).set(b)); };
  auto [gx, gy] = grad(loss, argnums<0, 1>)(x, y);
  check_array(gx, {4}, float64, {1, 0, 3, 0});
  check_array(gy, {3}, float64, {0, 2, 4});
  // Finite differences through every update op (distinct values: no ties for min/max).
  const Array base = f64({0.3, -1.2, 0.7, 2.1, -0.4});
  const Array upd = f64({0.9, -0.5, 1.6});
  const Array uniq = ints({4, 0, 2});
  for (int op = 0; op < 5; ++op) {
    CAPTURE(op);
    check_grads(
        [&](const Arrays& a) {
          auto r = at(a[0], uniq);
          const AtOptions unique{.unique_indices = true};
          switch (op) {
            case 0: return sin(r.set(a[1]));
            case 1: return sin(r.add(a[1]));
            case 2: return sin(r.multiply(a[1], unique));
            case 3: return sin(r.min(a[1]));
            default: return sin(r.max(a[1]));
          }
        },
        Arrays{base, upd});
  }
  // Repeated indices through add and set (set's winner is the last update at each position).
  check_grads(
      [&](const Arrays& a) {
        return at(a[0], ints({1, 1, 3})).add(a[1]) * 3.0;
      },
      Arrays{base, upd});
  check_grads(
      [&](const Arrays& a) {
        return square(at(a[0], ints({1, 1, 3})).set(a[1]));
      },
      Arrays{base, upd});
  // Second order through the rules (they are built from gathers and scatters).
  auto g = grad([&](const Array& a) {
    return sum(square(at(a, ints({1, 3})).multiply(at(a, 0).get(), {.unique_indices = true})));
  });
  check_grads([&](const Array& a) { return g(a); }, base);
}

TEST_CASE("scatter_mul, min and max gradients follow JAX's rules") {
  // scatter_mul: d/dy needs unique indices, as in JAX; the operand's gradient does not.
  const Array x = f64({2, 3, 4});
  auto mul_y = [&](const Array& y) { return sum(at(x, ints({0, 0})).multiply(y)); };
  LINUM_CHECK_ERROR(grad(mul_y)(f64({5, 6})), NotImplementedError, "unique_indices=true");
  // d/dx of x.at[[0, 0]].multiply([5, 6]) is 30 at 0 (both factors), 1 elsewhere.
  check_array(grad([](const Array& a) {
                return sum(at(a, ints({0, 0})).multiply(f64({5, 6})));
              })(x),
              {3}, float64, {30, 1, 1});
  // Ties in max: the tangent is shared evenly among the values equal to the result (JAX's
  // rule). Two updates of 3 beat x[0] = 1: each gets 1/2, x[0] none.
  auto g = grad(
      [](const Array& a, const Array& u) {
        return at(at(a, ints({0, 0})).max(u), 0).get();
      },
      argnums<0, 1>);
  auto [gx, gu] = g(f64({1, 5}), f64({3, 3}));
  check_array(gx, {2}, float64, {0, 0});
  check_array(gu, {2}, float64, {0.5, 0.5});
  // The operand equal to the update keeps half.
  auto [gx2, gu2] = g(f64({3, 5}), f64({3, 1}));
  check_array(gx2, {2}, float64, {0.5, 0});
  check_array(gu2, {2}, float64, {0.5, 0});
  // min, where x[1] wins and the update loses: all to x.
  auto gmin = grad([](const Array& a, const Array& u) { return at(at(a, 1).min(u), 1).get(); },
                   argnums<0, 1>);
  auto [gx3, gu3] = gmin(f64({0, 2}), Array(7.0));
  check_array(gx3, {2}, float64, {0, 1});
  check_array(gu3, {}, float64, {0});
  // The JVP gives the same shares as the VJP (both from JAX's JVP rule).
  auto [out, t] = jvp(
      [](const Array& a, const Array& u) {
        return at(a, ints({0, 0})).max(u);
      },
      std::tuple{f64({1, 5}), f64({3, 3})}, std::tuple{f64({1, 0}), f64({2, 4})});
  check_array(t, {2}, float64, {3, 0});
}

TEST_CASE("gather and scatter gradients: out-of-bounds windows get no cotangent") {
  const Array x = f64({0.5, -1.0, 2.0, 0.25});
  // fill_or_drop gather: the filled entry does not depend on x; clip reads x[3] for 9.
  const Array idx = ints({2, 9, 0}, {3, 1});
  const GatherDimensionNumbers dn{{}, {0}, {0}};
  check_array(
      grad([&](const Array& a) {
        return sum(where(isnan(gather(a, idx, dn, {1}, {.mode = GatherScatterMode::fill_or_drop})),
                         0.0, gather(a, idx, dn, {1}, {.mode = GatherScatterMode::fill_or_drop})));
      })(x),
      {4}, float64, {1, 0, 1, 0});
  check_array(grad([&](const Array& a) {
                return sum(gather(a, idx, dn, {1}, {.mode = GatherScatterMode::clip}));
              })(x),
              {4}, float64, {1, 0, 1, 1});
  // A dropped update gets no cotangent.
  check_array(grad([&](const Array& u) { return sum(scatter_add(x, idx, u, scalar_dims()) * x); })(
                  f64({1, 1, 1})),
              {3}, float64, {2, 0, 0.5});
  check_grads(
      [&](const Arrays& a) {
        return gather(a[0], idx, dn, {1}, {.mode = GatherScatterMode::clip});
      },
      Arrays{x});
  check_grads(
      [&](const Arrays& a) {
        return scatter(a[0], ints({1, 0}, {2, 1}), a[1], scalar_dims(), {.unique_indices = true});
      },
      Arrays{x, f64({3, 4})});
}

TEST_CASE("at and lax scatter under vmap equal a loop over examples, for each batched input") {
  const Array x = data({3, 5}, 1), v = data({3, 2}, 2);
  const Array idx = ints({0, 4, 2, 2, 7, 1}, {3, 2});
  auto add = [](const Array& a, const Array& i, const Array& u) { return at(a, i).add(u); };
  auto set = [](const Array& a, const Array& i, const Array& u) { return at(a, i).set(u); };
  auto mx = [](const Array& a, const Array& i, const Array& u) { return at(a, i).max(u); };
  for (auto spec : {axes({0, 0, 0}), axes({0, kNone, kNone}), axes({kNone, 0, kNone}),
                    axes({kNone, kNone, 0}), axes({0, 0, kNone}), axes({kNone, 0, 0})}) {
    const Array xi = spec.in[0] == kNone ? index_axis(x, 0, 1) : x;
    const Array ii = spec.in[1] == kNone ? index_axis(idx, 0, 1) : idx;
    const Array vi = spec.in[2] == kNone ? index_axis(v, 0, 1) : v;
    check_vmap(add, spec, xi, ii, vi);
    check_vmap(set, spec, xi, ii, vi);
    check_vmap(mx, spec, xi, ii, vi);
  }
  auto get = [](const Array& a, const Array& i) { return at(a, {Slice{}, i}).get(); };
  check_vmap(get, axes({0, 0}), data({3, 4, 5}, 3), idx);
  check_vmap(get, axes({2, kNone}), data({4, 5, 3}, 4), ints({1, 3}));
  // Gradients of a vmapped scatter equal those of the loop.
  auto per_example = [](const Array& a, const Array& u) {
    return sum(square(at(a, ints({1, 1, 3})).set(u)));
  };
  check_vmap([&](const Array& a, const Array& u) { return grad(per_example)(a, u); }, axes({0, 0}),
             data({2, 5}, 5), data({2, 3}, 6));
}

TEST_CASE("at and lax gather / scatter under jit replay the eager values") {
  const Array x = data({4, 5}, 7);
  check_jit(
      [](const Array& a, const Array& i) {
        return at(a, {i, Slice{1, 4}}).add(1.0);
      },
      x, ints({3, 0, 3}));
  check_jit([](const Array& a,
               const Array& i) { return at(a, i).get({.mode = GatherScatterMode::fill_or_drop}); },
            x, ints({3, 9}));
  check_jit(
      [](const Array& a) {
        return gather(a, ints({0, 1, 2, 3}, {2, 2}), GatherDimensionNumbers{{1, 2}, {}, {0, 1}},
                      {2, 2});
      },
      x);
  check_jit(
      [](const Array& a, const Array& u) {
        return at(a, ints({0, 0})).min(u);
      },
      x, data({2, 5}, 8));
  check_jit(grad([](const Array& a) {
              return sum(square(at(a, ints({0, 0, 2})).set(at(a, 1).get())));
            }),
            x);
}

}  // namespace test_scatter
