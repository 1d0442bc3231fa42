#include "check_grads.hpp"

namespace test_check_grads {
TEST_CASE("check_grads on elementwise ops and a reduction, with broadcasting") {
  using namespace linum;
  Array a = array({{0.3, -1.2, 2.0}, {0.5, 0.7, -0.4}});
  Array b = array({1.5, -0.5, 0.25});
  testing::check_grads([](const Arrays& x) { return tanh(x[0]) * exp(x[1]) / (cos(x[0]) + 3.0) - x[1]; }, Arrays{a, b});
  testing::check_grads([](const Array& x) { return sum(log(square(x) + 1.0), 1, true); }, a);
}

}  // namespace test_check_grads
