// Whole-file IO for the data readers, and the shared shape of their error messages.
#include "file_io.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace linum::data::detail {

std::shared_ptr<std::string> read_file(std::string_view fn, const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw ValueError(std::string(fn) + ": " + path + ": is a directory, not a file");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw ValueError(std::string(fn) + ": " + path + ": cannot open the file (" +
                     std::strerror(errno) + ")");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw ValueError(std::string(fn) + ": " + path + ": read error");
  return std::make_shared<std::string>(std::move(ss).str());
}

void write_file(std::string_view fn, const std::string& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out)
    throw ValueError(std::string(fn) + ": " + path + ": cannot open the file for writing (" +
                     std::strerror(errno) + ")");
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) throw ValueError(std::string(fn) + ": " + path + ": write error");
}

std::string quoted(std::string_view text) {
  std::string s = "'";
  s.append(text.substr(0, 40));
  s += '\'';
  return s;
}

std::string Where::at(std::uint64_t offset) const {
  std::string s = fn + ": " + file + ": ";
  if (!member.empty()) s += "member '" + member + "': ";
  s += "at byte " + std::to_string(pos(offset));
  s += compressed ? " of the decompressed data: " : ": ";
  return s;
}

}  // namespace linum::data::detail
