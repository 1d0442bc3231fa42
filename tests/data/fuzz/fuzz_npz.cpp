// libFuzzer target for the .npz reader (zip container, inflate, CRC, .npy members): any input
// either loads (and then writes and reads back to the same bytes, stored and deflated) or throws
// a linum::Error. Anything else is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include <linum/data/npy.hpp>

namespace data = linum::data;

namespace {
std::span<const std::byte> span_of(const std::string& s) {
  return {reinterpret_cast<const std::byte*>(s.data()), s.size()};
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  std::map<std::string, linum::Array> arrays;
  try {
    arrays = data::decode_npz(std::span(reinterpret_cast<const std::byte*>(bytes), size), "fuzz");
  } catch (const linum::Error&) {
    return 0;
  }
  for (bool compressed : {false, true}) {
    const std::string once = data::encode_npz(arrays, compressed);
    if (data::encode_npz(data::decode_npz(span_of(once)), compressed) != once) std::abort();
  }
  return 0;
}
