// optax's skip predicates for MultiSteps (accumulation.hpp).
#include <linum/optim/accumulation.hpp>

namespace linum::optim {

std::pair<Array, Tree> skip_not_finite(const Tree& updates, const Array&, const Tree&) {
  Array num = zeros({}, int32);
  for (const Array& x : pytree::tree_leaves<Array>(updates))
    if (x.valid()) num = num + sum(astype(logical_not(isfinite(x)), int32));
  Array skip = num > 0;
  return {skip, Tree{{"should_skip", skip}, {"num_not_finite", num}}};
}

std::pair<Array, Tree> skip_large_updates(const Tree& updates, const Array&, const Tree&,
                                          double max_squared_norm) {
  Array norm_sq = zeros({}, float32);
  bool first = true;
  for (const Array& x : pytree::tree_leaves<Array>(updates)) {
    if (!x.valid()) continue;
    Array s = sum(x * x);
    norm_sq = first ? s : norm_sq + s;
    first = false;
  }
  Array skip = logical_not(norm_sq < max_squared_norm);
  return {skip, Tree{{"should_skip", skip}, {"norm_squared", norm_sq}}};
}

}  // namespace linum::optim
