// Private to data/: one .npy image parsed from or written to memory, shared by the .npy and the
// .npz functions (an .npz member is a .npy image inside a zip archive).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include <linum/autodiff/array.hpp>

#include "file_io.hpp"

namespace linum::data::detail {

// The array held by the n bytes at `bytes`; errors point into the file through `where`. With an
// owner (which keeps the bytes alive), aligned little-endian C-order data of linum's own dtypes
// is shared instead of copied. `descr` (optional) receives the file's numpy dtype string and its
// offset.
struct NpyDescr {
  std::string text;
  std::uint64_t offset = 0;
};
Array parse_npy(const char* bytes, std::size_t n, const Where& where,
                const std::shared_ptr<void>& owner, NpyDescr* descr = nullptr);

// The .npy image np.save writes for `a`; fn names the caller in errors.
std::string write_npy(const Array& a, std::string_view fn);

}  // namespace linum::data::detail
