// Leaf-level numerics of the optimizers (moments, bias correction, safe norms, counters), written
// with linum ops so that an update can itself be differentiated or vmapped.
#include <limits>
#include <string>

#include <linum/autodiff/ops/dtype_info.hpp>
#include <linum/optim/base.hpp>
#include <linum/optim/numerics.hpp>

namespace linum::optim {

void throw_no_params(const char* transformation) {
  throw ValueError(std::string(transformation) + ": " + kNoParamsMsg);
}

namespace detail {
Tree none_where_none(const Tree& first, const Tree& other) {
  if (first.is_none()) return Tree();
  if ((first.is_dict() || first.is_frozen_dict()) && other.is_dict()) {
    Tree out = other;
    for (auto& [k, v] : out.as_dict())
      if (auto it = first.as_mapping().find(k); it != first.as_mapping().end())
        v = none_where_none(it->second, v);
    return out;
  }
  if ((first.is_tuple() || first.is_list()) && first.kind() == other.kind() &&
      first.size() == other.size()) {
    Tree out = other;
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = none_where_none(first[i], other[i]);
    return out;
  }
  return other;
}
}  // namespace detail

Array safe_increment(const Array& count) {
  double max = 0;
  switch (count.dtype()) {
    case DType::int32: max = std::numeric_limits<std::int32_t>::max(); break;
    case DType::uint32: max = std::numeric_limits<std::uint32_t>::max(); break;
    case DType::float32: max = std::numeric_limits<float>::max(); break;
    case DType::float64: max = std::numeric_limits<double>::max(); break;
    case DType::bfloat16:
    case DType::float16: max = finfo(count.dtype()).max; break;
    case DType::bool_:
    case DType::complex64:
    case DType::complex128:
      throw TypeError("safe_increment: the counter must be an integer or float array, got " +
                      std::string(dtype_name(count.dtype())));
  }
  // count + (count < max): never computes max + 1, so an int32 counter saturates without overflow.
  Array below = less(count, full({}, max, count.dtype()));
  return add(count, astype(below, count.dtype()));
}

namespace detail {

Array update_moment(const Array& g, const Array& m, double decay, int order) {
  Array gk = order == 1 ? g : power(g, order);
  return (1.0 - decay) * gk + decay * m;
}

Array update_moment_per_elem_norm(const Array& g, const Array& m, double decay, int order) {
  Array norm = order == 2 ? multiply(g, g) : power(abs(g), order);
  return (1.0 - decay) * norm + decay * m;
}

Array bias_correction_denominator(double decay, const Array& count, DType dtype) {
  // decay**count is JAX's default float (float32; float64 for float64 moments, as with x64): a
  // 2-byte decay**count would round to 1 for decays near 1, so optax forms it wide first.
  const DType dt = dtype == float64 ? float64 : float32;
  return 1.0 - power(full({}, decay, dt), astype(count, dt));
}

Array bias_correction(const Array& moment, double decay, const Array& count) {
  // The division happens in the moment's own dtype, as optax's.
  return divide(moment,
                astype(bias_correction_denominator(decay, count, moment.dtype()), moment.dtype()));
}

Array cast(const Array& x, std::optional<DType> dtype) { return dtype ? astype(x, *dtype) : x; }

Array sum_of_squares(const Array& x) { return sum(multiply(x, x)); }

DType dtype_of_leaves(const Arrays& all, const std::string& handler) {
  Arrays leaves;
  for (const Array& x : all)
    if (x.valid()) leaves.push_back(x);
  if (handler != "" && handler != "promote" && handler != "highest" && handler != "lowest")
    throw ValueError("tree_dtype: Invalid value for mixed_dtype_handler='" + handler +
                     "', possible values are: \"\" (None), \"promote\", \"highest\", "
                     "\"lowest\".");
  if (leaves.empty()) return float32;  // jnp.asarray([]).dtype
  DType out = leaves[0].dtype();
  for (std::size_t i = 1; i < leaves.size(); ++i) {
    const DType d = leaves[i].dtype();
    if (handler.empty()) {
      if (d != out)
        throw ValueError("tree_dtype: Expected dtype=" + std::string(dtype_name(out)) +
                         " for leaf " + std::to_string(i) + " but got " + std::string(dtype_name(d)) + ".");
      continue;
    }
    const DType p = promote_types(out, d);
    if (handler == "promote") {
      out = p;
      continue;
    }
    if (p != out && p != d)
      throw ValueError("tree_dtype: Cannot compare dtype of dtype1=" +
                       std::string(dtype_name(out)) + " and dtype2=" + std::string(dtype_name(d)) +
                       ". Neither can be promoted to the other.");
    const DType lower = p == out ? d : out, higher = p == out ? out : d;
    out = handler == "highest" ? higher : lower;
  }
  return out;
}

}  // namespace detail

Array safe_norm(const Array& x, double min_norm, const Axes& axis, bool keepdims) {
  // The second norm sees ones where the first is small, so the gradient stays finite at 0.
  Array norm = sqrt(sum(multiply(x, x), axis, keepdims));
  Array small = norm <= min_norm;
  Array safe_x = where(small, ones_like(x), x);
  Array masked_norm = sqrt(sum(multiply(safe_x, safe_x), axis, keepdims));
  return where(small, full({}, min_norm, masked_norm.dtype()), masked_norm);
}

Array safe_root_mean_squares(const Array& x, double min_rms) {
  // As safe_norm: ones where the rms is small keep the gradient finite at 0.
  Array rms = sqrt(mean(multiply(x, x)));
  Array small = rms <= min_rms;
  Array safe_x = where(small, ones_like(x), x);
  return where(small, full({}, min_rms, rms.dtype()), sqrt(mean(multiply(safe_x, safe_x))));
}

}  // namespace linum::optim
