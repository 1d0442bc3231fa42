// Shapes whose element count or byte size overflows, and allocations that cannot succeed: each
// gives a linum::Error naming the op, never a crash or a silently wrong (wrapped) shape.
#include <doctest/doctest.h>

#include <limits>
#include <string>

#include <linum/autodiff/ops.hpp>
#include <linum/autodiff/transforms.hpp>

#include "support.hpp"

namespace test_overflow {

using namespace linum;

namespace {
constexpr std::int64_t kHuge = std::int64_t{1} << 40;
}

TEST_CASE("creation functions reject shapes whose element count overflows int64") {
  // 2^40 * 2^40 wraps to 0 in int64: the unchecked product made an empty buffer of that shape.
  robust::check_error<ValueError>([] { zeros({kHuge, kHuge}); }, {"zeros", "too large"});
  robust::check_error<ValueError>([] { ones({kHuge, kHuge, 0}); }, {"ones", "too large"});
  robust::check_error<ValueError>([] { full({kHuge, kHuge}, 1.0); }, {"full"});
  robust::check_error<ValueError>([] { empty({kHuge, kHuge}); }, {"too large"});
  robust::check_error<ValueError>([] { eye(kHuge); }, {"eye", "too large"});
  robust::check_error<ValueError>([] { arange(0.0, 1e300, 1.0); }, {"arange"});
}

TEST_CASE("a byte size beyond int64 is an error even when the element count fits") {
  // 2^62 float64 elements: 2^65 bytes.
  robust::check_error<ValueError>([] { zeros({std::int64_t{1} << 62}, float64); },
                                  {"zeros", "byte size"});
}

// Buffers come from posix_memalign, which returns null here (under AddressSanitizer too, with
// the allocator_may_return_null=1 of main.cpp).
TEST_CASE("an allocation that fails is a MemoryError naming the op and the byte count") {
  // 2^41 float32 elements = 8 TiB: beyond the suite's address-space cap (and any machine here).
  const std::int64_t n = std::int64_t{1} << 41;
  robust::check_error<MemoryError>([&] { zeros({n}); }, {"zeros", "8796093022208 bytes"});
  robust::check_error<MemoryError>([&] { linspace(0, 1, n); }, {"linspace"});
  // Inside a kernel, the primitive's name.
  robust::check_error<MemoryError>([&] { broadcast_to(Array(1.0f), {n}) + 1.0f; },
                                   {"broadcast_in_dim", "bytes"});
}

TEST_CASE("reshape of an empty array into a shape whose size wraps to 0 is rejected") {
  robust::check_error<ValueError>([] { reshape(zeros({0}), {kHuge, kHuge}); }, {"reshape"});
  robust::check_error<ValueError>([] { reshape(zeros({0}), {kHuge, kHuge, -1}); }, {"reshape"});
  CHECK(reshape(zeros({0, 3}), {3, 0}).shape() == Shape{3, 0});
}

TEST_CASE("broadcast_to a shape whose size overflows is rejected") {
  robust::check_error<ValueError>(
      [] {
        broadcast_to(zeros({1}), {kHuge, kHuge});
      },
      {"broadcast_to", "too large"});
}

TEST_CASE("concatenate and stack reject a total length that overflows int64") {
  // Empty pieces hold any length: their sum along the axis wraps to a negative dimension.
  const Array a = zeros({0, std::int64_t{1} << 62});
  robust::check_error<ValueError>([&] { concatenate({a, a, a, a}, 1); }, {"concatenate"});
  robust::check_error<ValueError>([&] { concatenate({a, a}, 1); }, {"concatenate"});
  CHECK(concatenate({a, a}, 0).shape() == Shape{0, std::int64_t{1} << 62});
}

TEST_CASE("conv and reduce_window reject dilations and paddings whose sizes overflow") {
  const Array x = ones({1, 4, 1}), w = ones({3, 1, 1});
  ConvOptions o;
  o.rhs_dilation = {std::int64_t{1} << 62};
  robust::check_error<ValueError>([&] { conv_general_dilated(x, w, o); },
                                  {"conv_general_dilated", "overflows"});
  ConvOptions o2;
  o2.lhs_dilation = {std::int64_t{1} << 62};
  robust::check_error<ValueError>([&] { conv_general_dilated(x, w, o2); },
                                  {"conv_general_dilated", "overflows"});
  const std::int64_t big = std::numeric_limits<std::int64_t>::max() - 1;
  const Padding pad(std::vector<std::pair<std::int64_t, std::int64_t>>{{0, 0}, {big, big}, {0, 0}});
  robust::check_error<ValueError>(
      [&] {
        reduce_window(x, WindowReduce::sum, {1, 1, 1}, {1, 1, 1}, pad);
      },
      {"reduce_window", "overflows"});
}

}  // namespace test_overflow
