// Dense's computation dtype (flax.linen.dtypes.promote_dtype): inputs, kernel and bias cast to
// DenseConfig::dtype, or to their result_type when it is unset; and Dense's repr attributes.
#include <doctest/doctest.h>

#include <cmath>

#include <linum/linum.hpp>
#include <linum/nn/nn.hpp>

#include "../support/testing.hpp"

namespace test_dense_dtype {

using namespace linum;
using testing::check_error;
using testing::values;
namespace init = linum::nn::initializers;

namespace {
// x @ kernel + bias in double precision by explicit loops over row-major values.
std::vector<double> dense_loop(const Array& x, const Array& kernel, const Array& bias) {
  const auto xv = values(x), kv = values(kernel), bv = values(bias);
  const std::int64_t n = x.shape(0), in = x.shape(1), out = kernel.shape(1);
  std::vector<double> y(static_cast<std::size_t>(n * out));
  for (std::int64_t r = 0; r < n; ++r)
    for (std::int64_t j = 0; j < out; ++j) {
      double s = bv[j];
      for (std::int64_t i = 0; i < in; ++i) s += xv[r * in + i] * kv[i * out + j];
      y[r * out + j] = s;
    }
  return y;
}
void check_close(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) CHECK(std::abs(got[i] - want[i]) <= tol);
}
// A bias that is not zero, so the cast of the bias is exercised.
nn::DenseConfig cfg(std::optional<DType> dtype) {
  return {.features = 3, .dtype = dtype, .bias_init = init::normal(1.0)};
}
}  // namespace

TEST_CASE("Dense dtype=float64 with float32 params computes and returns float64") {
  const Array x = random::normal(random::key(1), {4, 5});  // float32
  auto [y, v] = nn::Dense(cfg(float64)).init_with_output(random::key(0), x);
  const Array kernel = v["params"]["kernel"].leaf(), bias = v["params"]["bias"].leaf();
  CHECK(kernel.dtype() == float32);  // params stay in param_dtype
  CHECK(bias.dtype() == float32);
  CHECK(y.dtype() == float64);
  // The float32 values widened exactly, then multiplied in double: the loop agrees to 1e-12,
  // far below the float32 rounding (~1e-7) a float32 computation would show.
  check_close(values(y), dense_loop(x, kernel, bias), 1e-12);
  const Array y32 = nn::Dense(cfg(std::nullopt)).apply(v, x);
  CHECK(y32.dtype() == float32);
  check_close(values(y32), dense_loop(x, kernel, bias), 1e-5);
}

TEST_CASE("Dense dtype unset: float64 input with float32 params gives float64 (result_type)") {
  const Array x = astype(random::normal(random::key(1), {2, 4}), float64);
  auto [y, v] = nn::Dense(cfg(std::nullopt)).init_with_output(random::key(0), x);
  const Array kernel = v["params"]["kernel"].leaf(), bias = v["params"]["bias"].leaf();
  CHECK(kernel.dtype() == float32);
  CHECK(y.dtype() == float64);
  check_close(values(y), dense_loop(x, kernel, bias), 1e-12);
  // An integer input promotes with float32 params to float32, as jnp.result_type does.
  const Array xi = astype(x, int32);
  const Array yi = nn::Dense(cfg(std::nullopt)).apply(v, xi);
  CHECK(yi.dtype() == float32);
  check_close(values(yi), dense_loop(xi, kernel, bias), 1e-5);
  // An explicit integer computation dtype is refused, as Flax's canonicalize_dtype.
  check_error<ValueError>([&] { nn::Dense(cfg(int32)).apply(v, x); },
                          {"Dense", "must be inexact", "int32"});
}

TEST_CASE("Dense attributes: Flax's field list with dtype, param_dtype and initializer names") {
  nn::Dense d({.features = 4,
               .use_bias = false,
               .dtype = float64,
               .param_dtype = float64,
               .kernel_init = init::ones_init(),
               .bias_init = init::constant(0.5)});
  const nn::Attributes want{{"features", "4"},       {"use_bias", "False"},
                            {"dtype", "float64"},    {"param_dtype", "float64"},
                            {"precision", "None"},   {"kernel_init", "ones"},
                            {"bias_init", "init"},   {"promote_dtype", "promote_dtype"},
                            {"dot_general", "None"}, {"dot_general_cls", "None"}};
  CHECK(d.attributes() == want);
  CHECK(nn::Dense(2).attributes()[2].second == "None");
}

}  // namespace test_dense_dtype
