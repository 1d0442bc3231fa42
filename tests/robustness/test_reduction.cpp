// Reductions on extreme inputs: long float32 sums stay accurate, empty axes of huge shapes are
// quick.
#include <doctest/doctest.h>

#include <cmath>

#include <linum/autodiff/ops.hpp>

#include "support.hpp"

namespace test_reduction {

using namespace linum;

TEST_CASE("the float32 mean of 2^25 copies of 0.1f is within 1e-6 of 0.1") {
  // Left to right, the float32 accumulator stalls once it is large: the mean came out 1.7% off.
  const Array x = full({std::int64_t{1} << 25}, 0.1, float32);
  const double m = mean(x).item<float>();
  CHECK(std::abs(m - 0.1) / 0.1 < 1e-6);
  const double s = sum(reshape(x, {2, std::int64_t{1} << 24}), Axes{1}).data<float>()[1];
  CHECK(std::abs(s - 0.1 * (1 << 24)) / (0.1 * (1 << 24)) < 1e-6);
}

TEST_CASE("a reduction over an empty axis of a huge shape returns at once") {
  const std::int64_t huge = std::int64_t{1} << 40;
  CHECK(sum(zeros({huge, 0})).item<float>() == 0.0f);
  CHECK(sum(zeros({0, huge}), Axes{0, 1}).item<float>() == 0.0f);
  // Keeping the huge axis needs a huge output: a MemoryError, not a crash.
  robust::check_error<MemoryError>([&] { sum(zeros({huge, 0}), Axes{1}); }, {"bytes"});
}

TEST_CASE("float32 sums over a leading axis of 2^24+ rows are within 1e-6 of the exact sum") {
  // The column path added rows left to right in float32: 1.7% off for 2^24 rows of 0.1f.
  const std::int64_t n = (std::int64_t{1} << 24) + 3;
  const double want = static_cast<double>(0.1f) * static_cast<double>(n);
  auto close = [&](const Array& s, double expect) {
    for (float v : std::vector<float>(s.data<float>(), s.data<float>() + s.size()))
      CHECK(std::abs(v - expect) / expect < 1e-6);
  };
  close(sum(full({n, 2}, 0.1, float32), Axes{0}), want);  // narrow rows: the windowed loop
  close(mean(full({n, 2}, 0.1, float32), Axes{0}), 0.1f);
  const std::int64_t m = std::int64_t{1} << 17;  // wide rows: four rows at a time
  close(sum(full({m, 128}, 0.1, float32), Axes{0}), static_cast<double>(0.1f) * m);
  // Leading reduced axes of a 3-d array take the same path (bias gradients).
  close(sum(full({std::int64_t{1} << 12, std::int64_t{1} << 12, 2}, 0.1, float32), Axes{0, 1}),
        want - 0.3 * 0.1f);
}

}  // namespace test_reduction
