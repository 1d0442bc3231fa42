// Named-axis collectives as one primitive. The vmap that owns the axis name (identified by its
// trace uid when the op is called) reduces over its batch dimension; every other level passes
// the primitive through (vmap: moves its own batch axis out of the way; grad/jvp: linear rules).
// With no tracer of the named vmap among the inputs the value is the same for every example, so
// the kernel applies the closed form (psum: size * x, pmax: x, all_gather: broadcast).
// Names no vmap owns go to the innermost AxisProvider bound to them (distributed::pmap).
#include <linum/autodiff/collectives.hpp>

#include <linum/autodiff/collective_rules.hpp>
#include <linum/autodiff/ops.hpp>
#include <linum/autodiff/ops/kernel_util.hpp>
#include <linum/autodiff/trace.hpp>

#include <ostream>
#include <utility>
#include <vector>

namespace linum {
namespace {

// gather_t is all_gather's transpose (JAX's psum_scatter): example b receives the sum over
// examples of their entry b along `axis`.
enum class Kind { psum, pmax, pmin, all_gather, gather_t };

struct Collective final : Primitive {
  Kind kind;
  std::uint64_t uid;
  std::int64_t size;
  std::string axis_name;
  int axis;  // all_gather / gather_t: the gathered axis of the per-example value
  Collective(Kind k, const detail::BatchTrace& t, int ax)
      : kind(k), uid(t.uid()), size(t.axis_size()), axis_name(t.axis_name()), axis(ax) {}
  Collective(const Collective& o, Kind k, int ax) : Collective(o) {
    kind = k;
    axis = ax;
  }

  const char* name() const override {
    switch (kind) {
      case Kind::psum: return "psum";
      case Kind::pmax: return "pmax";
      case Kind::pmin: return "pmin";
      case Kind::all_gather: return "all_gather";
      case Kind::gather_t: return "psum_scatter";
    }
    return "collective";
  }
  // The kernel is made of linum ops on the whole batched value: it runs on abstract tracers too.
  bool abstract_eval_by_tracing() const override { return true; }
  bool handles_reduced_floats() const override { return true; }  // its ops widen on their own
  void print_params(std::ostream& os) const override {
    os << "axis_name=" << axis_name << " axis_size=" << size;
    if (kind == Kind::all_gather || kind == Kind::gather_t) os << " axis=" << axis;
  }

  Array rebind(const Array& x, Kind k, int ax) const {
    return bind1(std::make_shared<const Collective>(*this, k, ax), {x});
  }
  Array rebind(const Array& x) const { return rebind(x, kind, axis); }

  Arrays eval(std::span<const Array> in) const override {
    const Array& x = in[0];
    switch (kind) {
      case Kind::psum: return {multiply(x, full(Shape{}, static_cast<double>(size), x.dtype()))};
      case Kind::pmax:
      case Kind::pmin: return {x};
      case Kind::all_gather: {
        Shape s = x.shape();
        s.insert(s.begin() + axis, size);
        return {broadcast_to(expand_dims(x, axis), s)};
      }
      case Kind::gather_t: return {sum(x, axis)};
    }
    return {x};
  }

  Arrays jvp(std::span<const Array> primals, std::span<const Array> tangents,
             std::span<const Array> outs) const override {
    return {detail::collective_jvp(*this, primals[0], tangents[0], outs[0])};
  }

  Arrays vjp(std::span<const Array> primals, std::span<const Array> cts,
             std::span<const Array> outs) const override {
    const Array& ct = cts[0];
    switch (kind) {
      case Kind::psum:
      case Kind::pmax:
      case Kind::pmin: return {detail::reduction_vjp(*this, primals[0], ct, outs[0])};
      case Kind::all_gather: {
        // An example's cotangent must come out batched even when ct is the same for every
        // example: adding a batched zero makes the named vmap process the transpose.
        Array c = ct;
        if (auto* t = named_trace(); t && detail::batched_by(primals[0], uid) &&
                                     !detail::batched_by(c, uid)) {
          Shape s = c.shape();
          s.insert(s.begin(), size);
          c = add(c, t->wrap(detail::zeros_for(c, s, c.dtype()), 0));
        }
        return {rebind(c, Kind::gather_t, axis)};
      }
      case Kind::gather_t: return {rebind(ct, Kind::all_gather, axis)};
    }
    return {Array()};
  }

  Batched vmap(std::span<const Array> in, std::span<const int> bdims) const override {
    const detail::BatchTrace* t = detail::current_batch_trace();
    const Array& v = in[0];
    const int b = bdims[0];
    if (t && t->uid() == uid) {
      switch (kind) {
        case Kind::psum: return {{sum(v, b)}, {-1}};
        case Kind::pmax: return {{max(v, b)}, {-1}};
        case Kind::pmin: return {{min(v, b)}, {-1}};
        case Kind::all_gather: return {{moveaxis(v, b, axis)}, {-1}};
        case Kind::gather_t:  // sum over the examples; the gathered axis becomes the batch axis
          return {{sum(v, b)}, {axis}};
      }
    }
    // Another vmap: its batch axis goes in front and the op acts on the rest.
    if (kind == Kind::psum || kind == Kind::pmax || kind == Kind::pmin) return {{rebind(v)}, {b}};
    return {{rebind(moveaxis(v, b, 0), kind, axis + 1)}, {0}};
  }

  detail::BatchTrace* named_trace() const {
    for (int l = detail::trace_depth(); l-- > 0;)
      if (auto* t = dynamic_cast<detail::BatchTrace*>(detail::trace_at(l)); t && t->uid() == uid)
        return t;
    return nullptr;
  }
};

// Providers bound on this thread, innermost last.
thread_local std::vector<std::pair<std::string, std::shared_ptr<const detail::AxisProvider>>>
    t_providers;

[[noreturn]] void unbound(const std::string& name, const char* op) {
  std::string names;
  for (int l = 0; l < detail::trace_depth(); ++l)
    if (auto* t = dynamic_cast<detail::BatchTrace*>(detail::trace_at(l)); t && !t->axis_name().empty())
      names += (names.empty() ? "" : ", ") + t->axis_name();
  for (const auto& [n, p] : t_providers) names += (names.empty() ? "" : ", ") + n;
  throw ValueError(std::string(op) + ": unbound axis name: " + name +
                   ". The following axis names (e.g. defined by vmap) are available to collective "
                   "operations: [" + names + "]");
}

// The innermost vmap named `name`; nullptr when a provider serves it; else JAX's NameError text.
detail::BatchTrace* resolve(const std::string& name, const char* op,
                            const detail::AxisProvider** provider = nullptr) {
  if (!name.empty()) {
    if (auto* t = detail::find_batch_trace(name)) return t;
    if (const auto* p = detail::find_axis_provider(name)) {
      if (provider) *provider = p;
      return nullptr;
    }
  }
  unbound(name, op);
}

std::int64_t axis_size(const std::string& name, const char* op) {
  const detail::AxisProvider* p = nullptr;
  detail::BatchTrace* t = resolve(name, op, &p);
  return t ? t->axis_size() : p->axis_size();
}

Array collective(Kind kind, const Array& x, const std::string& name, const char* op, int axis = 0) {
  detail::check_valid(x, op);
  const detail::AxisProvider* p = nullptr;
  if (detail::BatchTrace* t = resolve(name, op, &p))
    return bind1(std::make_shared<const Collective>(kind, *t, axis), {x});
  switch (kind) {
    case Kind::psum: return p->psum(x);
    case Kind::pmax: return p->pmax(x);
    case Kind::pmin: return p->pmin(x);
    default: return p->all_gather(x, axis);
  }
}

}  // namespace

Array psum(const Array& x, const std::string& axis_name) {
  return collective(Kind::psum, x, axis_name, "psum");
}

Array pmean(const Array& x, const std::string& axis_name) {
  detail::check_valid(x, "pmean");
  const std::int64_t n = axis_size(axis_name, "pmean");
  Array s = psum(x, axis_name);
  return divide(
      s, full(Shape{}, static_cast<double>(n), is_floating(s.dtype()) ? s.dtype() : float32));
}

Array pmax(const Array& x, const std::string& axis_name) {
  return collective(Kind::pmax, x, axis_name, "pmax");
}

Array pmin(const Array& x, const std::string& axis_name) {
  return collective(Kind::pmin, x, axis_name, "pmin");
}

Array all_gather(const Array& x, const std::string& axis_name, int axis, bool tiled) {
  detail::check_valid(x, "all_gather");
  const int ax = detail::normalize_axis(axis, x.ndim() + (tiled ? 0 : 1), "all_gather");
  const std::int64_t n = axis_size(axis_name, "all_gather");
  Array g = collective(Kind::all_gather, x, axis_name, "all_gather", ax);
  if (!tiled) return g;
  Shape s = x.shape();
  s[ax] *= n;
  return reshape(g, s);
}

Array axis_index(const std::string& axis_name) {
  const detail::AxisProvider* p = nullptr;
  if (detail::BatchTrace* t = resolve(axis_name, "axis_index", &p))
    return t->wrap(arange(t->axis_size()), 0);
  return p->axis_index();
}

namespace {

Array over_names(const Array& x, const std::vector<std::string>& names, const char* op,
                 Array (*one)(const Array&, const std::string&)) {
  detail::check_valid(x, op);
  if (names.empty()) throw ValueError(std::string(op) + ": expected at least one axis name");
  Array y = x;
  for (const std::string& n : names) y = one(y, n);
  return y;
}

}  // namespace

Array psum(const Array& x, const std::vector<std::string>& axis_names) {
  return over_names(x, axis_names, "psum", &psum);
}

Array pmean(const Array& x, const std::vector<std::string>& axis_names) {
  Array s = over_names(x, axis_names, "pmean", &psum);
  double n = 1;
  for (const std::string& name : axis_names) n *= static_cast<double>(axis_size(name, "pmean"));
  return divide(s, full(Shape{}, n, is_floating(s.dtype()) ? s.dtype() : float32));
}

Array pmax(const Array& x, const std::vector<std::string>& axis_names) {
  return over_names(x, axis_names, "pmax", &pmax);
}

Array pmin(const Array& x, const std::vector<std::string>& axis_names) {
  return over_names(x, axis_names, "pmin", &pmin);
}

namespace detail {

AxisProviderScope::AxisProviderScope(std::string name,
                                     std::shared_ptr<const AxisProvider> provider) {
  if (name.empty()) throw ValueError("AxisProviderScope: the axis name must not be empty");
  if (!provider) throw ValueError("AxisProviderScope: no provider for axis " + name);
  t_providers.emplace_back(std::move(name), std::move(provider));
}

AxisProviderScope::~AxisProviderScope() { t_providers.pop_back(); }

const AxisProvider* find_axis_provider(const std::string& name) {
  for (auto it = t_providers.rbegin(); it != t_providers.rend(); ++it)
    if (it->first == name) return it->second.get();
  return nullptr;
}

}  // namespace detail

}  // namespace linum
