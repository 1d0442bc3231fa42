// jnp's polynomials, 1-D convolution and the window / spacing creation functions: values
// derived with numpy here, dtypes, derivatives (check_grads), vmap, jit, and errors.
#include <cmath>

#include "op_testing.hpp"

namespace test_polynomial {

using namespace linum;
using optest::axes;
using optest::check_array;
using optest::check_close;
using optest::check_vmap;
using optest::data;
using optest::kNone;
using optest::values;
using testing::check_grads;

namespace {
bool same(const Array& a, const Array& b) {
  return a.shape() == b.shape() && a.dtype() == b.dtype() && values(a) == values(b);
}
}  // namespace

TEST_CASE("polyval, polyadd, polysub, polymul, polyder, polyint, vander (numpy here)") {
  check_array(polyval(array({3, 0, 1}), array({2, -1})), {2}, int32, {13, 4});
  check_array(polyval(array({3.0, 0.0, 1.0}), Array(0.5)), {}, float64, {1.75});
  // p of shape (3, 2): two polynomials evaluated at x of shape (2,).
  check_array(polyval(array({{1.0, 0.0}, {0.0, 1.0}, {2.0, 3.0}}), array({2.0, 3.0})), {2}, float64,
              {6, 6});
  check_array(polyadd(array({1, 2}), array({1, 2, 3})), {3}, int32, {1, 3, 5});
  check_array(polysub(array({1, 2, 3}), array({1, 1})), {3}, int32, {1, 1, 2});
  check_array(polymul(array({1, 2}), array({1, 3, 4})), {4}, float32, {1, 5, 10, 8});
  check_array(polyder(array({1.0, 2.0, 3.0, 4.0}), 2), {2}, float64, {6, 4});
  check_array(polyder(array({1.0, 2.0, 3.0, 4.0})), {3}, float64, {3, 4, 3});
  check_array(polyder(array({5.0}), 2), {0}, float64, {});
  check_array(polyint(array({3.0, 2.0, 1.0}), 2, array({5.0, 7.0})), {5}, float64,
              {0.25, 1.0 / 3, 0.5, 5, 7}, 1e-15);
  check_array(polyint(array({6.0, 2.0})), {3}, float64, {3, 2, 0});
  check_array(polyint(array({6, 2}), 1, Array(4)), {3}, float32, {3, 2, 4});
  check_array(vander(array({1, 2, 3})), {3, 3}, int32, {1, 1, 1, 4, 2, 1, 9, 3, 1});
  check_array(vander(array({2.0, 3.0}), 3, true), {2, 3}, float64, {1, 2, 4, 1, 3, 9});
  LINUM_CHECK_ERROR(polyder(array({1.0}), -1), ValueError,
                    "polyder: order of derivative must be positive");
  LINUM_CHECK_ERROR(polyint(array({1.0}), 2, array({1.0, 2.0, 3.0})), ValueError,
                    "polyint: k must be a scalar");
  LINUM_CHECK_ERROR(vander(ones({2, 2})), ValueError, "vander: x must be a one-dimensional array");
  LINUM_CHECK_ERROR(polyadd(ones({2, 2}), ones({2})), ValueError,
                    "polyadd: expected 1-D coefficient arrays");
}

TEST_CASE("convolve and correlate in the three modes (numpy here)") {
  Array a = array({1.0, 2.0, 3.0}), v = array({0.0, 1.0, 0.5});
  check_array(convolve(a, v), {5}, float64, {0, 1, 2.5, 4, 1.5});
  check_array(convolve(a, v, "same"), {3}, float64, {1, 2.5, 4});
  check_array(convolve(array({1, 2, 3, 4}), array({1, -1}), "valid"), {3}, float32, {1, 1, 1});
  check_array(convolve(v, a), {5}, float64, {0, 1, 2.5, 4, 1.5});
  check_array(correlate(a, v, "full"), {5}, float64, {0.5, 2, 3.5, 3, 0});
  check_array(correlate(array({1.0, 2.0}), a, "full"), {4}, float64, {3, 8, 5, 2});
  check_array(correlate(a, a), {1}, float64, {14});
  LINUM_CHECK_ERROR(convolve(a, v, "wide"), ValueError,
                    "convolve: mode must be one of 'full', 'same', 'valid', got 'wide'");
  LINUM_CHECK_ERROR(correlate(ones({2, 2}), v), ValueError,
                    "correlate: only 1-dimensional inputs are supported");
  LINUM_CHECK_ERROR(convolve(zeros({0}), v), ValueError, "convolve: inputs cannot be empty");
}

TEST_CASE("window functions, logspace, geomspace, empty_like (numpy here; float32 as jnp)") {
  check_array(bartlett(5), {5}, float32, {0, 0.5, 1, 0.5, 0});
  check_array(blackman(5), {5}, float32, {0, 0.34, 1, 0.34, 0}, 1e-6);
  CHECK(std::abs(values(blackman(5))[0]) < 1e-7);
  check_array(hamming(4), {4}, float32, {0.08, 0.77, 0.77, 0.08}, 1e-6);
  check_array(hanning(4), {4}, float32, {0, 0.75, 0.75, 0}, 1e-6);
  CHECK(std::abs(values(hanning(4))[0]) < 1e-7);
  check_array(kaiser(5, Array(2.5)), {5}, float32,
              {0.3039662294153687, 0.7791669747707872, 1.0, 0.7791669747707872, 0.3039662294153687},
              1e-6);
  check_array(hamming(1), {1}, float32, {1});
  check_array(hanning(0), {0}, float32, {});
  check_array(logspace(0, 2, 3), {3}, float32, {1, 10, 100}, 1e-6);
  check_array(logspace(0, 3, 3, false, 2.0, float64), {3}, float64, {1, 2, 4}, 1e-15);
  check_array(geomspace(1, 1000, 4), {4}, float32, {1, 10, 100, 1000}, 1e-6);
  check_array(geomspace(-1, -16, 5, true, float64), {5}, float64, {-1, -2, -4, -8, -16}, 1e-14);
  check_array(empty_like(array({1, 2})), {2}, int32, {0, 0});
  LINUM_CHECK_ERROR(bartlett(-1), ValueError, "bartlett: M must be non-negative, got -1");
}

TEST_CASE("polynomials and convolution: check_grads, vmap, jit") {
  check_grads([](const Arrays& a) { return polyval(a[0], a[1]); },
              Arrays{data({4}, 81), data({5}, 82)});
  check_grads([](const Arrays& a) { return polymul(a[0], a[1]); },
              Arrays{data({3}, 83), data({4}, 84)});
  check_grads([](const Arrays& a) { return polyadd(a[0], a[1]) + polysub(a[1], a[0]); },
              Arrays{data({3}, 85), data({5}, 86)});
  check_grads([](const Array& p) { return polyder(p, 2) * 2.0; }, data({5}, 87));
  check_grads([](const Array& p) { return polyint(p, 2, Array(1.0)); }, data({4}, 88));
  check_grads([](const Arrays& a) { return convolve(a[0], a[1], "same"); },
              Arrays{data({6}, 89), data({3}, 90)});
  check_grads([](const Arrays& a) { return correlate(a[0], a[1], "full"); },
              Arrays{data({2}, 91), data({5}, 92)});
  check_grads([](const Array& x) { return vander(x, 4); }, data({3}, 93));
  check_grads([](const Array& b) { return kaiser(6, b); }, data({}, 94, 1.0, 3.0));
  check_vmap([](const Array& p, const Array& x) { return polyval(p, x); }, axes({1, kNone}),
             data({4, 3}, 95), data({2}, 96));
  check_vmap([](const Array& a, const Array& v) { return convolve(a, v) + polymul(v, a); },
             axes({0, 1}), data({2, 5}, 97), data({3, 2}, 98));
  check_vmap([](const Array& a, const Array& v) { return correlate(a, v, "same"); },
             axes({0, kNone}), data({3, 5}, 99), data({4}, 100));
  auto h = [](const Array& p, const Array& v) {
    return std::make_pair(polyval(polyint(polyder(p)), v),
                          convolve(p, v, "full") * hamming(p.size() + v.size() - 1));
  };
  const Array p = data({4}, 101), v = data({3}, 102);
  auto jh = jit(h);
  auto got = jh(p, v), want = h(p, v);
  CHECK(same(got.first, want.first));
  CHECK(same(got.second, want.second));
}

}  // namespace test_polynomial
