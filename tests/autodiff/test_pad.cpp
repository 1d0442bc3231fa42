// lax.pad (negative and interior padding, a differentiable padding value) and jnp.pad's modes:
// values against numpy.pad (1.24, run here; JAX matches it), gradients against finite
// differences and by hand, vmap against a loop, and jit.
#include "numerics_testing.hpp"

namespace test_pad {

using namespace linum;
using namespace linum::optest;
using linum::testing::check_grads;

TEST_CASE("lax_pad: low, high and interior padding; negative padding crops") {
  const Array x = f64({1, 2, 3});
  check_array(lax_pad(x, Array(0.0), {{2, 1, 0}}), {6}, float64, {0, 0, 1, 2, 3, 0});
  check_array(lax_pad(x, Array(-1.0), {{1, 2, 2}}), {10}, float64,
              {-1, 1, -1, -1, 2, -1, -1, 3, -1, -1});
  // Negative low / high crop the (interior-padded) array: [1 9 2 9 3] -> [9 2 9].
  check_array(lax_pad(x, Array(9.0), {{-1, -1, 1}}), {3}, float64, {9, 2, 9});
  check_array(lax_pad(x, Array(9.0), {{-3, 0, 0}}), {0}, float64, {});
  const Array m = iota({2, 2});
  check_array(lax_pad(m, Array(5.0), {{1, 0, 0}, {0, -1, 1}}), {3, 2}, float64, {5, 5, 0, 5, 2, 5});
  check_array(lax_pad(ints({1, 2}), Array(7), {{0, 1, 1}}), {4}, int32, {1, 7, 2, 7});
  LINUM_CHECK_ERROR(lax_pad(x, Array(0.0), {{0, 0, -1}}), ValueError, "interior padding");
  LINUM_CHECK_ERROR(lax_pad(x, Array(0.0), {{-4, 0, 0}}), ValueError, "negative");
  LINUM_CHECK_ERROR(lax_pad(x, array(std::vector<float>{0.f}), {{1, 1, 0}}), TypeError,
                    "padding_value must be a scalar");
  LINUM_CHECK_ERROR(lax_pad(x, astype(Array(0.0), float32), {{1, 1, 0}}), TypeError,
                    "must match the operand dtype");
  LINUM_CHECK_ERROR(lax_pad(x, Array(0.0), {}), ValueError, "padding_config has 0 entries");
}

TEST_CASE("lax_pad gradients: x's entries that land, and every padded entry for the value") {
  // d/dx sum(w * pad(x)) reads w where x landed; d/dv sums w over the rest (JAX's rule).
  const Array w = f64({1, 2, 3, 4, 5});
  auto f = [&](const Array& x, const Array& v) { return sum(w * lax_pad(x, v, {{0, 0, 1}})); };
  auto [gx, gv] = grad(f, argnums<0, 1>)(f64({1, 2, 3}), Array(0.5));
  check_array(gx, {3}, float64, {1, 3, 5});
  check_array(gv, {}, float64, {6});
  check_grads(
      [](const Arrays& a) {
        return sin(lax_pad(a[0], a[1], {{-1, 2, 1}, {1, -1, 0}}));
      },
      Arrays{data({3, 4}, 1), Array(0.3)});
  check_vmap(
      [](const Array& x) {
        return lax_pad(x, Array(2.0), {{1, -1, 2}});
      },
      axes({1}), data({3, 2}, 2));
  // A padding value per example: a select against the landing mask.
  check_vmap(
      [](const Array& x, const Array& v) {
        return lax_pad(x, v, {{2, 1, 1}});
      },
      axes({0, 0}), data({3, 2}, 3), data({3}, 4));
  check_vmap(
      [](const Array& x, const Array& v) {
        return lax_pad(x, v, {{0, 1, 0}, {1, 0, 0}});
      },
      axes({kNone, 0}), data({2, 2}, 5), data({3}, 6));
  // The padding value's gradient per example.
  check_vmap(
      [](const Array& x, const Array& v) {
        return grad([&](const Array& b) { return sum(square(lax_pad(x, b, {{1, 1, 1}}))); })(v);
      },
      axes({0, 0}), data({3, 2}, 7), data({3}, 8));
  check_jit(
      [](const Array& x) {
        return lax_pad(x, Array(1.0), {{2, -1, 1}, {0, 0, 3}});
      },
      data({3, 2}, 9));
}

TEST_CASE("pad: every jnp.pad mode matches numpy.pad") {
  const Array a = f64({1, 2, 3});
  // numpy.pad(a, (4, 5), mode=...).
  check_array(pad(a, {{4, 5}}, {.mode = PadMode::edge}), {12}, float64,
              {1, 1, 1, 1, 1, 2, 3, 3, 3, 3, 3, 3});
  check_array(pad(a, {{4, 5}}, {.mode = PadMode::reflect}), {12}, float64,
              {1, 2, 3, 2, 1, 2, 3, 2, 1, 2, 3, 2});
  check_array(pad(a, {{4, 5}}, {.mode = PadMode::symmetric}), {12}, float64,
              {3, 3, 2, 1, 1, 2, 3, 3, 2, 1, 1, 2});
  check_array(pad(a, {{4, 5}}, {.mode = PadMode::wrap}), {12}, float64,
              {3, 1, 2, 3, 1, 2, 3, 1, 2, 3, 1, 2});
  check_array(pad(a, {{4, 5}}, {.mode = PadMode::reflect, .reflect_type = ReflectType::odd}), {12},
              float64, {-3, -2, -1, 0, 1, 2, 3, 4, 5, 6, 7, 8});
  check_array(pad(a, 2, {.mode = PadMode::symmetric, .reflect_type = ReflectType::odd}), {7},
              float64, {0, 1, 1, 2, 3, 3, 4});
  check_array(pad(f64({5}), {{2, 3}}, {.mode = PadMode::reflect}), {6}, float64,
              {5, 5, 5, 5, 5, 5});
  check_array(pad(a, {{3, 2}}, {.mode = PadMode::linear_ramp, .end_values = {{5, -1}}}), {8},
              float64, {5, 3.6666666666666667, 2.3333333333333333, 1, 2, 3, 1, -1});
  check_array(
      pad(ints({1, 2, 3}), {{3, 2}}, {.mode = PadMode::linear_ramp, .end_values = {{6, -1}}}), {8},
      int32, {6, 4, 2, 1, 2, 3, 1, -1});
  const Array b = f64({1, 5, 2, 7, 3, 4}, {2, 3});
  check_array(pad(b, {{1, 0}, {0, 2}}, {.mode = PadMode::maximum}), {3, 5}, float64,
              {7, 5, 4, 7, 7, 1, 5, 2, 5, 5, 7, 3, 4, 7, 7});
  check_array(pad(b, {{0, 0}, {1, 1}}, {.mode = PadMode::mean, .stat_length = {{2, 2}}}), {2, 5},
              float64, {3, 1, 5, 2, 3.5, 5, 7, 3, 4, 3.5});
  check_array(pad(f64({1, 5, 2, 8}), 1, {.mode = PadMode::median}), {6}, float64,
              {3.5, 1, 5, 2, 8, 3.5});
  check_array(pad(ints({3, 1, 2}), 1, {.mode = PadMode::minimum}), {5}, int32, {1, 3, 1, 2, 1});
  check_array(pad(ints({1, 2}), 1, {.mode = PadMode::mean}), {4}, int32, {2, 1, 2, 2});  // 1.5 -> 2
  check_array(pad(b, {{1, 0}, {1, 1}}, {.constant_values = {{7, 8}, {9, 10}}}), {3, 5}, float64,
              {9, 7, 7, 7, 10, 9, 1, 5, 2, 10, 9, 7, 3, 4, 10});
  check_array(pad(b, 1, {.constant_values = {{-1, -1}}}), {4, 5}, float64,
              {-1, -1, -1, -1, -1, -1, 1, 5, 2, -1, -1, 7, 3, 4, -1, -1, -1, -1, -1, -1});
  check_array(pad(a, 1, {.mode = PadMode::empty}), {5}, float64, {0, 1, 2, 3, 0});
  check_array(pad(Array(2.0), 3), {}, float64, {2});  // 0-d arrays are returned as they are
  LINUM_CHECK_ERROR(pad(a, {{-1, 0}}), ValueError, "negative");
  LINUM_CHECK_ERROR(pad(a, {{1, 0}, {1, 0}}), ValueError, "pad_width has 2");
  LINUM_CHECK_ERROR(pad(zeros({0}, float64), 1, {.mode = PadMode::wrap}), ValueError, "empty axis");
  LINUM_CHECK_ERROR(pad(a, 1, {.mode = PadMode::mean, .stat_length = {{0, 1}}}), ValueError,
                    "stat_length of 0");
}

TEST_CASE("pad modes: gradients, vmap and jit through their slices and concatenations") {
  for (PadMode mode :
       {PadMode::constant, PadMode::edge, PadMode::reflect, PadMode::symmetric, PadMode::wrap,
        PadMode::linear_ramp, PadMode::maximum, PadMode::mean, PadMode::median}) {
    CAPTURE(static_cast<int>(mode));
    const PadOptions opts{.mode = mode, .reflect_type = ReflectType::odd};
    check_grads([&](const Array& x) { return pad(x, {{2, 3}, {1, 0}}, opts); }, data({3, 2}, 10));
    check_vmap([&](const Array& x) { return pad(x, {{4, 1}}, opts); }, axes({0}), data({2, 3}, 11));
    check_jit([&](const Array& x) { return pad(x, 2, opts); }, data({3, 3}, 12));
  }
}

}  // namespace test_pad
