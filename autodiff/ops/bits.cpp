// bitwise_count as a branch-free population count of the bits (pairs, nibbles, bytes summed in
// place, then the bytes added by one multiplication), from linum's integer ops.
#include <linum/autodiff/ops/bits.hpp>

#include <linum/autodiff/ops/kernel_util.hpp>

namespace linum {

Array bitwise_count(const Array& x) {
  detail::check_valid(x, "bitwise_count");
  if (!is_integer(x.dtype()) && x.dtype() != bool_)
    throw TypeError("bitwise_count: expected an integer or bool array, got " +
                    std::string(dtype_name(x.dtype())));
  // int32 -> uint32 keeps the bits (two's complement), so abs(INT32_MIN) counts one bit.
  Array v = astype(x.dtype() == int32 ? abs(x) : x, uint32);
  auto k = [](double c) { return full({}, c, uint32); };
  v = v - bitwise_and(right_shift(v, k(1)), k(0x55555555));
  v = bitwise_and(v, k(0x33333333)) + bitwise_and(right_shift(v, k(2)), k(0x33333333));
  v = bitwise_and(v + right_shift(v, k(4)), k(0x0F0F0F0F));
  return right_shift(v * k(0x01010101), k(24));
}

}  // namespace linum
