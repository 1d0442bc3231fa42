// linum::nn::initializers: jax.nn.initializers / flax.linen.initializers. An initializer maps
// (key, shape, dtype) to an Array; with the same key it returns JAX's values bit for bit (the
// samplers are linum::random's, the scale factors are rounded to dtype as JAX rounds them).
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <linum/autodiff/array.hpp>
#include <linum/pytree/box.hpp>

namespace linum::nn::initializers {

// A callable init(key, shape[, dtype]); the dtype defaults to the one the builder was given
// (float32 unless said otherwise), as JAX's `dtype` argument of the builders. name() is the
// Python function's __name__ that Flax's repr prints: "init" for the builders (JAX returns their
// inner `init`), "zeros" / "ones" for zeros_init() / ones_init(); a C++ lambda or function has no
// Python name, so it is "<lambda>" unless one is given.
class Initializer {
 public:
  using Fn = std::function<Array(const Array& key, const Shape& shape, DType dtype)>;
  Initializer() = default;
  Initializer(Fn fn, DType default_dtype = float32,  // NOLINT(google-explicit-constructor)
              std::string name = "<lambda>")
      : fn_(std::move(fn)), dtype_(default_dtype), name_(std::move(name)) {}
  // Plain functions (key, shape, dtype) -> Array convert implicitly, like
  // jax.nn.initializers.zeros.
  Initializer(Array (*fn)(const Array&, const Shape&,
                          DType))  // NOLINT(google-explicit-constructor)
      : fn_(fn) {}

  Array operator()(const Array& key, const Shape& shape) const {
    return (*this)(key, shape, dtype_);
  }
  Array operator()(const Array& key, const Shape& shape, DType dtype) const;
  DType dtype() const { return dtype_; }
  const std::string& name() const { return name_; }
  explicit operator bool() const { return static_cast<bool>(fn_); }
  // with_partitioning(init, names): the same initializer, its parameters stored in this box by
  // Scope::param (Flax wraps the function; it keeps its name).
  Initializer boxed(std::shared_ptr<const pytree::BoxMetadata> box) const {
    Initializer r = *this;
    r.box_ = std::move(box);
    return r;
  }
  const std::shared_ptr<const pytree::BoxMetadata>& box_metadata() const { return box_; }

 private:
  Fn fn_;
  std::shared_ptr<const pytree::BoxMetadata> box_;
  DType dtype_ = float32;
  std::string name_ = "<lambda>";
};

// One axis or several: the in_axis / out_axis / batch_axis / column_axis arguments.
struct FanAxes {
  std::vector<int> axes;
  bool single = true;  // given as one int (in_axis=-2 is only the default when it is an int)
  FanAxes(int a) : axes{a} {}  // NOLINT(google-explicit-constructor)
  FanAxes(std::initializer_list<int> a) : axes(a), single(false) {}
  FanAxes(std::vector<int> a) : axes(std::move(a)), single(false) {}  // NOLINT
};

// The key is ignored.
Array zeros(const Array& key, const Shape& shape, DType dtype = float32);
Array ones(const Array& key, const Shape& shape, DType dtype = float32);
// flax.linen.initializers.zeros_init() / ones_init().
Initializer zeros_init();
Initializer ones_init();
Initializer constant(double value, DType dtype = float32);

// uniform on [0, scale); normal(0, stddev); normal(0, stddev) truncated to
// (lower * stddev, upper * stddev), without variance correction.
Initializer uniform(double scale = 1e-2, DType dtype = float32);
Initializer normal(double stddev = 1e-2, DType dtype = float32);
Initializer truncated_normal(double stddev = 1e-2, DType dtype = float32, double lower = -2.0,
                             double upper = 2.0);

// (fan_in, fan_out) of a weights shape: axes outside in/out/batch axes are the receptive field
// (JAX's _compute_fans; sizes are floats, as in JAX).
std::pair<double, double> compute_fans(const Shape& shape, const FanAxes& in_axis = -2,
                                       const FanAxes& out_axis = -1,
                                       const FanAxes& batch_axis = std::vector<int>{});

// Samples with variance scale / n, n = fan_in | fan_out | fan_avg | fan_geo_avg; distribution
// "truncated_normal" (rescaled by 0.87962566103423978, the stddev of a standard normal truncated
// to (-2, 2)), "normal" or "uniform".
Initializer variance_scaling(double scale, const std::string& mode, const std::string& distribution,
                             FanAxes in_axis = -2, FanAxes out_axis = -1,
                             FanAxes batch_axis = std::vector<int>{}, DType dtype = float32);

Initializer glorot_uniform(FanAxes in_axis = -2, FanAxes out_axis = -1,
                           FanAxes batch_axis = std::vector<int>{}, DType dtype = float32);
Initializer glorot_normal(FanAxes in_axis = -2, FanAxes out_axis = -1,
                          FanAxes batch_axis = std::vector<int>{}, DType dtype = float32);
Initializer lecun_uniform(FanAxes in_axis = -2, FanAxes out_axis = -1,
                          FanAxes batch_axis = std::vector<int>{}, DType dtype = float32);
Initializer lecun_normal(FanAxes in_axis = -2, FanAxes out_axis = -1,
                         FanAxes batch_axis = std::vector<int>{}, DType dtype = float32);
Initializer he_uniform(FanAxes in_axis = -2, FanAxes out_axis = -1,
                       FanAxes batch_axis = std::vector<int>{}, DType dtype = float32);
Initializer he_normal(FanAxes in_axis = -2, FanAxes out_axis = -1,
                      FanAxes batch_axis = std::vector<int>{}, DType dtype = float32);
// JAX's aliases.
inline Initializer xavier_uniform(FanAxes in_axis = -2, FanAxes out_axis = -1,
                                  FanAxes batch_axis = std::vector<int>{}, DType dtype = float32) {
  return glorot_uniform(std::move(in_axis), std::move(out_axis), std::move(batch_axis), dtype);
}
inline Initializer xavier_normal(FanAxes in_axis = -2, FanAxes out_axis = -1,
                                 FanAxes batch_axis = std::vector<int>{}, DType dtype = float32) {
  return glorot_normal(std::move(in_axis), std::move(out_axis), std::move(batch_axis), dtype);
}
inline Initializer kaiming_uniform(FanAxes in_axis = -2, FanAxes out_axis = -1,
                                   FanAxes batch_axis = std::vector<int>{}, DType dtype = float32) {
  return he_uniform(std::move(in_axis), std::move(out_axis), std::move(batch_axis), dtype);
}
inline Initializer kaiming_normal(FanAxes in_axis = -2, FanAxes out_axis = -1,
                                  FanAxes batch_axis = std::vector<int>{}, DType dtype = float32) {
  return he_normal(std::move(in_axis), std::move(out_axis), std::move(batch_axis), dtype);
}

// Uniformly distributed orthogonal matrices: the Q of a QR decomposition (LAPACK geqrf/orgqr,
// as jnp.linalg.qr on CPU) of a normal draw, with columns signed by diag(R); rows or columns
// are orthonormal, whichever are fewer. Not bit-exact with JAX (LAPACK builds differ), but
// equal to float precision.
Initializer orthogonal(double scale = 1.0, int column_axis = -1, DType dtype = float32);
// Delta-orthogonal kernels for 3-5D convolution shapes: an orthogonal (in, out) matrix at the
// spatial centre, zeros elsewhere.
Initializer delta_orthogonal(double scale = 1.0, int column_axis = -1, DType dtype = float32);

}  // namespace linum::nn::initializers

namespace linum::nn {
// The repr() text of an initializer field, as Flax's _attr_repr: the function's name.
std::string attr_repr(const initializers::Initializer& init);
}  // namespace linum::nn
