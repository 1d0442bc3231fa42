// multivariate_normal and orthogonal as jax.random computes them (jax/_src/random: the normal
// sample drawn from the key first, then the linear algebra), so the same key gives JAX's values
// up to the rounding of the factorisation.
#include <linum/autodiff/random/matrix_samplers.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include <linum/autodiff/ops/kernel_util.hpp>
#include <linum/autodiff/ops/lapack.hpp>
#include <linum/autodiff/primitive.hpp>
#include <linum/autodiff/random/random.hpp>
#include <linum/autodiff/random/sampler_args.hpp>

namespace linum::random {

using namespace detail;

namespace {

// Q * sign(diag(R)) of the reduced QR of one (m, n) matrix, m >= n: the orthogonal factor made
// unique, and Haar-distributed for Gaussian input.
template <class T>
void signed_q(const T* in, T* out, int m, int n) {
  std::vector<T> a(in, in + static_cast<std::size_t>(m) * n), r(static_cast<std::size_t>(n) * n);
  const int info = linum::detail::lapack::qr(m, n, a.data(), false, out, r.data());
  if (info != 0) throw Error("orthogonal: LAPACK QR failed (info " + std::to_string(info) + ")");
  for (int j = 0; j < n; ++j) {
    const T d = r[static_cast<std::size_t>(j) * n + j];
    const T sign = d > 0 ? T(1) : d < 0 ? T(-1) : T(0);
    for (int i = 0; i < m; ++i) out[static_cast<std::size_t>(i) * n + j] *= sign;
  }
}

// The sign-fixed Q factor (signed_q) of each matrix of an (..., m, n) input, m >= n. Not
// differentiable: its input is a sample drawn from a key. Under vmap the batch axis joins the
// leading dims of the same call.
struct OrthogonalQ final : Primitive {
  const char* name() const override { return "orthogonal_q"; }
  bool differentiable() const override { return false; }
  Arrays eval(std::span<const Array> in) const override {
    const Array& x = in[0];
    const int m = static_cast<int>(x.shape(-2)), n = static_cast<int>(x.shape(-1));
    Array out = empty(x.shape(), x.dtype());
    linum::detail::dispatch_float(x.dtype(), name(), [&]<class T>() {
      const T* src = linum::detail::in_ptr<T>(x);
      T* dst = linum::detail::out_ptr<T>(out);
      const std::int64_t size = static_cast<std::int64_t>(m) * n;
      const std::int64_t mats = size == 0 ? 0 : x.size() / size;
      for (std::int64_t b = 0; b < mats; ++b) signed_q(src + b * size, dst + b * size, m, n);
    });
    return {out};
  }
  Batched vmap(std::span<const Array> in, std::span<const int> bdims) const override {
    return {{bind1(singleton<OrthogonalQ>(), {linum::detail::move_bdim(in[0], bdims[0], 0, 0)})},
            {0}};
  }
};

Shape leading(const Shape& s, std::size_t drop) { return Shape(s.begin(), s.end() - drop); }

}  // namespace

Array multivariate_normal(const Array& key, const Array& mean0, const Array& cov0,
                          const std::optional<Shape>& shape, std::optional<DType> dtype,
                          std::string_view method) {
  const char* fn = "multivariate_normal";
  check_key(key, fn);
  linum::detail::check_valid(mean0, fn);
  linum::detail::check_valid(cov0, fn);
  // jnp's promote_dtypes_inexact: the common dtype, integers to float32.
  const ResultType r = linum::detail::result_type(mean0, cov0);
  const DType common = is_floating(r.dtype) ? r.dtype : float32;
  const Array mean = astype(mean0, common), cov = astype(cov0, common);
  if (method != "svd" && method != "eigh" && method != "cholesky")
    throw ValueError("multivariate_normal: method must be one of {'svd', 'eigh', 'cholesky'}, got '" +
                     std::string(method) + "'");
  const DType out_dtype = dtype.value_or(common);
  check_float(out_dtype, fn);
  if (mean.ndim() < 1)
    throw ValueError("multivariate_normal requires mean.ndim >= 1, got mean.ndim == 0");
  if (cov.ndim() < 2)
    throw ValueError("multivariate_normal requires cov.ndim >= 2, got cov.ndim == " +
                     std::to_string(cov.ndim()));
  const std::int64_t n = mean.shape(-1);
  if (cov.shape(-2) != n || cov.shape(-1) != n)
    throw ValueError("multivariate_normal requires cov.shape == (..., n, n) for n=" +
                     std::to_string(n) + ", but got cov.shape == " + shape_str(cov.shape()) + ".");
  const Shape batch =
      sampler_shape(fn, shape, {leading(mean.shape(), 1), leading(cov.shape(), 2)});
  Array factor;
  if (method == "svd") {
    const auto [u, s, vh] = linalg::svd(cov);
    factor = u * expand_dims(sqrt(s), -2);
  } else if (method == "eigh") {
    const auto [w, v] = linalg::eigh(cov);
    factor = v * expand_dims(sqrt(w), -2);
  } else {
    factor = linalg::cholesky(cov);
  }
  Shape sample_shape = batch;
  sample_shape.push_back(n);
  const Array z = normal(key, sample_shape, out_dtype);
  // einsum('...ij,...j->...i', factor, z), the batch dims broadcast.
  return mean + squeeze(matmul(factor, expand_dims(z, -1)), {-1});
}

Array orthogonal(const Array& key, std::int64_t n, const Shape& shape, DType dtype,
                 std::optional<std::int64_t> m0) {
  const char* fn = "orthogonal";
  check_key(key, fn);
  check_shape(shape, fn);
  check_float(dtype, fn);
  const std::int64_t m = m0.value_or(n);
  if (n < 0 || m < 0)
    throw ValueError("orthogonal: n and m must be non-negative, got n=" + std::to_string(n) +
                     ", m=" + std::to_string(m));
  Shape z_shape = shape;
  z_shape.push_back(std::max(n, m));
  z_shape.push_back(std::min(n, m));
  const Array q = bind1(singleton<OrthogonalQ>(), {normal(key, z_shape, dtype)});
  return n < m ? swapaxes(q, -1, -2) : q;
}

}  // namespace linum::random
