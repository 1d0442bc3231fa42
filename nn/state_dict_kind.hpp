// What kind of node a tree is, in the words of the checkpoint errors ("an array", "a string",
// "a dict"): shared by the state-dict walk (nn/state_dict.cpp) and the msgpack writer.
#pragma once

#include <string>

#include <linum/nn/serialization.hpp>

namespace linum::serialization::detail {
std::string kind_of(const Tree& t);
}  // namespace linum::serialization::detail
