// Which scopes a linen transform lifts (nn/transforms_scopes.hpp): scope identity and nesting.
#include <linum/nn/transforms_scopes.hpp>

#include <algorithm>

namespace linum::nn::detail {

bool scope_within(const Scope& s, const Scope& outer) {
  const auto& p = s.path();
  const auto& q = outer.path();
  return p.size() >= q.size() && std::equal(q.begin(), q.end(), p.begin());
}

int find_scope(const std::vector<Scope>& scopes, const Scope& s) {
  for (std::size_t i = 0; i < scopes.size(); ++i)
    if (scopes[i] == s) return static_cast<int>(i);
  return -1;
}

}  // namespace linum::nn::detail
