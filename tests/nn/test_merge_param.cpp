// nn::merge_param (flax.linen.merge_param) and the layers that merge a field with a call argument
// through it: exactly one of the two is given, with Flax's error wording otherwise.
#include <doctest/doctest.h>

#include <optional>
#include <string>

#include <linum/linum.hpp>
#include <linum/nn/nn.hpp>

namespace test_merge_param {

using namespace linum;

TEST_CASE("merge_param takes the one given, and rejects both or neither as Flax does") {
  CHECK(nn::merge_param<int>("rate", 3, std::nullopt) == 3);
  CHECK(nn::merge_param<int>("rate", std::nullopt, 4) == 4);
  CHECK_THROWS_WITH_AS(nn::merge_param<int>("rate", 3, 4),
                       "merge_param: parameter \"rate\" was passed to the constructor and at call "
                       "time. Should be passed just once.",
                       ValueError);
  CHECK_THROWS_WITH_AS(nn::merge_param<int>("rate", std::nullopt, std::nullopt),
                       "merge_param: parameter \"rate\" must be passed to the constructor or at "
                       "call time.",
                       ValueError);
}

TEST_CASE("Dropout, BatchNorm and Einsum merge their field and call argument through it") {
  Array x = ones({2, 3});
  nn::Dropout both(0.5);
  both.deterministic = true;
  CHECK_THROWS_WITH_AS(both.init(random::key(0), x, std::optional<bool>(true)),
                       doctest::Contains("Dropout: parameter \"deterministic\" was passed"),
                       ValueError);
  CHECK_THROWS_WITH_AS(nn::Dropout(0.5).init(random::key(0), x),
                       doctest::Contains("Dropout: parameter \"deterministic\" must be passed"),
                       ValueError);
  CHECK_THROWS_WITH_AS(nn::BatchNorm().init(random::key(0), x),
                       doctest::Contains("BatchNorm: parameter \"use_running_average\" must"),
                       ValueError);
}

}  // namespace test_merge_param
