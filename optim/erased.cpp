// Error messages of the dynamic-state conversion (erased.hpp).
#include <string>

#include <linum/optim/erased.hpp>

namespace linum::optim::detail {

void FromTreeStyle::mismatch(const std::string& want, const Tree& got) const {
  std::string where = root;
  for (const pytree::ChildKey& k : path) {
    if (k.parent == pytree::detail::Category::Dict)
      where += "['" + std::string(k.name) + "']";
    else if (k.parent == pytree::detail::Category::Struct)
      where += "." + std::string(k.name);
    else
      where += "[" + std::to_string(k.index) + "]";
  }
  throw TypeError("GradientTransformation: the state at " + where + " should be " + want +
                  " but is a " + std::string(pytree::kind_name(got.kind())) +
                  "; was it made by this transformation's init?");
}

}  // namespace linum::optim::detail
