// libFuzzer target for the safetensors reader: any input either loads (and then saves and loads
// back to the same bytes) or throws a linum::Error. Anything else is a finding.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include <linum/nn/safetensors.hpp>

namespace st = linum::safetensors;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  st::Tensors t;
  st::Metadata meta;
  try {
    t = st::load_safetensors(std::span(reinterpret_cast<const std::byte*>(data), size), &meta);
  } catch (const linum::Error&) {
    return 0;
  }
  const std::string once = st::save_safetensors(t, meta);
  st::Metadata meta2;
  const std::string twice = st::save_safetensors(
      st::load_safetensors(std::span(reinterpret_cast<const std::byte*>(once.data()), once.size()),
                           &meta2),
      meta2);
  if (once != twice) std::abort();
  return 0;
}
