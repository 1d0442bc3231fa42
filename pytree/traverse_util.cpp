// Key joining and splitting for traverse_util's `sep` keys.
#include <linum/pytree/traverse_util.hpp>

namespace linum::traverse_util::detail {

std::string join(const Path& path, std::string_view sep) {
  std::string out;
  for (std::size_t i = 0; i < path.size(); ++i) {
    if (i) out += sep;
    out += path[i];
  }
  return out;
}

Path split(std::string_view key, std::string_view sep) {
  if (sep.empty()) throw ValueError("unflatten_dict: empty separator");
  Path out;
  std::size_t start = 0;
  while (true) {
    const std::size_t at = key.find(sep, start);
    if (at == std::string_view::npos) {
      out.emplace_back(key.substr(start));
      return out;
    }
    out.emplace_back(key.substr(start, at - start));
    start = at + sep.size();
  }
}

std::string path_repr(const Path& path) { return pytree::repr_as_tuple(path); }

}  // namespace linum::traverse_util::detail
