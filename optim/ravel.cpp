// ravel_pytree's flat vector: concatenation of the raveled leaves in their common dtype.
#include <string>

#include <linum/autodiff/ops.hpp>
#include <linum/optim/ravel.hpp>
#include <linum/optim/wrappers.hpp>

namespace linum::optim::detail {

namespace {
// The dtype ravel_leaves concatenates in.
DType common_dtype(const Arrays& leaves) {
  bool any = false, weak = false;
  DType dtype = float32;
  for (const Array& x : leaves) {
    if (!x.valid()) continue;
    if (!any) {
      dtype = x.dtype(), weak = x.weak_type(), any = true;
      continue;
    }
    const ResultType r = result_type(dtype, weak, x.dtype(), x.weak_type());
    dtype = r.dtype, weak = r.weak_type;
  }
  return dtype;
}
}  // namespace

Array ravel_leaves(const Arrays& leaves) {
  const DType dtype = common_dtype(leaves);
  Arrays flat;
  for (const Array& x : leaves)
    if (x.valid()) flat.push_back(astype(ravel(x), dtype));
  if (flat.empty()) return zeros({0}, float32);
  return flat.size() == 1 ? flat[0] : concatenate(flat);
}

Arrays unravel_leaves(const Array& flat, const Arrays& like, const char* fn) {
  std::int64_t total = 0;
  for (const Array& x : like)
    if (x.valid()) total += x.size();
  if (flat.ndim() != 1 || flat.shape()[0] != total)
    throw ValueError(std::string(fn) + ": the unravel function expected an array of shape (" +
                     std::to_string(total) + ",), got shape " + shape_str(flat.shape()));
  const DType dtype = common_dtype(like);
  if (flat.dtype() != dtype)
    throw TypeError(std::string(fn) + ": unravel function given array of dtype " +
                    std::string(dtype_name(flat.dtype())) + " but expected dtype " +
                    std::string(dtype_name(dtype)));
  // wrappers' flatten's inverse slices the leaves back; each then takes its own dtype again.
  Arrays out = unflatten_leaves(flat, like);
  for (std::size_t k = 0; k < out.size(); ++k)
    if (out[k].valid()) out[k] = astype(out[k], like[k].dtype());
  return out;
}

}  // namespace linum::optim::detail
