// apply_along_axis, apply_over_axes, fromfunction and piecewise: the user's function wrapped in
// nested vmaps exactly where jax.numpy wraps it.
#include <linum/autodiff/ops/apply.hpp>

#include <linum/autodiff/ops/index_util.hpp>
#include <linum/autodiff/transforms.hpp>

namespace linum {

using namespace detail;

Array apply_along_axis(const std::function<Array(const Array&)>& func1d, int axis,
                       const Array& arr) {
  check_valid(arr, "apply_along_axis");
  if (!func1d) throw ValueError("apply_along_axis: func1d is empty");
  const int nd = arr.ndim();
  const int ax = normalize_axis(axis, nd, "apply_along_axis");
  // The axes after `axis` are mapped first (their results go last), then the ones before it.
  std::function<Array(const Array&)> f = func1d;
  for (int i = 1; i < nd - ax; ++i)
    f = [g = f, i](const Array& a) {
      VmapOptions o;
      o.in_axes = i;
      o.out_axes = -1;
      return vmap(g, o)(a);
    };
  for (int i = 0; i < ax; ++i) f = [g = f](const Array& a) { return vmap(g)(a); };
  return f(arr);
}

Array apply_over_axes(const std::function<Array(const Array&, int)>& func, const Array& a,
                      const std::vector<int>& axes) {
  check_valid(a, "apply_over_axes");
  Array r = a;
  for (int axis : axes) {
    const Array b = func(r, axis);
    check_valid(b, "apply_over_axes");
    if (b.ndim() == r.ndim())
      r = b;
    else if (b.ndim() == r.ndim() - 1)
      r = expand_dims(b, axis);
    else
      throw ValueError(
          "apply_over_axes: function is not returning an array of the correct shape: "
          "got rank " +
          std::to_string(b.ndim()) + " from an array of rank " + std::to_string(r.ndim()));
  }
  return r;
}

Array fromfunction(const std::function<Array(const Arrays&)>& function, const Shape& shape,
                   DType dtype) {
  if (!function) throw ValueError("fromfunction: function is empty");
  check_shape("fromfunction", shape, dtype);
  const auto nd = static_cast<int>(shape.size());
  // One vmap per index, the last index innermost, so that output axis d is index d.
  std::function<Array(const Arrays&)> f = function;
  for (int pos = nd - 1; pos >= 0; --pos)
    f = [g = f, pos, nd](const Arrays& idx) {
      std::vector<AxisSpec> per(static_cast<std::size_t>(nd), AxisSpec(AxisSpec::kNone));
      per[static_cast<std::size_t>(pos)] = 0;
      VmapOptions o;
      o.in_axes = AxisSpec::seq({AxisSpec::seq(per)});
      return vmap(g, o)(idx);
    };
  Arrays idx;
  for (auto s : shape) idx.push_back(arange(std::int64_t{0}, s, std::int64_t{1}, dtype));
  return f(idx);
}

Array piecewise(const Array& x, const Arrays& condlist, const std::vector<Piece>& funclist) {
  check_valid(x, "piecewise");
  const std::size_t nc = condlist.size(), nf = funclist.size();
  if (nf != nc && nf != nc + 1)
    throw ValueError("piecewise: with " + std::to_string(nc) + " condition(s), either " +
                     std::to_string(nc) + " or " + std::to_string(nc + 1) +
                     " functions are expected; got " + std::to_string(nf));
  // Branch 0 is the default (the extra last function, else 0), branch k + 1 condition k's.
  std::vector<Piece> branches;
  branches.push_back(nf == nc + 1 ? funclist.back() : Piece(0));
  branches.insert(branches.end(), funclist.begin(), funclist.begin() + static_cast<long>(nc));
  // The index of the last true condition + 1 (0: none), as JAX's argmax of a running count.
  Array which = zeros(x.shape(), int32);
  for (std::size_t k = 0; k < nc; ++k) {
    check_valid(condlist[k], "piecewise");
    const Array c = broadcast_to(astype(condlist[k], bool_), x.shape());
    which = where(c, full({}, static_cast<double>(k + 1), int32), which);
  }
  const Array flat = ravel(x);
  Array out = zeros(x.shape(), x.dtype());
  for (std::size_t k = 0; k < branches.size(); ++k) {
    const auto& v = branches[k].value();
    Array r;
    if (std::holds_alternative<double>(v)) {
      r = full({}, std::get<double>(v), x.dtype());
    } else {
      const auto& f = std::get<std::function<Array(const Array&)>>(v);
      r = reshape(astype(vmap([&f](const Array& e) { return f(e); })(flat), x.dtype()), x.shape());
    }
    out = where(equal(which, full({}, static_cast<double>(k), int32)), r, out);
  }
  return out;
}

}  // namespace linum
