// Transforms on extreme inputs: tape nodes with many inputs, batching rules' outputs.
#include <doctest/doctest.h>

#include <linum/autodiff/ops.hpp>
#include <linum/autodiff/primitive.hpp>
#include <linum/autodiff/transforms.hpp>

#include "support.hpp"

namespace test_transforms {

using namespace linum;

TEST_CASE("grad through a concatenate of 70,000 pieces sends a cotangent to every piece") {
  // The tape stored input counts in 16 bits: 70,000 wrapped to 4,464 and most pieces got nothing.
  constexpr std::int64_t n = 70000;
  const Array w = arange(n, float64);
  auto f = [&](const Array& x) {
    Arrays pieces(static_cast<std::size_t>(n), x);
    return sum(concatenate(pieces, 0) * w);
  };
  const Array g = grad(f)(array<double>({1.0}));
  // d/dx sum_i w_i x = sum_i i = n (n - 1) / 2, exactly representable in float64.
  CHECK(g.item<double>() == static_cast<double>(n) * (n - 1) / 2);
}

namespace {
// An identity primitive whose batching rule lies about its outputs in one of two ways.
struct BadRule final : Primitive {
  bool wrong_count;
  explicit BadRule(bool c) : wrong_count(c) {}
  const char* name() const override { return "bad_rule"; }
  Arrays eval(std::span<const Array> in) const override { return {in[0]}; }
  Batched vmap(std::span<const Array> in, std::span<const int>) const override {
    if (wrong_count) return {{in[0], in[0]}, {0}};
    return {{in[0]}, {1}};  // axis 1 is not the batch axis of a (3, 2) value batched at 0
  }
};
}  // namespace

TEST_CASE("BatchTrace checks a batching rule's outputs against its batch dims") {
  const Array x = ones({3, 2});
  for (bool count : {true, false}) {
    const PrimPtr p = std::make_shared<const BadRule>(count);
    robust::check_error<Error>([&] { vmap([&](const Array& a) { return bind1(p, {a}); })(x); },
                               {"batching rule of bad_rule"});
  }
}

}  // namespace test_transforms
