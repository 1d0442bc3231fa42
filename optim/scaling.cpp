// Leaf math of the scalings in scaling.hpp, with linum ops in optax's order of operations.
#include <algorithm>
#include <string>

#include <linum/optim/scaling.hpp>

namespace linum::optim::detail {

std::array<Array, 3> adadelta_leaf(double rho, double eps, const Array& g, const Array& e_g,
                                   const Array& e_x) {
  if (!g.valid()) return {};
  Array eg = update_moment(g, e_g, rho, 2);
  Array u = (sqrt(e_x + eps) / sqrt(eg + eps)) * g;
  return {u, eg, update_moment(u, e_x, rho, 2)};
}

// ---- scale_by_sm3 ----------------------------------------------------------------------------

namespace {

struct Sm3 {
  double b1, b2, eps;
};

Shape expanded_shape(const Shape& shape, int axis) {
  Shape s(shape.size(), 1);
  s[axis] = shape[axis];
  return s;
}

std::vector<int> other_axes(int axis, int ndim) {
  std::vector<int> out;
  for (int i = 0; i < ndim; ++i)
    if (i != axis) out.push_back(i);
  return out;
}

void check_rank(const Array& x) {
  if (x.ndim() == 0)
    throw ValueError(
        "scale_by_sm3: SM3 keeps one accumulator per axis and needs leaves of rank >= 1, got a "
        "scalar leaf");
}

// {new nu, new accumulators} of one leaf.
std::pair<Array, Tree> sm3_leaf(const Sm3& c, const Array& g, const Tree& mu, const Array& nu) {
  if (!g.valid()) return {Array(), mu};
  check_rank(g);
  const int nd = g.ndim();
  if (!mu.is_list() || static_cast<int>(mu.size()) != nd)
    throw ValueError("scale_by_sm3: the state holds " +
                     std::string(mu.is_list() ? std::to_string(mu.size()) + " accumulators"
                                              : "no accumulator list") +
                     " for a leaf of rank " + std::to_string(nd));
  Arrays v;
  for (int i = 0; i < nd; ++i)
    v.push_back(reshape(mu.items()[i].leaf(), expanded_shape(g.shape(), i)));
  const double c0 = c.b2 != 1.0 ? 1.0 - c.b2 : 1.0;
  Array cover = v[0];
  if (nd >= 2)
    for (int i = 1; i < nd; ++i) cover = minimum(cover, v[i]);
  Array accum = c0 * (g * g) + c.b2 * cover;
  Array inv = where(accum > 0, rsqrt(accum + c.eps), 0.0);
  Array new_nu = update_moment(g * inv, nu, c.b1, 1);
  Tree::seq_type acc;
  for (int i = 0; i < nd; ++i)
    acc.push_back(Tree(nd < 2 ? accum : max(accum, Axes(other_axes(i, nd)))));
  return {new_nu, Tree::list(std::move(acc))};
}

std::pair<Tree, Tree> sm3_node(const Sm3& c, const Tree& g, const Tree& mu, const Tree& nu) {
  if (g.is_leaf()) return sm3_leaf(c, g.leaf(), mu, nu.leaf());
  if (g.is_dict() || g.is_frozen_dict()) {
    Tree::dict_type out, acc;
    for (const auto& [k, v] : g.as_mapping()) {
      auto [o, a] = sm3_node(c, v, mu.at(k), nu.at(k));
      out.insert_or_assign(k, std::move(o));
      acc.insert_or_assign(k, std::move(a));
    }
    return {Tree(std::move(out)), Tree(std::move(acc))};
  }
  if (g.is_tuple() || g.is_list()) {
    Tree::seq_type out, acc;
    for (std::size_t i = 0; i < g.size(); ++i) {
      auto [o, a] = sm3_node(c, g.items()[i], mu.items().at(i), nu.items().at(i));
      out.push_back(std::move(o));
      acc.push_back(std::move(a));
    }
    return g.is_tuple() ? std::pair{Tree::tuple(std::move(out)), Tree::tuple(std::move(acc))}
                        : std::pair{Tree::list(std::move(out)), Tree::list(std::move(acc))};
  }
  return {g, mu};  // None: nothing to update
}

}  // namespace

Tree sm3_init(const Tree& params) {
  if (params.is_leaf()) {
    const Array& p = params.leaf();
    if (!p.valid()) return params;
    check_rank(p);
    Tree::seq_type acc;
    for (int i = 0; i < p.ndim(); ++i) acc.push_back(Tree(zeros({p.shape()[i]}, p.dtype())));
    return Tree::list(std::move(acc));
  }
  if (params.is_dict() || params.is_frozen_dict()) {
    Tree::dict_type out;
    for (const auto& [k, v] : params.as_mapping()) out.insert_or_assign(k, sm3_init(v));
    return Tree(std::move(out));
  }
  if (params.is_tuple() || params.is_list()) {
    Tree::seq_type out;
    for (const Tree& v : params.items()) out.push_back(sm3_init(v));
    return params.is_tuple() ? Tree::tuple(std::move(out)) : Tree::list(std::move(out));
  }
  return params;
}

std::pair<Tree, Tree> sm3_update(double b1, double b2, double eps, const Tree& updates,
                                 const Tree& mu, const Tree& nu) {
  return sm3_node({b1, b2, eps}, updates, mu, nu);
}

// ---- the others ------------------------------------------------------------------------------

std::array<Array, 3> rprop_leaf(const RpropConfig& c, const Array& g, const Array& step_size,
                                const Array& prev) {
  if (!g.valid()) return {};
  Array s = g * prev;
  Array grown = clip(where(s > 0, step_size * c.eta_plus, step_size * c.eta_minus),
                     c.min_step_size, c.max_step_size);
  Array steps = where(equal(s, zeros_like(s)), step_size, grown);
  Array next = where(s < 0, zeros_like(g), steps * sign(g));
  // optax emits the previous step's update (the state's prev_updates), zeroed where g flipped.
  return {where(s < 0, zeros_like(prev), prev), steps, next};
}

Array optimistic_leaf(double alpha, double beta, const Array& initial, const Array& g,
                      const Array& prev) {
  Array p = where(initial, g, prev);
  return (alpha + beta) * g - beta * p;
}

namespace {
Array l2(const Array& x) { return sqrt(sum(x * x)); }
}  // namespace

Array dog_init_dist(double reps_rel, const Array& p) { return reps_rel * (1.0 + l2(p)); }

std::array<Array, 3> dog_leaf(double eps, double global_scale, const Array& g, const Array& p,
                              const Array& max_dist, const Array& g_sos, const Array& p0) {
  if (!g.valid()) return {};
  Array d = maximum(max_dist, l2(p - p0));
  Array sos = g_sos + sum(g * g);
  Array eta = global_scale * (d / sqrt(sos + eps));
  return {eta * g, d, sos};
}

Array polyak_step(const Array& grad_sq_norm, const Array& value, double f_min,
                  double max_learning_rate, double eps, bool plus) {
  const DType dt = grad_sq_norm.dtype();
  Array gap = astype(value - f_min, dt);
  if (plus) gap = relu(gap);
  // optax compares with jnp.finfo(float).eps, Python float's (float64) epsilon.
  Array denom = grad_sq_norm + eps;
  return where(denom <= 2.220446049250313e-16, zeros({}, dt),
               minimum(gap / denom, max_learning_rate));
}

}  // namespace linum::optim::detail
