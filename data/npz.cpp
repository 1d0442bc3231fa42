// .npz: a zip archive whose members "<name>.npy" are .npy images (numpy/lib/npyio.py).
#include <linum/data/npy.hpp>

#include "npy_codec.hpp"
#include "zip.hpp"

namespace linum::data {
namespace detail {
namespace {

constexpr std::string_view kSuffix = ".npy";

std::map<std::string, Array> parse_npz(std::string_view zip, const Where& where,
                                       const std::shared_ptr<void>& owner) {
  std::map<std::string, Array> arrays;
  std::string scratch;
  for (const ZipMember& m : zip_members(zip, where)) {
    if (m.name.size() <= kSuffix.size() || !m.name.ends_with(kSuffix))
      where.fail(m.data_offset, "member '" + m.name +
                                    "' is not a .npy array (an .npz holds '<name>.npy' members)");
    const std::string key = m.name.substr(0, m.name.size() - kSuffix.size());
    if (arrays.count(key)) where.fail(m.data_offset, "member '" + m.name + "' appears twice");
    const std::string_view bytes = zip_read(zip, m, where, scratch);
    Where inner = where;
    inner.member = m.name;
    inner.base = m.data_offset;
    inner.compressed = m.method != 0;
    // A stored member may share the archive's buffer; an inflated one lives in scratch.
    arrays.emplace(key,
                   parse_npy(bytes.data(), bytes.size(), inner, m.method == 0 ? owner : nullptr));
  }
  return arrays;
}

std::string write_npz(const std::map<std::string, Array>& arrays, bool compressed,
                      std::string_view fn) {
  std::vector<std::pair<std::string, std::string>> members;
  for (const auto& [name, a] : arrays) {
    if (name.empty()) throw ValueError(std::string(fn) + ": an array name must not be empty");
    members.emplace_back(name + std::string(kSuffix), write_npy(a, fn));
  }
  return zip_write(members, compressed, fn);
}

}  // namespace
}  // namespace detail

std::map<std::string, Array> load_npz(const std::string& path) {
  auto file = detail::read_file("load_npz", path);
  return detail::parse_npz(*file, {"load_npz", path}, file);
}

void savez(const std::string& path, const std::map<std::string, Array>& arrays) {
  detail::write_file("savez", path, detail::write_npz(arrays, false, "savez"));
}

void savez_compressed(const std::string& path, const std::map<std::string, Array>& arrays) {
  detail::write_file("savez_compressed", path, detail::write_npz(arrays, true, "savez_compressed"));
}

std::map<std::string, Array> decode_npz(std::span<const std::byte> bytes,
                                        const std::string& source) {
  return detail::parse_npz(
      std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()),
      {"decode_npz", source}, nullptr);
}

std::string encode_npz(const std::map<std::string, Array>& arrays, bool compressed) {
  return detail::write_npz(arrays, compressed, "encode_npz");
}

}  // namespace linum::data
