// bfloat16 / float16 as Array dtypes: JAX's promotion lattice (checked pair by pair against the
// lattice as JAX documents it), creation, astype, item, raw buffers and repr.
#include <map>
#include <set>
#include <string>
#include <vector>

#include <linum/linum.hpp>

#include "support/testing.hpp"

using namespace linum;
using linum::testing::check_error;
using linum::testing::values;

namespace {

// JAX's type promotion lattice (docs/type_promotion.rst, the graph jax/_src/dtypes.py encodes):
// each node and the nodes directly above it. "i*", "f*", "c*" are the weak int/float/complex.
const std::map<std::string, std::vector<std::string>> kLattice = {
    {"b1", {"i*"}},
    {"u1", {"u2", "i2"}},
    {"u2", {"i4", "u4"}},
    {"u4", {"u8", "i8"}},
    {"u8", {"f*"}},
    {"i*", {"u1", "i1"}},
    {"i1", {"i2"}},
    {"i2", {"i4"}},
    {"i4", {"i8"}},
    {"i8", {"f*"}},
    {"f*", {"c*", "f2", "bf"}},
    {"bf", {"f4"}},
    {"f2", {"f4"}},
    {"f4", {"c8", "f8"}},
    {"f8", {"c16"}},
    {"c*", {"c8"}},
    {"c8", {"c16"}},
    {"c16", {}},
};

std::set<std::string> upper_set(const std::string& n) {
  std::set<std::string> s{n};
  for (const auto& up : kLattice.at(n))
    for (const auto& m : upper_set(up)) s.insert(m);
  return s;
}

// The least upper bound: the element of the common upper set that all others lie above.
std::string lattice_join(const std::string& a, const std::string& b) {
  const auto ua = upper_set(a), ub = upper_set(b);
  std::set<std::string> common;
  for (const auto& n : ua)
    if (ub.count(n)) common.insert(n);
  for (const auto& n : common) {
    const auto un = upper_set(n);
    bool least = true;
    for (const auto& m : common) least = least && un.count(m);
    if (least) return n;
  }
  FAIL("no least upper bound of " << a << " and " << b);
  return "";
}

std::string lattice_node(DType d) {
  switch (d) {
    case DType::bool_: return "b1";
    case DType::int32: return "i4";
    case DType::uint32: return "u4";
    case DType::bfloat16: return "bf";
    case DType::float16: return "f2";
    case DType::float32: return "f4";
    case DType::float64: return "f8";
    case DType::complex64: return "c8";
    case DType::complex128: return "c16";
  }
  return "";
}

// A lattice node as a linum dtype: 64-bit integers canonicalize to 32 bits (JAX without x64,
// which linum follows for integers), the weak types to their default dtypes.
ResultType lattice_dtype(const std::string& n) {
  if (n == "i*") return {int32, true};
  if (n == "f*") return {float32, true};
  if (n == "c*") return {complex64, true};
  if (n == "i8") return {int32, false};
  if (n == "u8") return {uint32, false};
  for (DType d : {bool_, int32, uint32, bfloat16, float16, float32, float64, complex64, complex128})
    if (lattice_node(d) == n) return {d, false};
  FAIL("unknown node " << n);
  return {};
}

const DType kEveryDType[] = {bool_,   int32,   uint32,    bfloat16,  float16,
                             float32, float64, complex64, complex128};

}  // namespace

TEST_CASE("promote_types follows JAX's lattice for every pair of dtypes") {
  for (DType a : kEveryDType)
    for (DType b : kEveryDType) {
      INFO(dtype_name(a) << " with " << dtype_name(b));
      CHECK(promote_types(a, b) ==
            lattice_dtype(lattice_join(lattice_node(a), lattice_node(b))).dtype);
    }
  // The rules the issue names, spelled out.
  CHECK(promote_types(bfloat16, float16) == float32);
  CHECK(promote_types(bfloat16, float32) == float32);
  CHECK(promote_types(int32, bfloat16) == bfloat16);
  CHECK(promote_types(uint32, float16) == float16);
  CHECK(promote_types(bool_, bfloat16) == bfloat16);
  CHECK(promote_types(float16, complex64) == complex64);
  CHECK(promote_types(bfloat16, float64) == float64);
}

TEST_CASE("result_type with a weak scalar follows JAX's lattice") {
  // A weak operand is the lattice's i* / f* / c* (an int, float or complex Python scalar).
  const std::pair<DType, std::string> weak[] = {{int32, "i*"}, {float32, "f*"}, {complex64, "c*"}};
  for (DType strong : kEveryDType)
    for (const auto& [wd, wn] : weak) {
      INFO(dtype_name(strong) << " with a weak " << dtype_name(wd));
      const ResultType want = lattice_dtype(lattice_join(lattice_node(strong), wn));
      const ResultType got = result_type(strong, false, wd, true);
      CHECK(got.dtype == want.dtype);
      CHECK(got.weak_type == want.weak_type);
      const ResultType flipped = result_type(wd, true, strong, false);
      CHECK(flipped.dtype == want.dtype);
      CHECK(flipped.weak_type == want.weak_type);
    }
  // A weak float keeps bfloat16; a weak complex with a float64 array is complex128, strong.
  CHECK(result_type(bfloat16, false, float32, true).dtype == bfloat16);
  CHECK(result_type(float64, false, complex64, true).dtype == complex128);
  CHECK_FALSE(result_type(float64, false, complex64, true).weak_type);
}

TEST_CASE("arithmetic on bfloat16 / float16 arrays takes the promoted dtype") {
  const Array b = array<float>({1.5f, -2.0f}).astype(bfloat16);
  const Array h = array<float>({0.25f, 3.0f}).astype(float16);
  CHECK((b * 2.0).dtype() == bfloat16);  // a weak scalar keeps bfloat16
  CHECK_FALSE((b * 2.0).weak_type());
  CHECK((b + array<std::int32_t>({1, 2})).dtype() == bfloat16);
  CHECK((b + h).dtype() == float32);
  CHECK((b + array<float>({1, 2})).dtype() == float32);
  CHECK((h + array<double>({1, 2})).dtype() == float64);
  CHECK(values(b + h) == std::vector<double>{1.75, 1.0});
  CHECK(values(b * 2.0) == std::vector<double>{3.0, -4.0});
}

TEST_CASE("bfloat16 / float16: names, sizes, kinds") {
  CHECK(dtype_name(bfloat16) == "bfloat16");
  CHECK(dtype_name(float16) == "float16");
  CHECK(itemsize(bfloat16) == 2);
  CHECK(itemsize(float16) == 2);
  CHECK(is_floating(bfloat16));
  CHECK(is_inexact(float16));
  CHECK_FALSE(is_integer(bfloat16));
  CHECK(isdtype(bfloat16, "real floating"));
  CHECK(issubdtype(float16, DTypeCategory::floating));
  CHECK(dtype_of<BFloat16>() == bfloat16);
  CHECK(dtype_of<Float16>() == float16);
  CHECK(complex_dtype(bfloat16) == complex64);
  // numpy's safe casts: the 2-byte floats widen exactly to float32, not to each other.
  CHECK(can_cast(bfloat16, float32));
  CHECK(can_cast(float16, float64));
  CHECK_FALSE(can_cast(bfloat16, float16));
  CHECK_FALSE(can_cast(float32, bfloat16));
  CHECK(can_cast(float32, bfloat16, Casting::same_kind));
  CHECK_FALSE(can_cast(bfloat16, int32, Casting::same_kind));
}

TEST_CASE("creation functions and astype with bfloat16 / float16") {
  const Array z = zeros({2, 3}, bfloat16);
  CHECK(z.dtype() == bfloat16);
  CHECK_FALSE(z.weak_type());
  CHECK(values(z) == std::vector<double>(6, 0.0));
  CHECK(values(ones({2}, float16)) == std::vector<double>{1, 1});
  // full rounds the value once: 0.1 in float16 is 0.0999755859375, in bfloat16 0.10009765625.
  CHECK(values(full({1}, 0.1, float16)) == std::vector<double>{0.0999755859375});
  CHECK(values(full({1}, 0.1, bfloat16)) == std::vector<double>{0.10009765625});
  CHECK(values(full({1}, 1e6, float16)) == std::vector<double>{INFINITY});  // overflow
  CHECK(values(arange(0.0, 2.0, 0.5, bfloat16)) == std::vector<double>{0, 0.5, 1, 1.5});
  CHECK(values(arange(4, float16)) == std::vector<double>{0, 1, 2, 3});
  CHECK(values(linspace(0, 1, 3, true, bfloat16)) == std::vector<double>{0, 0.5, 1});
  CHECK(values(eye(2, -1, 0, float16)) == std::vector<double>{1, 0, 0, 1});
  // astype both ways: float32 -> bfloat16 rounds to nearest even, the way back is exact.
  const Array x = array<float>({1.0f + 0x1p-8f, 1.0f + 3 * 0x1p-8f, 3.0e38f, -0.0f});
  const Array xb = x.astype(bfloat16);
  CHECK(xb.data<BFloat16>()[0].bits == 0x3f80);
  CHECK(xb.data<BFloat16>()[1].bits == 0x3f82);
  CHECK(xb.data<BFloat16>()[3].bits == 0x8000);
  CHECK(values(xb.astype(float32)) ==
        std::vector<double>{1.0, 1.0 + 0x1p-6, static_cast<double>(BFloat16(3.0e38f)), -0.0});
  CHECK(values(x.astype(float16))[2] == INFINITY);
  // bfloat16 -> float16 rounds once (bfloat16 values are exact float32s).
  CHECK(values(full({1}, 1.0 + 0x1p-7, bfloat16).astype(float16)) ==
        std::vector<double>{1.0 + 0x1p-7});
  // Integers: truncation toward zero, and int32 -> bfloat16 through float32 as ml_dtypes.
  CHECK(values(array<float>({2.75f, -2.75f}).astype(bfloat16).astype(int32)) ==
        std::vector<double>{2, -2});
  CHECK(values(array<std::int32_t>({257, 1000}).astype(bfloat16)) ==
        std::vector<double>{256, 1000});
  CHECK(values(array<bool>({true, false}).astype(float16)) == std::vector<double>{1, 0});
  CHECK(values(full({1}, 0.5, float16).astype(bool_)) == std::vector<double>{1});
}

TEST_CASE("item, data and raw buffers of bfloat16 / float16 arrays") {
  const Array b = full({}, 2.5, bfloat16);
  CHECK(b.item<float>() == 2.5f);
  CHECK(b.item<double>() == 2.5);
  CHECK(b.item<int>() == 2);
  CHECK(full({}, 65504, float16).item<float>() == 65504.0f);
  check_error<ValueError>([] { (void)full({}, 70000, bfloat16).item<std::int16_t>(); },
                          {"item", "bfloat16", "int16"});
  check_error<TypeError>([&] { (void)b.data<float>(); }, {"data", "bfloat16", "float32"});
  const std::vector<BFloat16> raw = {BFloat16(1.0f), BFloat16::from_bits(0x7fc0), BFloat16(-0.5f)};
  const Array a = array(raw, {3});
  CHECK(a.dtype() == bfloat16);
  CHECK(a.data<BFloat16>()[1].bits == 0x7fc0);
  const std::vector<Float16> h = {Float16(0.1), Float16(2)};
  CHECK(array(h).dtype() == float16);
  CHECK(array(h).data<Float16>()[0].bits == 0x2e66);  // numpy: np.float16(0.1).view(np.uint16)
  CHECK(Float16(0.1) == Float16(0.1f));
  CHECK_FALSE(BFloat16::from_bits(0x7fc0) == BFloat16::from_bits(0x7fc0));  // NaN != NaN
  CHECK(BFloat16(0.0f) == BFloat16(-0.0f));
}

TEST_CASE("bfloat16 and float16 arrays print as JAX prints them") {
  // bfloat16 is no numpy float: each element is its repr (the float32 value streamed with six
  // significant digits), unpadded, as ml_dtypes prints it.
  CHECK(repr(array<float>({1.0f, 2.5f, -3.14159f, 1e5f}).astype(bfloat16)) ==
        "Array([1, 2.5, -3.14062, 99840], dtype=bfloat16)");
  CHECK(repr(full({}, 0.1, bfloat16)) == "Array(0.100098, dtype=bfloat16)");
  CHECK(repr(array<float>({NAN, -INFINITY, 1e-20f}).astype(bfloat16)) ==
        "Array([nan, -inf, 1.00056e-20], dtype=bfloat16)");
  // float16 is numpy's float16: numpy's float formatting with the digits that read back in
  // float16. Expected strings: numpy 1.24's np.array2string(a, separator=', ',
  // prefix='Array(', suffix=',') of the same arrays.
  CHECK(repr(array<float>({1, 2.5, -3.14159f, 65504}).astype(float16)) ==
        "Array([ 1.00e+00,  2.50e+00, -3.14e+00,  6.55e+04], dtype=float16)");
  CHECK(repr(array<float>({{0.1f, 1e-5f}, {100, INFINITY}}).astype(float16)) ==
        "Array([[1.e-01, 1.e-05],\n       [1.e+02,    inf]], dtype=float16)");
  CHECK(repr(full({}, 0.333, float16)) == "Array(0.333, dtype=float16)");
  CHECK(repr(array<float>({1, 2, 3}).astype(float16)) == "Array([1., 2., 3.], dtype=float16)");
  CHECK(repr(array<float>({NAN, -0.0f, 6e-8f}).astype(float16)) ==
        "Array([    nan, -0.e+00,  6.e-08], dtype=float16)");
}
