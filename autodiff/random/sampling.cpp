// The samplers of jax/_src/random/core.py over raw buffers, with XLA:CPU's arithmetic: the
// affine map of uniform is one FMA (as LLVM contracts it), everything else rounds per operation.
#include <linum/autodiff/random/fp_contract_off.hpp>

#include <linum/autodiff/random/sampling.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>

#include <linum/autodiff/random/draw_format.hpp>
#include <linum/autodiff/random/xla_math.hpp>
#include <linum/error.hpp>

namespace linum::random::detail {

namespace {

// The unit draws of format S: random bits of S's draw width, each mapped to [0, 1) exactly.
template <class T, class S>
std::vector<T> unit_draw(KeyData key, std::size_t n, bool partitionable) {
  std::vector<typename DrawFormat<S>::Bits> bits(n);
  random_bits(key, std::span(bits), partitionable);
  std::vector<T> u(n);
  for (std::size_t i = 0; i < n; ++i) u[i] = unit_from_bits<T, S>(bits[i]);
  return u;
}

template <class T>
T affine(T unit, T minval, T range) {
  return std::max(minval, std::fma(unit, range, minval));
}

// np.array(np.sqrt(2), dtype).
template <class T, class S>
T sqrt2() {
  return in_format<T, S>(std::sqrt(2.0));
}

// XLA's unsigned remainder: x % 0 is x.
std::uint32_t urem(std::uint32_t a, std::uint32_t b) { return b == 0 ? a : a % b; }

// JAX's _shuffle repeats stable sorts by fresh 32-bit keys until collisions are unlikely:
// ceil(3 ln(size) / ln(2^32 - 1)) rounds (one round up to ~1600 elements, none for size 1).
int shuffle_rounds(std::int64_t n) {
  const double uint32max = static_cast<double>(std::numeric_limits<std::uint32_t>::max());
  return static_cast<int>(std::ceil(
      3.0 * std::log(static_cast<double>(std::max<std::int64_t>(1, n))) / std::log(uint32max)));
}

}  // namespace

template <class T, class S>
void uniform(KeyData key, std::span<T> out, T minval, T maxval, bool partitionable) {
  const auto u = unit_draw<T, S>(key, out.size(), partitionable);
  const T range = maxval - minval;
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = affine(u[i], minval, range);
}

template <class T, class S>
void normal(KeyData key, std::span<T> out, bool partitionable) {
  const T lo = next_after<T, S>(T(-1), T(0)), hi = T(1);
  uniform<T, S>(key, out, lo, hi, partitionable);
  for (T& v : out) v = sqrt2<T, S>() * erf_inv(v);
}

template <class T, class S>
void truncated_normal(KeyData key, std::span<T> out, T lower, T upper, bool partitionable) {
  const T a = erf(lower / sqrt2<T, S>()), b = erf(upper / sqrt2<T, S>());
  uniform<T, S>(key, out, a, b, partitionable);
  const T lo = next_after<T, S>(lower, std::numeric_limits<T>::infinity());
  const T hi = next_after<T, S>(upper, -std::numeric_limits<T>::infinity());
  for (T& v : out) v = std::min(std::max(sqrt2<T, S>() * erf_inv(v), lo), hi);
}

template <class T, class S>
void bernoulli(KeyData key, std::span<std::uint8_t> out, T p, bool high, bool partitionable) {
  const std::size_t n = out.size();
  if (!high) {
    std::vector<T> u(n);
    uniform<T, S>(key, std::span(u), T(0), T(1), partitionable);
    for (std::size_t i = 0; i < n; ++i) out[i] = u[i] < p;
    return;
  }
  std::vector<T> u(2 * n);
  uniform<T, S>(key, std::span(u), T(0), T(1), partitionable);
  const T resolution = finfo_eps<T, S>();
  for (std::size_t i = 0; i < n; ++i) out[i] = u[n + i] * resolution < p - u[i];
}

template <class T, class S>
void gumbel(KeyData key, std::span<T> out, bool high, bool partitionable) {
  const std::size_t n = out.size();
  const T tiny = finfo_tiny<T, S>();
  if (!high) {
    uniform<T, S>(key, out, tiny, T(1), partitionable);
    for (T& v : out) v = -xla_log(-xla_log(v));
    return;
  }
  std::vector<T> u(2 * n);
  uniform<T, S>(key, std::span(u), T(0), T(1), partitionable);
  const T resolution = finfo_eps<T, S>();
  for (std::size_t i = 0; i < n; ++i) {
    const T hi = u[i], lo = u[n + i];
    const T x = hi >= T(0.5) ? hi : std::fma(resolution, lo, hi) + tiny;
    out[i] = -xla_log(-xla_log1p(-x));
  }
}

template <class I>
void randint(KeyData key, std::span<I> out, std::int64_t minval, std::int64_t maxval,
             bool partitionable) {
  constexpr std::int64_t kMin = std::numeric_limits<I>::min();
  constexpr std::int64_t kMax = std::numeric_limits<I>::max();
  const bool maxval_out_of_range = maxval > kMax;
  const std::int64_t lo = std::clamp(minval, kMin, kMax), hi = std::clamp(maxval, kMin, kMax);
  std::uint32_t span = static_cast<std::uint32_t>(hi - lo);
  if (hi <= lo) span = 1;
  if (maxval_out_of_range && hi > lo) span += 1;  // may wrap to 0: then the remainders are no-ops
  // 2^32 % span as ((2^16 % span)^2) % span, so nothing overflows.
  std::uint32_t multiplier = urem(1u << 16, span);
  multiplier = urem(multiplier * multiplier, span);

  KeyData keys[2];
  split(key, std::span(keys), partitionable);
  const std::size_t n = out.size();
  std::vector<std::uint32_t> higher(n), lower(n);
  random_bits(keys[0], std::span(higher), partitionable);
  random_bits(keys[1], std::span(lower), partitionable);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t offset =
        urem(urem(higher[i], span) * multiplier + urem(lower[i], span), span);
    out[i] = static_cast<I>(static_cast<std::uint32_t>(lo) + offset);
  }
}

template void randint<std::int32_t>(KeyData, std::span<std::int32_t>, std::int64_t, std::int64_t,
                                    bool);
template void randint<std::uint32_t>(KeyData, std::span<std::uint32_t>, std::int64_t, std::int64_t,
                                     bool);

void shuffle_indices(KeyData key, const std::vector<std::int64_t>& shape, int axis,
                     std::span<std::int32_t> out, bool partitionable) {
  const int rank = static_cast<int>(shape.size());
  if (axis < 0 || axis >= rank)
    throw ValueError("shuffle_indices: axis " + std::to_string(axis) + " out of range for rank " +
                     std::to_string(rank));
  std::int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= shape[d];
  for (int d = axis + 1; d < rank; ++d) inner *= shape[d];
  const std::int64_t len = shape[axis], total = outer * len * inner;
  if (static_cast<std::int64_t>(out.size()) != total)
    throw ValueError("shuffle_indices: output has " + std::to_string(out.size()) +
                     " elements, shape needs " + std::to_string(total));
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t l = 0; l < len; ++l)
      for (std::int64_t in = 0; in < inner; ++in)
        out[(o * len + l) * inner + in] = static_cast<std::int32_t>(l);

  std::vector<std::uint32_t> sort_keys(total);
  std::vector<std::int64_t> order(len);
  std::vector<std::int32_t> lane(len);
  KeyData k = key;
  for (int r = 0, rounds = shuffle_rounds(total); r < rounds; ++r) {
    KeyData pair[2];
    split(k, std::span(pair), partitionable);
    k = pair[0];
    random_bits(pair[1], std::span(sort_keys), partitionable);
    for (std::int64_t o = 0; o < outer; ++o) {
      for (std::int64_t in = 0; in < inner; ++in) {
        auto at = [&](std::int64_t l) { return (o * len + l) * inner + in; };
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
          return sort_keys[at(a)] < sort_keys[at(b)];
        });
        for (std::int64_t l = 0; l < len; ++l) lane[l] = out[at(order[l])];
        for (std::int64_t l = 0; l < len; ++l) out[at(l)] = lane[l];
      }
    }
  }
}

void permutation(KeyData key, std::span<std::int32_t> out, bool partitionable) {
  shuffle_indices(key, {static_cast<std::int64_t>(out.size())}, 0, out, partitionable);
}

template <class T, class S>
void weighted_choice(KeyData key, std::span<const T> p, std::span<std::int32_t> out, bool replace,
                     bool partitionable) {
  const std::size_t n = p.size(), k = out.size();
  if (replace) {
    // Sequential prefix sums: XLA's scan may associate differently, so a draw lying within
    // rounding distance of a bucket boundary can land in the neighbouring bucket.
    std::vector<T> cum(n);
    std::partial_sum(p.begin(), p.end(), cum.begin());
    std::vector<T> u(k);
    uniform<T, S>(key, std::span(u), T(0), T(1), partitionable);
    for (std::size_t i = 0; i < k; ++i) {
      const T r = cum.back() * (T(1) - u[i]);
      out[i] = static_cast<std::int32_t>(std::lower_bound(cum.begin(), cum.end(), r) - cum.begin());
    }
    return;
  }
  if (k > n)
    throw ValueError("choice: cannot take a larger sample (size " + std::to_string(k) +
                     ") than population (size " + std::to_string(n) + ") when 'replace=False'");
  std::vector<T> g(n);
  gumbel<T, S>(key, std::span(g), /*high=*/false, partitionable);
  for (std::size_t i = 0; i < n; ++i) g[i] = g[i] + xla_log(p[i]);
  // lax.top_k: descending values, ties broken by the lower index.
  std::vector<std::int32_t> idx(n);
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(),
                   [&](std::int32_t a, std::int32_t b) { return g[a] > g[b]; });
  std::copy_n(idx.begin(), k, out.begin());
}

template <class T, class S>
void gumbel_top_k(KeyData key, std::span<const T> logits, const std::vector<std::int64_t>& shape,
                  int axis, std::int64_t k, bool high, std::span<std::int32_t> out,
                  bool partitionable) {
  const int rank = static_cast<int>(shape.size());
  std::int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= shape[d];
  for (int d = axis + 1; d < rank; ++d) inner *= shape[d];
  const std::int64_t len = shape[axis];
  if (k > len)
    throw ValueError("categorical: number of samples without replacement (" + std::to_string(k) +
                     ") cannot exceed number of categories (" + std::to_string(len) + ")");
  std::vector<T> g(logits.size());
  gumbel<T, S>(key, std::span(g), high, partitionable);
  for (std::size_t i = 0; i < g.size(); ++i) g[i] = logits[i] + g[i];
  std::vector<std::int32_t> idx(len);
  for (std::int64_t o = 0; o < outer; ++o) {
    for (std::int64_t in = 0; in < inner; ++in) {
      auto at = [&](std::int64_t l) { return g[(o * len + l) * inner + in]; };
      std::iota(idx.begin(), idx.end(), 0);
      std::stable_sort(idx.begin(), idx.end(),
                       [&](std::int32_t a, std::int32_t b) { return at(a) > at(b); });
      std::copy_n(idx.begin(), k, out.begin() + (o * inner + in) * k);
    }
  }
}

#define LINUM_RANDOM_INSTANTIATE(T, S)                                                            \
  template void uniform<T, S>(KeyData, std::span<T>, T, T, bool);                                 \
  template void normal<T, S>(KeyData, std::span<T>, bool);                                        \
  template void truncated_normal<T, S>(KeyData, std::span<T>, T, T, bool);                        \
  template void bernoulli<T, S>(KeyData, std::span<std::uint8_t>, T, bool, bool);                 \
  template void gumbel<T, S>(KeyData, std::span<T>, bool, bool);                                  \
  template void weighted_choice<T, S>(KeyData, std::span<const T>, std::span<std::int32_t>, bool, \
                                      bool);                                                      \
  template void gumbel_top_k<T, S>(KeyData, std::span<const T>, const std::vector<std::int64_t>&, \
                                   int, std::int64_t, bool, std::span<std::int32_t>, bool);
LINUM_RANDOM_INSTANTIATE(float, float)
LINUM_RANDOM_INSTANTIATE(double, double)
LINUM_RANDOM_INSTANTIATE(float, BFloat16)
LINUM_RANDOM_INSTANTIATE(float, Float16)
#undef LINUM_RANDOM_INSTANTIATE

}  // namespace linum::random::detail
