// Shared checks of the robustness suite: an error of a given type whose message holds given parts.
#pragma once

#include "support/testing.hpp"

namespace robust {
using linum::testing::check_error;
}  // namespace robust
