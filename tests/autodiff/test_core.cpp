// Core engine: grad/vjp/jvp/vmap on the basic ops, checked against closed forms.
#include <doctest/doctest.h>

#include <cmath>
#include <linum/linum.hpp>

namespace test_core {

using linum::Array;

TEST_CASE("grad of sum(sin(x) * x) is cos(x) * x + sin(x)") {
  Array x = linum::array({1.0f, 2.0f, 3.0f});
  auto f = [](const Array& x) { return linum::sum(linum::sin(x) * x); };
  Array g = linum::grad(f)(x);
  for (int i = 0; i < 3; ++i) {
    const float v = static_cast<float>(i + 1);
    CHECK(g.data<float>()[i] == doctest::Approx(std::cos(v) * v + std::sin(v)).epsilon(1e-6));
  }
}

}  // namespace test_core
