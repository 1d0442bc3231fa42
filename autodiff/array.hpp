// linum::Array: an immutable value handle (shared buffer, shape, dtype) that may also stand for a
// tracer of an active transform; user code cannot tell the difference. Light header on purpose.
#pragma once

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <iosfwd>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <linum/autodiff/dtype.hpp>
#include <linum/error.hpp>

namespace linum {

using Shape = std::vector<std::int64_t>;

// "(2, 3)", "(3,)", "()": shapes print like Python tuples, as JAX's messages show them.
std::string shape_str(const Shape& s);
namespace detail {
[[noreturn]] void throw_element_count_overflow(const Shape& s);
}
// The element count of `s`; throws ValueError (naming the running op) when it overflows int64.
inline std::int64_t shape_size(const Shape& s) {
  // Inline: every op asks it of its operands and output, most often of a scalar's empty shape.
  std::int64_t n = 1;
  for (auto d : s)
    if (__builtin_mul_overflow(n, d, &n)) detail::throw_element_count_overflow(s);
  return n;
}

class Array;
using Arrays = std::vector<Array>;

namespace detail {

// The state behind an Array. level < 0: a concrete buffer (ConcreteImpl); otherwise a tracer
// owned by the transform at that level of this thread's level stack (identified by trace_uid).
struct ArrayImpl {
  Shape shape;
  DType dtype = DType::float32;
  // JAX's weak type: the value came from a C++ scalar (or only from such values), so it takes
  // the dtype of the array it meets instead of promoting it (x_f32 * Array(2.0) stays float32).
  bool weak_type = false;
  int level = -1;
  std::uint64_t trace_uid = 0;
  ArrayImpl() = default;
  ArrayImpl(Shape s, DType d, int lvl = -1, std::uint64_t uid = 0)
      : shape(std::move(s)), dtype(d), level(lvl), trace_uid(uid) {}
  virtual ~ArrayImpl() = default;
  // The value a grad/jvp tracer stands for (nullptr for concrete arrays and vmap tracers).
  virtual const Array* primal_value() const { return nullptr; }
};

// A concrete, contiguous row-major buffer. Small arrays live inline (no second allocation);
// larger ones share an aligned heap block, so reshape and astype-to-same are free.
struct ConcreteImpl final : ArrayImpl {
  std::shared_ptr<void> owner;
  void* data = nullptr;
  alignas(16) std::byte small[16];
  ConcreteImpl(Shape s, DType d);
  ConcreteImpl(Shape s, DType d, std::shared_ptr<void> owner_, void* data_)
      : ArrayImpl(std::move(s), d), owner(std::move(owner_)), data(data_) {}
};

[[noreturn]] void throw_empty_handle(const char* fn);

// The one overflow check for every place that builds a shape: dimensions non-negative, the
// element count within int64 and the byte size within what a buffer can address. Throws
// ValueError naming `op`. Returns the element count.
std::int64_t check_shape(const char* op, const Shape& s, DType d = DType::float64);
// a + b for dimensions (concatenate, padding), throwing ValueError naming `op` on overflow.
std::int64_t checked_add(const char* op, std::int64_t a, std::int64_t b);
std::int64_t checked_mul(const char* op, std::int64_t a, std::int64_t b);

// The op whose kernel or creation function runs on this thread, for allocation errors.
const char* current_op();
struct OpScope {
  const char* prev;
  explicit OpScope(const char* op);
  ~OpScope();
  OpScope(const OpScope&) = delete;
  OpScope& operator=(const OpScope&) = delete;
};

// Small objects that every op allocates (array impls, tracers, with their shared_ptr control
// block) come from per-thread free lists of fixed-size blocks: freeing a tape of 10^5 arrays at
// once otherwise runs through malloc's slow paths. Any thread may free any block.
void* small_alloc(std::size_t bytes);
void small_free(void* p, std::size_t bytes) noexcept;

template <class T>
struct SmallAllocator {
  using value_type = T;
  static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__);
  SmallAllocator() = default;
  template <class U>
  SmallAllocator(const SmallAllocator<U>&) {}  // NOLINT(google-explicit-constructor)
  T* allocate(std::size_t n) { return static_cast<T*>(small_alloc(n * sizeof(T))); }
  void deallocate(T* p, std::size_t n) noexcept { small_free(p, n * sizeof(T)); }
  template <class U>
  bool operator==(const SmallAllocator<U>&) const {
    return true;
  }
};

template <class T, class... A>
std::shared_ptr<T> make_small(A&&... args) {
  return std::allocate_shared<T>(SmallAllocator<T>(), std::forward<A>(args)...);
}

}  // namespace detail

class Array {
 public:
  Array() = default;  // an empty handle; ops reject it, transform rules read it as a symbolic zero
  explicit Array(std::shared_ptr<detail::ArrayImpl> impl) : impl_(std::move(impl)) {}

  // A scalar (rank-0) array: Array(2.0f) is float32, Array(2.0) float64, Array(2) int32, all
  // weakly typed as a Python scalar is in JAX (bool excepted).
  template <class V, class = std::enable_if_t<std::is_arithmetic_v<V>>>
  Array(V value);  // NOLINT(google-explicit-constructor): scalars convert like JAX's Python scalars

  bool valid() const { return impl_ != nullptr; }
  const Shape& shape() const {
    if (!impl_) detail::throw_empty_handle("Array::shape");
    return impl_->shape;
  }
  std::int64_t shape(int axis) const;  // negative axes count from the end
  DType dtype() const {
    if (!impl_) detail::throw_empty_handle("Array::dtype");
    return impl_->dtype;
  }
  int ndim() const { return static_cast<int>(shape().size()); }
  std::int64_t size() const { return shape_size(shape()); }
  bool is_tracer() const { return impl_ && impl_->level >= 0; }
  // JAX's weak_type: true for C++ scalars converted to arrays and for results computed only
  // from such values; astype and every creation function give strongly typed arrays.
  bool weak_type() const {
    if (!impl_) detail::throw_empty_handle("Array::weak_type");
    return impl_->weak_type;
  }

  // Element access on concrete arrays; throws for tracers and for a T that is not the dtype's type.
  template <class V>
  const V* data() const;
  // The single element converted to T; the array must have size 1 and a concrete value.
  template <class V>
  V item() const;
  // The concrete value behind this array (under grad/jvp, its primal); throws under vmap.
  Array concrete() const;
  // Truth value of a size-1 array, as numpy/JAX: anything else raises.
  explicit operator bool() const;

  // x[i], as JAX's: the element at i along the leading axis (the axis dropped). A static i
  // counts from the end when negative and, as JAX's default indexing, clamps when out of range;
  // an Array i is a scalar integer index (traced under jit/vmap), as lax.dynamic_index_in_dim.
  Array operator[](std::int64_t i) const;
  Array operator[](const Array& i) const;

  // Methods mirroring jax.Array.
  Array astype(DType d) const;
  Array reshape(const Shape& s) const;
  Array T() const;

  const std::shared_ptr<detail::ArrayImpl>& impl() const { return impl_; }

 private:
  const detail::ConcreteImpl& concrete_impl(const char* fn) const;
  std::shared_ptr<detail::ArrayImpl> impl_;
};

// Printing like JAX: Array([[1., 2.]], dtype=float32); large arrays are elided with "...".
std::ostream& operator<<(std::ostream& os, const Array& a);
std::string repr(const Array& a);

// ---- creation -----------------------------------------------------------------------------

Array empty(const Shape& shape, DType dtype = float32);  // uninitialised concrete buffer
Array zeros(const Shape& shape, DType dtype = float32);
Array ones(const Shape& shape, DType dtype = float32);
Array full(const Shape& shape, double value, DType dtype = float32);
Array zeros_like(const Array& a);
Array ones_like(const Array& a);
Array full_like(const Array& a, double value);
namespace detail {
Array arange_impl(double start, double stop, double step, DType dtype);
}  // namespace detail
// jnp.arange: dtype defaults as JAX infers it from the argument types: float32 when any of
// start, stop, step is a floating-point number (arange(10.0, 20.0) and arange(0, 1, 0.25) are
// float), int32 when all are integers.
template <class A, class B, class C = int>
requires std::is_arithmetic_v<A> && std::is_arithmetic_v<B> && std::is_arithmetic_v<C> Array
arange(A start, B stop, C step = 1, std::optional<DType> dtype = std::nullopt) {
  constexpr bool fl =
      std::is_floating_point_v<A> || std::is_floating_point_v<B> || std::is_floating_point_v<C>;
  return detail::arange_impl(static_cast<double>(start), static_cast<double>(stop),
                             static_cast<double>(step), dtype.value_or(fl ? float32 : int32));
}
template <class A>
requires std::is_arithmetic_v<A> Array arange(A stop, std::optional<DType> dtype = std::nullopt) {
  return arange(A(0), stop, A(1), dtype);
}
Array linspace(double start, double stop, std::int64_t num, bool endpoint = true,
               DType dtype = float32);
Array eye(std::int64_t n, std::int64_t m = -1, std::int64_t k = 0, DType dtype = float32);

// From a flat buffer (copied) with a shape; dtype follows T unless given (then values convert).
template <class T>
Array array(const std::vector<T>& values, const Shape& shape);
template <class T>
Array array(const std::vector<T>& values) {
  return array(values, Shape{static_cast<std::int64_t>(values.size())});
}
template <class T>
Array array(std::initializer_list<T> values) {
  return array(std::vector<T>(values));
}
template <class T>
Array array(std::initializer_list<std::initializer_list<T>> rows);
template <class T>
Array array(std::initializer_list<std::initializer_list<std::initializer_list<T>>> blocks);
template <class T, class = std::enable_if_t<std::is_arithmetic_v<T>>>
Array array(T value) {
  return Array(value);
}
Array array(const Array& a, DType dtype);  // a copy converted to dtype

namespace detail {
Array make_scalar(double value, DType dtype, bool weak_type = false);
Array from_buffer(const void* src, const Shape& shape, DType src_dtype, DType dtype);
template <class T>
Array from_values(const T* src, const Shape& shape) {
  return from_buffer(src, shape, dtype_of<T>(), dtype_of<T>());
}
[[noreturn]] void throw_dtype_access(const char* fn, DType have, DType want);
}  // namespace detail

template <class V, class>
Array::Array(V value) {
  if constexpr (std::is_same_v<V, bool>)
    *this = detail::make_scalar(value, bool_);
  else if constexpr (std::is_same_v<V, double>)
    *this = detail::make_scalar(value, float64, true);
  else if constexpr (std::is_floating_point_v<V>)
    *this = detail::make_scalar(value, float32, true);
  else if constexpr (std::is_unsigned_v<V>)
    *this = detail::make_scalar(static_cast<double>(value), uint32, true);
  else
    *this = detail::make_scalar(static_cast<double>(value), int32, true);
}

template <class V>
const V* Array::data() const {
  const auto& c = concrete_impl("Array::data");
  if (c.dtype != dtype_of<V>()) detail::throw_dtype_access("Array::data", c.dtype, dtype_of<V>());
  return static_cast<const V*>(c.data);
}

template <class T>
Array array(const std::vector<T>& values, const Shape& shape) {
  if (static_cast<std::int64_t>(values.size()) != shape_size(shape))
    throw ValueError("linum::array: " + std::to_string(values.size()) +
                     " values do not fill shape " + shape_str(shape));
  if constexpr (std::is_same_v<T, bool>) {
    std::vector<std::uint8_t> bytes(values.begin(), values.end());
    return detail::from_buffer(bytes.data(), shape, bool_, bool_);
  } else {
    return detail::from_values(values.data(), shape);
  }
}

template <class T>
Array array(std::initializer_list<std::initializer_list<T>> rows) {
  std::vector<T> flat;
  const std::int64_t cols = rows.size() ? static_cast<std::int64_t>(rows.begin()->size()) : 0;
  for (const auto& r : rows) {
    if (static_cast<std::int64_t>(r.size()) != cols)
      throw ValueError("linum::array: ragged nested list (rows of " + std::to_string(cols) +
                       " and " + std::to_string(r.size()) + " elements)");
    flat.insert(flat.end(), r.begin(), r.end());
  }
  return array(flat, Shape{static_cast<std::int64_t>(rows.size()), cols});
}

template <class T>
Array array(std::initializer_list<std::initializer_list<std::initializer_list<T>>> blocks) {
  std::vector<T> flat;
  Shape inner;
  for (const auto& b : blocks) {
    Array m = array<T>(b);
    if (!inner.empty() && m.shape() != inner)
      throw ValueError("linum::array: ragged nested list (blocks of shape " + shape_str(inner) +
                       " and " + shape_str(m.shape()) + ")");
    inner = m.shape();
    for (const auto& r : b) flat.insert(flat.end(), r.begin(), r.end());
  }
  Shape s{static_cast<std::int64_t>(blocks.size())};
  s.insert(s.end(), inner.begin(), inner.end());
  if (inner.empty()) s = {static_cast<std::int64_t>(blocks.size()), 0, 0};
  return array(flat, s);
}

namespace detail {
// "int32", "uint64", "float32": how item()'s errors name the requested C++ type.
template <class V>
std::string item_type_name() {
  if constexpr (std::is_floating_point_v<V>)
    return "float" + std::to_string(8 * sizeof(V));
  else
    return (std::is_signed_v<V> ? "int" : "uint") + std::to_string(8 * sizeof(V));
}
[[noreturn]] void throw_item_range(const std::string& value, DType from, const std::string& to);
// The single element of a floating array (float32, float64, bfloat16 or float16), exactly.
inline double floating_item(const ConcreteImpl& c) {
  switch (c.dtype) {
    case DType::float32: return *static_cast<const float*>(c.data);
    case DType::bfloat16: return static_cast<double>(*static_cast<const BFloat16*>(c.data));
    case DType::float16: return static_cast<double>(*static_cast<const Float16*>(c.data));
    default: return *static_cast<const double*>(c.data);
  }
}
[[noreturn]] void throw_item_complex(DType from);
// The single element of a complex array as V, which must be a std::complex.
template <class V>
V complex_item(const ConcreteImpl& c) {
  if constexpr (requires { typename V::value_type; }) {
    using R = typename V::value_type;
    if (c.dtype == DType::complex64) {
      const auto z = *static_cast<const std::complex<float>*>(c.data);
      return V(static_cast<R>(z.real()), static_cast<R>(z.imag()));
    }
    const auto z = *static_cast<const std::complex<double>*>(c.data);
    return V(static_cast<R>(z.real()), static_cast<R>(z.imag()));
  } else {
    throw_item_complex(c.dtype);
  }
}
}  // namespace detail

template <class V>
V Array::item() const {
  const auto& c = concrete_impl("Array::item");
  if (shape_size(c.shape) != 1)
    throw ValueError("Array::item: only arrays of size 1 convert to a scalar, got shape " +
                     shape_str(c.shape));
  if (is_complex(c.dtype)) return detail::complex_item<V>(c);
  // A value that does not fit V is an error, not a wrapped or undefined conversion.
  if constexpr (std::is_arithmetic_v<V> && !std::is_same_v<V, bool>) {
    if (is_floating(c.dtype)) {
      const double v = detail::floating_item(c);
      // Integers as Python's int(x) (truncation); a float V only refuses finite overflow.
      const bool fits = std::is_floating_point_v<V>
                            ? !(v == v && std::abs(v) <= std::numeric_limits<double>::max() &&
                                std::abs(v) > static_cast<double>(std::numeric_limits<V>::max()))
                            : v > static_cast<double>(std::numeric_limits<V>::min()) - 1 &&
                                  v < static_cast<double>(std::numeric_limits<V>::max()) + 1;
      if (!fits) detail::throw_item_range(std::to_string(v), c.dtype, detail::item_type_name<V>());
    } else if constexpr (std::is_integral_v<V>) {
      // Each branch widened on its own: a ?: chain would promote int32 to uint32 first.
      std::int64_t v = *static_cast<const std::uint8_t*>(c.data);
      if (c.dtype == DType::int32) v = *static_cast<const std::int32_t*>(c.data);
      if (c.dtype == DType::uint32) v = *static_cast<const std::uint32_t*>(c.data);
      if (!std::in_range<V>(v))
        detail::throw_item_range(std::to_string(v), c.dtype, detail::item_type_name<V>());
    }
  }
  switch (c.dtype) {
    case DType::float32:
      return static_cast<V>(*static_cast<const float*>(c.data));
    case DType::float64:
    case DType::bfloat16:
    case DType::float16: return static_cast<V>(detail::floating_item(c));
    case DType::int32:
      return static_cast<V>(*static_cast<const std::int32_t*>(c.data));
    case DType::uint32:
      return static_cast<V>(*static_cast<const std::uint32_t*>(c.data));
    case DType::bool_:
      return static_cast<V>(*static_cast<const std::uint8_t*>(c.data) != 0);
    case DType::complex64:
    case DType::complex128:
      break;  // handled above
  }
  return V{};
}

}  // namespace linum
