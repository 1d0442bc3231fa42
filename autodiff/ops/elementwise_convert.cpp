// convert_element_type (astype) and the dtype promotion every op applies to its operands:
// jnp's result_type of two arrays, weak scalars, and the conversion to a promoted dtype.
#include <linum/autodiff/ops/elementwise_rules.hpp>
#include <linum/autodiff/trace.hpp>

namespace linum {
namespace detail {
namespace {

// astype: the VJP casts the cotangent back; integer inputs get no gradient. `weak` is the
// result's weak type (astype gives strong arrays; promotion of weak operands keeps them weak).
struct Convert final : Primitive {
  DType to;
  bool weak;
  Convert(DType d, bool weak_type) : to(d), weak(weak_type) {}
  const char* name() const override { return "convert_element_type"; }
  bool handles_reduced_floats() const override { return true; }
  Avals abstract_eval(std::span<const ShapeDtype> in) const override { return {{in[0].shape, to}}; }
  bool weak_type_rule(bool) const override { return weak; }
  void print_params(std::ostream& os) const override {
    os << "new_dtype=" << to << " weak_type=" << (weak ? "True" : "False");
  }
  Arrays eval(std::span<const Array> in) const override {
    const Array& x = in[0];
    return {from_buffer(in_ptr<std::uint8_t>(x), x.shape(), x.dtype(), to)};
  }
  Arrays jvp(std::span<const Array>, std::span<const Array> t, std::span<const Array>) const override {
    return {is_inexact(to) && t[0].valid() ? astype(t[0], to) : Array()};
  }
  Arrays vjp(std::span<const Array> p, std::span<const Array> ct, std::span<const Array>) const override {
    return {is_inexact(p[0].dtype()) && ct[0].valid() ? astype(ct[0], p[0].dtype()) : Array()};
  }
  Batched vmap(std::span<const Array> in, std::span<const int> bdims) const override {
    return {{convert_element_type(in[0], to, weak)}, {bdims[0]}};
  }
};

}  // namespace

Array weak_scalar(double value, DType scalar_kind, const Array& like) {
  check_valid(like, "weak_scalar");
  return make_scalar(value, result_type(like.dtype(), like.weak_type(), scalar_kind, true).dtype, true);
}

ResultType result_type(const Array& a, const Array& b) {
  return linum::result_type(a.dtype(), a.weak_type(), b.dtype(), b.weak_type());
}

Array convert_element_type(const Array& x, DType dtype, bool weak_type) {
  check_valid(x, "convert_element_type");
  weak_type = weak_type && dtype != bool_;
  if (x.dtype() == dtype && x.weak_type() == weak_type) return x;
  return bind1(std::make_shared<const Convert>(dtype, weak_type), {x});
}

Array promote_to(const Array& x, ResultType r) {
  return x.dtype() == r.dtype ? x : convert_element_type(x, r.dtype, r.weak_type);
}

Arrays bind_in_float32(const PrimPtr& prim, std::span<const Array> in) {
  DType reduced = float32;
  bool float32_operand = false;  // then a float32 output may be the primitive's own choice
  Arrays wide;
  wide.reserve(in.size());
  for (const Array& a : in) {
    float32_operand = float32_operand || a.dtype() == float32;
    if (is_reduced_float(a.dtype())) reduced = a.dtype();
    wide.push_back(is_reduced_float(a.dtype()) ? convert_element_type(a, float32, a.weak_type())
                                               : a);
  }
  Arrays outs = bind(prim, wide);
  if (!float32_operand)
    for (Array& o : outs)
      if (o.valid() && o.dtype() == float32) o = convert_element_type(o, reduced, o.weak_type());
  return outs;
}

}  // namespace detail

using namespace detail;

Array astype(const Array& x, DType dtype) {
  check_valid(x, "astype");
  return convert_element_type(x, dtype, false);
}

}  // namespace linum
