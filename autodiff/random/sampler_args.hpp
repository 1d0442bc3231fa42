// Argument checks shared by linum::random's samplers, with JAX's messages, and the binding of a
// key-only sampler primitive. Internal to the random library.
#pragma once

#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <linum/autodiff/ops.hpp>
#include <linum/autodiff/random/keyed_primitive.hpp>

namespace linum::random::detail {

inline void check_key(const Array& key, const char* fn) {
  linum::detail::check_valid(key, fn);
  if (key.dtype() != uint32)
    throw TypeError(std::string(fn) + ": expected a PRNG key (uint32 data of shape (2,)), got " +
                    "dtype " + std::string(dtype_name(key.dtype())));
  if (key.ndim() == 0 || key.shape().back() != 2)
    throw TypeError(std::string(fn) + ": threefry2x32 key data must have trailing shape (2,), " +
                    "got shape " + shape_str(key.shape()));
  if (key.ndim() > 1)
    throw ValueError(std::string(fn) + " accepts a single key, but was given a key array of " +
                     "shape " + shape_str(key.shape()) + " != (). Use jax.vmap for batching.");
}

inline void check_shape(const Shape& shape, const char* fn) {
  for (std::int64_t d : shape)
    if (d < 0)
      throw ValueError(std::string(fn) + ": shape " + shape_str(shape) +
                       " has a negative dimension");
}

inline void check_float(DType d, const char* fn) {
  if (!is_floating(d))
    throw ValueError(std::string("dtype argument to `") + fn + "` must be a float dtype, got " +
                     std::string(dtype_name(d)));
}

// Binds the key-only primitive of sampler s to one checked key.
template <class Sampler>
Array sample(Sampler s, const Array& key, const char* fn) {
  check_key(key, fn);
  check_shape(s.shape, fn);
  return bind1(std::make_shared<const KeyPrim<Sampler>>(std::move(s)), {key});
}

// The shape of a checked parameter.
inline const Shape& shape_of(const Array& p, const char* fn) {
  linum::detail::check_valid(p, fn);
  return p.shape();
}

// jax.random's shape rule (_check_broadcast_shapes): with no shape, the parameters' broadcast
// shape; with one, broadcasting each parameter with it must give exactly it.
inline Shape sampler_shape(const char* fn, const std::optional<Shape>& shape,
                           std::initializer_list<Shape> params) {
  Shape bcast;
  for (const Shape& p : params) bcast = linum::detail::broadcast_shapes(bcast, p, fn);
  if (!shape) return bcast;
  check_shape(*shape, fn);
  const Shape got = linum::detail::broadcast_shapes(*shape, bcast, fn);
  if (got != *shape)
    throw ValueError(std::string(fn) +
                     " parameter shapes must be broadcast-compatible with shape argument, and the "
                     "result of broadcasting the shapes must equal the shape argument, but got "
                     "result " +
                     shape_str(got) + " for shape argument " + shape_str(*shape) + ".");
  return *shape;
}

// A parameter in the sampler's dtype, after JAX's _check_all_safe_to_cast: a strongly typed
// float64 array does not narrow to float32 (weak scalars do, as Python floats).
inline Array param_as(const Array& p, DType dtype, const char* fn) {
  linum::detail::check_valid(p, fn);
  if (!p.weak_type() && is_floating(p.dtype()) && itemsize(p.dtype()) > itemsize(dtype))
    throw ValueError(std::string("In arguments to ") + fn +
                     ", cannot safely cast argument of type " + std::string(dtype_name(p.dtype())) +
                     " to " + std::string(dtype_name(dtype)));
  return astype(p, dtype);
}

// JAX's check of the `method` argument of gamma, loggamma, beta, chisquare and poisson: true
// for 'approximate', false for 'exact'.
inline bool check_method(std::string_view method, const char* fn) {
  if (method == "exact") return false;
  if (method == "approximate") return true;
  throw ValueError(std::string("method argument to `") + fn +
                   "` must be one of {'exact', 'approximate'}, got '" + std::string(method) + "'");
}

// Key i of a (n, 2) key array.
inline Array key_at(const Array& keys, std::int64_t i) {
  return squeeze(slice(keys, {{i, i + 1}}), 0);
}

// The shape `a` followed by `b`: a batch of draws with per-draw dims after it.
inline Shape concat(Shape a, const Shape& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace linum::random::detail
