// lazy_init's check that no variable depends on an abstract input (flax LazyInitError).
#include <linum/lift/lazy_init.hpp>

#include <sstream>

namespace linum::lift::detail {

void check_lazy_variables(const Tree& variables) {
  for (const Array& leaf : pytree::tree_leaves<Array>(variables)) {
    if (!linum::detail::is_abstract(leaf)) continue;
    std::ostringstream aval;
    aval << shape_dtype(leaf);
    throw LazyInitError("Lazy init encountered a value that could with the given inputs (shape: " +
                        std::string("ShapedArray(") + aval.str() + ")).");
  }
}

}  // namespace linum::lift::detail
