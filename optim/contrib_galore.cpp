// GaLore's matrix math (contrib_galore.hpp): a leaf seen as a (reduction, output) matrix, its
// projector from the SVD of its gradient, and the projections both ways.
#include <linum/optim/contrib_galore.hpp>

#include <algorithm>
#include <set>
#include <string>

#include <linum/autodiff/control_flow.hpp>

namespace linum::optim {

std::optional<GaLoreDimensionNumbers> GaLoreDimNums::at(const pytree::KeyPath& path,
                                                        const Array& x) const {
  if (fn) return fn(path, x);
  if (all) return x.ndim() >= 2 ? all : std::nullopt;
  return x.ndim() == 2 ? std::optional<GaLoreDimensionNumbers>(GaLoreDimensionNumbers{})
                       : std::nullopt;
}

namespace detail {

namespace {

std::string axes_str(const std::vector<int>& a) {
  std::string s = "(";
  for (std::size_t i = 0; i < a.size(); ++i) s += (i ? ", " : "") + std::to_string(a[i]);
  return s + (a.size() == 1 ? ",)" : ")");
}

// A leaf as optax's _compute_galore_reshape sees it: the transpose putting the reduction axes
// first, the matrix it reshapes to, and whether the projector is on the left (m >= n).
struct Layout {
  std::vector<int> perm, inverse;
  Shape transposed;
  std::int64_t m = 1, n = 1, r = 0;
  bool left = true;
};

Layout layout(const Array& x, const GaLoreDimensionNumbers& d, std::int64_t rank) {
  const int nd = x.ndim();
  if (nd < 2)
    throw ValueError("galore: GaLore requires tensors with rank >= 2, got shape " +
                     shape_str(x.shape()));
  auto norm = [&](const std::vector<int>& axes) {
    std::vector<int> out;
    for (int a : axes) out.push_back(((a % nd) + nd) % nd);
    return out;
  };
  Layout l;
  const std::vector<int> red = norm(d.reduction_axis), out = norm(d.output_axis);
  std::set<int> rs(red.begin(), red.end()), os(out.begin(), out.end());
  for (int a : rs)
    if (os.count(a))
      throw ValueError("galore: Reduction axes " + axes_str(red) + " and output axes " +
                       axes_str(out) + " must be disjoint, for shape " + shape_str(x.shape()));
  rs.insert(os.begin(), os.end());
  if (static_cast<int>(rs.size()) != nd)
    throw ValueError("galore: All axes must be specified. Got reduction=" + axes_str(red) +
                     ", output=" + axes_str(out) + " for tensor with " + std::to_string(nd) +
                     " dimensions");
  l.perm = red;
  l.perm.insert(l.perm.end(), out.begin(), out.end());
  l.inverse.assign(static_cast<std::size_t>(nd), 0);
  for (int i = 0; i < nd; ++i) l.inverse[static_cast<std::size_t>(l.perm[i])] = i;
  for (std::size_t i = 0; i < l.perm.size(); ++i) {
    const std::int64_t s = x.shape(l.perm[i]);
    l.transposed.push_back(s);
    (i < red.size() ? l.m : l.n) *= s;
  }
  l.left = l.m >= l.n;
  l.r = std::min({rank, l.m, l.n});
  return l;
}

Array to_matrix(const Array& x, const Layout& l) {
  return transpose(x, l.perm).reshape({l.m, l.n});
}
Array from_matrix(const Array& y, const Layout& l) {
  return transpose(y.reshape(l.transposed), l.inverse);
}

}  // namespace

std::array<Array, 2> galore_init_leaf(const Array& p,
                                      const std::optional<GaLoreDimensionNumbers>& d,
                                      std::int64_t rank) {
  if (!p.valid()) return {p, p};
  if (!d) return {zeros({0, 0}, p.dtype()), zeros_like(p)};
  const Layout l = layout(p, *d, rank);
  return {zeros({l.left ? l.m : l.n, l.r}, p.dtype()),
          zeros(l.left ? Shape{l.r, l.n} : Shape{l.m, l.r}, p.dtype())};
}

std::array<Array, 2> galore_project(const Array& g, const Array& projector, const Array& refresh,
                                    const std::optional<GaLoreDimensionNumbers>& d,
                                    std::int64_t rank) {
  if (!d) return {g, projector};
  const Layout l = layout(g, *d, rank);
  Array g2 = to_matrix(g, l);
  auto compute = [&](const Array& m, const Array&) {
    auto svd = linalg::svd(astype(m, float32), false);
    Array p = l.left ? lax_slice(svd.U, {0, 0}, {l.m, l.r})
                     : transpose(lax_slice(svd.Vh, {0, 0}, {l.r, l.n}));
    return astype(p, g.dtype());
  };
  auto keep = [](const Array&, const Array& p) { return p; };
  Array p = cond(refresh, compute, keep, g2, projector);
  return {l.left ? matmul(transpose(p), g2) : matmul(g2, p), p};
}

Array galore_project_back(const Array& low, const Array& projector, const Array& g,
                          const std::optional<GaLoreDimensionNumbers>& d, double scale) {
  if (!d) return low;
  const Layout l = layout(g, *d, 1);
  Array u2 = l.left ? matmul(projector, low) : matmul(low, transpose(projector));
  return astype(scale * from_matrix(u2, l), g.dtype());
}

void check_galore(std::int64_t rank, std::int64_t update_proj_gap) {
  if (rank <= 0) throw ValueError("galore: `rank` must be positive, got " + std::to_string(rank));
  if (update_proj_gap <= 0)
    throw ValueError("galore: `update_proj_gap` must be positive, got " +
                     std::to_string(update_proj_gap));
}

}  // namespace detail
}  // namespace linum::optim
