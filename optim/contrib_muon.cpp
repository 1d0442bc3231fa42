// Muon's matrix math (contrib_muon.hpp): the Newton-Schulz orthogonalization over the batch of
// matrices a weight's dimension numbers describe (one batched matmul per step, no loop over the
// batch), the momentum leaf and the shape scaling, in optax's order of operations.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>
#include <string>

#include <linum/error.hpp>
#include <linum/optim/contrib_muon.hpp>

namespace linum::optim {

namespace {

const std::vector<std::array<double, 3>> kDionCoeffs = {{4.0848, -6.8946, 2.9270},
                                                        {3.9505, -6.3029, 2.6377},
                                                        {3.7418, -5.5913, 2.3037},
                                                        {2.8769, -3.1427, 1.2046},
                                                        {2.8366, -3.0525, 1.2012}};

std::string axes_str(const std::vector<int>& axes) {
  std::string s = "(";
  for (std::size_t i = 0; i < axes.size(); ++i) s += (i ? ", " : "") + std::to_string(axes[i]);
  return s + (axes.size() == 1 ? ",)" : ")");
}

// The axes mod ndim (optax's _normalize_axes).
std::vector<int> normalize(const std::vector<int>& axes, int ndim) {
  std::vector<int> out;
  for (int a : axes) out.push_back(((a % ndim) + ndim) % ndim);
  return out;
}

std::int64_t prod(const Shape& shape, const std::vector<int>& axes) {
  std::int64_t n = 1;
  for (int a : axes) n *= shape[static_cast<std::size_t>(a)];
  return n;
}

// x @ x^H.
Array gram(const Array& x) { return matmul(x, conj(linalg::matrix_transpose(x))); }

// One Newton-Schulz step c0 x + (c1 A + c2 A A) x on a batch of matrices, a = x x^H given.
Array ns_step(const Array& x, const Array& a, const Array& c) {
  Array b = c[1] * a + c[2] * matmul(a, a);
  return c[0] * x + matmul(b, x);
}

}  // namespace

NsCoeffs::NsCoeffs(const std::string& preset) {
  if (preset == "standard") {
    rows = {{3.4445, -4.7750, 2.0315}};
  } else if (preset == "dion") {
    rows = kDionCoeffs;
    per_step = true;
  } else {
    throw ValueError("muon: Unknown ns_coeff preset string: '" + preset +
                     "' (expected 'standard' or 'dion')");
  }
}

Array orthogonalize_via_newton_schulz(const Array& x_in, const Array& ns_coeffs, int ns_steps,
                                      const std::string& preconditioning, double eps,
                                      const std::optional<MuonDimensionNumbers>& dims_in) {
  const int nd = x_in.ndim();
  if (nd != 2 && !dims_in)
    throw ValueError(
        "orthogonalize_via_newton_schulz: Input must have shape (m, n) or weight "
        "dimension numbers must be provided. Got shape=" +
        shape_str(x_in.shape()));
  if (ns_coeffs.ndim() > 2 || ns_coeffs.ndim() == 0 || ns_coeffs.shape(-1) != 3)
    throw ValueError(
        "orthogonalize_via_newton_schulz: Newton-Schulz coefficients must have shape (3,) or "
        "(n, 3), got " +
        shape_str(ns_coeffs.shape()));
  detail::check_preconditioning(preconditioning, "orthogonalize_via_newton_schulz");
  // A matrix always uses rows x columns, whatever dimension numbers came (as optax).
  const MuonDimensionNumbers dims = nd == 2 ? MuonDimensionNumbers{} : *dims_in;
  if (nd < 2)
    throw ValueError(
        "orthogonalize_via_newton_schulz: Muon optimized parameters must have rank "
        ">= 2, got x.ndim=" +
        std::to_string(nd));
  const auto red = normalize(dims.reduction_axis, nd), out = normalize(dims.output_axis, nd);
  for (int a : red)
    if (std::find(out.begin(), out.end(), a) != out.end())
      throw ValueError(
          "orthogonalize_via_newton_schulz: Normalized reduction axes and output "
          "axes must be disjoint, got " +
          axes_str(red) + " and " + axes_str(out) + " for shape " + shape_str(x_in.shape()));
  std::vector<int> batch;
  for (int a = 0; a < nd; ++a)
    if (std::find(red.begin(), red.end(), a) == red.end() &&
        std::find(out.begin(), out.end(), a) == out.end())
      batch.push_back(a);
  std::vector<int> perm = batch;
  perm.insert(perm.end(), red.begin(), red.end());
  perm.insert(perm.end(), out.begin(), out.end());
  if (perm.size() != static_cast<std::size_t>(nd))
    throw ValueError(
        "orthogonalize_via_newton_schulz: an axis is repeated in the dimension "
        "numbers: reduction " +
        axes_str(red) + ", output " + axes_str(out));
  const Shape& shape = x_in.shape();
  const std::int64_t m = prod(shape, red), n = prod(shape, out);
  Array x = reshape(transpose(x_in, perm), {prod(shape, batch), m, n});
  Shape unflat;
  for (int a : perm) unflat.push_back(shape[static_cast<std::size_t>(a)]);

  const bool transposed = m > n;
  if (transposed) x = linalg::matrix_transpose(x);
  if (preconditioning == "frobenius")
    x = x / (linalg::norm(x, "fro", std::vector<int>{-2, -1}, true) + eps);
  else if (preconditioning == "spectral")
    x = x / (linalg::norm(x, 2.0, std::vector<int>{-2, -1}, true) + eps);
  const Array coeffs = astype(ns_coeffs, x.dtype());
  const int steps = coeffs.ndim() == 1 ? ns_steps : static_cast<int>(coeffs.shape(0));
  for (int i = 0; i < steps; ++i) {
    const Array c = coeffs.ndim() == 1 ? coeffs : coeffs[i];
    Array a = gram(x);
    if (i == 0 && preconditioning == "aol") {
      // 'Almost Orthogonal Layer' rescaling: rows by 1 / sqrt(sum |A_ij|).
      Array s = expand_dims(rsqrt(maximum(sum(abs(a), {-1}), eps)), -1);
      x = x * s;
      a = a * s * swapaxes(s, -1, -2);
    } else if (i == 0 && preconditioning == "schatten") {
      // Schatten-4 rescaling: x / ||x x^T||_F**(1/2).
      a = matmul(x, linalg::matrix_transpose(x));
      Array s = rsqrt(maximum(linalg::norm(a, "fro", std::vector<int>{-2, -1}, true), eps));
      x = x * s;
      a = a * (s * s);
    }
    x = ns_step(x, a, c);
  }
  if (transposed) x = linalg::matrix_transpose(x);
  std::vector<int> inv(perm.size());
  for (std::size_t i = 0; i < perm.size(); ++i)
    inv[static_cast<std::size_t>(perm[i])] = static_cast<int>(i);
  return transpose(reshape(x, unflat), inv);
}

namespace detail {

void check_preconditioning(const std::string& p, const char* fn) {
  if (p != "frobenius" && p != "spectral" && p != "aol" && p != "schatten")
    throw ValueError(std::string(fn) + ": Unknown preconditioning '" + p +
                     "' (expected 'frobenius', 'spectral', 'aol' or 'schatten')");
}

Array muon_coeffs_array(const NsCoeffs& coeffs, int ns_steps, DType dtype) {
  if (!coeffs.per_step) {
    const auto& r = coeffs.rows.at(0);
    return astype(array({r[0], r[1], r[2]}), dtype);
  }
  // optax's check (its message says "Not enough coeffs" but it fires on too many rows).
  if (coeffs.rows.size() > static_cast<std::size_t>(ns_steps))
    throw ValueError("scale_by_muon: ns_coeffs has " + std::to_string(coeffs.rows.size()) +
                     " rows, more than ns_steps=" + std::to_string(ns_steps) +
                     " (optax: Not enough coeffs to perform " + std::to_string(ns_steps) +
                     " steps)");
  if (coeffs.rows.empty())
    throw ValueError("scale_by_muon: ns_coeffs has no rows, expected (n, 3)");
  std::vector<double> flat;
  for (const auto& r : coeffs.rows) flat.insert(flat.end(), r.begin(), r.end());
  return astype(reshape(array(flat), {static_cast<std::int64_t>(coeffs.rows.size()), 3}), dtype);
}

std::array<Array, 2> muon_leaf(const MuonConfig& c, const Array& count_inc, const Array& ns_coeffs,
                               const std::optional<MuonDimensionNumbers>& dims, const Array& g,
                               const Array& mu) {
  if (!g.valid()) return {};
  Array m = update_moment(g, mu, c.beta, 1);
  Array mu_hat = c.nesterov ? c.beta * bias_correction(m, c.beta, safe_increment(count_inc)) +
                                  (1.0 - c.beta) * bias_correction(g, c.beta, count_inc)
                            : bias_correction(m, c.beta, count_inc);
  Array u = orthogonalize_via_newton_schulz(mu_hat, ns_coeffs, c.ns_steps, c.preconditioning, c.eps,
                                            dims);
  if (c.adaptive) u = sum(conj(mu_hat) * u) * u;
  return {u, cast(m, c.mu_dtype)};
}

Array muon_shape_scale(const Array& u, const MuonDimensionNumbers& dims,
                       std::optional<double> consistent_rms) {
  const int nd = u.ndim();
  if (nd < 2)
    throw ValueError("scale_by_shape: Muon optimized parameters must have rank >= 2, got shape " +
                     shape_str(u.shape()));
  const double fan_in = static_cast<double>(prod(u.shape(), normalize(dims.reduction_axis, nd)));
  const double fan_out = static_cast<double>(prod(u.shape(), normalize(dims.output_axis, nd)));
  const double s = consistent_rms ? std::sqrt(std::max(fan_in, fan_out)) * *consistent_rms
                                  : std::sqrt(std::max(1.0, fan_out / fan_in));
  return s * u;
}

}  // namespace detail

ScaleByMuon scale_by_muon(NsCoeffs ns_coeffs, int ns_steps, double beta, double eps,
                          std::optional<DType> mu_dtype, bool nesterov, bool adaptive,
                          const std::string& preconditioning,
                          MuonDimNumsFn weight_dimension_numbers) {
  detail::check_preconditioning(preconditioning, "scale_by_muon");
  if (ns_steps < 0)
    throw ValueError("scale_by_muon: ns_steps must be >= 0, got " + std::to_string(ns_steps));
  // Validates the (n, 3) form now rather than at init.
  (void)detail::muon_coeffs_array(ns_coeffs, ns_steps, float32);
  ScaleByMuon t;
  t.ns_coeffs = std::move(ns_coeffs);
  t.c = {ns_steps, beta, eps, mu_dtype, nesterov, adaptive, preconditioning};
  t.weight_dimension_numbers = std::move(weight_dimension_numbers);
  return t;
}

}  // namespace linum::optim
