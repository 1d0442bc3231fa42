// Which dtypes the arithmetic ops accept, as JAX's lax dtype rules: subtract and negative take
// numbers only, so bool - bool and -bool are TypeErrors while bool mixed with numbers promotes.
#include <doctest/doctest.h>

#include <linum/linum.hpp>

namespace test_dtype_rules {

using namespace linum;

TEST_SUITE("autodiff.dtype_rules") {
  TEST_CASE("bool - bool and -bool raise TypeError with lax's messages") {
    const Array t = array({true, false});
    REQUIRE(t.dtype() == bool_);
    CHECK_THROWS_WITH_AS(t - t,
                         "subtract: sub does not accept dtype bool at position 0. Accepted dtypes "
                         "at position 0 are subtypes of integer, floating, complexfloating.",
                         TypeError);
    CHECK_THROWS_WITH_AS(subtract(t, Array(true)),
                         "subtract: sub does not accept dtype bool at position 0. Accepted dtypes "
                         "at position 0 are subtypes of integer, floating, complexfloating.",
                         TypeError);
    CHECK_THROWS_WITH_AS(-t,
                         "negative: neg does not accept dtype bool. Accepted dtypes are subtypes "
                         "of integer, floating, complexfloating.",
                         TypeError);
  }

  TEST_CASE("bool mixed with a number promotes and subtracts; logical ops still take bools") {
    const Array t = array({true, false});
    const Array d = t - 1;  // bool and a weak int: int32, as jnp
    CHECK(d.dtype() == int32);
    CHECK(d.data<std::int32_t>()[0] == 0);
    CHECK(d.data<std::int32_t>()[1] == -1);
    const Array f = 1.5f - t;
    CHECK(f.dtype() == float32);
    CHECK(f.data<float>()[1] == 1.5f);
    CHECK((-astype(t, int32)).data<std::int32_t>()[0] == -1);
  }
}

}  // namespace test_dtype_rules
