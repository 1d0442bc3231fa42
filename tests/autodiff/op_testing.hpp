// Helpers of the elementwise and reduction suites: values as doubles, error-message checks, and
// vmap-vs-loop built from raw buffers (independent of the ops under test).
#pragma once

#include <cstring>
#include <string>
#include <utility>

#include "check_grads.hpp"
#include "support/testing.hpp"

namespace linum::optest {

using linum::testing::values;

// Expects `expr` to throw E with a message containing `part`.
#define LINUM_CHECK_ERROR(expr, E, part)              \
  do {                                                \
    try {                                             \
      (void)(expr);                                   \
      FAIL("expected " #E " containing: " << (part)); \
    } catch (const E& e_) {                           \
      const std::string msg_ = e_.what();             \
      INFO("message: " << msg_);                      \
      CHECK(msg_.find(part) != std::string::npos);    \
    }                                                 \
  } while (0)

// a has this shape and dtype and these values (NaN matches NaN; infinities compare exactly).
inline void check_array(const Array& a, const Shape& shape, DType dtype,
                        const std::vector<double>& expected, double eps = 1e-6) {
  INFO("got " << a);
  REQUIRE(shape_str(a.shape()) == shape_str(shape));
  CHECK(a.dtype() == dtype);
  const auto v = values(a);
  REQUIRE(v.size() == expected.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    INFO("element " << i);
    if (std::isnan(expected[i]))
      CHECK(std::isnan(v[i]));
    else if (std::isinf(expected[i]))
      CHECK(v[i] == expected[i]);
    else
      CHECK(v[i] == doctest::Approx(expected[i]).epsilon(eps));
  }
}

inline void check_close(const Array& a, const Array& b, double eps = 1e-10) {
  INFO("a = " << a << "\nb = " << b);
  REQUIRE(shape_str(a.shape()) == shape_str(b.shape()));
  CHECK(a.dtype() == b.dtype());
  const auto va = values(a), vb = values(b);
  for (std::size_t i = 0; i < va.size(); ++i) {
    if (std::isnan(vb[i]))
      CHECK(std::isnan(va[i]));
    else
      CHECK(va[i] == doctest::Approx(vb[i]).epsilon(eps));
  }
}

inline const std::byte* raw(const Array& a) {
  switch (a.dtype()) {
    case DType::float32:
      return reinterpret_cast<const std::byte*>(a.data<float>());
    case DType::float64:
      return reinterpret_cast<const std::byte*>(a.data<double>());
    case DType::int32:
      return reinterpret_cast<const std::byte*>(a.data<std::int32_t>());
    case DType::uint32:
      return reinterpret_cast<const std::byte*>(a.data<std::uint32_t>());
    case DType::bool_:
      return reinterpret_cast<const std::byte*>(a.data<bool>());
    case DType::complex64:
      return reinterpret_cast<const std::byte*>(a.data<std::complex<float>>());
    case DType::complex128:
      return reinterpret_cast<const std::byte*>(a.data<std::complex<double>>());
    case DType::bfloat16: return reinterpret_cast<const std::byte*>(a.data<BFloat16>());
    case DType::float16: return reinterpret_cast<const std::byte*>(a.data<Float16>());
  }
  return nullptr;
}

// x[i] along `axis`, copied out of the buffer.
inline Array index_axis(const Array& x, int axis, std::int64_t i) {
  Array m = moveaxis(x, axis, 0);
  Shape rest(m.shape().begin() + 1, m.shape().end());
  const std::int64_t block = shape_size(rest);
  return detail::from_buffer(raw(m) + i * block * itemsize(x.dtype()), rest, x.dtype(), x.dtype());
}

// The examples stacked along a new leading axis, copied into one buffer.
inline Array stack0(const Arrays& xs) {
  Shape s = xs.at(0).shape();
  const std::size_t bytes = static_cast<std::size_t>(xs[0].size()) * itemsize(xs[0].dtype());
  std::vector<std::byte> buf(bytes * xs.size());
  for (std::size_t k = 0; k < xs.size(); ++k) {
    REQUIRE(shape_str(xs[k].shape()) == shape_str(s));
    if (bytes) std::memcpy(buf.data() + k * bytes, raw(xs[k]), bytes);
  }
  s.insert(s.begin(), static_cast<std::int64_t>(xs.size()));
  return detail::from_buffer(buf.data(), s, xs[0].dtype(), xs[0].dtype());
}

constexpr int kNone = VmapOptions::kNone;

// in_axes per argument (kNone: unbatched) and out_axes, kept as plain ints for the loop side.
struct VmapAxes {
  std::vector<int> in;
  int out = 0;
};
inline VmapAxes axes(std::vector<int> in, int out = 0) { return {std::move(in), out}; }

// vmap(f, {in, out})(args...) equals f applied to each example and stacked along `out`.
template <class F, class... A>
void check_vmap(F f, const VmapAxes& va, const A&... args) {
  VmapOptions opts;
  opts.in_axes = va.in;
  opts.out_axes = va.out;
  Array batched = vmap(f, opts)(args...);
  Arrays xs{args...};
  std::int64_t n = 0;
  for (std::size_t i = 0; i < xs.size(); ++i)
    if (va.in[i] != kNone) n = xs[i].shape(va.in[i]);
  Arrays outs;
  for (std::int64_t b = 0; b < n; ++b) {
    Arrays ai;
    for (std::size_t i = 0; i < xs.size(); ++i) {
      const int a = va.in[i];
      ai.push_back(a == kNone ? xs[i] : index_axis(xs[i], a < 0 ? a + xs[i].ndim() : a, b));
    }
    outs.push_back([&]<std::size_t... K>(std::index_sequence<K...>) {
      return f(ai[K]...);
    }(std::index_sequence_for<A...>{}));
  }
  check_close(moveaxis(batched, va.out, 0), stack0(outs));
}

// Deterministic float64 test data of a shape: distinct values spread over [-2, 2].
inline Array data(const Shape& s, unsigned seed = 1, double lo = -2, double hi = 2) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(static_cast<std::size_t>(shape_size(s)));
  for (auto& e : v) e = u(rng);
  return array(v, s);
}

}  // namespace linum::optest
