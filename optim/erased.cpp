// Error messages of the dynamic-state conversion (erased.hpp).
#include <string>

#include <linum/optim/erased.hpp>

namespace linum::optim::detail {

void throw_from_tree(const std::string& where, const std::string& want, const Tree& got) {
  throw TypeError("GradientTransformation: the state at " + where + " should be " + want +
                  " but is a " + std::string(pytree::kind_name(got.kind())) +
                  "; was it made by this transformation's init?");
}

}  // namespace linum::optim::detail
