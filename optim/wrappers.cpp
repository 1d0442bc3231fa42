// Helpers of wrappers.hpp: a condition's truth on the host and flatten's raveling.
#include <string>

#include <linum/optim/wrappers.hpp>

namespace linum::optim::detail {

bool condition_true(const Array& c, const char* fn) {
  if (!c.valid() || c.size() != 1)
    throw ValueError(std::string(fn) + ": the condition must be a scalar, got " +
                     (c.valid() ? "shape " + shape_str(c.shape()) : std::string("an empty Array")));
  return c.concrete().item<bool>();
}

Array flatten_leaves(const Arrays& leaves) {
  Arrays flat;
  for (const Array& x : leaves)
    if (x.valid()) flat.push_back(x.reshape({x.size()}));
  if (flat.empty()) return zeros({0}, float32);
  return concatenate(flat, 0);
}

Arrays unflatten_leaves(const Array& flat, const Arrays& like) {
  Arrays out;
  std::int64_t offset = 0;
  for (const Array& x : like) {
    if (!x.valid()) {
      out.emplace_back();
      continue;
    }
    out.push_back(lax_slice(flat, {offset}, {offset + x.size()}).reshape(x.shape()));
    offset += x.size();
  }
  if (offset != flat.size())
    throw ValueError("flatten: the inner transformation returned " + std::to_string(flat.size()) +
                     " elements for " + std::to_string(offset));
  return out;
}

}  // namespace linum::optim::detail
