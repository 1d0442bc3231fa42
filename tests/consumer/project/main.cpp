// A consumer's program: differentiates a function with linum pulled in as a subproject.
#include <cmath>
#include <cstdio>

#include <linum/linum.hpp>

int main() {
  using linum::Array;
  Array x = linum::array({0.5f, 1.0f});
  Array g = linum::grad([](const Array& v) { return linum::sum(linum::sin(v) * v); })(x);
  const float want = std::cos(1.0f) + std::sin(1.0f);
  const float got = g.data<float>()[1];
  std::printf("consumer: grad = %g (want %g)\n", got, want);
  return std::abs(got - want) < 1e-5f ? 0 : 1;
}
