// Array storage, creation functions, conversions and JAX-style printing.
#include <linum/autodiff/array.hpp>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <new>
#include <ostream>
#include <sstream>

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

std::int64_t shape_size(const Shape& s) {
  std::int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

namespace detail {

ConcreteImpl::ConcreteImpl(Shape s, DType d) : ArrayImpl(std::move(s), d) {
  for (auto dim : shape)
    if (dim < 0) throw ValueError("linum: negative dimension in shape " + shape_str(shape));
  const std::size_t bytes = static_cast<std::size_t>(shape_size(shape)) * itemsize(d);
  if (bytes <= sizeof(small)) {
    data = small;
  } else {
    // 64-byte alignment keeps SIMD loads and BLAS on their fast paths.
    void* p = ::operator new(bytes, std::align_val_t(64));
    owner = std::shared_ptr<void>(p, [](void* q) { ::operator delete(q, std::align_val_t(64)); });
    data = p;
  }
}

Array make_scalar(double value, DType dtype) {
  Array a = empty({}, dtype);
  dispatch(dtype, [&]<class T>() { *out_ptr<T>(a) = static_cast<T>(value); });
  return a;
}

Array from_buffer(const void* src, const Shape& shape, DType src_dtype, DType dtype) {
  Array a = empty(shape, dtype);
  const auto n = shape_size(shape);
  if (src_dtype == dtype) {
    std::memcpy(out_ptr<std::uint8_t>(a), src, static_cast<std::size_t>(n) * itemsize(dtype));
    return a;
  }
  dispatch(src_dtype, [&]<class S>() {
    dispatch(dtype, [&]<class T>() {
      const S* s = static_cast<const S*>(src);
      T* o = out_ptr<T>(a);
      for (std::int64_t i = 0; i < n; ++i) o[i] = static_cast<T>(s[i]);
    });
  });
  return a;
}

void throw_dtype_access(const char* fn, DType have, DType want) {
  throw TypeError(std::string(fn) + ": the array has dtype " + std::string(dtype_name(have)) +
                  ", not " + std::string(dtype_name(want)));
}

}  // namespace detail

// ---- Array members ------------------------------------------------------------------------

const Shape& Array::shape() const {
  if (!impl_) throw ValueError("Array::shape: empty Array handle (default-constructed)");
  return impl_->shape;
}

std::int64_t Array::shape(int axis) const {
  const int nd = ndim();
  return shape()[detail::normalize_axis(axis, nd, "Array::shape")];
}

DType Array::dtype() const {
  if (!impl_) throw ValueError("Array::dtype: empty Array handle (default-constructed)");
  return impl_->dtype;
}

const detail::ConcreteImpl& Array::concrete_impl(const char* fn) const {
  if (!impl_) throw ValueError(std::string(fn) + ": empty Array handle (default-constructed)");
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
    if (!p)
      throw UnexpectedTracerError(
          "Array::concrete: the value is batched under vmap (shape " + shape_str(shape()) +
          "); a per-example branch needs linum::cond or linum::where");
    a = *p;
  }
  return a;
}

Array::operator bool() const {
  Array c = concrete();
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
  return Array(std::make_shared<detail::ConcreteImpl>(shape, dtype));
}

Array full(const Shape& shape, double value, DType dtype) {
  Array a = empty(shape, dtype);
  const auto n = shape_size(shape);
  detail::dispatch(dtype, [&]<class T>() {
    T* o = detail::out_ptr<T>(a);
    const T v = static_cast<T>(value);
    for (std::int64_t i = 0; i < n; ++i) o[i] = v;
  });
  return a;
}

Array zeros(const Shape& shape, DType dtype) { return full(shape, 0, dtype); }
Array ones(const Shape& shape, DType dtype) { return full(shape, 1, dtype); }
Array zeros_like(const Array& a) { return zeros(a.shape(), a.dtype()); }
Array ones_like(const Array& a) { return ones(a.shape(), a.dtype()); }
Array full_like(const Array& a, double value) { return full(a.shape(), value, a.dtype()); }

Array arange(double start, double stop, double step, DType dtype) {
  if (step == 0) throw ValueError("arange: step must not be zero");
  const auto n = std::max<std::int64_t>(0, static_cast<std::int64_t>(std::ceil((stop - start) / step)));
  Array a = empty({n}, dtype);
  detail::dispatch(dtype, [&]<class T>() {
    T* o = detail::out_ptr<T>(a);
    for (std::int64_t i = 0; i < n; ++i) o[i] = static_cast<T>(start + static_cast<double>(i) * step);
  });
  return a;
}

Array arange(std::int64_t stop, DType dtype) { return arange(0, static_cast<double>(stop), 1, dtype); }

Array linspace(double start, double stop, std::int64_t num, bool endpoint, DType dtype) {
  if (num < 0) throw ValueError("linspace: num must be non-negative, got " + std::to_string(num));
  Array a = empty({num}, dtype);
  const double div = endpoint ? static_cast<double>(num - 1) : static_cast<double>(num);
  const double step = div > 0 ? (stop - start) / div : 0;
  detail::dispatch(dtype, [&]<class T>() {
    T* o = detail::out_ptr<T>(a);
    for (std::int64_t i = 0; i < num; ++i) o[i] = static_cast<T>(start + static_cast<double>(i) * step);
    if (endpoint && num > 1) o[num - 1] = static_cast<T>(stop);
  });
  return a;
}

Array eye(std::int64_t n, std::int64_t m, std::int64_t k, DType dtype) {
  if (m < 0) m = n;
  Array a = zeros({n, m}, dtype);
  detail::dispatch(dtype, [&]<class T>() {
    T* o = detail::out_ptr<T>(a);
    for (std::int64_t i = 0; i < n; ++i)
      if (i + k >= 0 && i + k < m) o[i * m + i + k] = T(1);
  });
  return a;
}

Array array(const Array& a, DType dtype) {
  Array c = a.concrete();
  return detail::from_buffer(detail::in_ptr<std::uint8_t>(c), c.shape(), c.dtype(), dtype);
}

// ---- printing -------------------------------------------------------------------------------

namespace {

// numpy's float formatting (maxprec, precision 8): each value with the fewest digits that
// round-trip, fractional parts padded to a common width; scientific when the range is wide.
template <class T>
std::vector<std::string> format_floats(const T* v, const std::vector<std::int64_t>& idx) {
  double maxabs = 0, minabs = INFINITY;
  for (auto i : idx) {
    const double x = std::abs(static_cast<double>(v[i]));
    if (!std::isfinite(x)) continue;
    maxabs = std::max(maxabs, x);
    if (x > 0) minabs = std::min(minabs, x);
  }
  const bool sci = maxabs >= 1e8 || (minabs < 1e-4) || (minabs < INFINITY && maxabs / minabs > 1e3);
  std::vector<std::string> out;
  char buf[64];
  auto shortest = [&](double x, bool e) {
    for (int k = 0; k <= 8; ++k) {
      std::snprintf(buf, sizeof buf, e ? "%.*e" : "%.*f", k, x);
      if (static_cast<T>(std::strtod(buf, nullptr)) == static_cast<T>(x)) return k;
    }
    return 8;
  };
  int frac = 0;
  for (auto i : idx)
    if (std::isfinite(static_cast<double>(v[i]))) frac = std::max(frac, shortest(v[i], sci));
  for (auto i : idx) {
    const double x = static_cast<double>(v[i]);
    if (std::isnan(x)) { out.emplace_back("nan"); continue; }
    if (std::isinf(x)) { out.emplace_back(x > 0 ? "inf" : "-inf"); continue; }
    const int k = shortest(x, sci);
    std::snprintf(buf, sizeof buf, sci ? "%.*e" : "%.*f", k, x);
    std::string s = buf;
    std::string mant = s, expo;
    if (sci) {
      const auto p = s.find('e');
      mant = s.substr(0, p);
      expo = s.substr(p);
    }
    if (mant.find('.') == std::string::npos) mant += '.';
    mant += std::string(static_cast<std::size_t>(frac - k), sci ? '0' : ' ');
    out.push_back(mant + expo);
  }
  return out;
}

struct Printer {
  const Array& a;
  bool elide;
  std::vector<std::string> words;  // formatted elements in print order (elided ones skipped)
  std::size_t width = 0;

  // Indices shown along an axis of length n: all, or the first and last 3 around "...".
  std::vector<std::int64_t> shown(std::int64_t n) const {
    std::vector<std::int64_t> r;
    if (!elide || n <= 6) {
      for (std::int64_t i = 0; i < n; ++i) r.push_back(i);
    } else {
      r = {0, 1, 2, -1, n - 3, n - 2, n - 1};
    }
    return r;
  }
  void collect(std::vector<std::int64_t>& flat, std::int64_t off, int axis,
               const std::vector<std::int64_t>& st) const {
    if (axis == a.ndim()) {
      flat.push_back(off);
      return;
    }
    for (auto i : shown(a.shape()[axis]))
      if (i >= 0) collect(flat, off + i * st[axis], axis + 1, st);
  }
  void emit(std::ostringstream& os, std::size_t& w, int axis, const std::string& indent,
            std::size_t& col) const {
    const int nd = a.ndim();
    if (axis == nd) {
      os << std::string(width - words[w].size(), ' ') << words[w];
      ++w;
      return;
    }
    os << '[';
    const auto idx = shown(a.shape()[axis]);
    const std::string inner = indent + " ";
    std::size_t line = indent.size() + 1;
    for (std::size_t j = 0; j < idx.size(); ++j) {
      if (j) {
        if (axis == nd - 1) {
          os << ',';
          const std::size_t next = width + 2;
          if (line + next + 1 > 75) {
            os << '\n' << inner;
            line = inner.size();
          } else {
            os << ' ';
            line += 1;
          }
        } else {
          os << ',' << std::string(static_cast<std::size_t>(nd - axis - 1), '\n') << inner;
        }
      }
      if (idx[j] < 0) {
        os << "...";
        line += 3;
        continue;
      }
      emit(os, w, axis + 1, inner, col);
      line += width + 1;
    }
    os << ']';
  }
};

}  // namespace

std::string repr(const Array& a) {
  if (!a.valid()) return "Array(<empty handle>)";
  if (a.is_tracer()) {
    std::ostringstream os;
    os << "Traced<ShapedArray(" << a.dtype() << shape_str(a.shape()) << ")>";
    return os.str();
  }
  Printer p{a, a.size() > 1000, {}, 0};
  std::vector<std::int64_t> flat;
  p.collect(flat, 0, 0, detail::strides_of(a.shape()));
  detail::dispatch(a.dtype(), [&]<class T>() {
    const T* v = detail::in_ptr<T>(a);
    if constexpr (std::is_floating_point_v<T>) {
      p.words = format_floats(v, flat);
    } else {
      for (auto i : flat) {
        if (a.dtype() == bool_) p.words.emplace_back(v[i] ? "True" : "False");
        else p.words.push_back(std::to_string(v[i]));
      }
    }
  });
  for (const auto& w : p.words) p.width = std::max(p.width, w.size());
  std::ostringstream os;
  os << "Array(";
  std::size_t w = 0, col = 0;
  if (a.ndim() == 0) os << p.words[0];
  else p.emit(os, w, 0, std::string(6, ' '), col);
  os << ", dtype=" << a.dtype() << ')';
  return os.str();
}

std::ostream& operator<<(std::ostream& os, const Array& a) { return os << repr(a); }

}  // namespace linum
