// linum::nn::initializers against Flax/JAX: published default-mode parameters bit for bit, the
// legacy-mode docstrings, fan computation, variance statistics, orthogonality, and vmap.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include <linum/autodiff/ops.hpp>
#include <linum/autodiff/random/random.hpp>
#include <linum/autodiff/transforms.hpp>
#include <linum/nn/initializers.hpp>

#include "test_util.hpp"

namespace test_initializers {

namespace init = linum::nn::initializers;
namespace lr = linum::random;
using linum::Array;
using linum::Shape;
using lr::testing::prints_as;
using lr::testing::ulp_distance;

namespace {

template <class T>
std::vector<T> values(const Array& a) {
  const T* p = a.data<T>();
  return std::vector<T>(p, p + a.size());
}

void check_prints(const Array& got, const std::vector<const char*>& printed) {
  const auto v = values<float>(got);
  REQUIRE(v.size() == printed.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    INFO("element " << i << ": got " << lr::testing::numpy_str(v[i]) << ", JAX printed "
                    << printed[i]);
    CHECK(prints_as(v[i], printed[i]));
  }
}

void check_ulps(const Array& got, const std::vector<float>& expected, std::int64_t max_ulps) {
  const auto v = values<float>(got);
  REQUIRE(v.size() == expected.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    INFO("element " << i << ": got " << v[i] << ", expected " << expected[i]);
    CHECK(ulp_distance(v[i], expected[i]) <= max_ulps);
  }
}

void check_near(const Array& got, const std::vector<double>& expected, double tol) {
  const auto v = values<float>(got);
  REQUIRE(v.size() == expected.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    INFO("element " << i << ": got " << v[i] << ", expected " << expected[i]);
    CHECK(std::abs(v[i] - expected[i]) <= tol);
  }
}

bool same(const Array& a, const Array& b) {
  return a.shape() == b.shape() && a.dtype() == b.dtype() &&
         static_cast<bool>(linum::all(linum::equal(a, b)));
}

double max_abs_diff(const Array& a, const Array& b) {
  return linum::max(linum::abs(linum::subtract(a, b))).item<double>();
}

}  // namespace

TEST_SUITE("initializers.flax_values") {
  TEST_CASE("Dense's lecun_normal kernel reproduces Flax's MLP doctest output") {
    const Array kernel = init::lecun_normal()(lr::fold_in(lr::key(0), 2998342421u), {3, 4});
    check_prints(linum::sum(kernel, 0), {"-0.17875527", "1.6255447", "-1.2431065", "-0.02554005"});
  }

  TEST_CASE("nn.Embed's variance_scaling(1, fan_in, normal, out_axis=0) embedding") {
    const auto embed_init = init::variance_scaling(1.0, "fan_in", "normal", -2, 0);
    const Array emb = embed_init(lr::fold_in(lr::key(0), 3213575472u), {5, 3});
    check_prints(emb, {"0.04396089", "-0.9328513", "-0.97328115", "0.41147125", "0.66334754",
                       "0.49469155", "0.09719624", "0.49861377", "0.49519277", "-0.13316602",
                       "0.6697022", "0.3710195", "-0.5039532", "0.287319", "1.4369922"});
  }

  TEST_CASE("lecun_normal (2, 2) kernels of the RNG guide's lifted transforms") {
    const auto lecun = init::lecun_normal();
    check_prints(lecun(lr::fold_in(lr::key(0), 1059673188u), {2, 2}),
                 {"-1.2488099", "-0.6127134", "-0.07084481", "0.60130936"});
    const Array keys = lr::split(lr::key(0), 3);
    // nn.vmap with split params: the initializer runs under vmap with the batch of keys.
    const Array l62 = linum::vmap([&](const Array& k) {
      return lecun(lr::fold_in(k, 1059673188u), {2, 2});
    })(keys);
    check_prints(
        l62, {"-0.2526208", "-0.15088455", "-1.1987205", "-0.40843305", "-0.7064888", "-1.108805",
              "-0.938775", "1.4812315", "-0.59468937", "-0.2502723", "-1.33515", "0.5067442"});
    const Array l66 = linum::vmap([&](const Array& k) {
      return lecun(lr::fold_in(k, 4179161679u), {2, 2});
    })(keys);
    check_prints(l66, {"-0.07838312", "-0.7422982", "0.87488323", "0.13773395", "0.97309333",
                       "0.9087693", "-0.12564984", "-1.0920651", "-0.99055105", "1.1499453",
                       "-0.15721127", "-0.62520015"});
  }

  TEST_CASE("lecun_normal and top-level Dense kernels (pure-Python values)") {
    // From a pure-Python port of JAX's samplers (no fused multiply-add), hence the ulp bound.
    check_ulps(init::lecun_normal()(lr::key(0), {3, 4}),
               {0.95563179f, 1.1254905f, -0.27086315f, -0.04924887f, 0.11026895f, -0.5990026f,
                -0.3091259f, 0.30855614f, 0.41327727f, -0.58599401f, 1.1748582f, -1.0999686f},
               4);
    check_ulps(init::lecun_normal()(lr::fold_in(lr::key(0), 3213575472u), {3, 4}),
               {0.047698714f, -0.9522832f, -0.98568863f, 0.44283277f, 0.70222288f, 0.53018653f,
                0.10542502f, 0.53427064f, 0.53070861f, -0.14438622f, 0.7085318f, 0.39995816f},
               4);
  }

  TEST_CASE("legacy-mode docstrings of jax.nn.initializers (key(42), shape (2, 3))") {
    lr::ThreefryPartitionableScope legacy(false);
    const Array k = lr::PRNGKey(42);
    check_prints(init::uniform(10.0)(k, {2, 3}),
                 {"7.298188", "8.691938", "8.7230015", "2.0818567", "1.8662417", "5.5022564"});
    check_prints(init::truncated_normal(5.0)(k, {2, 3}),
                 {"2.9047365", "5.2338114", "5.29852", "-3.836303", "-4.192359", "0.6022964"});
    check_prints(init::lecun_uniform()(k, {2, 3}), {"0.56293887", "0.90433645", "0.9119454",
                                                    "-0.71479625", "-0.7676109", "0.12302713"});
    check_prints(init::glorot_uniform()(k, {2, 3}), {"0.50350785", "0.8088631", "0.81566876",
                                                     "-0.6393332", "-0.6865721", "0.11003882"});
    check_prints(init::he_uniform()(k, {2, 3}), {"0.79611576", "1.2789248", "1.2896855",
                                                 "-1.0108745", "-1.0855657", "0.17398663"});
    // Printed by older JAX releases whose erf_inv rounded differently: a few ulp.
    check_ulps(init::normal(5.0)(k, {2, 3}),
               {3.0613258f, 5.6129413f, 5.6866574f, -4.063663f, -4.4520254f, 0.63115686f}, 6);
    check_ulps(init::lecun_normal()(k, {2, 3}),
               {0.46700746f, 0.8414632f, 0.8518669f, -0.61677957f, -0.67402434f, 0.09683388f}, 2);
    check_ulps(init::glorot_normal()(k, {2, 3}),
               {0.41770416f, 0.75262755f, 0.7619329f, -0.5516644f, -0.6028657f, 0.08661086f}, 2);
    check_ulps(init::he_normal()(k, {2, 3}),
               {0.6604483f, 1.1900088f, 1.2047218f, -0.87225807f, -0.95321447f, 0.1369438f}, 2);
    // QR goes through LAPACK: equal to float precision, not bit for bit.
    check_near(init::orthogonal()(k, {2, 3}),
               {3.9026976e-01, 7.2495741e-01, -5.6756169e-01, 8.8047469e-01, -4.7409311e-01,
                -1.3157725e-04},
               2e-6);
    const Array delta = init::delta_orthogonal()(k, {3, 3, 3});
    CHECK(delta.shape() == Shape{3, 3, 3});
    check_near(linum::take(delta, Array(1), 0),
               {0.27858758, -0.7949833, -0.53887904, 0.9120717, 0.04322892, 0.40774566, -0.30085585,
                -0.6050892, 0.73712474},
               2e-6);
    CHECK(linum::max(linum::abs(linum::take(delta, Array(0), 0))).item<float>() == 0.0f);
    CHECK(linum::max(linum::abs(linum::take(delta, Array(2), 0))).item<float>() == 0.0f);
  }
}

TEST_SUITE("initializers.behaviour") {
  TEST_CASE("zeros, ones, constant ignore the key and honour the dtype") {
    CHECK(same(init::zeros(lr::key(0), {2, 3}), linum::zeros({2, 3})));
    CHECK(
        same(init::ones_init()(lr::key(0), {4}, linum::float64), linum::ones({4}, linum::float64)));
    CHECK(same(init::zeros_init()(lr::key(1), {2}), linum::zeros({2})));
    const Array c = init::constant(-7)(lr::key(0), {2, 3});
    CHECK(same(c, linum::full({2, 3}, -7.0)));
    CHECK(init::constant(1.5, linum::float64)(lr::key(0), {1}).dtype() == linum::float64);
  }

  TEST_CASE("compute_fans: Dense, Conv (receptive field), Embed's out_axis=0, batch axes") {
    CHECK(init::compute_fans({3, 4}) == std::pair<double, double>{3, 4});
    CHECK(init::compute_fans({3, 3, 8, 16}) == std::pair<double, double>{72, 144});
    CHECK(init::compute_fans({10, 7}, -2, 0) == std::pair<double, double>{7, 7});
    CHECK(init::compute_fans({5, 3, 4}, -2, -1, {0}) == std::pair<double, double>{3, 4});
    CHECK(init::compute_fans({2, 3, 4}, {0, 1}, -1) == std::pair<double, double>{6, 4});
    CHECK(init::compute_fans({6}, 0, 0) == std::pair<double, double>{1, 1});
    CHECK_THROWS_WITH_AS(init::compute_fans({6}),
                         "Can't compute input and output sizes of a 1-dimensional weights tensor "
                         "with default in_axis. Must be at least 2D or specify in_axis explicitly.",
                         linum::ValueError);
    CHECK_THROWS_AS(init::variance_scaling(1.0, "fan_sum", "normal"), linum::ValueError);
    CHECK_THROWS_AS(init::variance_scaling(1.0, "fan_in", "cauchy"), linum::ValueError);
    CHECK_THROWS_AS(init::orthogonal()(lr::key(0), {3}), linum::ValueError);
    CHECK_THROWS_AS(init::delta_orthogonal()(lr::key(0), {3, 3}), linum::ValueError);
    CHECK_THROWS_AS(init::delta_orthogonal()(lr::key(0), {3, 3, 4, 2}), linum::ValueError);
  }

  TEST_CASE("variance scaling statistics: each distribution has variance scale / n") {
    const Shape shape{400, 600};  // fan_in 400, fan_out 600, fan_avg 500
    struct Case {
      init::Initializer f;
      double variance;
    };
    const std::vector<Case> cases = {
        {init::lecun_normal(), 1.0 / 400},
        {init::lecun_uniform(), 1.0 / 400},
        {init::glorot_normal(), 1.0 / 500},
        {init::glorot_uniform(), 1.0 / 500},
        {init::he_normal(), 2.0 / 400},
        {init::he_uniform(), 2.0 / 400},
        {init::variance_scaling(1.0, "fan_out", "normal"), 1.0 / 600},
        {init::variance_scaling(3.0, "fan_geo_avg", "truncated_normal"),
         3.0 / std::sqrt(400.0 * 600.0)}};
    for (std::size_t i = 0; i < cases.size(); ++i) {
      CAPTURE(i);
      const Array w = cases[i].f(lr::key(static_cast<std::int64_t>(i)), shape);
      CHECK(std::abs(linum::mean(w).item<double>()) < 3e-4);
      CHECK(std::abs(linum::var(w).item<double>() / cases[i].variance - 1) < 0.01);
    }
    const Array u = init::uniform(0.5)(lr::key(9), {100000});
    CHECK(linum::min(u).item<float>() >= 0.0f);
    CHECK(linum::max(u).item<float>() < 0.5f);
    const Array t = init::truncated_normal(0.1)(lr::key(9), {100000});
    CHECK(linum::max(linum::abs(t)).item<float>() < 0.2f);
    CHECK(std::abs(std::sqrt(linum::var(t).item<double>()) / 0.1 - 0.87962566) < 0.01);
  }

  TEST_CASE("orthogonal: orthonormal columns (tall) or rows (wide), column_axis, float64") {
    const Array tall = init::orthogonal()(lr::key(1), {6, 4});
    CHECK(max_abs_diff(linum::matmul(linum::transpose(tall), tall), linum::eye(4)) < 1e-5);
    const Array wide = init::orthogonal(2.0)(lr::key(1), {3, 5});
    CHECK(max_abs_diff(linum::matmul(wide, linum::transpose(wide)),
                       linum::multiply(linum::eye(3), Array(4.0f))) < 1e-5);
    // Conv kernel (3, 3, 4, 8): the 36 x 8 matrix has orthonormal columns.
    const Array conv = init::orthogonal()(lr::key(2), {3, 3, 4, 8});
    const Array m = linum::reshape(conv, {36, 8});
    CHECK(max_abs_diff(linum::matmul(linum::transpose(m), m), linum::eye(8)) < 1e-5);
    const Array rows = init::orthogonal(1.0, 0)(lr::key(3), {4, 6});
    CHECK(max_abs_diff(linum::matmul(rows, linum::transpose(rows)), linum::eye(4)) < 1e-5);
    const Array d = init::orthogonal(1.0, -1, linum::float64)(lr::key(4), {5, 5});
    CHECK(d.dtype() == linum::float64);
    CHECK(max_abs_diff(linum::matmul(linum::transpose(d), d),
                       linum::eye(5, -1, 0, linum::float64)) < 1e-13);
  }

  TEST_CASE("initializers run under vmap over keys, one kernel call for the batch") {
    const Array keys = lr::split(lr::key(5), 3);
    for (const auto& f : {init::lecun_normal(), init::he_uniform(), init::orthogonal(),
                          init::normal(0.3), init::delta_orthogonal()}) {
      const Shape shape{3, 3, 4};
      const Array batched = linum::vmap([&](const Array& k) { return f(k, shape); })(keys);
      for (int i = 0; i < 3; ++i) {
        CAPTURE(i);
        CHECK(same(linum::take(batched, Array(i), 0), f(linum::take(keys, Array(i), 0), shape)));
      }
    }
  }

  TEST_CASE("float64 initializers scale in float64") {
    const Array w = init::lecun_normal(-2, -1, {}, linum::float64)(lr::key(6), {3, 4});
    CHECK(w.dtype() == linum::float64);
    const Array t = lr::truncated_normal(lr::key(6), -2, 2, {3, 4}, linum::float64);
    const double sd = std::sqrt(1.0 / 3.0) / 0.87962566103423978;
    CHECK(same(w, linum::multiply(t, Array(sd))));
  }
}

}  // namespace test_initializers
