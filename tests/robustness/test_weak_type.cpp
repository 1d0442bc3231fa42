// JAX's weak types: a C++ scalar turned into an Array (Array(2.0), a scalar operand) is weakly
// typed, takes the dtype of the array it meets, and results computed only from weak values stay
// weak. Before the flag, multiply(x_f32, Array(2.0)) silently widened x to float64.
#include <doctest/doctest.h>

#include <linum/autodiff/eval_shape.hpp>
#include <linum/autodiff/ops.hpp>
#include <linum/autodiff/transforms.hpp>

namespace test_weak_type {

using namespace linum;

TEST_CASE("C++ scalars become weakly typed arrays; creation functions and astype give strong ones") {
  CHECK(Array(2.0).weak_type());
  CHECK(Array(2.0).dtype() == float64);
  CHECK(Array(2.0f).weak_type());
  CHECK(Array(3).weak_type());
  CHECK_FALSE(Array(true).weak_type());  // bool has no weak form in JAX's lattice
  CHECK_FALSE(zeros({2}).weak_type());
  CHECK_FALSE(full({2}, 1.5).weak_type());
  CHECK_FALSE(array({1.0f, 2.0f}).weak_type());
  const Array s = astype(Array(2.0), float64);  // same dtype: a strong copy, as x.astype does
  CHECK_FALSE(s.weak_type());
  CHECK(s.item<double>() == 2.0);
  CHECK(Array(2.0).weak_type());  // the source is not modified
}

TEST_CASE("a weak operand takes the strong operand's dtype when that is of its kind or above") {
  const Array x = array({1.0f, 2.0f});
  const Array y = multiply(x, Array(2.0));  // jnp.multiply(x_f32, 2.0)
  CHECK(y.dtype() == float32);
  CHECK_FALSE(y.weak_type());
  CHECK(y.data<float>()[1] == 4.0f);
  CHECK(add(Array(0.5), x).dtype() == float32);
  CHECK(where(greater(x, 1.5f), x, Array(0.0)).dtype() == float32);
  CHECK(maximum(x, Array(0.0)).dtype() == float32);
  CHECK(divide(x, Array(4.0)).dtype() == float32);
  CHECK(power(x, Array(2.0)).dtype() == float32);
  CHECK(matmul(x, Array(2.0) * ones({2}, float64)).dtype() == float64);  // strong f64 stays f64

  const Array u = array<std::uint32_t>({1u, 2u});
  const Array v = add(u, Array(1));  // was int32: uint32 + weak int stays uint32
  CHECK(v.dtype() == uint32);
  CHECK_FALSE(v.weak_type());
  CHECK(add(x, array({1.0, 2.0})).dtype() == float64);  // two strong operands promote as before
}

TEST_CASE("a weak operand of a higher kind gives a weak result of that kind's default dtype") {
  const Array i = array<std::int32_t>({1, 2});
  const Array f = add(i, Array(1.5));  // jnp.int32 array + 1.5: weak float32
  CHECK(f.dtype() == float32);
  CHECK(f.weak_type());
  CHECK(f.data<float>()[0] == 2.5f);
  const Array b = add(array<bool>({true, false}), Array(1));  // bool array + 1: weak int32
  CHECK(b.dtype() == int32);
  CHECK(b.weak_type());
  // Weak again, so a later float32 array keeps its dtype: (i + 1.5) * x_f64 is float64 and
  // (i + 1.5) * x_f32 float32.
  CHECK(multiply(f, array({1.0, 1.0})).dtype() == float64);
}

TEST_CASE("results computed only from weak values stay weak; argmax, comparisons are strong") {
  const Array w = Array(2.0) * 3.0;
  CHECK(w.weak_type());
  CHECK(w.dtype() == float64);
  CHECK(sin(Array(1.0)).weak_type());
  CHECK(sum(broadcast_to(Array(1.0f), {3})).weak_type());
  CHECK(add(Array(2), Array(0.5)).weak_type());  // weak int + weak float: weak float
  CHECK(add(Array(2), Array(0.5)).dtype() == float64);
  CHECK_FALSE(argmax(broadcast_to(Array(1.0), {3}), 0).weak_type());
  CHECK_FALSE(less(Array(1.0), Array(2.0)).weak_type());
  CHECK_FALSE(multiply(w, ones({}, float64)).weak_type());  // one strong operand: strong
  // ...and a weak result next to a float32 array does not widen it.
  CHECK(multiply(array({1.0f}), w).dtype() == float32);
}

TEST_CASE("concatenate promotes with weak types, as jnp.concatenate") {
  const Array c = concatenate({broadcast_to(Array(1.0), {2}), array({3.0f})}, 0);
  CHECK(c.dtype() == float32);
  CHECK_FALSE(c.weak_type());
  CHECK(c.data<float>()[2] == 3.0f);
}

TEST_CASE("repr shows weak_type=True as JAX does") {
  CHECK(repr(Array(2.0f)) == "Array(2., dtype=float32, weak_type=True)");
  CHECK(repr(astype(Array(2.0f), float32)) == "Array(2., dtype=float32)");
}

TEST_CASE("weak types survive grad, vmap and eval_shape") {
  const Array x = array({1.0f, 2.0f, 3.0f});
  // d/dx sum(x * 3.0) with the scalar given as an Array: float32 gradient of threes.
  const Array g = grad([](const Array& a) { return sum(multiply(a, Array(3.0))); })(x);
  CHECK(g.dtype() == float32);
  CHECK(g.data<float>()[2] == 3.0f);

  const Array y = vmap([](const Array& a) { return multiply(a, Array(0.5)); })(x);
  CHECK(y.dtype() == float32);
  CHECK(y.data<float>()[1] == 1.0f);

  const ShapeDtype weak = eval_shape([](const Array&) { return Array(2.0) * 3.0; }, ShapeDtype{{2}, float32});
  CHECK(weak.dtype == float64);
  CHECK(weak.weak_type);
  const ShapeDtype strong =
      eval_shape([](const Array& a) { return multiply(a, Array(2.0)); }, ShapeDtype{{2}, float32});
  CHECK(strong == ShapeDtype{{2}, float32});
}

}  // namespace test_weak_type
