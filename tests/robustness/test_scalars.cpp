// Scalars in and out of arrays: arange infers its dtype from its arguments' types as JAX does,
// and item<T>() refuses a value that does not fit T instead of wrapping it or invoking UB.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include <linum/autodiff/ops.hpp>

#include "support.hpp"

namespace test_scalars {

using namespace linum;

TEST_CASE("arange's dtype follows its arguments' types: float args give float32, int args int32") {
  // Whole-valued floats gave int32 before: jnp.arange(10.0, 20.0, 1.0) is float32.
  const Array f = arange(10.0, 20.0, 1.0);
  CHECK(f.dtype() == float32);
  CHECK(f.shape() == Shape{10});
  CHECK(f.data<float>()[9] == 19.0f);
  CHECK(arange(10.0).dtype() == float32);
  CHECK(arange(0, 5.0).dtype() == float32);
  CHECK(arange(0, 4, 2.0).dtype() == float32);
  CHECK(arange(0, 1, 0.25).size() == 4);
  CHECK(arange(10, 20).dtype() == int32);
  CHECK(arange(std::int64_t{7}).dtype() == int32);
  CHECK(arange(5, 0, -2).data<std::int32_t>()[2] == 1);
  CHECK(arange(10.0, 20.0, 1.0, int32).dtype() == int32);  // an explicit dtype wins
  CHECK(arange(3, float64).dtype() == float64);
}

TEST_CASE("item<T>() throws a ValueError naming both types when the value does not fit T") {
  const Array big = array<std::uint32_t>({4000000000u}, Shape{});
  CHECK(big.item<std::int64_t>() == 4000000000);
  robust::check_error<ValueError>([&] { big.item<std::int32_t>(); },
                                  {"Array::item", "uint32 value 4000000000", "int32"});
  const Array neg = array<std::int32_t>({-1}, Shape{});
  CHECK(neg.item<std::int64_t>() == -1);
  robust::check_error<ValueError>([&] { neg.item<std::uint32_t>(); }, {"int32 value -1", "uint32"});
  robust::check_error<ValueError>([&] { neg.item<std::uint64_t>(); }, {"uint64"});
  robust::check_error<ValueError>([&] { array<std::int32_t>({300}, Shape{}).item<std::int8_t>(); },
                                  {"int8"});
  robust::check_error<ValueError>(
      [&] { array<float>({std::numeric_limits<float>::quiet_NaN()}, Shape{}).item<int>(); },
      {"float32 value nan", "int32"});
  robust::check_error<ValueError>(
      [&] { array<double>({-std::numeric_limits<double>::infinity()}, Shape{}).item<std::int64_t>(); },
      {"float64 value -inf", "int64"});
  robust::check_error<ValueError>([&] { array<double>({-2.0}, Shape{}).item<std::uint32_t>(); },
                                  {"uint32"});
  robust::check_error<ValueError>([&] { array<double>({1e300}, Shape{}).item<float>(); },
                                  {"float64 value", "float32"});
  // In range: truncation as Python's int(), NaN and inf stay floats.
  CHECK(array<double>({-0.5}, Shape{}).item<std::uint32_t>() == 0);
  CHECK(array<double>({2147483647.9}, Shape{}).item<std::int32_t>() == 2147483647);
  CHECK(std::isnan(array<double>({std::nan("")}, Shape{}).item<float>()));
  CHECK(std::isinf(array<double>({INFINITY}, Shape{}).item<float>()));
  CHECK(array<std::uint32_t>({7u}, Shape{}).item<std::int32_t>() == 7);
}

}  // namespace test_scalars
