// Default rules of Primitive: a missing rule is a clear error, never a wrong answer.
#include <linum/autodiff/primitive.hpp>

#include <string>

namespace linum {

Array Primitive::eval1(std::span<const Array> in) const {
  Arrays outs = eval(in);
  return std::move(outs.front());
}

Array Primitive::eval_binary(const Array& a, const Array& b) const {
  const Array in[] = {a, b};
  return eval1(in);
}

Arrays Primitive::jvp(std::span<const Array>, std::span<const Array>, std::span<const Array>) const {
  throw NotImplementedError(std::string("jvp of ") + name() + " is not implemented");
}

Arrays Primitive::vjp(std::span<const Array>, std::span<const Array>, std::span<const Array>) const {
  throw NotImplementedError(std::string("vjp of ") + name() + " is not implemented");
}

Arrays Primitive::vjp_needed(std::span<const Array> primals, std::span<const Array> cotangents,
                             std::span<const Array> outs, std::span<const bool>) const {
  return vjp(primals, cotangents, outs);
}

Avals Primitive::abstract_eval(std::span<const ShapeDtype>) const {
  throw NotImplementedError(std::string("abstract evaluation (eval_shape) of ") + name() +
                            " is not implemented");
}

std::ostream& operator<<(std::ostream& os, const ShapeDtype& a) {
  os << a.dtype << '[';
  for (std::size_t i = 0; i < a.shape.size(); ++i) os << (i ? "," : "") << a.shape[i];
  return os << ']';
}

Batched Primitive::vmap(std::span<const Array>, std::span<const int>) const {
  throw NotImplementedError(std::string("vmap of ") + name() + " is not implemented");
}

}  // namespace linum
