// libFuzzer target for the .npy reader: any input either loads (and then writes and reads back
// to the same bytes) or throws a linum::Error. Anything else is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include <linum/data/npy.hpp>

namespace data = linum::data;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  linum::Array a;
  try {
    a = data::decode_npy(std::span(reinterpret_cast<const std::byte*>(bytes), size), "fuzz");
  } catch (const linum::Error&) {
    return 0;
  }
  const std::string once = data::encode_npy(a);
  const std::string twice = data::encode_npy(
      data::decode_npy(std::span(reinterpret_cast<const std::byte*>(once.data()), once.size())));
  if (once != twice) std::abort();
  return 0;
}
