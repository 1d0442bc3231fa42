// jax.random over Array. Each distribution has its sampler struct (its static parameters and its
// kernel call) next to its function; the sampler is the policy of one of the two primitives of
// keyed_primitive.hpp, whose batching rule makes vmap over keys one kernel call over all keys.
#include <linum/autodiff/random/random.hpp>

#include <limits>
#include <memory>
#include <string>

#include <linum/autodiff/ops.hpp>
#include <linum/autodiff/random/draw_format.hpp>
#include <linum/autodiff/random/keyed_primitive.hpp>
#include <linum/autodiff/random/sampler_args.hpp>
#include <linum/autodiff/random/sampling.hpp>

namespace linum::random {

namespace {

using detail::check_float;
using detail::check_key;
using detail::check_shape;
using detail::concat;
using detail::KeyData;
using detail::KeyOperandPrim;
using detail::KeyPrim;
using detail::Keys;
using detail::sample;
using detail::SamplerBase;

// ---- argument checks (JAX's messages) ----------------------------------------------------------

bool check_mode(std::string_view mode, const char* fn) {
  if (mode == "low") return false;
  if (mode == "high") return true;
  throw ValueError(std::string(fn) + ": got mode='" + std::string(mode) +
                   "', expected 'high' or 'low'");
}

int normalize(int axis, int ndim, const char* fn) {
  return linum::detail::normalize_axis(axis, ndim, fn);
}

}  // namespace

// ---- keys --------------------------------------------------------------------------------------

Array PRNGKey(std::int64_t seed, SeedBits bits) {
  const KeyData k = detail::seed_key(seed, bits == SeedBits::x64);
  return array(std::vector<std::uint32_t>{k[0], k[1]});
}

Array key(std::int64_t seed, SeedBits bits) { return PRNGKey(seed, bits); }

Array key_data(const Array& keys) {
  linum::detail::check_valid(keys, "key_data");
  return keys;
}

Array wrap_key_data(const Array& data) {
  linum::detail::check_valid(data, "wrap_key_data");
  if (data.dtype() != uint32 || data.ndim() == 0 || data.shape().back() != 2)
    throw TypeError(
        "wrap_key_data: threefry2x32 key data must be uint32 with trailing shape "
        "(2,), got " +
        std::string(dtype_name(data.dtype())) + " of shape " + shape_str(data.shape()));
  return data;
}

namespace {
// split: `shape` is the grid of new keys drawn from each key.
struct Split : SamplerBase {
  static constexpr const char* name = "random_split";
  Shape out_shape(const Shape& lead) const { return concat(concat(lead, shape), {2}); }
  Array eval(const Shape& lead, Keys keys) const {
    Array out = empty(out_shape(lead), uint32);
    auto* o = reinterpret_cast<KeyData*>(linum::detail::out_ptr<std::uint32_t>(out));
    const std::int64_t n = shape_size(shape), nkeys = shape_size(lead);
    for (std::int64_t i = 0; i < nkeys; ++i)
      detail::split(keys[i], std::span(o + i * n, n), partitionable);
    return out;
  }
};
}  // namespace

Array split(const Array& key, std::int64_t num) { return random::split(key, Shape{num}); }

Array split(const Array& key, const Shape& shape) {
  return sample(Split{{shape, uint32}}, key, "split");
}

namespace {
// fold_in: operand is the uint32 data, one scalar per grid position.
struct FoldIn : SamplerBase {
  static constexpr const char* name = "random_fold_in";
  static constexpr int operand_rank = 0;
  Shape out_shape(const Shape& grid) const { return concat(grid, {2}); }
  Array eval(const detail::GridMap& m, Keys keys, const Array& data, const Shape&) const {
    Array out = empty(out_shape(m.grid), uint32);
    auto* o = linum::detail::out_ptr<std::uint32_t>(out);
    const auto* d = linum::detail::in_ptr<std::uint32_t>(data);
    const std::int64_t n = shape_size(m.grid);
    for (std::int64_t i = 0; i < n; ++i) {
      const KeyData r = detail::fold_in(keys[m.key_index[i]], d[m.operand_index[i]]);
      o[2 * i] = r[0];
      o[2 * i + 1] = r[1];
    }
    return out;
  }
};
}  // namespace

Array fold_in(const Array& key, const Array& data) {
  check_key(key, "fold_in");
  linum::detail::check_valid(data, "fold_in");
  if (data.ndim() != 0)
    throw TypeError("fold_in accepts a scalar, but was given an array of shape " +
                    shape_str(data.shape()) + " != (). Use jax.vmap for batching.");
  if (!is_integer(data.dtype()) && data.dtype() != bool_)
    throw TypeError(std::string("fold_in: data must be an integer, got dtype ") +
                    std::string(dtype_name(data.dtype())));
  return bind1(std::make_shared<const KeyOperandPrim<FoldIn>>(FoldIn{{{}, uint32}}),
               {key, astype(data, uint32)});
}

Array fold_in(const Array& key, std::int64_t data) {
  // JAX converts a Python int with jnp.asarray(data, dtype='uint32'): NumPy >= 2 refuses values
  // outside uint32 instead of wrapping them.
  if (data < 0 || data > static_cast<std::int64_t>(std::numeric_limits<std::uint32_t>::max()))
    throw OverflowError("fold_in: Python integer " + std::to_string(data) +
                        " out of bounds for uint32");
  return fold_in(key, Array(static_cast<std::uint32_t>(data)));
}

// ---- samplers ----------------------------------------------------------------------------------

namespace {
struct Bits : SamplerBase {
  static constexpr const char* name = "random_bits";
  Array eval(const Shape& lead, Keys keys) const {
    return detail::per_key<std::uint32_t>(
        lead, shape, uint32, keys,
        [&](KeyData k, std::span<std::uint32_t> s) { detail::random_bits(k, s, partitionable); });
  }
};
}  // namespace

Array bits(const Array& key, const Shape& shape, DType dtype) {
  if (dtype != uint32)
    throw ValueError("dtype argument to `bits` must be an unsigned int dtype, got " +
                     std::string(dtype_name(dtype)) +
                     " (linum arrays have uint32 as their only unsigned dtype)");
  return sample(Bits{{shape, uint32}}, key, "bits");
}

namespace {
struct Uniform : SamplerBase {
  static constexpr const char* name = "random_uniform";
  double minval, maxval;
  Array eval(const Shape& lead, Keys keys) const {
    return detail::per_key_float(
        *this, name, lead, keys, [&]<class T, class S>(KeyData k, std::span<T> s) {
          detail::uniform<T, S>(k, s, detail::in_format<T, S>(minval),
                                detail::in_format<T, S>(maxval), partitionable);
        });
  }
};
}  // namespace

Array uniform(const Array& key, const Shape& shape, DType dtype, double minval, double maxval) {
  check_float(dtype, "uniform");
  return sample(Uniform{{shape, dtype}, minval, maxval}, key, "uniform");
}

namespace {
struct Normal : SamplerBase {
  static constexpr const char* name = "random_normal";
  Array eval(const Shape& lead, Keys keys) const {
    return detail::per_key_float(*this, name, lead, keys,
                                 [&]<class T, class S>(KeyData k, std::span<T> s) {
                                   detail::normal<T, S>(k, s, partitionable);
                                 });
  }
};
}  // namespace

Array normal(const Array& key, const Shape& shape, DType dtype) {
  check_float(dtype, "normal");
  return sample(Normal{{shape, dtype}}, key, "normal");
}

namespace {
struct TruncatedNormal : SamplerBase {
  static constexpr const char* name = "random_truncated_normal";
  double lower, upper;
  Array eval(const Shape& lead, Keys keys) const {
    return detail::per_key_float(
        *this, name, lead, keys, [&]<class T, class S>(KeyData k, std::span<T> s) {
          detail::truncated_normal<T, S>(k, s, detail::in_format<T, S>(lower),
                                         detail::in_format<T, S>(upper), partitionable);
        });
  }
};
}  // namespace

Array truncated_normal(const Array& key, double lower, double upper, const Shape& shape,
                       DType dtype) {
  check_float(dtype, "truncated_normal");
  return sample(TruncatedNormal{{shape, dtype}, lower, upper}, key, "truncated_normal");
}

namespace {
// bernoulli: `dtype` is the float dtype p is compared in; the samples are bool.
struct Bernoulli : SamplerBase {
  static constexpr const char* name = "random_bernoulli";
  double p;
  bool high;
  DType out_dtype() const { return bool_; }
  Array eval(const Shape& lead, Keys keys) const {
    return detail::dispatch_draw(dtype, "bernoulli", [&]<class T, class S>() {
      return detail::per_key<std::uint8_t>(
          lead, shape, bool_, keys, [&](KeyData k, std::span<std::uint8_t> s) {
            detail::bernoulli<T, S>(k, s, detail::in_format<T, S>(p), high, partitionable);
          });
    });
  }
};
}  // namespace

Array bernoulli(const Array& key, double prob, const Shape& shape, std::string_view mode,
                DType dtype) {
  if (!is_floating(dtype))
    throw TypeError("bernoulli probability `p` must have a floating dtype, got " +
                    std::string(dtype_name(dtype)));
  return sample(Bernoulli{{shape, dtype}, prob, check_mode(mode, "bernoulli")}, key, "bernoulli");
}

namespace {
// randint: uint32 samples for dtype uint32, int32 for every other integer dtype.
struct Randint : SamplerBase {
  static constexpr const char* name = "random_randint";
  std::int64_t minval, maxval;
  DType out_dtype() const { return dtype == uint32 ? uint32 : int32; }
  Array eval(const Shape& lead, Keys keys) const {
    auto draw = [&]<class I>(KeyData k, std::span<I> s) {
      detail::randint(k, s, minval, maxval, partitionable);
    };
    if (dtype == uint32) return detail::per_key<std::uint32_t>(lead, shape, uint32, keys, draw);
    return detail::per_key<std::int32_t>(lead, shape, int32, keys, draw);
  }
};
}  // namespace

Array randint(const Array& key, const Shape& shape, std::int64_t minval, std::int64_t maxval,
              DType dtype) {
  if (!is_integer(dtype))
    throw TypeError("randint only accepts integer dtypes, got " + std::string(dtype_name(dtype)));
  return sample(Randint{{shape, dtype}, minval, maxval}, key, "randint");
}

namespace {
struct Gumbel : SamplerBase {
  static constexpr const char* name = "random_gumbel";
  bool high;
  Array eval(const Shape& lead, Keys keys) const {
    return detail::per_key_float(*this, name, lead, keys,
                                 [&]<class T, class S>(KeyData k, std::span<T> s) {
                                   detail::gumbel<T, S>(k, s, high, partitionable);
                                 });
  }
};
}  // namespace

Array gumbel(const Array& key, const Shape& shape, DType dtype, std::string_view mode) {
  check_float(dtype, "gumbel");
  if (mode != "low" && mode != "high")
    throw ValueError("Must provide valid mode for gumbel got: " + std::string(mode));
  return sample(Gumbel{{shape, dtype}, mode == "high"}, key, "gumbel");
}

namespace {
// categorical without replacement: the k largest of logits + gumbel noise along `axis`, one draw
// per distribution. `shape` is the logits' shape without `axis`, followed by k.
struct GumbelTopK : SamplerBase {
  static constexpr const char* name = "random_gumbel_top_k";
  int axis;
  std::int64_t k;
  bool high;
  int operand_rank;  // the logits' rank
  DType out_dtype() const { return int32; }
  Array eval(const detail::GridMap& m, Keys keys, const Array& logits, const Shape& core) const {
    return detail::per_position_int32(
        *this, name, m, keys, logits, shape_size(core),
        [&]<class T, class S>(KeyData key, std::span<const T> x, std::span<std::int32_t> dst) {
          detail::gumbel_top_k<T, S>(key, x, core, axis, k, high, dst, partitionable);
        });
  }
};

// Indices (batch..., k) of k draws without replacement from each distribution of `logits`.
Array gumbel_top_k(const Array& key, const Array& logits, int axis, std::int64_t k,
                   std::string_view mode) {
  Shape batch = logits.shape();
  batch.erase(batch.begin() + axis);
  GumbelTopK s{{concat(batch, {k}), logits.dtype()},
               axis,
               k,
               check_mode(mode, "categorical"),
               logits.ndim()};
  return bind1(std::make_shared<const KeyOperandPrim<GumbelTopK>>(std::move(s)), {key, logits});
}
}  // namespace

Array categorical(const Array& key, const Array& logits, int axis,
                  const std::optional<Shape>& shape, bool replace, std::string_view mode) {
  check_key(key, "categorical");
  linum::detail::check_valid(logits, "categorical");
  const Array lg = is_inexact(logits.dtype()) ? logits : astype(logits, float32);
  const int nd = lg.ndim();
  if (nd == 0) throw ValueError("categorical: logits must have at least one dimension");
  const int ax = normalize(axis, nd, "categorical");
  Shape batch = lg.shape();
  batch.erase(batch.begin() + ax);
  Shape out_shape = shape.value_or(batch);
  check_shape(out_shape, "categorical");
  if (out_shape.size() < batch.size() ||
      linum::detail::broadcast_shapes(out_shape, batch, "categorical") != out_shape)
    throw ValueError(
        "categorical parameter shapes must be broadcast-compatible with shape "
        "argument, and the result of broadcasting the shapes must equal the shape "
        "argument, but got result " +
        shape_str(linum::detail::broadcast_shapes(out_shape, batch, "categorical")) +
        " for shape argument " + shape_str(out_shape) + ".");
  const std::size_t n_prefix = out_shape.size() - batch.size();
  const Shape prefix(out_shape.begin(), out_shape.begin() + n_prefix);
  if (replace) {
    // Gumbel-max: argmax over `axis` of gumbel noise (prefix + logits-shaped) plus the logits.
    Shape noise_shape(out_shape.begin() + n_prefix, out_shape.end());
    noise_shape.insert(noise_shape.begin() + ax, lg.shape(ax));
    noise_shape.insert(noise_shape.begin(), prefix.begin(), prefix.end());
    Array x = lg;
    for (std::size_t i = 0; i < n_prefix; ++i) x = expand_dims(x, 0);
    Array g = gumbel(key, noise_shape, lg.dtype(), mode);
    return argmax(add(g, x), ax - nd);
  }
  // Gumbel top-k: k = prod(prefix) indices per distribution, placed along the leading axes.
  const Array idx = gumbel_top_k(key, lg, ax, shape_size(prefix), mode);
  return reshape(moveaxis(idx, -1, 0), out_shape);
}

namespace {
// permutation: independent shuffles of every lane along `axis` of an array of `shape`; the
// samples are the source indices (int32) along `axis`.
struct Shuffle : SamplerBase {
  static constexpr const char* name = "random_shuffle";
  int axis;
  Array eval(const Shape& lead, Keys keys) const {
    return detail::per_key<std::int32_t>(
        lead, shape, int32, keys, [&](KeyData k, std::span<std::int32_t> s) {
          detail::shuffle_indices(k, shape, axis, s, partitionable);
        });
  }
};
}  // namespace

Array permutation(const Array& key, std::int64_t n) {
  if (n < 0) throw ValueError("permutation: n must be non-negative, got " + std::to_string(n));
  return sample(Shuffle{{{n}, int32}, 0}, key, "permutation");
}

Array permutation(const Array& key, const Array& x, int axis, bool independent) {
  linum::detail::check_valid(x, "permutation");
  if (x.ndim() == 0) {
    if (!is_integer(x.dtype())) throw TypeError("x must be an integer or at least 1-dimensional");
    return permutation(key, x.concrete().item<std::int64_t>());
  }
  const int ax = normalize(axis, x.ndim(), "permutation");
  if (independent || x.ndim() == 1) {
    return take_along_axis(x, sample(Shuffle{{x.shape(), int32}, ax}, key, "permutation"), ax);
  }
  return take(x, permutation(key, x.shape(ax)), ax);
}

namespace {
// choice with weights: operand is the 1-D weights p (float), `shape` the draws per position.
struct WeightedChoice : SamplerBase {
  static constexpr const char* name = "random_weighted_choice";
  static constexpr int operand_rank = 1;
  bool replace;
  DType out_dtype() const { return int32; }
  Array eval(const detail::GridMap& m, Keys keys, const Array& weights, const Shape& core) const {
    return detail::per_position_int32(
        *this, name, m, keys, weights, shape_size(core),
        [&]<class T, class S>(KeyData key, std::span<const T> p, std::span<std::int32_t> dst) {
          detail::weighted_choice<T, S>(key, p, dst, replace, partitionable);
        });
  }
};

// Indices of `shape` draws from arange(len(weights)) with probabilities proportional to weights.
Array weighted_choice(const Array& key, const Array& weights, const Shape& shape, bool replace) {
  return bind1(std::make_shared<const KeyOperandPrim<WeightedChoice>>(
                   WeightedChoice{{shape, weights.dtype()}, replace}),
               {key, weights});
}
}  // namespace

Array choice(const Array& key, std::int64_t n, const Shape& shape, bool replace,
             const std::optional<Array>& p) {
  return choice(key, Array(static_cast<std::int32_t>(n)), shape, replace, p, 0);
}

Array choice(const Array& key, const Array& a, const Shape& shape, bool replace,
             const std::optional<Array>& p, int axis) {
  check_key(key, "choice");
  linum::detail::check_valid(a, "choice");
  check_shape(shape, "choice");
  const bool scalar = a.ndim() == 0;
  const int ax = scalar ? 0 : normalize(axis, a.ndim(), "choice");
  const std::int64_t n_inputs = scalar ? a.concrete().item<std::int64_t>() : a.shape(ax);
  const std::int64_t n_draws = shape_size(shape);
  if (n_draws == 0) return zeros(shape, a.dtype());
  if (n_inputs <= 0) throw ValueError("a must be greater than 0 unless no samples are taken");
  if (!replace && n_draws > n_inputs)
    throw ValueError("Cannot take a larger sample (size " + std::to_string(n_draws) +
                     ") than population (size " + std::to_string(n_inputs) +
                     ") when 'replace=False'");
  Shape result_shape = shape;
  if (!scalar) {
    result_shape = Shape(a.shape().begin(), a.shape().begin() + ax);
    result_shape.insert(result_shape.end(), shape.begin(), shape.end());
    result_shape.insert(result_shape.end(), a.shape().begin() + ax + 1, a.shape().end());
  }
  Array ind;
  if (!p) {
    if (replace) {
      ind = randint(key, shape, 0, n_inputs);
    } else {
      Array perm = scalar ? permutation(key, n_inputs) : permutation(key, a, ax);
      std::vector<Slice> slices(ax + 1);
      slices[ax] = Slice{0, n_draws};
      return reshape(slice(perm, slices), result_shape);
    }
  } else {
    linum::detail::check_valid(*p, "choice");
    if (p->shape() != Shape{n_inputs})
      throw ValueError(
          "p must be None or a 1D vector with the same size as a.shape[axis]. p has "
          "shape " +
          shape_str(p->shape()) + " and a.shape[axis] is " + std::to_string(n_inputs) + ".");
    const Array weights = is_inexact(p->dtype()) ? *p : astype(*p, float32);
    ind = weighted_choice(key, weights, shape, replace);
  }
  return reshape(scalar ? ind : take(a, ind, ax), result_shape);
}

}  // namespace linum::random
