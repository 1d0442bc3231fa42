// Dtype queries (finfo, iinfo, can_cast, isdtype, issubdtype) against numpy 1.24 (run here:
// np.finfo / np.iinfo fields, the np.can_cast table of linum's dtypes, np.issubdtype), and
// bitwise_count against Python's bin(v).count('1').
#include <linum/autodiff/ops/bits.hpp>
#include <linum/autodiff/ops/dtype_info.hpp>

#include "numerics_testing.hpp"

namespace test_dtype_info {

using namespace linum;
using namespace linum::optest;

TEST_CASE("finfo and iinfo (numpy here)") {
  const FInfo f = finfo(float32);
  CHECK(f.dtype == float32);
  CHECK(f.bits == 32);
  CHECK(f.eps == doctest::Approx(1.1920929e-07).epsilon(1e-7));
  CHECK(f.epsneg == doctest::Approx(5.9604645e-08).epsilon(1e-7));
  CHECK(f.max == doctest::Approx(3.4028235e+38).epsilon(1e-7));
  CHECK(f.min == -f.max);
  CHECK(f.tiny == doctest::Approx(1.1754944e-38).epsilon(1e-7));
  CHECK(f.smallest_subnormal == doctest::Approx(1.4e-45).epsilon(0.01));
  CHECK(f.resolution == doctest::Approx(1e-6));
  CHECK((f.precision == 6 && f.nmant == 23 && f.nexp == 8 && f.machep == -23 && f.negep == -24));
  CHECK((f.minexp == -126 && f.maxexp == 128 && f.iexp == 8));
  const FInfo d = finfo(complex128);  // a complex dtype gives its real part's
  CHECK(d.dtype == float64);
  CHECK(d.eps == 2.220446049250313e-16);
  CHECK(d.max == 1.7976931348623157e+308);
  CHECK(d.smallest_normal == 2.2250738585072014e-308);
  CHECK((d.precision == 15 && d.nmant == 52 && d.nexp == 11 && d.minexp == -1022 &&
         d.maxexp == 1024 && d.resolution == doctest::Approx(1e-15)));
  const IInfo i = iinfo(int32);
  CHECK((i.bits == 32 && i.min == -2147483648LL && i.max == 2147483647LL));
  CHECK((iinfo(uint32).min == 0 && iinfo(uint32).max == 4294967295LL));
  LINUM_CHECK_ERROR(finfo(int32), ValueError, "finfo: data type int32 is not inexact");
  LINUM_CHECK_ERROR(iinfo(bool_), ValueError, "iinfo: invalid integer data type bool");
}

TEST_CASE("can_cast: numpy's table over linum's dtypes (numpy here)") {
  // Rows / columns: float32, float64, int32, uint32, bool, complex64, complex128.
  const std::vector<DType> ts{float32, float64, int32, uint32, bool_, complex64, complex128};
  const int safe[7][7] = {{1, 1, 0, 0, 0, 1, 1}, {0, 1, 0, 0, 0, 0, 1}, {0, 1, 1, 0, 0, 0, 1},
                          {0, 1, 0, 1, 0, 0, 1}, {1, 1, 1, 1, 1, 1, 1}, {0, 0, 0, 0, 0, 1, 1},
                          {0, 0, 0, 0, 0, 0, 1}};
  const int same_kind[7][7] = {{1, 1, 0, 0, 0, 1, 1}, {1, 1, 0, 0, 0, 1, 1}, {1, 1, 1, 0, 0, 1, 1},
                               {1, 1, 1, 1, 0, 1, 1}, {1, 1, 1, 1, 1, 1, 1}, {0, 0, 0, 0, 0, 1, 1},
                               {0, 0, 0, 0, 0, 1, 1}};
  for (int a = 0; a < 7; ++a)
    for (int b = 0; b < 7; ++b) {
      INFO(ts[a] << " -> " << ts[b]);
      CHECK(can_cast(ts[a], ts[b]) == (safe[a][b] == 1));
      CHECK(can_cast(ts[a], ts[b], Casting::same_kind) == (same_kind[a][b] == 1));
      CHECK(can_cast(ts[a], ts[b], Casting::no) == (a == b));
      CHECK(can_cast(ts[a], ts[b], Casting::equiv) == (a == b));
      CHECK(can_cast(ts[a], ts[b], Casting::unsafe));
    }
}

TEST_CASE("isdtype (the Array API's kinds) and issubdtype (numpy's hierarchy)") {
  CHECK(isdtype(int32, "signed integer"));
  CHECK_FALSE(isdtype(uint32, "signed integer"));
  CHECK(isdtype(uint32, "integral"));
  CHECK(isdtype(float64, "real floating"));
  CHECK_FALSE(isdtype(complex64, "real floating"));
  CHECK(isdtype(complex64, "complex floating"));
  CHECK(isdtype(bool_, "bool"));
  CHECK_FALSE(isdtype(bool_, "numeric"));
  CHECK(isdtype(uint32, "numeric"));
  CHECK(isdtype(float32, float32));
  CHECK_FALSE(isdtype(float32, float64));
  CHECK(isdtype(float32, {"bool", float32}));
  CHECK_FALSE(isdtype(int32, {"bool", "real floating"}));
  LINUM_CHECK_ERROR(isdtype(int32, "integer"), ValueError, "isdtype: unrecognized kind='integer'");
  // numpy: np.issubdtype(np.float32, np.floating), (np.float32, np.float64), ...
  CHECK(issubdtype(float32, DTypeCategory::floating));
  CHECK_FALSE(issubdtype(float32, float64));
  CHECK(issubdtype(int32, DTypeCategory::signedinteger));
  CHECK_FALSE(issubdtype(uint32, DTypeCategory::signedinteger));
  CHECK(issubdtype(uint32, DTypeCategory::integer));
  CHECK(issubdtype(complex64, DTypeCategory::inexact));
  CHECK_FALSE(issubdtype(complex64, DTypeCategory::floating));
  CHECK_FALSE(issubdtype(bool_, DTypeCategory::number));
  CHECK(issubdtype(bool_, DTypeCategory::generic));
  CHECK(issubdtype(int32, DTypeCategory::number));
}

TEST_CASE("bitwise_count: the 1 bits of |x| (Python's bin(v).count('1') here)") {
  check_array(bitwise_count(ints({0, 1, 7, 255, 2147483647, -7, -2147483647 - 1})), {7}, uint32,
              {0, 1, 3, 8, 31, 3, 1});
  check_array(bitwise_count(array(std::vector<std::uint32_t>{4294967295u, 1024u})), {2}, uint32,
              {32, 1});
  check_array(bitwise_count(array(std::vector<bool>{true, false})), {2}, uint32, {1, 0});
  LINUM_CHECK_ERROR(bitwise_count(f64({1})), TypeError, "bitwise_count: expected an integer");
  auto f = [](const Array& x) { return bitwise_count(x * 3); };
  check_vmap(f, axes({0}), ints({1, 5, 9, -3, 100, 7}, {2, 3}));
  check_jit(f, ints({1, 5, 9, -3}));
}

}  // namespace test_dtype_info
