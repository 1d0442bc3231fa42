// Non-template parts of control flow: the unstack primitive that slices scan's xs (views, one
// tape node per leaf), stacking of ys, JAX's checks and messages, and per-example selection.
#include <linum/autodiff/control_flow.hpp>

#include <linum/autodiff/ops/kernel_util.hpp>

#include <algorithm>
#include <sstream>

namespace linum::detail {
namespace {

// A tape node holds at most 65535 inputs/outputs; longer sequences go in chunks of this size.
constexpr std::int64_t kChunk = 16384;

// x[begin], ..., x[begin + count - 1] along axis 0. The kernel returns views into x's buffer,
// so slicing a sequence costs no copy; the VJP stacks the cotangents back (zeros for gaps).
struct Unstack final : Primitive {
  std::int64_t begin, count;
  Unstack(std::int64_t b, std::int64_t c) : begin(b), count(c) {}
  const char* name() const override { return "unstack"; }
  bool handles_reduced_floats() const override { return true; }  // views of the input's bytes
  Avals abstract_eval(std::span<const ShapeDtype> in) const override {
    return Avals(static_cast<std::size_t>(count),
                 {Shape(in[0].shape.begin() + 1, in[0].shape.end()), in[0].dtype});
  }
  void print_params(std::ostream& os) const override {
    os << "begin=" << begin << " count=" << count;
  }

  Arrays eval(std::span<const Array> in) const override {
    const Array& x = in[0];
    const auto& c = static_cast<const ConcreteImpl&>(*x.impl());
    Shape s(x.shape().begin() + 1, x.shape().end());
    const std::size_t bytes = static_cast<std::size_t>(shape_size(s)) * itemsize(x.dtype());
    Arrays out;
    out.reserve(static_cast<std::size_t>(count));
    // The views own the whole input impl, which owns the buffer (inline or heap).
    std::shared_ptr<void> owner = x.impl();
    for (std::int64_t t = begin; t < begin + count; ++t)
      out.emplace_back(std::make_shared<ConcreteImpl>(
          s, x.dtype(), owner, static_cast<std::byte*>(c.data) + static_cast<std::size_t>(t) * bytes));
    return out;
  }

  Arrays jvp(std::span<const Array>, std::span<const Array> tangents,
             std::span<const Array>) const override {
    return linum::bind(std::make_shared<const Unstack>(begin, count), tangents);
  }

  Arrays vjp(std::span<const Array> primals, std::span<const Array> cts,
             std::span<const Array>) const override {
    const Array& x = primals[0];
    Shape s(x.shape().begin() + 1, x.shape().end());
    Arrays parts(cts.begin(), cts.end());
    for (auto& p : parts)
      if (!p.valid()) p = zeros_for(x, s, x.dtype());
    Array body = stack(parts, 0);
    const std::int64_t n = x.shape(0);
    if (count == n) return {body};
    Arrays pieces;
    auto gap = [&](std::int64_t len) {
      Shape g = x.shape();
      g[0] = len;
      pieces.push_back(zeros_for(x, g, x.dtype()));
    };
    if (begin > 0) gap(begin);
    pieces.push_back(body);
    if (begin + count < n) gap(n - begin - count);
    return {concatenate(pieces, 0)};
  }

  Batched vmap(std::span<const Array> in, std::span<const int> bdims) const override {
    // Examples go to axis 1, so that slicing axis 0 yields slices batched along 0.
    Array v = moveaxis(in[0], bdims[0], 1);
    Arrays out = linum::bind(std::make_shared<const Unstack>(begin, count), std::span<const Array>(&v, 1));
    std::vector<int> zero(out.size(), 0);
    return {std::move(out), std::move(zero)};
  }
};

}  // namespace

std::string aval_str(const Array& a) {
  std::string s(dtype_name(a.dtype()));
  s += '[';
  for (int d = 0; d < a.ndim(); ++d) {
    if (d) s += ',';
    s += std::to_string(a.shape(d));
  }
  s += ']';
  return s;
}

Arrays unstack(const Array& x, const char* op) {
  check_valid(x, op);
  if (x.ndim() == 0)
    throw ValueError(std::string(op) + " got value with no leading axis to scan over: " + aval_str(x));
  const std::int64_t n = x.shape(0);
  Arrays out;
  out.reserve(static_cast<std::size_t>(n));
  for (std::int64_t b = 0; b < n; b += kChunk) {
    const std::int64_t c = std::min(kChunk, n - b);
    Arrays part = linum::bind(std::make_shared<const Unstack>(b, c), std::span<const Array>(&x, 1));
    for (auto& p : part) out.push_back(std::move(p));
  }
  return out;
}

Array stack_steps(const Arrays& ys) {
  if (static_cast<std::int64_t>(ys.size()) <= kChunk) return stack(ys, 0);
  Arrays parts;
  for (std::size_t b = 0; b < ys.size(); b += kChunk) {
    const std::size_t e = std::min(ys.size(), b + static_cast<std::size_t>(kChunk));
    parts.push_back(stack(Arrays(ys.begin() + static_cast<std::ptrdiff_t>(b), ys.begin() + static_cast<std::ptrdiff_t>(e)), 0));
  }
  return concatenate(parts, 0);
}

std::int64_t scan_length(const Arrays& xs, std::optional<std::int64_t> length) {
  std::vector<std::int64_t> sizes;
  for (const auto& x : xs) {
    check_valid(x, "scan");
    if (x.ndim() == 0)
      throw ValueError("scan got value with no leading axis to scan over: " + aval_str(x));
    if (std::find(sizes.begin(), sizes.end(), x.shape(0)) == sizes.end()) sizes.push_back(x.shape(0));
  }
  auto list = [&] {
    std::string s;
    for (std::size_t i = 0; i < sizes.size(); ++i) s += (i ? ", " : "") + std::to_string(sizes[i]);
    return s;
  };
  if (sizes.size() > 1) throw ValueError("scan got values with different leading axis sizes: " + list() + ".");
  if (length && *length < 0) throw ValueError("scan got a negative length " + std::to_string(*length));
  if (sizes.empty()) {
    if (!length) throw ValueError("scan got no values to scan over and `length` was not provided.");
    return *length;
  }
  if (length && *length != sizes[0])
    throw ValueError("scan got `length` argument of " + std::to_string(*length) +
                     " which disagrees with leading axis sizes [" + list() + "].");
  return sizes[0];
}

void check_same_avals(const Arrays& in, const Arrays& out, const std::string& header,
                      const std::string& in_label, const std::string& out_label,
                      const std::function<std::string(std::size_t)>& name,
                      const std::function<std::string()>& structures) {
  if (in.size() != out.size())
    throw TypeError(header.substr(0, header.find(" must ")) +
                    " must have the same pytree structure, but they differ:\n  * " + structures());
  for (std::size_t i = 0; i < in.size(); ++i) {
    check_valid(out[i], header.c_str());
    const bool shape_ok = in[i].shape() == out[i].shape(), dtype_ok = in[i].dtype() == out[i].dtype();
    if (shape_ok && dtype_ok) continue;
    std::ostringstream os;
    os << header << ", but they differ:\n  * the " << in_label << " component " << name(i)
       << " has type " << aval_str(in[i]) << " but the corresponding " << out_label
       << " component has type " << aval_str(out[i]) << ", so the "
       << (!shape_ok && !dtype_ok ? "shapes and dtypes" : !shape_ok ? "shapes" : "dtypes")
       << " do not match";
    throw TypeError(os.str());
  }
}

Array check_pred(const Array& pred, const char* what) {
  check_valid(pred, what);
  if (pred.ndim() != 0)
    throw TypeError(std::string(what) + ": pred must be a scalar, got shape " + shape_str(pred.shape()) +
                    (std::string(what) == "while_loop" ? " (cond_fun must return a boolean scalar)" : ""));
  if (pred.dtype() == bool_) return pred;
  if (is_integer(pred.dtype()) && std::string(what) == "cond") return not_equal(pred, Array(0).astype(pred.dtype()));
  throw TypeError(std::string(what) +
                  (std::string(what) == "cond" ? ": pred type must be either boolean or number, got "
                                                : ": cond_fun must return a boolean scalar, but got ") +
                  std::string(dtype_name(pred.dtype())));
}

void check_index(const Array& index, const char* what) {
  check_valid(index, what);
  if (index.ndim() != 0)
    throw TypeError(std::string(what) + ": " +
                    (std::string(what) == "switch" ? "branch index must be scalar" : "bounds must be scalars") +
                    ", got shape " + shape_str(index.shape()));
  if (!is_integer(index.dtype()))
    throw TypeError(std::string(what) + ": " +
                    (std::string(what) == "switch" ? "index type must be an integer" : "bounds must be integers") +
                    ", got " + std::string(dtype_name(index.dtype())));
}

bool any_true(const Array& pred) {
  Array b = bottom_value(pred);
  const auto* p = in_ptr<std::uint8_t>(b);
  return std::any_of(p, p + b.size(), [](std::uint8_t v) { return v != 0; });
}

Arrays select_leaves(const Array& pred, const Arrays& a, const Arrays& b) {
  Arrays out(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) out[i] = where(pred, a[i], b[i]);
  return out;
}

}  // namespace linum::detail
