// libFuzzer target for the Flax msgpack reader: any input either restores (and then serializes
// and restores again to the same bytes) or throws a linum::Error. Anything else is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include <linum/nn/serialization.hpp>

namespace ser = linum::serialization;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  linum::Tree t;
  try {
    t = ser::msgpack_restore(std::string_view(reinterpret_cast<const char*>(data), size));
  } catch (const linum::Error&) {
    return 0;
  }
  // What was read writes out and reads back to the same bytes.
  const std::string once = ser::msgpack_serialize(t);
  if (ser::msgpack_serialize(ser::msgpack_restore(once)) != once) std::abort();
  return 0;
}
