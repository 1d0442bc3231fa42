#include <linum/lift/jit.hpp>

#include <sstream>

namespace linum::lift::detail {

std::string jit_fingerprint(const std::vector<Scope>& scopes) {
  std::ostringstream os;
  for (std::size_t i = 0; i < scopes.size(); ++i) {
    os << (i ? "; " : "") << "mutable=" << scopes[i].mutable_filter();
    for (const auto& [flag, on] : scopes[i].flags()) os << ' ' << flag << '=' << on;
  }
  return os.str();
}

}  // namespace linum::lift::detail
