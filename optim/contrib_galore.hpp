// optax.contrib's GaLore (Gradient Low-Rank Projection, Zhao et al. 2024): scale_by_galore, which
// runs a base optimizer on the gradients of weight matrices projected onto their top `rank`
// singular vectors (refreshed every update_proj_gap steps) and projects its updates back, and
// galore (with decoupled weight decay and the learning rate), with optax's GaLoreState and
// GaLoreDimensionNumbers. The matrix math is in contrib_galore.cpp.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include <linum/optim/combine.hpp>
#include <linum/optim/contrib_muon.hpp>
#include <linum/optim/fused.hpp>
#include <linum/optim/transform.hpp>

namespace linum::optim {

// optax.contrib.GaLoreDimensionNumbers(reduction_axis=0, output_axis=1): which axes of a weight
// form the matrix's rows (reduction) and columns (output); together they must be all of its
// axes. Muon's dimension numbers, with the same fields and defaults.
using GaLoreDimensionNumbers = MuonDimensionNumbers;

// Per leaf (its key path and value): its dimension numbers, or std::nullopt for "not projected".
using GaLoreDimNumsFn = MuonDimNumsFn;

// optax's weight_dimension_numbers: None (the 2-D leaves, as matrices), one
// GaLoreDimensionNumbers for every leaf of rank >= 2, or a function of each leaf (optax's tree
// of them, or callable).
struct GaLoreDimNums {
  std::optional<GaLoreDimensionNumbers> all;
  GaLoreDimNumsFn fn;
  GaLoreDimNums() = default;
  GaLoreDimNums(std::nullopt_t) {}                                // NOLINT
  GaLoreDimNums(GaLoreDimensionNumbers d) : all(std::move(d)) {}  // NOLINT
  GaLoreDimNums(GaLoreDimNumsFn f) : fn(std::move(f)) {}          // NOLINT
  std::optional<GaLoreDimensionNumbers> at(const pytree::KeyPath& path, const Array& x) const;
};

// count: int32; base_optimizer_state: the base optimizer's, over the low-rank (projected) shapes;
// projector: per leaf the (m, r) or (n, r) projection matrix, (0, 0) for leaves not projected.
template <class S, class P, class C = Array>
struct GaLoreState {
  BOOST_HANA_DEFINE_STRUCT(GaLoreState, (C, count), (S, base_optimizer_state), (P, projector));
};

namespace detail {
// The leaves' dimension numbers in walk order.
template <class T>
std::vector<std::optional<GaLoreDimensionNumbers>> galore_dim_nums(const T& tree,
                                                                   const GaLoreDimNums& dims) {
  std::vector<std::optional<GaLoreDimensionNumbers>> out;
  for (const auto& [path, x] : pytree::tree_leaves_with_path<Array>(tree))
    out.push_back(x.valid() ? dims.at(path, x) : std::nullopt);
  return out;
}
// {projector, proxy} of a leaf at init: zeros of the projector's and of the low-rank shape.
std::array<Array, 2> galore_init_leaf(const Array& p,
                                      const std::optional<GaLoreDimensionNumbers>& d,
                                      std::int64_t rank);
// {low-rank gradient, projector}: the projector is recomputed from the gradient's SVD when
// `refresh` (a bool scalar).
std::array<Array, 2> galore_project(const Array& g, const Array& projector, const Array& refresh,
                                    const std::optional<GaLoreDimensionNumbers>& d,
                                    std::int64_t rank);
// The base optimizer's low-rank update back in g's shape and dtype, times scale.
Array galore_project_back(const Array& low, const Array& projector, const Array& g,
                          const std::optional<GaLoreDimensionNumbers>& d, double scale);
void check_galore(std::int64_t rank, std::int64_t update_proj_gap);
}  // namespace detail

// optax.contrib's scale_by_galore: each projected leaf's gradient G (as an (m, n) matrix) is
// reduced to P^T G (m >= n, P the top-r left singular vectors) or G P (m < n, P the top-r right
// ones), r = min(rank, m, n); the base optimizer (which must not need params) runs on those and
// on the other leaves whole; its updates come back as P U or U P^T, times scale. P is recomputed
// from the gradient (an SVD in float32) when count % update_proj_gap == 0.
template <class Base>
struct ScaleByGalore : Transformation<ScaleByGalore<Base>> {
  std::int64_t rank = 128, update_proj_gap = 200;
  double scale = 1.0;
  Base base_optimizer;
  GaLoreDimNums weight_dimension_numbers;

  template <class P>
  auto init(const P& params) const {
    const auto dims = detail::galore_dim_nums(params, weight_dimension_numbers);
    std::size_t i = 0;
    auto [proxies, l] = detail::map_leaves<2>(
        params, static_cast<const P*>(nullptr), false, [&](const Array& p, const Array*) {
          auto [proj, proxy] = detail::galore_init_leaf(p, dims.at(i++), rank);
          return std::array<Array, 2>{proxy, proj};
        });
    auto base_state = base_optimizer.init(proxies);
    return GaLoreState<decltype(base_state), P>{zero_count(), std::move(base_state),
                                                detail::rebuild_walked(params, l[0])};
  }
  template <class U, class S, class Q>
  std::pair<U, S> update_impl(const U& updates, const S& s, const Q*) const {
    Array refresh = equal(remainder(s.count, full({}, static_cast<double>(update_proj_gap), int32)),
                          zeros({}, int32));
    const auto dims = detail::galore_dim_nums(updates, weight_dimension_numbers);
    std::size_t i = 0;
    auto [low, l] = detail::map_leaves<2>(
        updates, static_cast<const U*>(nullptr), false,
        [&](const Array& g, const Array*, const Array& proj) {
          const auto& d = dims.at(i++);
          if (!g.valid()) return std::array<Array, 2>{g, proj};
          return detail::galore_project(g, proj, refresh, d, rank);
        },
        s.projector);
    auto projector = detail::rebuild_walked(s.projector, l[0]);
    auto [low_updates, base_state] = base_optimizer.update(low, s.base_optimizer_state);
    std::size_t k = 0;
    U out = linum::detail::tree_apply(
        updates,
        [&](const Array& g, const Array& lu, const Array& proj) {
          const auto& d = dims.at(k++);
          return g.valid() ? detail::galore_project_back(lu, proj, g, d, scale) : g;
        },
        low_updates, projector);
    return {std::move(out),
            S{safe_increment(s.count), std::move(base_state), std::move(projector)}};
  }
};

// optax.contrib.scale_by_galore(rank, update_proj_gap, scale, base_optimizer,
// weight_dimension_numbers); base_optimizer defaults to scale_by_adam(). ValueError for a rank
// or update_proj_gap below 1.
template <class Base = ScaleByAdam>
ScaleByGalore<Base> scale_by_galore(std::int64_t rank = 128, std::int64_t update_proj_gap = 200,
                                    double scale = 1.0, Base base_optimizer = scale_by_adam(),
                                    GaLoreDimNums weight_dimension_numbers = {}) {
  detail::check_galore(rank, update_proj_gap);
  return ScaleByGalore<Base>{{},
                             rank,
                             update_proj_gap,
                             scale,
                             std::move(base_optimizer),
                             std::move(weight_dimension_numbers)};
}

// optax.contrib.galore(learning_rate, rank, update_proj_gap, scale, base_optimizer, weight_decay,
// mask, weight_dimension_numbers): scale_by_galore, add_decayed_weights(weight_decay, mask)
// (in the full parameter space), -lr.
template <class LR, class Base = ScaleByAdam, class Mask = NoMask>
auto galore(LR learning_rate, std::int64_t rank = 128, std::int64_t update_proj_gap = 200,
            double scale = 1.0, Base base_optimizer = scale_by_adam(), double weight_decay = 0.0,
            Mask mask = {}, GaLoreDimNums weight_dimension_numbers = {}) {
  return chain(scale_by_galore(rank, update_proj_gap, scale, std::move(base_optimizer),
                               std::move(weight_dimension_numbers)),
               add_decayed_weights(weight_decay, std::move(mask)),
               scale_by_learning_rate(std::move(learning_rate)));
}

}  // namespace linum::optim
