// jnp.bitwise_count: the number of set bits of |x| per entry.
#pragma once

#include <linum/autodiff/array.hpp>

namespace linum {

// jnp.bitwise_count of an integer or bool array: the 1 bits of abs(x) (numpy's rule; the lowest
// int32 has one). The counts are uint32: JAX's are uint8, a dtype linum does not have.
Array bitwise_count(const Array& x);

}  // namespace linum
