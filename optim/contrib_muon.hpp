// optax.contrib's Muon (Momentum Orthogonalized by Newton-Schulz; Jordan 2024): scale_by_muon,
// which orthogonalizes the (Nesterov) momentum of matrix parameters with a quintic
// Newton-Schulz iteration, and muon, which partitions the params into matrices (Muon, scaled by
// their shape) and the rest (AdamW), with optax's MuonState and PartitionState layouts. The
// matrix math is in contrib_muon.cpp.
#pragma once

#include <array>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <linum/optim/adaptive.hpp>
#include <linum/optim/alias.hpp>
#include <linum/optim/combine.hpp>
#include <linum/optim/erased.hpp>
#include <linum/optim/fused.hpp>
#include <linum/optim/transform.hpp>
#include <linum/optim/wrappers.hpp>

namespace linum::optim {

template <class P, class C = Array>
struct MuonState {
  BOOST_HANA_DEFINE_STRUCT(MuonState, (C, count), (P, mu), (C, ns_coeffs));
};

// optax.contrib.MuonDimensionNumbers: which axes of a weight are the matrix's reduction (rows)
// and output (columns) axes; every other axis is a batch axis, orthogonalized independently.
struct MuonDimensionNumbers {
  std::vector<int> reduction_axis{0};
  std::vector<int> output_axis{1};
};

// Per leaf (its key path and value): the leaf's dimension numbers, or std::nullopt for "not a
// Muon parameter" (muon then updates it with AdamW). optax's tree of MuonDimensionNumbers / None.
using MuonDimNumsFn =
    std::function<std::optional<MuonDimensionNumbers>(const pytree::KeyPath&, const Array&)>;

// The Newton-Schulz coefficients (a, b, c) of x <- a x + (b A + c A^2) x, A = x x^H: one triple
// used for every one of ns_steps iterations (optax's shape (3,)), a list of triples, one per
// iteration (shape (n, 3)), or optax's preset names "standard" (3.4445, -4.7750, 2.0315) and
// "dion" (five triples).
struct NsCoeffs {
  std::vector<std::array<double, 3>> rows;
  bool per_step = false;
  NsCoeffs(double a, double b, double c) : rows{{a, b, c}} {}
  NsCoeffs(std::array<double, 3> r) : rows{r} {}  // NOLINT(google-explicit-constructor)
  NsCoeffs(std::vector<std::array<double, 3>> r)  // NOLINT(google-explicit-constructor)
      : rows(std::move(r)), per_step(true) {}
  NsCoeffs(const std::string& preset);  // NOLINT(google-explicit-constructor)
  NsCoeffs(const char* preset) : NsCoeffs(std::string(preset)) {}  // NOLINT
};

// optax.contrib._muon.orthogonalize_via_newton_schulz: x (a matrix, or any rank with dimension
// numbers) rescaled by preconditioning ("frobenius", "spectral", "aol" or "schatten") and driven
// towards U V^H (singular values roughly in [0.7, 1.2] with the standard coefficients) by
// Newton-Schulz; ns_coeffs: shape (3,) (repeated ns_steps times) or (n, 3) (row i at step i).
Array orthogonalize_via_newton_schulz(const Array& x, const Array& ns_coeffs, int ns_steps = 5,
                                      const std::string& preconditioning = "frobenius",
                                      double eps = 1e-8,
                                      const std::optional<MuonDimensionNumbers>& dims = {});

namespace detail {
struct MuonConfig {
  int ns_steps;
  double beta, eps;
  std::optional<DType> mu_dtype;
  bool nesterov, adaptive;
  std::string preconditioning;
};
// {update, mu}.
std::array<Array, 2> muon_leaf(const MuonConfig& c, const Array& count_inc, const Array& ns_coeffs,
                               const std::optional<MuonDimensionNumbers>& dims, const Array& g,
                               const Array& mu);
Array muon_coeffs_array(const NsCoeffs& coeffs, int ns_steps, DType dtype);
void check_preconditioning(const std::string& preconditioning, const char* fn);
// scale_by_shape's factor: sqrt(max(1, fan_out / fan_in)), or sqrt(max(fan_in, fan_out)) *
// consistent_rms.
Array muon_shape_scale(const Array& u, const MuonDimensionNumbers& dims,
                       std::optional<double> consistent_rms);

// The leaves' dimension numbers in walk order (std::nullopt everywhere without fn).
template <class T>
std::vector<std::optional<MuonDimensionNumbers>> muon_dim_nums(const T& tree,
                                                               const MuonDimNumsFn& fn) {
  std::vector<std::optional<MuonDimensionNumbers>> out;
  for (const auto& [path, x] : pytree::tree_leaves_with_path<Array>(tree))
    out.push_back(fn && x.valid() ? fn(path, x) : std::nullopt);
  return out;
}
}  // namespace detail

// optax.contrib.scale_by_muon: Newton-Schulz orthogonalization of the momentum mu (beta, Nesterov
// by default, bias-corrected); adaptive scales each update by <mu_hat, update>. Leaves must be
// matrices unless weight_dimension_numbers gives their dimension numbers.
struct ScaleByMuon : Transformation<ScaleByMuon> {
  NsCoeffs ns_coeffs{3.4445, -4.7750, 2.0315};
  detail::MuonConfig c{5, 0.95, 1e-8, std::nullopt, true, false, "frobenius"};
  MuonDimNumsFn weight_dimension_numbers;

  template <class P>
  MuonState<P> init(const P& params) const {
    return {zero_count(), tree_utils::tree_zeros_like(params, c.mu_dtype),
            detail::muon_coeffs_array(ns_coeffs, c.ns_steps, detail::scalar_dtype(params))};
  }
  template <class U, class P, class Q>
  std::pair<U, MuonState<P>> update_impl(const U& updates, const MuonState<P>& s, const Q*) const {
    Array count = safe_increment(s.count);
    const auto dims = detail::muon_dim_nums(updates, weight_dimension_numbers);
    std::size_t i = 0;
    auto [out, l] = detail::map_leaves<2>(
        updates, static_cast<const U*>(nullptr), false,
        [&](const Array& g, const Array*, const Array& m) {
          return detail::muon_leaf(c, count, s.ns_coeffs, dims.at(i++), g, m);
        },
        s.mu);
    return {std::move(out), {count, detail::rebuild_walked(s.mu, l[0]), s.ns_coeffs}};
  }
};
ScaleByMuon scale_by_muon(NsCoeffs ns_coeffs = {3.4445, -4.7750, 2.0315}, int ns_steps = 5,
                          double beta = 0.95, double eps = 1e-8,
                          std::optional<DType> mu_dtype = std::nullopt, bool nesterov = true,
                          bool adaptive = false, const std::string& preconditioning = "frobenius",
                          MuonDimNumsFn weight_dimension_numbers = {});

// optax.contrib._muon.scale_by_shape (muon's width scaling): each update times
// sqrt(max(1, fan_out / fan_in)), or sqrt(max(fan_in, fan_out)) * consistent_rms when given.
struct ScaleByShape : StatelessTransformation<ScaleByShape> {
  MuonDimNumsFn weight_dimension_numbers;
  std::optional<double> consistent_rms;
  template <class U, class Q>
  U apply(const U& updates, const Q*) const {
    const auto dims = detail::muon_dim_nums(updates, weight_dimension_numbers);
    std::size_t i = 0;
    return linum::detail::tree_apply(updates, [&](const Array& u) {
      const auto& d = dims.at(i++);
      return u.valid()
                 ? detail::muon_shape_scale(u, d.value_or(MuonDimensionNumbers{}), consistent_rms)
                 : u;
    });
  }
};

// muon's keyword-only arguments (optax's names and defaults); adam_learning_rate std::nullopt:
// Muon's learning_rate. muon_weight_dimension_numbers empty: every 2-D leaf is a Muon matrix.
struct MuonOptions {
  bool nesterov = true;
  bool adaptive = false;
  std::string preconditioning = "frobenius";
  double adam_b1 = 0.9, adam_b2 = 0.999, adam_eps_root = 0.0, adam_weight_decay = 0.0;
  std::optional<double> adam_learning_rate{};
  MuonDimNumsFn muon_weight_dimension_numbers{};
  std::optional<double> consistent_rms{};
};

// optax.contrib.muon: partition(transforms={"muon": chain(scale_by_muon, scale_by_shape,
// add_decayed_weights(weight_decay, mask), -lr), "adam": adamw(adam_learning_rate, adam_b1,
// adam_b2, eps, adam_eps_root, mu_dtype, adam_weight_decay, nesterov)}); a leaf is "muon" when
// it is 2-D (or has dimension numbers), else "adam". Params type first: muon<Params>(0.02).
template <class P, class LR, class Mask = NoMask>
auto muon(LR learning_rate, NsCoeffs ns_coeffs = {3.4445, -4.7750, 2.0315}, int ns_steps = 5,
          double beta = 0.95, double eps = 1e-8, double weight_decay = 0.0,
          Mask weight_decay_mask = {}, std::optional<DType> mu_dtype = std::nullopt,
          MuonOptions options = {}) {
  const MuonDimNumsFn user = options.muon_weight_dimension_numbers;
  MuonDimNumsFn dims = user ? user : MuonDimNumsFn([](const pytree::KeyPath&, const Array&) {
    return std::optional<MuonDimensionNumbers>(MuonDimensionNumbers{});
  });
  auto label_fn = [user](const pytree::KeyPath& path, const Array& x) -> std::string {
    const bool is_muon = user ? user(path, x).has_value() : x.ndim() == 2;
    return is_muon ? "muon" : "adam";
  };
  std::map<std::string, GradientTransformation<P>> txs;
  txs.emplace("muon",
              GradientTransformation<P>(chain(
                  scale_by_muon(std::move(ns_coeffs), ns_steps, beta, eps, mu_dtype,
                                options.nesterov, options.adaptive, options.preconditioning, dims),
                  ScaleByShape{{}, dims, options.consistent_rms},
                  add_decayed_weights(weight_decay, std::move(weight_decay_mask)),
                  scale_by_learning_rate(learning_rate))));
  auto adam = [&](auto lr) {
    return GradientTransformation<P>(adamw(std::move(lr), options.adam_b1, options.adam_b2, eps,
                                           options.adam_eps_root, mu_dtype,
                                           options.adam_weight_decay, NoMask{}, options.nesterov));
  };
  txs.emplace("adam",
              options.adam_learning_rate ? adam(*options.adam_learning_rate) : adam(learning_rate));
  return partition(std::move(txs), std::move(label_fn));
}

}  // namespace linum::optim
