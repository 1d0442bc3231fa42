// swap_collection's map: the two named collections trade places (flax/core/lift.py).
#include <linum/lift/transforms_vars.hpp>

namespace linum::lift {

Tree swap_collections(const Tree& vars, const std::string& col_a, const std::string& col_b) {
  if (!vars.is_dict()) throw TypeError("swap_collection: expected a dict of collections");
  Tree out = Tree::dict();
  for (const auto& [col, v] : vars.as_dict()) {
    if (col == col_a) {
      out[col_b] = v;
    } else if (col == col_b) {
      out[col_a] = v;
    } else {
      out[col] = v;
    }
  }
  return out;
}

}  // namespace linum::lift
