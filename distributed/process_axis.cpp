// The process-level named axis behind distributed::pmap: its collectives are one primitive whose
// kernel is an MPI allreduce (allgather) of the contiguous buffer across processes. Rules as
// JAX's: psum is linear and its transpose is psum of the cotangent; pmax/pmin route the cotangent
// to the processes holding the extreme (ties share); all_gather's transpose is the psum of the
// cotangent's slice of this process (psum_scatter). A vmap inside passes its batch through:
// every process reduces its whole batched value, example by example.
#include <memory>
#include <string>

#include <linum/autodiff/collective_rules.hpp>
#include <linum/autodiff/ops.hpp>
#include <linum/autodiff/primitive.hpp>
#include <linum/distributed/distributed.hpp>

#include "runtime.hpp"

namespace linum::distributed::detail {
namespace {

enum class Kind { psum, pmax, pmin, all_gather };

struct ProcessCollective final : Primitive {
  Kind kind;
  std::string axis_name;
  int axis;  // all_gather: where the process axis goes in the result
  std::int64_t size, rank;

  ProcessCollective(Kind k, std::string name, int ax, std::int64_t n, std::int64_t r)
      : kind(k), axis_name(std::move(name)), axis(ax), size(n), rank(r) {}

  const char* name() const override {
    switch (kind) {
      case Kind::psum: return "psum";
      case Kind::pmax: return "pmax";
      case Kind::pmin: return "pmin";
      case Kind::all_gather: return "all_gather";
    }
    return "collective";
  }
  void print_params(std::ostream& os) const override {
    os << "axis_name=" << axis_name << " axis_size=" << size << " (processes)";
    if (kind == Kind::all_gather) os << " axis=" << axis;
  }

  Array rebind(const Array& x, Kind k, int ax) const {
    return bind1(std::make_shared<const ProcessCollective>(k, axis_name, ax, size, rank), {x});
  }
  Array rebind(const Array& x) const { return rebind(x, kind, axis); }

  Avals abstract_eval(std::span<const ShapeDtype> in) const override {
    ShapeDtype out = in[0];
    if (kind == Kind::all_gather) out.shape.insert(out.shape.begin() + axis, size);
    return {out};
  }

  Arrays eval(std::span<const Array> in) const override {
    const Array& x = in[0];
    const std::string what = std::string(name()) + " over '" + axis_name + "'";
    if (kind == Kind::all_gather) {
      Shape s = x.shape();
      s.insert(s.begin(), size);
      Array g = empty(s, x.dtype());
      allgather(data(x), data(g), x.size() * static_cast<std::int64_t>(itemsize(x.dtype())),
                what.c_str());
      return {axis == 0 ? g : moveaxis(g, 0, axis)};
    }
    Reduce op = kind == Kind::psum ? Reduce::sum : kind == Kind::pmax ? Reduce::max : Reduce::min;
    if (x.dtype() == bool_) {
      if (kind == Kind::psum)
        throw TypeError("psum over '" + axis_name +
                        "': bool arrays cannot be summed across processes; astype(int32) first");
      op = kind == Kind::pmax ? Reduce::logical_or : Reduce::logical_and;
    }
    Array out = empty(x.shape(), x.dtype());
    allreduce(data(x), data(out), x.size(), x.dtype(), op, what.c_str());
    return {out};
  }

  Arrays jvp(std::span<const Array> primals, std::span<const Array> tangents,
             std::span<const Array> outs) const override {
    return {linum::detail::collective_jvp(*this, primals[0], tangents[0], outs[0])};
  }

  Arrays vjp(std::span<const Array> primals, std::span<const Array> cts,
             std::span<const Array> outs) const override {
    const Array& ct = cts[0];
    switch (kind) {
      case Kind::psum:
      case Kind::pmax:
      case Kind::pmin: return {linum::detail::reduction_vjp(*this, primals[0], ct, outs[0])};
      case Kind::all_gather:
        return {
            take(rebind(ct, Kind::psum, 0), full(Shape{}, static_cast<double>(rank), int32), axis)};
    }
    return {Array()};
  }

  Batched vmap(std::span<const Array> in, std::span<const int> bdims) const override {
    const Array& v = in[0];
    const int b = bdims[0];
    if (kind != Kind::all_gather) return {{rebind(v)}, {b}};
    return {{rebind(moveaxis(v, b, 0), kind, axis + 1)}, {0}};
  }

  static const void* data(const Array& a) {
    return static_cast<const linum::detail::ConcreteImpl*>(a.impl().get())->data;
  }
  static void* data(Array& a) {
    return static_cast<linum::detail::ConcreteImpl*>(a.impl().get())->data;
  }
};

struct ProcessAxis final : linum::detail::AxisProvider {
  std::string name;
  std::int64_t size, rank;
  ProcessAxis(std::string n, std::int64_t s, std::int64_t r)
      : name(std::move(n)), size(s), rank(r) {}

  Array bind(Kind k, const Array& x, int axis = 0) const {
    return bind1(std::make_shared<const ProcessCollective>(k, name, axis, size, rank), {x});
  }
  std::int64_t axis_size() const override { return size; }
  Array psum(const Array& x) const override { return bind(Kind::psum, x); }
  Array pmax(const Array& x) const override { return bind(Kind::pmax, x); }
  Array pmin(const Array& x) const override { return bind(Kind::pmin, x); }
  Array all_gather(const Array& x, int axis) const override {
    return bind(Kind::all_gather, x, axis);
  }
  Array axis_index() const override { return full(Shape{}, static_cast<double>(rank), int32); }
};

}  // namespace

std::shared_ptr<const linum::detail::AxisProvider> process_axis(const std::string& name) {
  const std::string what = "pmap(axis_name='" + name + "')";
  require_initialized(what.c_str());
  if (name.empty()) throw ValueError("linum::distributed::pmap: axis_name must not be empty");
  return std::make_shared<const ProcessAxis>(name, process_count(), process_index());
}

}  // namespace linum::distributed::detail
