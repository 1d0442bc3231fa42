// Flax's _indent, the one non-template piece of FrozenDict.pretty_repr.
#include <linum/pytree/frozen_dict.hpp>

namespace linum::pytree::detail {

std::string indent_lines(const std::string& x, int n) {
  const std::string pad(static_cast<std::size_t>(n), ' ');
  std::string out;
  std::size_t start = 0;
  while (start < x.size()) {
    std::size_t nl = x.find('\n', start);
    if (nl == std::string::npos) nl = x.size();
    out += pad;
    out.append(x, start, nl - start);
    out += '\n';
    start = nl + 1;
  }
  return out;
}

}  // namespace linum::pytree::detail
