// The parameters of a recorded dot_general, for program rewrites that reason about contractions
// (jit's, autodiff/jit_rewrite.cpp). Private to those files and ops/linalg.cpp.
#pragma once

#include <linum/autodiff/ops/linalg.hpp>

namespace linum {
class Primitive;
}

namespace linum::detail {

// p's dimension numbers (non-negative, validated) when p is dot_general, else nullptr.
const DotDimensionNumbers* dot_general_dims(const Primitive& p);

}  // namespace linum::detail
