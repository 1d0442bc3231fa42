// Private to data/: whole-file reads and writes whose errors name the calling function, the file
// and the system's reason, and the "fn: file: at byte N: what" form of every format error.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include <linum/error.hpp>

namespace linum::data::detail {

// The bytes of `path`; ValueError naming fn and the file when it cannot be read.
std::shared_ptr<std::string> read_file(std::string_view fn, const std::string& path);
// Writes `bytes` to `path` (replacing it); ValueError naming fn and the file on failure.
void write_file(std::string_view fn, const std::string& path, std::string_view bytes);

// 'text' (its first 40 characters), for quoting input in messages. Built by appending: GCC 12
// warns falsely (-Wrestrict) on "'" + std::string.
std::string quoted(std::string_view text);

// Where a reader is: the function, the file (and an archive member), and the file offset of
// byte 0 of the buffer being parsed, so that every error points at a byte of the file.
struct Where {
  Where(std::string fn_, std::string file_) : fn(std::move(fn_)), file(std::move(file_)) {}
  std::string fn;
  std::string file;
  std::string member;       // "" unless inside an archive
  std::uint64_t base = 0;   // file offset of buffer byte 0
  bool compressed = false;  // offsets count decompressed bytes, not bytes of the file

  // The offset as messages count it: in the file, or in the decompressed data.
  std::uint64_t pos(std::uint64_t offset) const { return compressed ? offset : base + offset; }
  std::string at(std::uint64_t offset) const;  // "fn: file: at byte N: " (member-aware)
  template <class E = ValueError>
  [[noreturn]] void fail(std::uint64_t offset, const std::string& what) const {
    throw E(at(offset) + what);
  }
};

}  // namespace linum::data::detail
