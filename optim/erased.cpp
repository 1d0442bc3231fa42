// Error messages of the dynamic-state conversion (erased.hpp).
#include <string>

#include <linum/optim/erased.hpp>

namespace linum::optim::detail {

void FromTreeStyle::mismatch(const std::string& want, const Tree& got) const {
  using pytree::detail::cat;
  std::string where = root;
  for (const pytree::ChildKey& k : path) {
    if (k.parent == Category::Dict)
      where += cat("['", k.name, "']");
    else if (k.parent == Category::Struct)
      where += cat(".", k.name);
    else
      where += cat("[", k.index, "]");
  }
  throw TypeError("GradientTransformation: the state at " + where + " should be " + want +
                  " but is a " + std::string(pytree::kind_name(got.kind())) +
                  "; was it made by this transformation's init?");
}

}  // namespace linum::optim::detail
