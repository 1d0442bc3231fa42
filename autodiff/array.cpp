// Array storage, creation functions, conversions and JAX-style printing.
#include <linum/autodiff/array.hpp>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <new>
#include <ostream>
#include <sstream>

#if defined(__F16C__) && defined(__AVX__)
#include <immintrin.h>
#endif

#include <linum/autodiff/allocator.hpp>
#include <linum/autodiff/jit.hpp>
#include <linum/autodiff/ops.hpp>
#include <linum/autodiff/ops/kernel_util.hpp>
#include <linum/autodiff/trace.hpp>

namespace linum {

std::string shape_str(const Shape& s) {
  std::string r = "(";
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (i) r += ", ";
    r += std::to_string(s[i]);
  }
  if (s.size() == 1) r += ",";
  return r + ")";
}

namespace detail {
namespace {
// Initial-exec TLS: read and written twice per op, and the general model (a shared library's
// default) costs a __tls_get_addr call each time. A pointer fits glibc's static TLS reserve.
[[gnu::tls_model("initial-exec")]] thread_local const char* t_current_op = nullptr;

[[noreturn]] void throw_too_large(const char* op, const Shape& s, const char* what) {
  throw ValueError(std::string(op) + ": shape " + shape_str(s) + " is too large (" + what +
                   " overflows)");
}
}  // namespace

const char* current_op() { return t_current_op ? t_current_op : "linum"; }
OpScope::OpScope(const char* op) : prev(t_current_op) { t_current_op = op; }
OpScope::~OpScope() { t_current_op = prev; }

std::int64_t checked_add(const char* op, std::int64_t a, std::int64_t b) {
  std::int64_t r;
  if (__builtin_add_overflow(a, b, &r))
    throw ValueError(std::string(op) + ": dimension " + std::to_string(a) + " + " +
                     std::to_string(b) + " overflows int64");
  return r;
}

std::int64_t checked_mul(const char* op, std::int64_t a, std::int64_t b) {
  std::int64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    throw ValueError(std::string(op) + ": dimension " + std::to_string(a) + " * " +
                     std::to_string(b) + " overflows int64");
  return r;
}

std::int64_t check_shape(const char* op, const Shape& s, DType d) {
  for (auto dim : s)
    if (dim < 0)
      throw ValueError(std::string(op) + ": negative dimension in shape " + shape_str(s));
  std::int64_t n = 1;
  for (auto dim : s)
    if (__builtin_mul_overflow(n, dim, &n)) throw_too_large(op, s, "the element count");
  std::int64_t bytes;
  if (__builtin_mul_overflow(n, static_cast<std::int64_t>(itemsize(d)), &bytes))
    throw_too_large(op, s, "the byte size");
  return n;
}

}  // namespace detail

void detail::throw_element_count_overflow(const Shape& s) {
  throw_too_large(current_op(), s, "the element count");
}

namespace detail {

ConcreteImpl::ConcreteImpl(Shape s, DType d) : ArrayImpl(std::move(s), d) {
  const char* op = current_op();
  // A scalar, op-by-op code's common case, has no dimension to check.
  const std::size_t bytes =
      shape.empty() ? itemsize(d) : static_cast<std::size_t>(check_shape(op, shape, d)) * itemsize(d);
  if (bytes <= sizeof(small)) {
    data = small;
  } else {
    // From the caching allocator: 64-byte aligned, reused after free without asking the OS.
    void* p = alloc_buffer(bytes);
    if (!p)
      throw MemoryError(std::string(op) + ": cannot allocate " + std::to_string(bytes) +
                        " bytes for an array of shape " + shape_str(shape) + " and dtype " +
                        std::string(dtype_name(d)));
    owner = std::shared_ptr<void>(
        p, [bytes](void* q) { free_buffer(q, bytes); }, SmallAllocator<void*>());
    data = p;
  }
}

namespace {
// One element converted as XLA's convert_element_type: anything to bool is "!= 0"; floats to
// integers truncate and saturate, NaN giving 0 (a plain static_cast would be undefined there).
// Complex to real keeps the real part, as numpy's and JAX's casts do. bfloat16/float16 values
// go through float32 (exact), so every conversion from them rounds once.
template <class T, class S>
T convert_value(S v) {
  if constexpr (std::is_same_v<S, BFloat16> || std::is_same_v<S, Float16>) {
    return convert_value<T>(static_cast<float>(v));
  } else if constexpr (is_complex_v<S> && is_complex_v<T>) {
    using R = typename T::value_type;
    return T(static_cast<R>(v.real()), static_cast<R>(v.imag()));
  } else if constexpr (is_complex_v<S>) {
    if constexpr (std::is_same_v<T, std::uint8_t>) return v != S(0);
    else return convert_value<T>(v.real());
  } else if constexpr (is_complex_v<T>) {
    return T(static_cast<typename T::value_type>(v), 0);
  } else if constexpr (std::is_same_v<T, std::uint8_t>) {  // uint8 storage is only ever bool
    return v != S(0);
  } else if constexpr (std::is_floating_point_v<S> && std::is_integral_v<T>) {
    if (std::isnan(v)) return T(0);
    if (v <= static_cast<S>(std::numeric_limits<T>::min())) return std::numeric_limits<T>::min();
    if (v >= static_cast<S>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
    return static_cast<T>(v);
  } else {
    return static_cast<T>(v);
  }
}
}  // namespace

Array make_scalar(double value, DType dtype, bool weak_type) {
  Array a = empty({}, dtype);
  dispatch_with_complex(dtype, [&]<class T>() { *out_ptr<T>(a) = convert_value<T>(value); });
  a.impl()->weak_type = weak_type && dtype != bool_;
  return a;
}

namespace {
// float32 <-> float16 by the F16C instructions, 8 at a time: float16 programs convert every op's
// operands and results, and the scalar codec took most of their time. float32 -> float16 rounds
// to nearest even and keeps a NaN's sign and top payload bits, quieted: the codec's results bit
// for bit. float16 -> float32 is exact, but the instruction quiets a signalling NaN where the
// codec keeps its bits, so blocks holding an inf or NaN go through the codec (as do the tails).
bool float32_to_float16(const float* s, Float16* o, std::int64_t n) {
#if defined(__F16C__) && defined(__AVX__)
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(o + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(s + i), _MM_FROUND_TO_NEAREST_INT));
  for (; i < n; ++i) o[i] = Float16(s[i]);
  return true;
#else
  (void)s, (void)o, (void)n;
  return false;
#endif
}
bool float16_to_float32(const Float16* s, float* o, std::int64_t n) {
#if defined(__F16C__) && defined(__AVX__)
  const __m128i exponent = _mm_set1_epi16(0x7c00);
  std::int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
    if (_mm_movemask_epi8(_mm_cmpeq_epi16(_mm_and_si128(h, exponent), exponent)))
      for (std::int64_t j = i; j < i + 8; ++j) o[j] = static_cast<float>(s[j]);
    else
      _mm256_storeu_ps(o + i, _mm256_cvtph_ps(h));
  }
  for (; i < n; ++i) o[i] = static_cast<float>(s[i]);
  return true;
#else
  (void)s, (void)o, (void)n;
  return false;
#endif
}
}  // namespace

Array from_buffer(const void* src, const Shape& shape, DType src_dtype, DType dtype) {
  Array a = empty(shape, dtype);
  const auto n = shape_size(shape);
  if (src_dtype == dtype) {
    std::memcpy(out_ptr<std::uint8_t>(a), src, static_cast<std::size_t>(n) * itemsize(dtype));
    return a;
  }
  if (src_dtype == float32 && dtype == float16 &&
      float32_to_float16(static_cast<const float*>(src), out_ptr<Float16>(a), n))
    return a;
  if (src_dtype == float16 && dtype == float32 &&
      float16_to_float32(static_cast<const Float16*>(src), out_ptr<float>(a), n))
    return a;
  dispatch_with_complex(src_dtype, [&]<class S>() {
    dispatch_with_complex(dtype, [&]<class T>() {
      const S* s = static_cast<const S*>(src);
      T* o = out_ptr<T>(a);
      for (std::int64_t i = 0; i < n; ++i) o[i] = convert_value<T>(s[i]);
    });
  });
  return a;
}

void throw_empty_handle(const char* fn) {
  throw ValueError(std::string(fn) + ": empty Array handle (default-constructed)");
}

void throw_item_complex(DType from) {
  throw TypeError("Array::item: the array is " + std::string(dtype_name(from)) +
                  "; read it as std::complex, or take real() or imag() first");
}

void throw_dtype_access(const char* fn, DType have, DType want) {
  throw TypeError(std::string(fn) + ": the array has dtype " + std::string(dtype_name(have)) +
                  ", not " + std::string(dtype_name(want)));
}

}  // namespace detail

// ---- Array members ------------------------------------------------------------------------

std::int64_t Array::shape(int axis) const {
  const int nd = ndim();
  return shape()[detail::normalize_axis(axis, nd, "Array::shape")];
}

const detail::ConcreteImpl& Array::concrete_impl(const char* fn) const {
  if (!impl_) throw ValueError(std::string(fn) + ": empty Array handle (default-constructed)");
  if (impl_->level >= 0 && detail::is_abstract(*this)) detail::throw_concretization(fn, *this);
  if (impl_->level >= 0) detail::check_not_jit_traced(fn, *this);
  if (impl_->level >= 0)
    throw UnexpectedTracerError(std::string(fn) +
                                ": the array is a tracer inside a transform; use concrete() for "
                                "its value under grad/jvp, or keep the computation in linum ops");
  return static_cast<const detail::ConcreteImpl&>(*impl_);
}

Array Array::concrete() const {
  Array a = *this;
  while (a.is_tracer()) {
    // grad/jvp tracers carry their primal value; batched (vmap) tracers have no single value.
    const Array* p = a.impl()->primal_value();
    if (!p && detail::is_abstract(a)) detail::throw_concretization("Array::concrete", a);
    if (!p) detail::check_not_jit_traced("Array::concrete", a);
    if (!p)
      throw UnexpectedTracerError("Array::concrete: the value is batched under vmap (shape " +
                                  shape_str(shape()) +
                                  "); a per-example branch needs linum::cond or linum::where");
    a = *p;
  }
  return a;
}

Array::operator bool() const {
  Array c = concrete();
  if (c.size() == 0)
    throw ValueError("The truth value of an empty array is ambiguous (shape " +
                     shape_str(c.shape()) +
                     "); use size() > 0 to check that an array is not empty");
  if (c.size() != 1)
    throw ValueError("The truth value of an array with more than one element is ambiguous (shape " +
                     shape_str(c.shape()) + "); use linum::any or linum::all");
  return c.item<double>() != 0;
}

Array Array::astype(DType d) const { return linum::astype(*this, d); }
Array Array::reshape(const Shape& s) const { return linum::reshape(*this, s); }
Array Array::T() const { return linum::transpose(*this); }

// ---- creation -----------------------------------------------------------------------------

Array empty(const Shape& shape, DType dtype) {
  return Array(detail::make_small<detail::ConcreteImpl>(shape, dtype));
}

namespace {
Array full_named(const char* op, const Shape& shape, double value, DType dtype) {
  detail::OpScope scope(op);
  Array a = empty(shape, dtype);
  const auto n = shape_size(shape);
  detail::dispatch_with_complex(dtype, [&]<class T>() {
    T* o = detail::out_ptr<T>(a);
    const T v = detail::convert_value<T>(value);
    for (std::int64_t i = 0; i < n; ++i) o[i] = v;
  });
  return a;
}

}  // namespace

Array full(const Shape& shape, double value, DType dtype) {
  return full_named("full", shape, value, dtype);
}
Array zeros(const Shape& shape, DType dtype) { return full_named("zeros", shape, 0, dtype); }
Array ones(const Shape& shape, DType dtype) { return full_named("ones", shape, 1, dtype); }
Array zeros_like(const Array& a) {
  if (detail::is_abstract(a)) return detail::abstract_like(a);  // eval_shape: no buffer
  return zeros(a.shape(), a.dtype());
}
Array ones_like(const Array& a) {
  if (detail::is_abstract(a)) return detail::abstract_like(a);  // eval_shape: no buffer
  return ones(a.shape(), a.dtype());
}
Array full_like(const Array& a, double value) {
  if (detail::is_abstract(a)) return detail::abstract_like(a);
  return full(a.shape(), value, a.dtype());
}

void detail::throw_item_range(const std::string& value, DType from, const std::string& to) {
  throw ValueError("Array::item: the " + std::string(dtype_name(from)) + " value " + value +
                   " does not fit the requested type " + to);
}

Array detail::arange_impl(double start, double stop, double step, DType dt) {
  if (step == 0) throw ValueError("arange: step must not be zero");
  if (!std::isfinite(start) || !std::isfinite(stop) || !std::isfinite(step))
    throw ValueError("arange: start, stop and step must be finite");
  const double count = std::ceil((stop - start) / step);
  if (count >= 0x1p63)  // the cast below would be undefined
    throw ValueError("arange: " + std::to_string(count) + " elements do not fit in int64");
  const auto n = std::max<std::int64_t>(0, static_cast<std::int64_t>(count));
  detail::OpScope scope("arange");
  Array a = empty({n}, dt);
  detail::dispatch_with_complex(dt, [&]<class T>() {
    T* o = detail::out_ptr<T>(a);
    for (std::int64_t i = 0; i < n; ++i)
      o[i] = detail::convert_value<T>(start + static_cast<double>(i) * step);
  });
  return a;
}

Array linspace(double start, double stop, std::int64_t num, bool endpoint, DType dtype) {
  if (num < 0) throw ValueError("linspace: num must be non-negative, got " + std::to_string(num));
  detail::OpScope scope("linspace");
  Array a = empty({num}, dtype);
  const double div = endpoint ? static_cast<double>(num - 1) : static_cast<double>(num);
  const double step = div > 0 ? (stop - start) / div : 0;
  detail::dispatch_with_complex(dtype, [&]<class T>() {
    T* o = detail::out_ptr<T>(a);
    for (std::int64_t i = 0; i < num; ++i)
      o[i] = detail::convert_value<T>(start + static_cast<double>(i) * step);
    if (endpoint && num > 1) o[num - 1] = detail::convert_value<T>(stop);
  });
  return a;
}

Array eye(std::int64_t n, std::int64_t m, std::int64_t k, DType dtype) {
  if (n < 0) throw ValueError("eye: N must be non-negative, got " + std::to_string(n));
  if (m < 0) m = n;
  Array a = full_named("eye", {n, m}, 0, dtype);
  detail::dispatch_with_complex(dtype, [&]<class T>() {
    T* o = detail::out_ptr<T>(a);
    for (std::int64_t i = 0; i < n; ++i)
      if (i + k >= 0 && i + k < m) o[i * m + i + k] = T(1);
  });
  return a;
}

Array array(const Array& a, DType dtype) {
  detail::check_valid(a, "linum::array");
  if (a.is_tracer()) return astype(a, dtype);  // values are immutable: a traced cast is a copy
  return detail::from_buffer(detail::in_ptr<std::uint8_t>(a), a.shape(), a.dtype(), dtype);
}

// ---- printing -------------------------------------------------------------------------------
// A port of numpy's array2string as JAX's repr calls it (separator ", ", prefix "Array(", suffix
// ",", linewidth 75, threshold 1000, edgeitems 3, precision 8, floatmode "maxprec").

namespace {

constexpr int kLineWidth = 75;
constexpr std::int64_t kEdgeItems = 3;

// Whether the decimal string reads back as x in T.
template <class T>
bool reads_back(const char* s, double x) {
  if constexpr (std::is_same_v<T, double>)
    return std::strtod(s, nullptr) == x;
  else if constexpr (std::is_same_v<T, float>)
    return std::strtof(s, nullptr) == static_cast<float>(x);
  else
    return T(std::strtod(s, nullptr)).bits == T(x).bits;
}

// Fraction digits of the shortest string that reads back as x in T (numpy's dragon4 "unique"
// digits), at most 8, trailing zeros dropped.
template <class T>
int unique_digits(double x, bool sci) {
  char buf[64];
  for (int k = 0; k <= 8; ++k) {
    std::snprintf(buf, sizeof buf, sci ? "%.*e" : "%.*f", k, x);
    if (reads_back<T>(buf, x)) return k;
  }
  std::snprintf(buf, sizeof buf, sci ? "%.8e" : "%.8f", x);
  std::string s = buf;
  const auto dot = s.find('.');
  auto end = sci ? s.find('e') : s.size();
  int k = static_cast<int>(end - dot - 1);
  while (k > 0 && s[dot + static_cast<std::size_t>(k)] == '0') --k;
  return k;
}

// numpy's FloatingFormat: positional unless the non-zero magnitudes span a wide range; in
// positional mode every value keeps its own digits (padded with spaces), in scientific mode all
// get the most digits any needs. Words are right-aligned to a common width by the caller.
template <class T>
std::vector<std::string> format_floats(const std::vector<T>& v) {
  double maxv = 0, minv = INFINITY;
  for (T t : v) {
    const double x = std::abs(static_cast<double>(t));
    if (std::isfinite(x) && x != 0) {
      maxv = std::max(maxv, x);
      minv = std::min(minv, x);
    }
  }
  const bool sci = minv < INFINITY && (maxv >= 1e8 || minv < 1e-4 || maxv / minv > 1e3);
  int digits = 0;
  for (T t : v)
    if (std::isfinite(static_cast<double>(t)))
      digits = std::max(digits, unique_digits<T>(static_cast<double>(t), sci));
  std::vector<std::string> out;
  std::vector<std::pair<std::string, std::string>> sci_parts;  // mantissa, exponent digits
  std::size_t exp_digits = 0;
  char buf[64];
  for (T t : v) {
    const double x = static_cast<double>(t);
    if (std::isnan(x)) {
      out.emplace_back("nan");
    } else if (std::isinf(x)) {
      out.emplace_back(x > 0 ? "inf" : "-inf");
    } else if (sci) {
      std::snprintf(buf, sizeof buf, "%.*e", digits, x);
      std::string s = buf;
      const auto e = s.find('e');
      std::string mant = s.substr(0, e);
      if (digits == 0) mant += '.';
      sci_parts.emplace_back(mant + 'e' + s[e + 1], s.substr(e + 2));
      exp_digits = std::max(exp_digits, sci_parts.back().second.size());
      out.emplace_back();
      continue;
    } else {
      const int k = unique_digits<T>(x, false);
      std::snprintf(buf, sizeof buf, "%.*f", k, x);
      std::string s = buf;
      if (k == 0) s += '.';
      out.push_back(s + std::string(static_cast<std::size_t>(digits - k), ' '));
    }
  }
  if (sci) {  // exponents padded to a common number of digits, as numpy's exp_size
    std::size_t j = 0;
    for (auto& w : out)
      if (w.empty()) {
        auto& [m, e] = sci_parts[j++];
        w = m + std::string(exp_digits - e.size(), '0') + e;
      }
  }
  return out;
}

// ml_dtypes' bfloat16 is no numpy float, so numpy prints each element with its repr: the
// float32 value streamed (6 significant digits, "1" for 1.0, NaN without its sign), unpadded.
std::string bfloat16_str(BFloat16 b) {
  const float f = static_cast<float>(b);
  std::ostringstream os;
  os << (std::isnan(f) ? std::abs(f) : f);
  return os.str();
}

std::string rstrip(std::string s) {
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

// numpy's ComplexFloatingFormat: the real parts and the signed imaginary parts are each
// formatted as one float column (aligned within the column), and "j" goes before the
// imaginary part's padding.
template <class R>
std::vector<std::string> format_complex(const std::vector<std::complex<R>>& v) {
  std::vector<R> re, im;
  for (const auto& z : v) {
    re.push_back(z.real());
    im.push_back(z.imag());
  }
  auto column = [](std::vector<std::string> w, bool plus) {
    std::size_t width = 0;
    for (auto& s : w) {
      if (plus && s[0] != '-') s.insert(0, "+");
      width = std::max(width, s.size());
    }
    for (auto& s : w) s.insert(0, width - s.size(), ' ');
    return w;
  };
  const auto rs = column(format_floats(re), false), is = column(format_floats(im), true);
  std::vector<std::string> out;
  for (std::size_t k = 0; k < v.size(); ++k) {
    const std::string i = is[k], core = rstrip(i);
    out.push_back(rs[k] + core + "j" + i.substr(core.size()));
  }
  return out;
}

// numpy's _formatArray: rows wrap at the line width, "..." stands for the elided middle of an
// axis longer than 2 * edgeitems, and axes above the last are separated by blank lines.
struct Formatter {
  const Shape& shape;
  bool summarize;
  const std::vector<std::string>& words;  // the shown elements in print order
  std::size_t next = 0;

  std::string recurse(std::size_t axis, const std::string& hanging, std::int64_t width) {
    const std::size_t left = shape.size() - axis;
    if (left == 0) return words[next++];
    const std::string next_hanging = hanging + ' ';
    const std::int64_t next_width = width - 1;  // room for the closing bracket
    const std::int64_t n = shape[axis];
    const bool show_summary = summarize && 2 * kEdgeItems < n;
    const std::int64_t leading = show_summary ? kEdgeItems : 0;
    const std::int64_t trailing = show_summary ? kEdgeItems : n;
    std::string s;
    if (left == 1) {
      const auto elem_width = static_cast<std::size_t>(width - 1);  // room for "," or "]"
      std::string line = hanging;
      auto extend = [&](const std::string& word) {
        // Wrapping cannot help a word that is already at the start of a line.
        if (line.size() + word.size() > elem_width && line.size() > hanging.size()) {
          s += rstrip(line) + "\n";
          line = hanging;
        }
        line += word;
      };
      for (std::int64_t i = 0; i < leading; ++i) {
        extend(recurse(axis + 1, next_hanging, next_width));
        line += ", ";
      }
      if (show_summary) {
        extend("...");
        line += ", ";
      }
      for (std::int64_t i = trailing; i > 1; --i) {
        extend(recurse(axis + 1, next_hanging, next_width));
        line += ", ";
      }
      extend(recurse(axis + 1, next_hanging, next_width));
      s += line;
    } else {
      const std::string sep = "," + std::string(left - 1, '\n');
      for (std::int64_t i = 0; i < leading; ++i)
        s += hanging + recurse(axis + 1, next_hanging, next_width) + sep;
      if (show_summary) s += hanging + "..." + sep;
      for (std::int64_t i = trailing; i > 1; --i)
        s += hanging + recurse(axis + 1, next_hanging, next_width) + sep;
      s += hanging + recurse(axis + 1, next_hanging, next_width);
    }
    return "[" + s.substr(hanging.size()) + "]";
  }
};

// Flat offsets of the shown elements, in print order (numpy's _leading_trailing).
void collect_shown(const Shape& shape, bool summarize, std::size_t axis, std::int64_t off,
                   const std::vector<std::int64_t>& st, std::vector<std::int64_t>& flat) {
  if (axis == shape.size()) {
    flat.push_back(off);
    return;
  }
  const std::int64_t n = shape[axis];
  for (std::int64_t i = 0; i < n; ++i) {
    if (summarize && n > 2 * kEdgeItems && i == kEdgeItems) i = n - kEdgeItems;
    collect_shown(shape, summarize, axis + 1, off + i * st[axis], st, flat);
  }
}

}  // namespace

std::string repr(const Array& a) {
  if (!a.valid()) return "Array(<empty handle>)";
  if (a.is_tracer()) {
    std::ostringstream os;
    os << "Traced<ShapedArray(" << a.dtype() << '[';  // JAX's short form: float32[2,3]
    for (std::size_t i = 0; i < a.shape().size(); ++i) os << (i ? "," : "") << a.shape()[i];
    os << ']' << (a.weak_type() ? ", weak_type=True" : "") << ")>";
    return os.str();
  }
  const std::string prefix = "Array(";
  const std::string dtype_str = "dtype=" + std::string(dtype_name(a.dtype())) +
                                (a.weak_type() ? ", weak_type=True" : "") + ")";
  std::string s;
  if (a.size() == 0) {
    s = "[], shape=" + shape_str(a.shape());
  } else {
    const bool summarize = a.size() > 1000;
    std::vector<std::int64_t> flat;
    collect_shown(a.shape(), summarize, 0, 0, detail::strides_of(a.shape()), flat);
    std::vector<std::string> words;
    detail::dispatch_with_complex(a.dtype(), [&]<class T>() {
      const T* v = detail::in_ptr<T>(a);
      if constexpr (detail::is_complex_v<T>) {
        std::vector<T> shown;
        for (auto i : flat) shown.push_back(v[i]);
        words = format_complex(shown);
      } else if constexpr (std::is_same_v<T, BFloat16>) {
        for (auto i : flat) words.push_back(bfloat16_str(v[i]));
      } else if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, Float16>) {
        std::vector<T> shown;
        for (auto i : flat) shown.push_back(v[i]);
        words = format_floats(shown);
      } else if constexpr (std::is_same_v<T, std::uint8_t>) {  // bool: " True" aligns with "False"
        for (auto i : flat) words.emplace_back(v[i] ? (a.ndim() ? " True" : "True") : "False");
      } else {
        for (auto i : flat) words.push_back(std::to_string(v[i]));
      }
    });
    std::size_t width = 0;
    if (a.dtype() != bfloat16)  // numpy pads its own types' words to a common width
      for (const auto& w : words) width = std::max(width, w.size());
    for (auto& w : words) w.insert(0, width - std::min(width, w.size()), ' ');
    Formatter f{a.shape(), summarize, words};
    // The line width leaves room for the "," suffix; the hanging indent skips "Array([".
    s = f.recurse(0, std::string(prefix.size() + 1, ' '), kLineWidth - 1);
  }
  // JAX puts the dtype after the last line, or after a wide gap when that line is long.
  const auto nl = s.rfind('\n');
  const std::size_t last_line_len = (nl == std::string::npos ? s.size() + 1 : s.size() - nl) + 1;
  const std::string sep =
      last_line_len + dtype_str.size() + 1 > kLineWidth ? std::string(prefix.size(), ' ') : " ";
  return prefix + s + "," + sep + dtype_str;
}

std::ostream& operator<<(std::ostream& os, const Array& a) { return os << repr(a); }

}  // namespace linum
