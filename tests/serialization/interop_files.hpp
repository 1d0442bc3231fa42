// File helpers of the two Python-driven interop checks (interop.cpp, rnn_checkpoint.cpp): the
// work directory their script passes in LINUM_INTEROP_DIR, and whole-file reads and writes.
#pragma once

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include <doctest/doctest.h>

namespace ser_test {

// `script` names the driver that sets the variable, for the message when it is missing.
inline std::string interop_dir(const char* script) {
  const char* d = std::getenv("LINUM_INTEROP_DIR");
  REQUIRE_MESSAGE(d != nullptr, "run through " << script << ", which sets LINUM_INTEROP_DIR");
  return d;
}

inline std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  REQUIRE_MESSAGE(f.good(), "cannot open " << path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

inline void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  REQUIRE(f.good());
}

}  // namespace ser_test
