// Private to data/: the subset of the zip format (PKWARE's APPNOTE) that .npz files use: stored
// and deflated members, Zip64 end records and sizes; no encryption, no multi-part archives.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "file_io.hpp"

namespace linum::data::detail {

struct ZipMember {
  std::string name;
  std::uint16_t method = 0;  // 0 stored, 8 deflated
  std::uint32_t crc = 0;
  std::uint64_t data_offset = 0;  // of the member's (compressed) bytes in the archive
  std::uint64_t compressed_size = 0, size = 0;
};

// The members of the archive `zip`, in central-directory order, each checked to lie inside it.
std::vector<ZipMember> zip_members(std::string_view zip, const Where& where);

// A member's bytes, CRC-checked: a view into `zip` when stored, else inflated into `scratch`.
std::string_view zip_read(std::string_view zip, const ZipMember& m, const Where& where,
                          std::string& scratch);

// An archive of (name, bytes) members, stored or deflated, as Python's zipfile writes them.
std::string zip_write(const std::vector<std::pair<std::string, std::string>>& members, bool deflate,
                      std::string_view fn);

}  // namespace linum::data::detail
