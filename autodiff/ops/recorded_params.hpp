// The parameters of recorded primitives that jit's program rewrites reason about
// (autodiff/jit_rewrite.cpp, jit_fusion.cpp). Private to those files and the ops defining the
// primitives.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include <linum/autodiff/ops/linalg.hpp>

namespace linum {
class Primitive;
}

namespace linum::detail {

// p's dimension numbers (non-negative, validated) when p is dot_general, else nullptr
// (ops/linalg.cpp).
const DotDimensionNumbers* dot_general_dims(const Primitive& p);

// The pieces [starts[i], starts[i] + sizes[i]) of `axis` that p takes, when p is split
// (ops/shape.cpp).
struct SplitPieces {
  int axis;
  const std::vector<std::int64_t>& starts;
  const std::vector<std::int64_t>& sizes;
};
std::optional<SplitPieces> split_pieces_of(const Primitive& p);

}  // namespace linum::detail
