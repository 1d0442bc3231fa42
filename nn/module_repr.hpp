// What a module's repr() prints of its bound children (nn/module_repr.cpp). Private: included
// only by the library's nn/module*.cpp.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <linum/nn/module_base.hpp>

namespace linum::nn::detail {

// What repr() prints of a bound child: a snapshot of its class name and attributes plus its own
// (live) child list. It holds no module, so parents and children never own each other.
struct ReprNode;
using ChildList = std::vector<std::pair<std::string, std::shared_ptr<const ReprNode>>>;
struct ReprNode {
  std::string type;
  Attributes attributes;
  std::shared_ptr<ChildList> children;
};

// Flax's _module_repr over a class name, its attributes and its bound children.
std::string module_repr(const std::string& type, const Attributes& attrs,
                        const ChildList& children);

}  // namespace linum::nn::detail
